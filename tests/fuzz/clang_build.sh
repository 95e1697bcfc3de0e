#!/usr/bin/env bash
# Configures and builds the clang ASan + UBSan build of the LibTorch-free
# parts (core, reporter, their tests) and the fuzz targets, for the main
# build's sanitize_* tests (cmake/sanitize.cmake). One build for both, so CI
# compiles it once; ccache (the top CMakeLists' launcher) makes repeats cheap.
#   clang_build.sh SOURCE_DIR BUILD_DIR [PYTHON] [DEPS_DIR]
set -euo pipefail
src=$1 dir=$2 py=${3:-} deps=${4:-}
cxx=$(command -v clang++ || true)
if [ -z "$cxx" ]; then
  echo "clang++ not found: tools/bootstrap.sh installs clang and libclang-rt-dev (the sanitizer and libFuzzer runtimes)" >&2
  exit 1
fi
source "$src/tools/cores.sh"
start=$(date +%s)
# -O1, not -O0: -O0 compiles in half the time (compare_test.cc: 18.9 s
# against 40.1 s of CPU, 2026-11-29) but its frames are so much larger that
# json_io_test's deeply nested documents overflow the stack in nlohmann's
# recursive dump (SEGV under ASan). Line tables only: enough for a
# sanitizer report's file:line stack.
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DTORCHGAUGE_WITH_TORCH=OFF -DTORCHGAUGE_SANITIZE=ON -DTORCHGAUGE_FUZZ=ON \
    -DTORCHGAUGE_PYTHON="$py" -DTORCHGAUGE_DEPS_DIR="$deps"
fi
# Only what the sanitize_* tests run (no benchmarks, no browser test): every
# test executable labelled unit, integration or fuzz (torchgauge_add_test).
cmake --build "$dir" -j"$(tg_cores)" --target torchgauge_sanitized_tests \
  torchgauge-report torchgauge-gen-fixtures torchgauge_fuzzers platform_fields_dump
echo "sanitizer build ready in $(( $(date +%s) - start )) s: $dir"
