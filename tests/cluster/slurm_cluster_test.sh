#!/usr/bin/env bash
# ctest `slurm_cluster_test` (label cluster): a real single-node Slurm started
# from Debian's slurmctld/slurmd, proving the scheduler features the nightly
# flow (tools/slurm/, docs/cluster.md) relies on:
#   1. a 3-task job array sees SLURM_ARRAY_TASK_ID 0..2 and
#      SLURM_ARRAY_TASK_COUNT=3, and the array script's `#SBATCH --gres=gpu:1`
#      is overridden on the command line as the local flow does;
#   2. a job submitted with --dependency=afterany:<array> starts only after
#      every task has ended;
#   3. `scancel <array>_<task>` of one task is observable: that task ends
#      CANCELLED without writing its output, its siblings complete, and the
#      afterany job still runs and sees exactly the missing task;
#   4. tools/slurm/submit.sh submits tools/slurm/nightly.sbatch and
#      merge.sbatch as documented, and they call the collector with the
#      interface of issue 14 (run --shard I/N --out <own dir> --resume, then
#      merge --into, then tools/nightly.sh). `--shard` and `merge` are not in
#      the collector yet, so this case runs them against a recording stand-in
#      for torchgauge-collect/torchgauge-report: it tests the scripts and their
#      scheduling, not collection (docs/cluster.md).
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

# ---- Case 4: tools/slurm/ scripts through sbatch, with a recording stand-in
# for the collector and the reporter (see the header).
repo="$(cd "$here/../.." && pwd)"
stub="$work/stub-bin"; mkdir -p "$stub"
cat >"$stub/torchgauge-collect" <<'STUB'
#!/usr/bin/env bash
# Records its arguments; creates what the real command would leave behind.
set -eu
log="$STUB_LOG/collect.$1.$(date +%s%N).$$"
printf '%s\n' "$@" >"$log"
case "$1" in
  run) prev=""; for a in "$@"; do [ "$prev" = --out ] && mkdir -p "$a/$BUILD_ID/stub-platform/runs"; prev="$a"; done ;;
  merge) mkdir -p "$3/$BUILD_ID/stub-platform" ;;
esac
STUB
cat >"$stub/torchgauge-report" <<'STUB'
#!/usr/bin/env bash
set -eu
printf '%s\n' "$@" >"$STUB_LOG/report.$1.$$"
STUB
chmod +x "$stub/torchgauge-collect" "$stub/torchgauge-report"
export STUB_LOG="$work/stub-log"; mkdir -p "$STUB_LOG"
ids=$(BUILD_ID=stub-build SHARDS=3 TORCHGAUGE_BIN_DIR="$stub" RESULTS="$work/results" SITE="$work/public" \
      PROCESSES=1 "$repo/tools/slurm/submit.sh" --gres=none --cpus-per-task=1 --chdir="$work" --output="$work/slurm-%x-%A_%a.out")
echo "case 4: $ids" >&2
array4=$(sed -n 's/^shards: job array \([0-9]*\) .*/\1/p' <<<"$ids")
merge4=$(sed -n 's/.*merge: job \([0-9]*\) .*/\1/p' <<<"$ids")
check "submit.sh printed the array's job id" [ -n "$array4" ]
check "submit.sh printed the merge's job id" [ -n "$merge4" ]
check "case 4 shards finished within 60 s" slurm_wait_gone "$array4" 60
check "case 4 merge finished within 60 s" slurm_wait_gone "$merge4" 60
shard_root="$work/results/.shards/stub-build"
for i in 0 1 2; do
  check "shard task $i completed" [ "$(slurm_job_state "${array4}_$i")" = COMPLETED ]
  f=$(grep -lx -- "$i/3" "$STUB_LOG"/collect.run.* 2>/dev/null | head -n 1 || true)
  check "shard $i ran the collector with --shard $i/3" [ -n "$f" ]
  check "shard $i: --out its own directory" grep -qx -- "$shard_root/shard-$i" "$f"
  check "shard $i: --resume" grep -qx -- --resume "$f"
  check "shard $i: the build id" grep -qx -- stub-build "$f"
done
check "merge job completed" [ "$(slurm_job_state "$merge4")" = COMPLETED ]
m=$(ls "$STUB_LOG"/collect.merge.* 2>/dev/null | head -n 1 || true)
check "merge job ran torchgauge-collect merge" [ -n "$m" ]
check "merge --into the results tree, --allow-missing, the three shards in order" \
  [ "$(tr '\n' ' ' <"$m")" = "merge --into $work/results --allow-missing $shard_root/shard-0 $shard_root/shard-1 $shard_root/shard-2 " ]
merge_ns=$(basename "$m" | cut -d. -f3)
for f in "$STUB_LOG"/collect.run.*; do
  check "merge started after $(basename "$f")" [ "$merge_ns" -gt "$(basename "$f" | cut -d. -f3)" ]
done
check "merge job rendered the site through tools/nightly.sh" grep -qx -- "$work/public" "$STUB_LOG"/report.build.*

# A shifted array would misnumber shards: nightly.sbatch refuses it.
bad=$(BUILD_ID=stub-build TORCHGAUGE_BIN_DIR="$stub" RESULTS="$work/results" \
      sbatch --parsable --export=ALL --array=1-3 --gres=none --cpus-per-task=1 --chdir="$work" \
      --output="$work/slurm-bad-%A_%a.out" "$repo/tools/slurm/nightly.sbatch")
check "shifted array finished within 60 s" slurm_wait_gone "$bad" 60
check "nightly.sbatch fails a task of --array=1-3" [ "$(slurm_job_state "${bad}_1")" = FAILED ]
check "and says to use --array=0-2" grep -q -- "use --array=0-2" "$work/slurm-bad-${bad}_1.out"
