#!/usr/bin/env bash
# The collection part of `./gauge smoke`, in one place for the gauge script
# and the bench that times it (tests/smoke_time_bench.sh):
#   1. the smoke suite on the best device, every core (platform id as derived,
#      e.g. cpu-x86_64-2c);
#   2. the smoke-1t suite, a cheap eager subset, at one intra-op thread: a
#      second platform of the same build (its id ends in -1t), so that the
#      site's platform-ratio figure compares one thread with all of them.
# Both share one build id. Extra arguments go to both `run`s.
# Usage: smoke_collect.sh COLLECTOR RESULTS_DIR [run options...]
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 COLLECTOR RESULTS_DIR [run options...]" >&2
  exit 2
fi
collect="$1"
results="$2"
shift 2

# One build id for both platforms, unless the caller gave one.
build_args=()
given_build=0
for a in "$@"; do
  case "$a" in --build-id|--build-id=*) given_build=1 ;; esac
done
if [ "$given_build" = 0 ]; then
  build_args=(--build-id "$("$collect" env --get build_id)")
fi

start=$(date +%s)
"$collect" run --suite smoke --out "$results" "${build_args[@]}" "$@"
"$collect" run --suite smoke-1t --threads 1 --out "$results" "${build_args[@]}" "$@"
echo "smoke collection (both platforms, probes and compiles included): $(( $(date +%s) - start )) s" >&2
