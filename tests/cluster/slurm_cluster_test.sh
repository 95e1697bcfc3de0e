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
#      afterany job still runs and sees exactly the missing task.
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
# this node has no GPUs, as a CI machine.
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
