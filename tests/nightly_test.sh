#!/usr/bin/env bash
# The nightly entry point end to end on a recorded results tree (the compare
# golden: two CPU builds, one run with three regressed metrics, one broken run), with
# --skip-collect so it needs no LibTorch:
#   - a night with a regression exits 1 and writes the issue body and title;
#   - the site is rendered, and a second night renders no build again;
#   - tonight's alerts become a comment per platform: without credentials the
#     gh commands are printed; with them (a stand-in gh on PATH) the tracking
#     issue is opened, commented once, and the next night posts nothing again;
#   - --max-builds reaches the site (the older build's pages go);
#   - --threshold (and the other rules) reach the site too: alerts.json and
#     the tracking comment agree with the night's compare;
#   - a health alert acknowledged with `triage` no longer fails the night;
#   - a triage.json with conflict markers stops nothing: the night compares,
#     and exits 5 when nothing else is wrong;
#   - a night whose samples cannot reach significance exits 3 ("cannot tell");
#   - the first build of a tree exits 0; a bad build id exits 2.
# Usage: nightly_test.sh <dir with torchgauge-report> <source dir> <work dir>
set -uo pipefail
bin="$1" src="$2" work="$3"
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work" || fail "cannot create $work"
cp -r "$src/tests/data/compare_golden/results" "$work/results"
night() { "$src/tools/nightly.sh" --skip-collect --bin-dir "$bin" --results "$work/results" --site "$work/public" "$@"; }

night --build-id 2.11.0-20261122 >"$work/out1" 2>&1
rc=$?
cat "$work/out1"
[ $rc -eq 1 ] || fail "first night: exit $rc, want 1 (regression)"
issue="$work/results/.nightly/2.11.0-20261122"
[ -s "$issue/issue.md" ] || fail "no issue.md"
title=$(cat "$issue/issue-title.txt")
[ "$title" = "[TorchGauge] 1 regression, 1 broken run in 2.11.0-20261122 vs 2.11.0-20261121 (cpu-x86_64-2c)" ] ||
  fail "issue title: '$title'"
# The body: tonight's regression alerts (this young history's comparison
# rows are its alerts), then the comparison's report.
head -n 1 "$issue/issue.md" | grep -q "^## Regression alerts raised in 2.11.0-20261122" ||
  fail "issue.md does not start with tonight's alerts"
tail -n "$(wc -l <"$issue/report.md")" "$issue/issue.md" | cmp -s - "$issue/report.md" ||
  fail "issue.md does not end with report.md"
[ "$(wc -c <"$issue/issue.md")" -lt 65536 ] || fail "issue.md over GitHub's comment limit"
for f in index.html builds/2.11.0-20261122/index.html builds/2.11.0-20261122/compare.html builds/2.11.0-20261121/summary.md models/resnet50.html history/resnet50.js builds/2.11.0-20261122/data/models.js; do
  [ -s "$work/public/$f" ] || fail "site file missing: $f"
done
grep -q "Rendered 2 build(s)" "$work/out1" || fail "first night did not render both builds"

night --build-id 2.11.0-20261122 >"$work/out2" 2>&1
rc=$?
cat "$work/out2"
[ $rc -eq 1 ] || fail "second night: exit $rc, want 1"
grep -q "Rendered 0 build(s).*(2 unchanged build(s) skipped" "$work/out2" || fail "second night rendered builds again"

# Alerts reach people. Without --tracking-repo, the commands are printed.
platform=cpu-x86_64-2c
grep -q "the commands that would post tonight's alerts" "$work/out1" || fail "first night printed no gh commands"
comment="$issue/tracking/$platform.md"
[ -s "$comment" ] || fail "no tracking comment $comment"
grep -q "^2 new and 0 changed alert(s)" "$comment" || { cat "$comment"; fail "comment: want 2 new alerts (the regression, the improvement)"; }
grep -q "gh issue comment .*$platform.md" "$issue/tracking/gh-commands.sh" || fail "gh-commands.sh posts no comment"
[ ! -e "$work/results/tracking.json" ] || fail "an unposted comment was recorded"
# A stand-in gh: authenticated, no tracking issue yet; it logs every call.
mkdir -p "$work/bin"
cat >"$work/bin/gh" <<GH
#!/usr/bin/env bash
echo "\$*" >>"$work/gh.log"
case "\$1 \$2" in
  "auth status") exit 0 ;;
  "issue list") exit 0 ;;
  "issue create") echo "https://github.com/example/bench/issues/7" ;;
