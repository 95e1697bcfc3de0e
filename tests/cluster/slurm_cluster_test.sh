#!/usr/bin/env bash
# ctest `slurm_cluster_test` (label cluster): a real single-node Slurm started
# from Debian's slurmctld/slurmd, and the nightly flow of docs/cluster.md run
# through it with the real collector and reporter:
#   1. a 3-task job array sees SLURM_ARRAY_TASK_ID 0..2 and
#      SLURM_ARRAY_TASK_COUNT=3, and the array script's `#SBATCH --gres=gpu:1`
#      is overridden on the command line as the local flow does;
#   2. a job submitted with --dependency=afterany:<array> starts only after
#      every task has ended, and `scancel <array>_<task>` of one task leaves
#      it CANCELLED while its siblings complete and the afterany job runs;
#   3. the flow: tools/slurm/submit.sh submits nightly.sbatch (3 shards of a
#      small suite: test models plus squeezenet1_1) and merge.sbatch; the
#      merged tree has the same run set and statuses as one unsharded
#      collection of the same suite, the site renders (with the sharding
#      section), the regression report is written, and merging again
#      changes nothing;
#   4. scancel of the shard that holds test_hang: the merge (--allow-missing)
#      records exactly that shard's unfinished runs as missing, owed by it;
#      the task re-submitted alone (--resume) completes them, and a merge
#      without --allow-missing then has every planned run.
# Cases 3 and 4 need the collector: TORCHGAUGE_COLLECT and TORCHGAUGE_REPORT
# (set by ctest in a LibTorch build); without them they are skipped, saying so.
# Timings printed are from whatever machine runs the test (informational).
# Usage: slurm_cluster_test.sh [WORK_DIR]   (default: a new temp dir)
# Exit 0 pass, 1 fail, 77 skip (not root: slurmd must start jobs as any user).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: slurmd must run as root to start jobs (SlurmUser=root); run as root" >&2
  exit 77
fi
# shellcheck source=slurm_lib.sh
source "$here/slurm_lib.sh"

work="${1:-}"
if [ -z "$work" ]; then work=$(mktemp -d /tmp/tg-slurm.XXXXXX); else rm -rf "$work"; mkdir -p "$work"; fi
failed=0
finish() {
  local rc=$?
  if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ]; then
    echo "---- jobs still queued (id state reason):" >&2
    squeue -h -o '%i %T %r' >&2 2>/dev/null || true
  fi
  slurm_stop
  if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ]; then
    slurm_dump_logs
    echo "FAIL: slurm cluster test (files kept in $work)" >&2
    exit 1
  fi
  rm -rf "$work"
  echo "PASS: slurm cluster test" >&2
}
trap finish EXIT
trap 'exit 1' INT TERM

fail() { echo "FAIL: $*" >&2; failed=1; exit 1; }
check() {  # description, command...
  local what="$1"; shift
  if "$@"; then echo "ok: $what" >&2; else fail "$what"; fi
}

slurm_start "$work"
mkdir -p "$work/out"

# The array task: writes its id and the array size, and its end time in
# epoch nanoseconds. A task whose id is in $work/hold_<id> sleeps first, so
# the cancel case has a running task to cancel.
cat >"$work/task.sbatch" <<'EOF'
#!/usr/bin/env bash
#SBATCH --gres=gpu:1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
set -eu
dir="$1"
id="$SLURM_ARRAY_TASK_ID"
if [ -e "$dir/hold_$id" ]; then touch "$dir/running_$id"; sleep 300; fi
printf '%s %s %s %s\n' "$id" "$SLURM_ARRAY_TASK_COUNT" "$SLURM_ARRAY_JOB_ID" "$(date +%s%N)" >"$dir/task_$id"
EOF
# The dependent job: records when it started and which task outputs exist.
cat >"$work/after.sbatch" <<'EOF'
#!/usr/bin/env bash
#SBATCH --ntasks=1
set -eu
dir="$1"
start=$(date +%s%N)
present=$(cd "$dir" && ls task_* 2>/dev/null | sed 's/task_//' | sort -n | tr '\n' ' ')
printf '%s\n%s\n' "$start" "$present" >"$dir/after"
EOF

