#!/usr/bin/env bash
# TorchGauge nightly entry point: one command runs a whole night for a build.
#   1. collect the configured suite on this machine into the results tree
#   2. render the site: that build and anything changed (torchgauge-report build)
#   3. compare it with the previous build (torchgauge-report compare)
#   4. write tonight's comment for each platform's tracking issue (the
#      alerts that are new or changed) and post it with gh when it can
#      (--tracking-repo and gh credentials); otherwise print the commands
#   5. write the GitHub issue body (and title) when something regressed:
#      a regression alert raised tonight (the runs' history confirmed a
#      change, docs/alerts.md) or a run that stopped working
#   6. exit with the CI code: 0 nothing regressed, 1 regression, 2 bad input
#      or a failed step, 3 no regression but the night cannot say so:
#      inconclusive (more noisy runs than --max-noisy-percent allows: a noisy
#      run cannot regress) or cannot tell (too few processes or samples for
#      the rank test to reach alpha; compare.json's outcome says which), 4 no
#      regression but a pipeline health alert in this build (a missing
#      night, a machine change, runs that vanished, too many noisy runs),
#      5 nothing regressed but <results>/triage.json is malformed (the night
#      ran in full with the last good triage; fix the file).
# See docs/nightly.md for the scheduled CI job and the cron example.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: tools/nightly.sh [--build-id ID] [options]
  --build-id ID        the build being measured, a safe slug
                       (default: the collector's, <libtorch version>[-cuXYZ]-<UTC date>)
  --results DIR        results tree                                   (default: results)
  --site DIR           published site directory                      (default: public)
  --site-url URL       public URL of the site, for links in the issue  (default: none)
  --suite NAME         suite to collect                               (default: smoke)
  --config FILE        suite configuration file passed to the collector
  --processes N        worker processes per run, in interleaved rounds; the comparison
                       reads their spread as each run's noise band (docs/nightly.md);
                       1 is the paper's single-process protocol      (default: 5)
  --bin-dir DIR        where torchgauge-collect and torchgauge-report live
                       (default: the repo's build/ tree, then PATH)
  --base ID            baseline build (default: the previous build)
  --window N, --persist N, --threshold PCT, --threshold-for R (repeatable), --alpha A,
  --max-noisy-percent PCT
                       the comparison rules of the night, passed to `torchgauge-report compare`
                       and, as --compare-*, to `torchgauge-report build`, so the exit code, the
                       issue, the site's alerts and the tracking comment use the same (their
                       defaults when absent; `torchgauge-report compare --help` lists them)
  --issue-dir DIR      where issue.md / issue-title.txt / compare.json go
                       (default: <results>/.nightly/<build-id>; hidden, so no loader takes it for a build)
  --collect-arg ARG    extra argument for `torchgauge-collect run`, repeatable
  --skip-collect       reuse results already collected for this build
  --skip-site          do not run `torchgauge-report build`
  --max-builds N, --since YYYY-MM-DD
                       the site's retention policy, passed to `torchgauge-report build`:
                       older builds' pages are deleted, their history kept (pass it every night)
  --open-issue REPO    open the issue with `gh issue create -R REPO` when something regressed
  --tracking-repo REPO post tonight's new and changed alerts as one comment on each platform's
                       long-lived tracking issue in REPO (gh; opened when missing); without
                       it, or without gh credentials, the gh commands are printed instead
  -h, --help
USAGE
}

die() { echo "nightly: $*" >&2; exit 2; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_id="" results="results" site="public" site_url="" suite="smoke" config="" bin_dir=""
processes=5 base="" issue_dir="" open_issue="" tracking_repo=""
skip_collect=0 skip_site=0
compare_args=() collect_args=() site_args=() site_compare_args=()

while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-id) build_id="${2:?}"; shift 2 ;;
    --results) results="${2:?}"; shift 2 ;;
    --site) site="${2:?}"; shift 2 ;;
    --site-url) site_url="${2:?}"; shift 2 ;;
    --suite) suite="${2:?}"; shift 2 ;;
    --config) config="${2:?}"; shift 2 ;;
    --processes) processes="${2:?}"; shift 2 ;;
    --bin-dir) bin_dir="${2:?}"; shift 2 ;;
    --base) base="${2:?}"; shift 2 ;;
    # One set of rules for the night: compare's own flags, and build's --compare-* twins.
    --window|--persist|--threshold|--threshold-for|--alpha|--max-noisy-percent)
      compare_args+=("$1" "${2:?}"); site_compare_args+=("--compare-${1#--}" "$2"); shift 2 ;;
    --max-builds|--since) site_args+=("$1" "${2:?}"); shift 2 ;;
    --issue-dir) issue_dir="${2:?}"; shift 2 ;;
    --collect-arg) collect_args+=("${2:?}"); shift 2 ;;
    --skip-collect) skip_collect=1; shift ;;
    --skip-site) skip_site=1; shift ;;
    --open-issue) open_issue="${2:?}"; shift 2 ;;
    --tracking-repo) tracking_repo="${2:?}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
  esac