esac
GH
chmod +x "$work/bin/gh"
PATH="$work/bin:$PATH" night --build-id 2.11.0-20261122 --tracking-repo example/bench >"$work/out6" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$work/out6"; fail "night with --tracking-repo: exit $rc, want 1"; }
grep -q "^issue create -R example/bench --title TorchGauge tracking: $platform" "$work/gh.log" ||
  { cat "$work/gh.log"; fail "the tracking issue was not opened"; }
# The repository has no 'performance' label yet: it is created before the issue that carries it.
label_at=$(grep -n "^label create performance -R example/bench" "$work/gh.log" | head -n 1 | cut -d: -f1)
issue_at=$(grep -n "^issue create" "$work/gh.log" | head -n 1 | cut -d: -f1)
[ -n "$label_at" ] && [ "$label_at" -lt "$issue_at" ] || { cat "$work/gh.log"; fail "the label was not created first"; }
grep -q "^issue comment 7 -R example/bench --body-file /.*$platform.md" "$work/gh.log" ||
  { cat "$work/gh.log"; fail "no comment on issue 7"; }
[ -s "$work/results/tracking.json" ] || fail "the posted comment was not recorded"
comments=$(grep -c "^issue comment" "$work/gh.log")
PATH="$work/bin:$PATH" night --build-id 2.11.0-20261122 --tracking-repo example/bench >"$work/out7" 2>&1
grep -q "$platform: nothing new or changed" "$work/out7" || { cat "$work/out7"; fail "second posting night: not deduplicated"; }
[ "$(grep -c "^issue comment" "$work/gh.log")" -eq "$comments" ] || fail "an alert was posted twice"

# A retention policy reaches the site: the older build's pages go, the index keeps it.
night --build-id 2.11.0-20261122 --max-builds 1 >"$work/out5" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$work/out5"; fail "night with --max-builds 1: exit $rc, want 1"; }
[ ! -e "$work/public/builds/2.11.0-20261121" ] || fail "--max-builds 1 kept builds/2.11.0-20261121"
[ -s "$work/public/builds/2.11.0-20261122/index.html" ] || fail "--max-builds 1 deleted the newest build"
grep -q "| 2.11.0-20261121 (pruned) |" "$work/public/index.md" || fail "index does not list the pruned build"

# One set of rules for the night: --threshold reaches `build` as well as
# `compare`, so the site's alerts and the tracking comment agree with the exit
# code and the issue. At 50 % neither the regression (+20 %) nor the
# improvement (-15 %) counts; the broken run still does (exit 1).
mkdir -p "$work/rules" && cp -r "$src/tests/data/compare_golden/results" "$work/rules/results"
"$src/tools/nightly.sh" --skip-collect --bin-dir "$bin" --results "$work/rules/results" --site "$work/rules/public" \
  --build-id 2.11.0-20261122 --threshold 50 >"$work/out8" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$work/out8"; fail "night at --threshold 50: exit $rc, want 1 (the broken run)"; }
rdir="$work/rules/results/.nightly/2.11.0-20261122"
grep -q "\] 0 regressions, 1 broken run" "$rdir/issue-title.txt" ||
  fail "--threshold 50: issue title '$(cat "$rdir/issue-title.txt")', want 0 regressions, 1 broken run"
grep -Eq '"threshold_percent": 50(\.0)?,' "$work/rules/public/alerts.json" ||
  { head -c 600 "$work/rules/public/alerts.json"; fail "alerts.json does not record the night's threshold"; }
grep -q '"kind": "regression"' "$work/rules/public/alerts.json" &&
  fail "the site flagged a regression under other rules than the night's compare"
if [ -e "$rdir/tracking/$platform.md" ]; then
  grep -q "^0 new and 0 changed alert(s)" "$rdir/tracking/$platform.md" ||
    { cat "$rdir/tracking/$platform.md"; fail "the tracking comment posts alerts the night's compare did not flag"; }