# `--gres=none` on the command line overrides the script's gpu directive;
# this node has no GPUs, as a CI machine. (Case 4 also overrides
# nightly.sbatch's --cpus-per-task=8: the node may have 2.)
submit_array() {  # outdir -> array job id
  sbatch --parsable --array=0-2 --gres=none --chdir="$work" \
    --output="$work/slurm-%A_%a.out" "$work/task.sbatch" "$1"
}
submit_after() {  # array id, outdir -> job id
  sbatch --parsable --dependency="afterany:$1" --chdir="$work" \
    --output="$work/slurm-%j.out" "$work/after.sbatch" "$2"
}

gpu_directive_refused() {
  ! sbatch --test-only --array=0-2 "$work/task.sbatch" "$work" >/dev/null 2>&1
}
check "without --gres=none the script's gpu directive is refused here (no GPUs)" gpu_directive_refused

# ---- Case 1: array + afterany dependency.
d1="$work/out/case1"; mkdir -p "$d1"
array1=$(submit_array "$d1")
after1=$(submit_after "$array1" "$d1")
echo "case 1: array job $array1, dependent job $after1" >&2
check "case 1 array finished within 60 s" slurm_wait_gone "$array1" 60
check "case 1 dependent job finished within 60 s" slurm_wait_gone "$after1" 60
for i in 0 1 2; do
  check "task $i completed" [ "$(slurm_job_state "${array1}_$i")" = COMPLETED ]
  check "task $i wrote its output" [ -f "$d1/task_$i" ]
  read -r id count job _ <"$d1/task_$i"
  check "task $i saw SLURM_ARRAY_TASK_ID=$i" [ "$id" = "$i" ]
  check "task $i saw SLURM_ARRAY_TASK_COUNT=3" [ "$count" = 3 ]
  check "task $i saw SLURM_ARRAY_JOB_ID=$array1" [ "$job" = "$array1" ]
done
check "dependent job completed" [ "$(slurm_job_state "$after1")" = COMPLETED ]
after_start=$(sed -n 1p "$d1/after")
check "dependent job saw all three outputs" [ "$(sed -n 2p "$d1/after")" = "0 1 2 " ]
for i in 0 1 2; do
  end=$(awk '{print $4}' "$d1/task_$i")
  check "dependent job started after task $i ended" [ "$after_start" -gt "$end" ]
done

# ---- Case 2: scancel of one running array task.
d2="$work/out/case2"; mkdir -p "$d2"
touch "$d2/hold_1"
array2=$(submit_array "$d2")
after2=$(submit_after "$array2" "$d2")
echo "case 2: array job $array2, dependent job $after2" >&2
check "task 1 running within 30 s" slurm_poll 30 test -e "$d2/running_1"
check "dependent job waits while task 1 runs" [ "$(slurm_job_state "$after2")" = PENDING ]
scancel "${array2}_1"
check "case 2 array finished within 60 s" slurm_wait_gone "$array2" 60
check "case 2 dependent job finished within 60 s" slurm_wait_gone "$after2" 60
check "task 1 is CANCELLED" [ "$(slurm_job_state "${array2}_1")" = CANCELLED ]
check "task 1 wrote no output" [ ! -e "$d2/task_1" ]
for i in 0 2; do
  check "task $i completed despite the cancel" [ "$(slurm_job_state "${array2}_$i")" = COMPLETED ]
done
check "afterany job ran after the cancel" [ "$(slurm_job_state "$after2")" = COMPLETED ]
check "afterany job saw exactly tasks 0 and 2" [ "$(sed -n 2p "$d2/after")" = "0 2 " ]