done

find_bin() {  # name -> path
  local name="$1" c
  for c in ${bin_dir:+"$bin_dir/$name"} "$here/build/collector/$name" "$here/build/reporter/$name" "$here/build/$name"; do
    [[ -x "$c" ]] && { echo "$c"; return; }
  done
  command -v "$name" || die "$name not found (build the project or pass --bin-dir)"
}
if [[ -z "$build_id" ]]; then
  # The id the collector would pick: the LibTorch it links, and today's date.
  build_id=$("$(find_bin torchgauge-collect)" env | sed -n 's/^  "build_id": "\(.*\)",\{0,1\}$/\1/p')
  [[ -n "$build_id" ]] || die "could not derive a build id from 'torchgauge-collect env'; pass --build-id"
fi
[[ "$build_id" =~ ^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$ ]] || die "build id '$build_id' is not a safe slug"
report="$(find_bin torchgauge-report)"
issue_dir="${issue_dir:-$results/.nightly/$build_id}"
start=$(date +%s)
step() { echo "nightly [$(( $(date +%s) - start ))s] $*" >&2; }

# 1. Collect.
if [[ $skip_collect -eq 0 ]]; then
  collect="$(find_bin torchgauge-collect)"
  step "collecting suite '$suite' for build $build_id into $results"
  args=(run --suite "$suite" --build-id "$build_id" --out "$results")
  [[ -n "$config" ]] && args+=(--config "$config")
  [[ -n "$processes" ]] && args+=(--processes "$processes")
  # A run that fails is recorded in its result file; only a collector that
  # could not run at all stops the night.
  "$collect" "${args[@]}" "${collect_args[@]}" || die "torchgauge-collect failed (exit $?)"
fi
[[ -d "$results/$build_id" ]] || die "no results for build $build_id under $results"

# 2. Render the site. A full render: builds whose results, dependencies and
# renderer are unchanged since their last render are skipped by fingerprint,
# so this renders the new build, the index, and any build a failed night left
# unfinished.
# A malformed triage.json (build exits 5) does not stop the night: the site
# is rendered with the last good triage and the night exits 5 at the end,
# unless something worse (1, 2) happened.
triage_bad=0
if [[ $skip_site -eq 0 ]]; then
  step "rendering $site (build $build_id and anything changed)"
  set +e
  "$report" build --results "$results" --out "$site" ${site_url:+--site-url "$site_url"} \
      ${site_compare_args[@]+"${site_compare_args[@]}"} ${site_args[@]+"${site_args[@]}"}
  brc=$?
  set -e
  if [[ $brc -eq 5 ]]; then
    triage_bad=1
    step "$results/triage.json is malformed: the site shows the last good triage; the night goes on and exits 5"
  elif [[ $brc -ne 0 ]]; then
    die "torchgauge-report build failed (exit $brc)"
  fi
fi
if [[ -n "$tracking_repo" && -z "$site_url" ]]; then
  step "warning: --tracking-repo without --site-url: the tracking comments cannot link the site's pages"
fi
# The night's verdict, with a malformed triage file reported once the work is done.
finish() {
  local code="$1"
  if [[ $triage_bad -eq 1 && ( $code -eq 0 || $code -eq 3 || $code -eq 4 ) ]]; then
    step "exit 5: fix $results/triage.json (torchgauge-report build names the problem)"
    code=5
  fi
  step "done in $(( $(date +%s) - start ))s, exit $code"
  exit "$code"
}

# 3. Compare with the previous build (the first build has nothing to compare with).
others=$(find "$results" -mindepth 1 -maxdepth 1 -type d ! -name "$build_id" ! -name ".*" | wc -l)
if [[ -z "$base" && "$others" -eq 0 ]]; then
  step "first build in $results: nothing to compare with"
  finish 0
fi
mkdir -p "$issue_dir"
# The build's compare page is the site's (step 2 wrote builds/<id>/compare.html
# with the same rules); this comparison writes the issue's files only.
step "comparing $build_id with ${base:-the previous build}"
set +e
"$report" compare --new "$build_id" --results "$results" ${base:+--base "$base"} \
    "${compare_args[@]}" ${site_url:+--site-url "$site_url"} \
    --markdown "$issue_dir/report.md" --json "$issue_dir/compare.json"
rc=$?
crc=$rc
set -e