fi

# A pipeline health alert is acknowledged through `triage`: the vanished run
# (vgg16) asks for attention (track exits 4) until someone calls it expected.
health=$(sed -n 's/.*"id": "\(H-[0-9a-f]\{12\}\)".*/\1/p' "$work/rules/public/alerts.json" | head -n 1)
[ -n "$health" ] || fail "no health alert in the golden's alerts.json"
track() { "$bin/torchgauge-report" track --results "$work/rules/results" --site "$work/rules/public" \
  --out "$work/rules/track" --fail-on-health 2.11.0-20261122 >/dev/null 2>&1; }
track; rc=$?
[ $rc -eq 4 ] || fail "an untriaged health alert: track exit $rc, want 4"
"$bin/torchgauge-report" triage "$health" --results "$work/rules/results" --state expected \
  --note 'vgg16 left the suite' >/dev/null || fail "triage $health (a health alert's id) refused"
"$bin/torchgauge-report" build --results "$work/rules/results" --out "$work/rules/public" --compare-threshold 50 \
  --no-svg >/dev/null 2>&1 || fail "re-render after the health triage failed"
grep -q '"state": "expected"' "$work/rules/public/alerts.json" || fail "alerts.json lacks the health alert's state"
grep -q "^| $health | vanished | .* | expected | [^|]* |$" "$work/rules/public/regressions.md" ||
  fail "the regressions page does not show the health alert's state"
track; rc=$?
[ $rc -eq 0 ] || fail "an acknowledged health alert: track exit $rc, want 0"

# A triage.json with git conflict markers does not stop the night: the site is
# rendered and the comparison runs (a regression still exits 1), and a night
# with nothing else to say exits 5, after its work.
conflict=$'<<<<<<< HEAD\n{}\n=======\n{"alerts": {}}\n>>>>>>> theirs\n'
mkdir -p "$work/conflict" && cp -r "$src/tests/data/compare_golden/results" "$work/conflict/results"
printf '%s' "$conflict" >"$work/conflict/results/triage.json"
"$src/tools/nightly.sh" --skip-collect --bin-dir "$bin" --results "$work/conflict/results" \
  --site "$work/conflict/public" --build-id 2.11.0-20261122 >"$work/out9" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$work/out9"; fail "night over a conflicted triage.json: exit $rc, want 1 (its regression)"; }
[ -s "$work/conflict/results/.nightly/2.11.0-20261122/report.md" ] || fail "conflicted triage.json: nothing compared"
grep -q "triage.json" "$work/out9" || fail "conflicted triage.json: no warning naming the file"
[ "$(cat "$work/conflict/results/triage.json")" = "$(printf '%s' "$conflict")" ] || fail "the conflicted file was rewritten"
mkdir -p "$work/conflict1" && cp -r "$work/results/2.11.0-20261121" "$work/conflict1/"
printf '%s' "$conflict" >"$work/conflict1/triage.json"
"$src/tools/nightly.sh" --skip-collect --bin-dir "$bin" --results "$work/conflict1" --site "$work/conflict1-site" \
  --build-id 2.11.0-20261121 >"$work/out10" 2>&1
rc=$?
[ $rc -eq 5 ] || { cat "$work/out10"; fail "first build over a conflicted triage.json: exit $rc, want 5"; }
[ -s "$work/conflict1-site/index.html" ] || fail "conflicted triage.json: the site was not rendered"

# The first build in a results tree has nothing to compare with.
mkdir -p "$work/first" && cp -r "$work/results/2.11.0-20261121" "$work/first/"
"$src/tools/nightly.sh" --skip-collect --bin-dir "$bin" --results "$work/first" --site "$work/first-site" \
  --build-id 2.11.0-20261121 >"$work/out3" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$work/out3"; fail "first build: exit $rc, want 0"; }
grep -q "nothing to compare with" "$work/out3" || fail "first build: no 'nothing to compare with'"