# ---- The nightly flow with the real collector and reporter.
repo="$(cd "$here/../.." && pwd)"
if [ -z "${TORCHGAUGE_COLLECT:-}" ] || [ ! -x "${TORCHGAUGE_COLLECT:-/nonexistent}" ] ||
   [ -z "${TORCHGAUGE_REPORT:-}" ] || [ ! -x "${TORCHGAUGE_REPORT:-/nonexistent}" ]; then
  echo "NOTE: TORCHGAUGE_COLLECT/TORCHGAUGE_REPORT not set (a build without LibTorch): cases 3 and 4 skipped" >&2
  exit 0
fi
bin="$work/bin"; mkdir -p "$bin"
ln -s "$TORCHGAUGE_COLLECT" "$bin/torchgauge-collect"
ln -s "$TORCHGAUGE_REPORT" "$bin/torchgauge-report"
collect="$bin/torchgauge-collect"
results="$work/results"
platform=cluster-test
# A small suite: the harness's test models (ok, error, crashed) and one real
# model, eager, at the smoke batch sizes, with tiny settings.
suite_args="--include-test-models --backend eager --warmup 1 --repeat 2 --profile-iterations 0 --no-summary"
models3="--model ^(test_tiny|test_throw|test_crash|squeezenet1_1)\$"

# {run stem: status} of a platform directory, one "stem status" per line.
statuses() {
  python3 - "$1" <<'PY'
import json, pathlib, sys
for f in sorted(pathlib.Path(sys.argv[1], "runs").glob("*.json")):
    print(f.stem, json.loads(f.read_text())["status"])
PY
}
# Field of the merged manifest's shards list, one line per shard: index host present assigned missing.
shard_rows() {
  python3 - "$1" <<'PY'
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
for s in m.get("shards") or []:
    print(s["index"], s["host"] or "-", s["runs_present"], s["runs_assigned"], s["runs_missing"])
PY
}
# Job exit code as "rc:signal".
job_exit() { scontrol show job -o "$1" 2>/dev/null | sed -n 's/.*ExitCode=\([0-9:]*\).*/\1/p' | head -n 1; }
submit_night() {  # build id, site dir, extra COLLECT_ARGS -> "array merge"
  local ids
  # shellcheck disable=SC2086 # the suite's arguments are word-split on purpose
  ids=$(BUILD_ID="$1" SHARDS=3 TORCHGAUGE_BIN_DIR="$bin" RESULTS="$results" SITE="$2" SUITE=smoke PROCESSES=1 \
        PLATFORM_ID="$platform" COLLECT_ARGS="$suite_args $3" \
        "$repo/tools/slurm/submit.sh" --gres=none --cpus-per-task=1 --chdir="$work" \
        --output="$work/slurm-%x-%A_%a.out")
  echo "$ids" >&2
  echo "$(sed -n 's/^shards: job array \([0-9]*\) .*/\1/p' <<<"$ids") $(sed -n 's/.*merge: job \([0-9]*\) .*/\1/p' <<<"$ids")"
}

# ---- Case 3: the unsharded reference, then the same suite in 3 shards through Slurm.
t0=$SECONDS
# shellcheck disable=SC2086
"$collect" run --suite smoke $suite_args $models3 --processes 1 --build-id tg-base --platform-id "$platform" \
  --out "$results" >"$work/unsharded.log" 2>&1 || true
unsharded_s=$((SECONDS - t0))
check "the unsharded collection wrote its runs" [ -n "$(statuses "$results/tg-base/$platform")" ]
t0=$SECONDS
read -r array3 merge3 <<<"$(submit_night tg-night "$work/public" "$models3")"
both_ids() { [ -n "$1" ] && [ -n "$2" ]; }
check "submit.sh printed both job ids" both_ids "$array3" "$merge3"
check "case 3 shards finished within 180 s" slurm_wait_gone "$array3" 180
shards_s=$((SECONDS - t0))
check "case 3 merge job finished within 180 s" slurm_wait_gone "$merge3" 180
flow_s=$((SECONDS - t0))
for i in 0 1 2; do
  check "shard task $i completed" [ "$(slurm_job_state "${array3}_$i")" = COMPLETED ]
