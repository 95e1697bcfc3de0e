#!/usr/bin/env bash
# The GPU verification kit, rehearsed where there is no GPU (CI): a lent GPU
# machine is drawn for few sessions and gives 15 minutes, so tools/gpu_verify.sh
# and tools/device_bundle.sh must work the first time there.
#   - the bundle (headers and scripts; no wheels, no download) is made;
#   - gpu_verify.sh --rehearse configures the project exactly as on the GPU
#     machine (deps from the bundle, no reporter, TORCH_CUDA_ARCH_LIST 9.0)
#     and finds every target it builds there;
#   - unknown steps are refused and --help names every step.
# Usage: gpu_kit_test.sh PYTHON WORKDIR (PYTHON: one with torch)
set -uo pipefail
py=$1 work=$2
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rm -rf "$work" && mkdir -p "$work"
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }

bash "$root/tools/device_bundle.sh" --no-wheels "$work/bundle" >"$work/bundle.log" 2>&1
check "device_bundle.sh --no-wheels makes the headers and doctest scripts" \
  '[ -f "$work/bundle/deps/include/nlohmann/json.hpp" ] && [ -f "$work/bundle/deps/include/CLI/CLI.hpp" ] &&
   [ -f "$work/bundle/deps/include/doctest/doctest.h" ] && [ -f "$work/bundle/deps/cmake/doctest.cmake" ]'

t0=$(date +%s)
OUT="$work/out" GPU_VERIFY_PYTHON="$py" GPU_VERIFY_BUILD_DIR="$work/build" GPU_VERIFY_DEVICE_DIR="$work/bundle" \
  GPU_VERIFY_TARGETS=none bash "$root/tools/gpu_verify.sh" --rehearse >"$work/rehearse.log" 2>&1
rc=$?
echo "rehearsal: exit $rc in $(($(date +%s) - t0)) s"
check "the rehearsal configures and finds every target the GPU machine builds" \
  '[ "$rc" = 0 ] && grep -q "configured; targets present: torchgauge-collect gpu_breakdown_test smoke_suite_test" "$work/rehearse.log"'
check "the configuration used the bundle and no reporter" \
  'grep -q "^TORCHGAUGE_DEPS_DIR:PATH=$work/bundle/deps\$" "$work/build/CMakeCache.txt" &&
   grep -q "^TORCHGAUGE_WITH_REPORTER:BOOL=OFF\$" "$work/build/CMakeCache.txt"'
check "the log is written to \$OUT" '[ -s "$work/out/gpu-verify.log" ]'
[ "$fails" = 0 ] || sed 's/^/  | /' "$work/rehearse.log" | tail -40

bash "$root/tools/gpu_verify.sh" collectt >"$work/bad.log" 2>&1
rc=$?
check "an unknown step is refused with exit 2 and named" '[ "$rc" = 2 ] && grep -q "unknown step .collectt." "$work/bad.log"'
bash "$root/tools/gpu_verify.sh" --help >"$work/help.log" 2>&1
check "--help names every step" \
  '(for s in build breakdown ncu collect check; do grep -q "^  $s " "$work/help.log" || exit 1; done)'
echo "gpu_kit_test: $fails failed"
[ "$fails" = 0 ]
