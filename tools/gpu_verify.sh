#!/usr/bin/env bash
# Issue 40's GPU verification on a lent GPU machine, in one device call that
# keeps inside a deadline (a session has 15 minutes of device time, a call at
# most 10; the machine keeps nothing between calls unless it is still warm).
# Steps, in this order (default: all):
#   build      configure and build the collector and the gpu tests against the
#              machine's own python3 torch, for its compute capability, with
#              the header-only deps of .device/ (make it here first with
#              tools/device_bundle.sh and carry it); no reporter;
#   breakdown  gpu_breakdown_test: the breakdown of test_gpu_phases against
#              CUDA-event timings of its phases (ctest, label gpu);
#   ncu        Nsight Compute times test_gpu_phases's kernels, clocks left
#              alone (--clock-control none): a third measurement of active;
#   collect    the smoke suite on CUDA (eager, TorchScript, Inductor and the
#              generative model) as sample data, resumable: a call cut short
#              by the deadline leaves finished results, and the next call
#              (machine still warm) goes on where it stopped;
#   check      smoke_suite_cuda_test over that collection (every planned run
#              has a result; per-result GPU checks; ctest, label gpu).
# Everything lands in $OUT (the device tool brings it back): gpu-verify.log,
# ncu.csv, results-gpu.tar.gz (packed after every collect, complete or not).
# Device tool:
#   run(command="bash tools/gpu_verify.sh", carry=[".device"], timeout_s=600)
# and, if the log ends with "collection incomplete", at once (while warm):
#   run(command="bash tools/gpu_verify.sh collect check", carry=[".device"], timeout_s=...)
#
# GPU_VERIFY_BUDGET_S (default 570): the whole call's deadline in seconds;
#   each step's timeout is cut to what is left, and a step that cannot start
#   in time is skipped and named.
# --rehearse: on a machine without a GPU (CI), run only `build` with the same
#   options for compute capability 9.0: GPU_VERIFY_BUILD_DIR (default
#   build-gpu), GPU_VERIFY_PYTHON (default python3), GPU_VERIFY_TARGETS=none
#   to configure only, GPU_VERIFY_DEVICE_DIR (default .device) for the bundle
#   (tools/device_bundle.sh --no-wheels DIR). tests/gpu_kit_test.sh does that,
#   so the kit cannot rot between the sessions that get a GPU.
# TORCHGAUGE_GIT_SHA: the commit for the manifests where the copied tree has
#   no .git (the device tool copies the working tree).
set -uo pipefail
rehearse=0
steps=()
for a in "$@"; do
  case "$a" in
    --rehearse) rehearse=1 ;;
    -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    build|breakdown|ncu|collect|check) steps+=("$a") ;;
    *) echo "gpu_verify: unknown step '$a' (build, breakdown, ncu, collect, check; or --rehearse, --help)"; exit 2 ;;
  esac
done
if [ "$rehearse" = 1 ]; then
  for s in "${steps[@]}"; do [ "$s" = build ] || { echo "gpu_verify: --rehearse runs the build step only"; exit 2; }; done
  steps=(build)