done
# tools/nightly.sh's code: 0 no regression, 1 regression, 3 inconclusive (too
# many noisy runs: the shards share this machine's cores), 4 no regression but
# a pipeline health alert (the same noisy runs, as a "noisy" health alert);
# each writes the report. 2 (a failed step) is the one failure.
nightly_exit_ok() { local e; e=$(job_exit "$1"); case "$e" in 0:0|1:0|3:0|4:0) return 0 ;; esac; return 1; }
check "merge job ended with nightly.sh's 0, 1, 3 or 4 (exit $(job_exit "$merge3"))" nightly_exit_ok "$merge3"
merged="$results/tg-night/$platform"
check "same run set and statuses as the unsharded collection" \
  diff <(statuses "$results/tg-base/$platform") <(statuses "$merged")
check "the merged manifest lists 3 shards, each with all its runs" \
  [ "$(shard_rows "$merged" | awk '$2 != "-" && $3 == $4 && $5 == 0' | wc -l)" = 3 ]
check "the shards split the runs (none holds all)" \
  [ "$(shard_rows "$merged" | awk -v n="$(statuses "$merged" | wc -l)" '$4 == n' | wc -l)" = 0 ]
check "the site's index rendered" [ -f "$work/public/index.html" ]
check "the build page shows how the collection was sharded" \
  grep -rqs "How the collection was sharded" "$work/public/builds/tg-night"
check "the regression report was written" [ -s "$results/.nightly/tg-night/report.md" ]
check "and its JSON" [ -s "$results/.nightly/tg-night/compare.json" ]
shard_root="$results/.shards/tg-night"
same_manifests() {  # the shards' manifests agree apart from the shard block, host, times, own counts and measured peaks
  python3 - "$shard_root" <<'PY'
import json, pathlib, sys
seen = []
for d in sorted(pathlib.Path(sys.argv[1]).glob("shard-*")):
    m = json.loads(next(d.glob("*/*/manifest.json")).read_text())
    for k in ("shard", "host", "started_at", "finished_at", "requested", "runs", "cpu_frequency", "peaks"):
        m.pop(k, None)
    for k in ("clocks_start", "clocks_end"):
        m["device"].pop(k, None)
    seen.append(json.dumps(m, sort_keys=True))
sys.exit(0 if len(seen) == 3 and len(set(seen)) == 1 else 1)
PY
}
check "the 3 shard manifests are identical apart from shard, host, times, run counts and peaks" same_manifests
check "the merged logs keep each shard's probe log" \
  [ "$(ls "$merged/logs" | grep -c '^probe\.shard-[0-2]\.log$')" = 3 ]
cp -a "$merged" "$work/merged-once"
check "merging again succeeds" "$collect" merge --into "$results" "$shard_root"/shard-{0,1,2}
check "and changes nothing, byte for byte" diff -r "$work/merged-once" "$merged"
critical=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print(max((s['wall_s'] or 0) for s in m['shards']))" "$merged/manifest.json")
echo "timing (this machine, informational): unsharded ${unsharded_s} s; 3 shards through Slurm ${shards_s} s" \
     "(submit to last shard; slowest shard's own wall ${critical} s); with merge, render and compare ${flow_s} s" >&2

# ---- Case 4: cancel the shard that holds test_hang; merge with missing runs; resume it.
cancel_args="--model ^(test_tiny|test_throw|test_crash|test_hang|squeezenet1_1)\$ --mode eval --timeout 10"
hang=""
for i in 0 1 2; do
  # shellcheck disable=SC2086
  if "$collect" run --suite smoke $suite_args $cancel_args --processes 1 --build-id tg-cancel \
       --platform-id "$platform" --out "$work/dry" --shard "$i/3" --dry-run 2>/dev/null | grep -q '^test_hang '; then
    hang=$i
  fi
