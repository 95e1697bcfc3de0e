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
# The libraries at -O1, the test executables at -O0 (torchgauge_add_test):
# -O0 compiles in under half the time, measured on a quiet machine
# (2026-11-29, ASan + UBSan): core/analysis/compare_test.cc 35.0 s at -O1
# and 14.6 s at -O0, reporter/compare/command_test.cc 60.1 s and 27.7 s,
# reporter/site/site.cc 29.9 s and 16.0 s. But code at -O0 runs several
# times slower under ASan: reporter_site_test took 67 s with everything at
# -O1 and 302 s with everything at -O0, so the libraries, where the tests
# spend their time, stay at -O1. The test files' -O0 frames need more than
# the default 8 MiB of stack in json_io_test's 1,100-level document
# (nlohmann's recursive dump), which the sanitize_* tests give them
# (tests/fuzz/sanitized_ctest.sh). Line tables only: enough for a sanitizer
# report's file:line stack.
# A unity build, 8 files to a unit (cmake/sanitize.cmake lists the files that
# compile alone): the instrumented inline functions of nlohmann/json and the
# standard library are then compiled once per unit, not once per file.
# Measured 2026-11-29, ASan + UBSan, this tree from scratch on 2 cores: file
# by file, 180 steps, 2,142 s of compile time and 1,075 s of wall time on a
# quiet machine; as a unity build, 72 steps, 1,039 s of compile time and
# about 540 s of wall time, part of it beside two other builds (so both are
# upper bounds).
# A tree configured with other flags is reconfigured.
flags="-O1 -gline-tables-only"
if [ ! -f "$dir/build.ninja" ] || ! grep -qxF "CMAKE_CXX_FLAGS_DEBUG:STRING=$flags" "$dir/CMakeCache.txt" ||
  ! grep -qxF "CMAKE_UNITY_BUILD:BOOL=ON" "$dir/CMakeCache.txt"; then
  cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="$flags" -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 \
    -DTORCHGAUGE_WITH_TORCH=OFF -DTORCHGAUGE_SANITIZE=ON -DTORCHGAUGE_FUZZ=ON \
    -DTORCHGAUGE_PYTHON="$py" -DTORCHGAUGE_DEPS_DIR="$deps"
fi
# Only what the sanitize_* tests run (no benchmarks, no browser test): every
# test executable labelled unit, integration or fuzz (torchgauge_add_test).
cmake --build "$dir" -j"$(tg_cores)" --target torchgauge_sanitized_tests \
  torchgauge-report torchgauge-gen-fixtures torchgauge_fuzzers platform_fields_dump
echo "sanitizer build ready in $(( $(date +%s) - start )) s: $dir"