# A night whose protocol cannot reach significance (3 samples in 1 process a
# side, the smallest p 0.1) with +30 % planted in two runs: not green, but
# "cannot tell", exit 3, and the same on the site (issue 62, item 5).
"$bin/torchgauge-gen-fixtures" --out "$work/few" --builds 2 --models 3 --configs 2 --samples 3 --plant-at 1 \
  --no-cpu-platform >/dev/null || fail "cannot generate the 3-sample tree"
few_build=$(ls "$work/few" | sort | tail -n 1)
"$src/tools/nightly.sh" --skip-collect --bin-dir "$bin" --results "$work/few" --site "$work/few-site" \
  --build-id "$few_build" >"$work/out8" 2>&1
rc=$?
[ $rc -eq 3 ] || { cat "$work/out8"; fail "3-sample night: exit $rc, want 3 (cannot tell)"; }
grep -q "Cannot tell" "$work/out8" || { cat "$work/out8"; fail "3-sample night: no 'Cannot tell'"; }
grep -q '"cannot_tell": true' "$work/few/.nightly/$few_build/compare.json" || fail "compare.json: no cannot_tell"
grep -q "cannot tell" "$work/few-site/index.md" || fail "3-sample night: the index does not say it cannot tell"

night --build-id '../escape' >"$work/out4" 2>&1
rc=$?
[ $rc -eq 2 ] || { cat "$work/out4"; fail "unsafe build id: exit $rc, want 2"; }
grep -q "not a safe slug" "$work/out4" || fail "unsafe build id: message"
# Issue 60: the night's verdict is the alerts'. A history of 15 builds (one
# platform, its runs' noise learnt from the series): at build 13 model 1
# steps +30 % for good and model 2 spikes +30 % for that build alone.
hist="$work/history"
"$bin/torchgauge-gen-fixtures" --out "$hist/results" --builds 15 --models 6 --configs 2 --plant-at 13 \
  --no-cpu-platform >/dev/null || fail "gen-fixtures for the history"
last=$(ls "$hist/results" | sort | tail -n 1)
mkdir -p "$hist/later" && mv "$hist/results/$last" "$hist/later/"
thirteen=$(ls "$hist/results" | sort | tail -n 1)
# The night of build 13: the comparison flags both runs, but one build at a
# new level is not a change to the history, so nothing is raised: exit 0,
# and no issue body, while the tracking comment has nothing new either.
"$src/tools/nightly.sh" --skip-collect --bin-dir "$bin" --results "$hist/results" --site "$hist/public" \
  --build-id "$thirteen" >"$work/out13" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$work/out13"; fail "night of the step's first build: exit $rc, want 0 (no alert yet)"; }
grep -q "the comparison flagged changes that no alert confirms" "$work/out13" ||
  { cat "$work/out13"; fail "the night did not say the comparison's flags are unconfirmed"; }
[ ! -e "$hist/results/.nightly/$thirteen/issue.md" ] || fail "an issue body on a night with no alert"
# The next night: the step's second build raises it (the spike came back and
# is no alert); the comparison of 14 with 13 flags no regression, yet the
# night exits 1 with the alert as its issue, as the tracking comment says.
mv "$hist/later/$last" "$hist/results/"
"$src/tools/nightly.sh" --skip-collect --bin-dir "$bin" --results "$hist/results" --site "$hist/public" \
  --build-id "$last" >"$work/out14" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$work/out14"; fail "night of the step's second build: exit $rc, want 1 (an alert raised)"; }
[ "$(cat "$hist/results/.nightly/$last/issue-title.txt")" = "Regression alert(s) raised in $last: 1" ] ||
  fail "title: $(cat "$hist/results/.nightly/$last/issue-title.txt")"
grep -q "^| A-[0-9a-f]* | nvidia-a100-40gb-cu130 | [^|]* → $thirteen | 1 | [^|]* | history | " \
  "$hist/results/.nightly/$last/issue.md" || { cat "$hist/results/.nightly/$last/issue.md"; fail "issue body lacks the alert"; }
grep -q "^1 new and 0 changed alert(s)" "$hist/results/.nightly/$last/tracking/nvidia-a100-40gb-cu130.md" ||
  fail "the tracking comment does not post the alert the issue names"
echo "nightly_test: ok"