done
check "the dry run names the shard that holds test_hang" [ -n "$hang" ]
read -r array4 merge4 <<<"$(submit_night tg-cancel "$work/public-cancel" "$cancel_args")"
cancel_dir="$results/.shards/tg-cancel/shard-$hang/tg-cancel/$platform"
check "shard $hang started (its manifest) within 120 s" slurm_poll 120 test -e "$cancel_dir/manifest.json"
scancel "${array4}_$hang"
check "case 4 shards finished within 180 s" slurm_wait_gone "$array4" 180
check "case 4 merge job finished within 180 s" slurm_wait_gone "$merge4" 180
check "shard $hang is CANCELLED" [ "$(slurm_job_state "${array4}_$hang")" = CANCELLED ]
merged4="$results/tg-cancel/$platform"
check "the merge (--allow-missing) wrote the tree" [ -f "$merged4/manifest.json" ]
missing_check() {
  python3 - "$merged4" "$cancel_dir" "$hang" <<'PY'
import json, pathlib, sys
merged, shard_dir, hang = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
plan = json.loads((shard_dir / "manifest.json").read_text())["shard"]["plan"]
owed = {p["run"] for p in plan if p["shard"] == hang}
done = {f.stem for f in (shard_dir / "runs").glob("*.json")}
missing = {}
for f in (merged / "runs").glob("*.json"):
    r = json.loads(f.read_text())
    if r["status"] == "missing":
        missing[f.stem] = r["reason"]
want = owed - done
print("owed", sorted(owed), "done", sorted(done), "missing", sorted(missing), file=sys.stderr)
ok = bool(want) and set(missing) == want and all(f"shard {hang}/3" in why for why in missing.values())
shards = json.loads((merged / "manifest.json").read_text())["shards"]
ok = ok and shards[hang]["runs_missing"] == len(want) and sum(s["runs_missing"] for s in shards) == len(want)
sys.exit(0 if ok else 1)
PY
}
check "exactly shard $hang's unfinished runs are missing, owed by shard $hang" missing_check
done_before=$(find "$cancel_dir/runs" -name '*.json' 2>/dev/null | wc -l)
resume=$(BUILD_ID=tg-cancel SHARD_COUNT=3 TORCHGAUGE_BIN_DIR="$bin" RESULTS="$results" SUITE=smoke PROCESSES=1 \
         PLATFORM_ID="$platform" COLLECT_ARGS="$suite_args $cancel_args" \
         sbatch --parsable --export=ALL --array="$hang" --gres=none --cpus-per-task=1 --chdir="$work" \
         --output="$work/slurm-resume-%A_%a.out" "$repo/tools/slurm/nightly.sbatch")
resume="${resume%%;*}"
check "re-submitted shard $hang finished within 120 s" slurm_wait_gone "$resume" 120
check "re-submitted shard $hang completed" [ "$(slurm_job_state "${resume}_$hang")" = COMPLETED ]
if [ "$done_before" -gt 0 ]; then
  check "--resume kept the $done_before runs finished before the cancel" \
    grep -q "kept $done_before existing" "$work/slurm-resume-${resume}_$hang.out"
fi
check "merge without --allow-missing now succeeds" \
  "$collect" merge --into "$results" "$results/.shards/tg-cancel"/shard-{0,1,2}
check "no run is missing any more" [ -z "$(statuses "$merged4" | awk '$2 == "missing"')" ]
check "every planned run is there" [ "$(statuses "$merged4" | wc -l)" = \
  "$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['shard']['plan']))" "$cancel_dir/manifest.json")" ]

# A shifted array would misnumber shards: nightly.sbatch refuses it.
bad=$(BUILD_ID=tg-bad TORCHGAUGE_BIN_DIR="$bin" RESULTS="$results" \
      sbatch --parsable --export=ALL --array=1-3 --gres=none --cpus-per-task=1 --chdir="$work" \
      --output="$work/slurm-bad-%A_%a.out" "$repo/tools/slurm/nightly.sbatch")
check "shifted array finished within 60 s" slurm_wait_gone "$bad" 60
check "nightly.sbatch fails a task of --array=1-3" [ "$(slurm_job_state "${bad}_1")" = FAILED ]
check "and says to use --array=0-2" grep -q -- "use --array=0-2" "$work/slurm-bad-${bad}_1.out"