# 4. Alerts reach people: one comment per platform on its tracking issue.
# The night's verdict on regressions is the alerts' (issue 60): a regression
# alert raised in tonight's night (track exits 1) or a run that stopped
# working (compare.json's worse_statuses). A time change that only the build
# comparison flagged, and that the run's history does not confirm, is in
# report.md but fails nothing: at the project's noise most such flags were
# false. Without the site (--skip-site) the comparison's verdict stands.
raised=0
if [[ $skip_site -eq 0 && ( $rc -le 1 || $rc -eq 3 ) ]]; then
  track_dir="$issue_dir/tracking"
  track=(track --results "$results" --site "$site" --out "$track_dir" --build "$build_id"
         ${site_url:+--site-url "$site_url"} ${tracking_repo:+--repo "$tracking_repo"})
  set +e
  "$report" "${track[@]}" --fail-on-health "$build_id" --fail-on-regression "$build_id"
  trc=$?
  set -e
  [[ $trc -eq 0 || $trc -eq 1 || $trc -eq 4 ]] || die "torchgauge-report track failed (exit $trc)"
  if [[ -n "$tracking_repo" ]] && command -v gh >/dev/null && gh auth status >/dev/null 2>&1; then
    step "posting tonight's alerts on the tracking issues of $tracking_repo"
    if bash "$track_dir/gh-commands.sh"; then
      "$report" "${track[@]}" --record >/dev/null
    else
      step "posting failed: the comments stay unrecorded and are posted with tomorrow's"
    fi
  else
    step "no --tracking-repo or no gh credentials: the commands that would post tonight's alerts ($track_dir/gh-commands.sh):"
    sed 's/^/    /' "$track_dir/gh-commands.sh" >&2
  fi
  worse=$(grep -o '"worse_statuses": *[0-9]*' "$issue_dir/compare.json" 2>/dev/null | grep -o '[0-9]*$' || echo 0)
  if [[ $trc -eq 1 ]]; then
    raised=1
    rc=1
  elif [[ $rc -eq 1 && ${worse:-0} -eq 0 ]]; then
    step "the comparison flagged changes that no alert confirms (not raised by the runs' history): see $issue_dir/report.md"
    rc=0
  fi
  if [[ $trc -eq 4 && ( $rc -eq 0 || $rc -eq 3 ) ]]; then
    step "pipeline health alert in build $build_id (see the regressions page)"
    rc=4
  fi
fi

# 5. The issue body when something regressed: tonight's alerts, then the
# comparison's report.
if [[ $rc -eq 1 ]]; then
  if [[ $raised -eq 1 ]]; then
    n=$(grep -c '^| \[\?A-' "$track_dir/raised.md" || true)
    if [[ $crc -eq 1 ]]; then
      head -n 1 "$issue_dir/report.md" | sed -e 's/^# //' -e 's/\\//g' > "$issue_dir/issue-title.txt"
    else
      echo "Regression alert(s) raised in $build_id: $n" > "$issue_dir/issue-title.txt"
    fi
    { cat "$track_dir/raised.md"; echo; cat "$issue_dir/report.md"; } > "$issue_dir/issue.md.tmp"
    # GitHub refuses a body over 65,536 characters: cut the comparison's tail.
    if [[ $(wc -c < "$issue_dir/issue.md.tmp") -gt 65000 ]]; then
      { head -c 64500 "$issue_dir/issue.md.tmp"; printf '\n\n(cut to fit GitHub; the whole report: %s)\n' \
          "${site_url:+$site_url/}builds/$build_id/compare.html"; } > "$issue_dir/issue.md"
      rm -f "$issue_dir/issue.md.tmp"
    else
      mv "$issue_dir/issue.md.tmp" "$issue_dir/issue.md"
    fi
  else
    cp "$issue_dir/report.md" "$issue_dir/issue.md"
    # First line of the report, without the heading mark and Markdown escapes.
    head -n 1 "$issue_dir/issue.md" | sed -e 's/^# //' -e 's/\\//g' > "$issue_dir/issue-title.txt"
  fi
  step "regression: issue body in $issue_dir/issue.md ($(wc -c < "$issue_dir/issue.md") chars)"
  if [[ -n "$open_issue" ]]; then
    gh issue create -R "$open_issue" --title "$(cat "$issue_dir/issue-title.txt")" \
        --body-file "$issue_dir/issue.md" --label performance || step "gh issue create failed"
  fi
elif [[ $rc -eq 0 || $rc -eq 4 ]]; then
  step "no regression"
elif [[ $rc -eq 3 ]]; then
  # Inconclusive (noisy) or cannot tell (too few samples): the title says which.
  step "no regression found, but the night cannot say so: $(head -n 1 "$issue_dir/report.md" | sed -e 's/^# //' -e 's/\\//g')"
else
  step "compare failed (exit $rc)"
fi
finish "$rc"
