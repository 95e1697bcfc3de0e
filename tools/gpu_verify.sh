#!/usr/bin/env bash
# Issue 4's GPU verification in one command on a lent GPU machine (about
# 10 minutes on an H100; the machine keeps nothing between calls):
#   1. build the collector and the gpu tests against the machine's own
#      python3 torch, with the header-only deps from .device/ (make it here
#      first with tools/device_bundle.sh and carry it);
#   2. run the gpu tests: smoke_suite_cuda_test (every CUDA result's
#      breakdown sums to its wall within 1 %) and gpu_breakdown_test (the
#      breakdown of test_gpu_phases against CUDA-event timings of its phases);
#   3. collect the smoke suite on CUDA as sample data (results-gpu.tar.gz);
#   4. time test_gpu_phases's kernels with Nsight Compute, clocks left alone
#      (--clock-control none), as a third measurement of its active time.
# Everything lands in $OUT (the device tool brings it back), at most 8 files:
# gpu-verify.log, results-gpu.tar.gz, ncu.csv.
# Device tool: run(command="bash tools/gpu_verify.sh", carry=[".device"]).
#
# Steps: build, test, collect, ncu (default: all four). The smoke suite runs
# eager and torchscript (100 runs, twice: once in the test, once collected),
# so all four may not fit one 10-minute device call. Then run
# `bash tools/gpu_verify.sh build test` and, right after (the machine keeps
# build-gpu/ only while it stays warm), `bash tools/gpu_verify.sh collect ncu`.
set -uo pipefail
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(build test collect ncu)
for s in "${steps[@]}"; do
  case "$s" in build|test|collect|ncu) ;; *) echo "gpu_verify: unknown step '$s' (build, test, collect, ncu)"; exit 2 ;; esac
done
want() { local s; for s in "${steps[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-$root/gpu-out}"
mkdir -p "$out"
exec > >(tee "$out/gpu-verify.log") 2>&1
t0=$(date +%s)
step() { echo; echo "=== [$(( $(date +%s) - t0 ))s] $*"; }
fail() { echo "gpu_verify: $*"; exit 1; }

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,pstate --format=csv || fail "no nvidia-smi"
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())'
[ -d .device/deps/include ] || fail ".device/ missing: run tools/device_bundle.sh here and carry .device"

step "python packages for the schema checks"
if ! python3 -c 'import jsonschema' 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .device/wheels/*.whl ||
    fail "installing .device/wheels failed"
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
python3 -c 'import jsonschema; print("jsonschema", jsonschema.__version__)'

collect="$root/build-gpu/collector/torchgauge-collect"
if want build; then
step "configure and build (collector, models, gpu tests; no reporter)"
prefix=$(python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
cap=$(python3 -c 'import torch; print("%d.%d" % torch.cuda.get_device_capability())')
export TORCH_CUDA_ARCH_LIST="$cap"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DTORCHGAUGE_DEPS_DIR="$root/.device/deps" -DTORCHGAUGE_WITH_REPORTER=OFF \
  -DTORCHGAUGE_PYTHON="$(command -v python3)" || fail "cmake failed"
timeout 420 ninja -C build-gpu torchgauge-collect gpu_breakdown_test smoke_suite_test || fail "build failed"
fi
[ -x "$collect" ] || fail "no build-gpu: run the build step first (in the same warm machine)"

gpu_rc=0
if want test; then
step "gpu tests"
(cd build-gpu && timeout 540 ctest -L gpu --output-on-failure -V) | grep -v "^[0-9]*: Test command\|^UpdateCTestConfiguration\|^Parse\|^Constructing\|^Checking test dep"
gpu_rc=${PIPESTATUS[0]}
fi

if want collect; then
step "smoke suite on CUDA: sample data"
rm -rf results-gpu
timeout 480 "$collect" run --suite smoke --device cuda --out results-gpu || echo "collector exit $?"
python3 tests/validate_schema.py results-gpu || echo "schema validation failed"
"$collect" coverage results-gpu | tail -12
tar czf "$out/results-gpu.tar.gz" results-gpu
fi

if want ncu; then
step "Nsight Compute: test_gpu_phases kernel times (clocks not locked)"
if command -v ncu >/dev/null; then
  timeout 240 ncu --target-processes all --clock-control none --metrics gpu__time_duration.sum --csv \
    --log-file "$out/ncu.csv" "$collect" run --include-test-models --model '^test_gpu_phases$' --mode eval \
    --device cuda --warmup 1 --repeat 2 --profile-iterations 0 --no-summary --out /tmp/ncu-run || echo "ncu exit $?"
  python3 - "$out/ncu.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if l.startswith('"'))]
by = collections.defaultdict(float)
for r in rows:
    if r.get("Metric Name") == "gpu__time_duration.sum":
        v = float(r["Metric Value"].replace(",", ""))
        by[r["Kernel Name"][:60]] += v / 1e6 if r["Metric Unit"] == "nsecond" else v / 1e3
for k, v in sorted(by.items(), key=lambda kv: -kv[1]):
    print(f"{v:10.3f} ms  {k}")
print(len(rows), "kernel launches profiled over 3 steps (1 warm-up + 2 timed)")
PY
else
  echo "ncu not found"
fi
fi

step "done: gpu tests exit $gpu_rc"
exit "$gpu_rc"