fi
[ ${#steps[@]} -gt 0 ] || steps=(build breakdown ncu collect check)
want() { local s; for s in "${steps[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-$root/gpu-out}"
py="${GPU_VERIFY_PYTHON:-python3}"
build="${GPU_VERIFY_BUILD_DIR:-$root/build-gpu}"
budget="${GPU_VERIFY_BUDGET_S:-570}"
bundle="${GPU_VERIFY_DEVICE_DIR:-$root/.device}"
mkdir -p "$out"
exec > >(tee -a "$out/gpu-verify.log") 2>&1
tee_pid=$!
# The log is complete when the device tool gathers $OUT: tee is waited for.
trap 'exec >&- 2>&-; wait "$tee_pid" 2>/dev/null' EXIT
t0=$(date +%s)
step() { echo; echo "=== [$(($(date +%s) - t0))s] $*"; }
fail() { echo "gpu_verify: $*"; exit 1; }
left() { echo $((budget - ($(date +%s) - t0))); }
# within CAP NEED: the timeout for a step that may take up to CAP seconds,
# the time left less 15 s for packing; empty (skip it) when under NEED.
within() {
  local l=$(($(left) - 15))
  [ "$l" -ge "$2" ] || return 1
  echo $((l < $1 ? l : $1))
}
skipped=()
results_tar() { [ -d results-gpu ] && tar czf "$out/results-gpu.tar.gz" results-gpu && echo "packed $out/results-gpu.tar.gz"; }

step "machine (deadline ${budget}s; steps: ${steps[*]})"
if [ "$rehearse" = 1 ]; then
  echo "rehearsal: no GPU needed; building for compute capability 9.0 (the H100/H200)"
else
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,pstate --format=csv || fail "no nvidia-smi"
fi
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' ||
  fail "$py has no torch"
[ -d "$bundle/deps/include" ] || fail "$bundle/deps missing: run tools/device_bundle.sh here and carry .device"

if [ "$rehearse" = 0 ] && ! "$py" -c 'import jsonschema' 2>/dev/null; then
  step "python packages for the schema checks"
  "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$bundle"/wheels/*.whl ||
    fail "installing $bundle/wheels failed"
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  "$py" -c 'import jsonschema; print("jsonschema", jsonschema.__version__)'
fi

collect="$build/collector/torchgauge-collect"
if want build; then
  step "configure and build (collector, models, gpu tests; no reporter)"
  prefix=$("$py" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
  if [ "$rehearse" = 1 ]; then
    cap=9.0
  else
    cap=$("$py" -c 'import torch; print("%d.%d" % torch.cuda.get_device_capability())')
  fi
  export TORCH_CUDA_ARCH_LIST="$cap"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    -DTORCHGAUGE_DEPS_DIR="$bundle/deps" -DTORCHGAUGE_WITH_REPORTER=OFF \
    -DTORCHGAUGE_PYTHON="$(command -v "$py")" || fail "cmake failed"
  targets=(torchgauge-collect gpu_breakdown_test smoke_suite_test)
  if [ "${GPU_VERIFY_TARGETS:-}" = none ]; then
    ninja -C "$build" -t query "${targets[@]}" >/dev/null || fail "the build has no target among: ${targets[*]}"
    echo "configured; targets present: ${targets[*]}"
  else
    build_cap=420  # 16 cores; a rehearsal on 2 cores takes as long as its deadline allows
    [ "$rehearse" = 1 ] && build_cap=$budget
    t=$(within "$build_cap" 60) || fail "no time left to build"
    timeout "$t" ninja -C "$build" "${targets[@]}" || fail "build failed (or passed its ${t}s)"
  fi
fi
[ "$rehearse" = 1 ] && { step "rehearsal done"; exit 0; }
[ -x "$collect" ] || fail "no $build: run the build step first (in the same warm machine)"

# ctest_gpu NAME CAP NEED [ENV=...]: one gpu test, its exit status in rc[NAME].
declare -A rc
ctest_gpu() {
  local name=$1 cap=$2 need=$3 t
  shift 3
  if ! t=$(within "$cap" "$need"); then skipped+=("$name"); rc[$name]=skipped; return; fi
  (cd "$build" && env "$@" timeout "$t" ctest -R "^$name\$" --output-on-failure -V) |
    grep -v "^[0-9]*: Test command\|^UpdateCTestConfiguration\|^Parse\|^Constructing\|^Checking test dep"
  rc[$name]=${PIPESTATUS[0]}
}

if want breakdown; then
  step "gpu_breakdown_test: the breakdown against CUDA events"
  ctest_gpu gpu_breakdown_test 240 60
fi

if want ncu; then
  step "Nsight Compute: test_gpu_phases kernel times (clocks not locked)"
  if ! command -v ncu >/dev/null; then
    echo "ncu not found"
  elif ! t=$(within 240 90); then
    skipped+=(ncu)
  else
    timeout "$t" ncu --target-processes all --clock-control none --metrics gpu__time_duration.sum --csv \
      --log-file "$out/ncu.csv" "$collect" run --include-test-models --model '^test_gpu_phases$' --mode eval \
      --backend eager --device cuda --warmup 1 --repeat 2 --profile-iterations 0 --no-summary --no-probe \
      --out /tmp/ncu-run || echo "ncu exit $?"
    "$py" tools/ncu_kernels.py "$out/ncu.csv" || echo "ncu.csv could not be read"
  fi
fi

if want collect; then
  step "smoke suite on CUDA: sample data (resumes a cut collection)"
  ids=()
  existing=$(find results-gpu -mindepth 1 -maxdepth 1 -type d 2>/dev/null | head -1)
  [ -n "$existing" ] && ids=(--build-id "$(basename "$existing")")
  if t=$(within 100000 120); then
    timeout "$t" "$collect" run --suite smoke --device cuda --out results-gpu --resume --no-summary "${ids[@]}"
    code=$?
    [ "$code" = 0 ] || echo "collector exit $code$([ "$code" = 124 ] && echo ": the deadline")"
    planned=$("$collect" run --suite smoke --device cuda --dry-run | sed -n 's/^\([0-9]*\) runs -> .*/\1/p')
    have=$(find results-gpu -path '*/runs/*.json' | wc -l)
    echo "results: $have of $planned planned runs"
    [ "$have" -ge "$planned" ] || echo "collection incomplete: run 'bash tools/gpu_verify.sh collect check' at once (it resumes)"
    "$collect" coverage results-gpu | tail -12
  else
    skipped+=(collect)
  fi
  results_tar
fi

if want check; then
  step "smoke_suite_cuda_test over the collection"
  ctest_gpu smoke_suite_cuda_test 300 30 TORCHGAUGE_TEST_RESULTS="$root/results-gpu"
fi

summary=""
for n in "${!rc[@]}"; do summary+=" $n=${rc[$n]}"; done
step "done:${summary:- no tests run}${skipped[*]:+; skipped for the deadline: ${skipped[*]}}"
for n in "${!rc[@]}"; do [ "${rc[$n]}" = 0 ] || exit 1; done
[ ${#skipped[@]} -eq 0 ] || exit 3
exit 0
