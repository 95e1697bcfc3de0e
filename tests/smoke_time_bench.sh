#!/usr/bin/env bash
# Times the collection part of `./gauge smoke` (tools/smoke_collect.sh: the
# smoke suite and its one-thread platform, probes included) and prints the
# seconds. The README's main command must collect within 300 s on 2 cores
# (target 180); more fails. Both platforms must be written. The Inductor
# package cache starts empty, as on a fresh machine, so the time includes
# every compile; a second collection must then find every package in the
# cache and compile nothing (each inductor result: cache_hit, no compile_ms).
# Usage: smoke_time_bench.sh COLLECTOR SOURCE_DIR WORK_DIR
set -euo pipefail
collect="$1"
src="$2"
work="$3"
source "$src/tools/cores.sh"
rm -rf "$work"
mkdir -p "$work"
export TORCHGAUGE_CACHE="$work/cache"

# timed_collection NAME: collects into $work/NAME (log $work/NAME.log) and
# sets $seconds to its wall time.
timed_collection() {
  local start end
  start=$(date +%s.%N)
  bash "$src/tools/smoke_collect.sh" "$collect" "$work/$1" --no-summary >"$work/$1.log" 2>&1 || {
    tail -50 "$work/$1.log"
    echo "smoke_time_bench: the collection into $1 failed" >&2
    exit 1
  }
  end=$(date +%s.%N)
  seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
}

timed_collection results
grep -E '^(torchgauge-collect:|peaks on|  matmul|  triad|warning:|ok:|results:)' "$work/results.log" || true
platforms=$(find "$work/results" -mindepth 2 -maxdepth 2 -type d | sort)
echo "platforms:"
echo "$platforms"
echo "smoke collection (both platforms): $seconds s on $(tg_cores) CPUs (budget 300 s, target 180 s)"
n=$(echo "$platforms" | grep -c . || true)
if [ "$n" -ne 2 ]; then
  echo "smoke_time_bench: expected 2 platforms, found $n" >&2
  exit 1
fi
if ! echo "$platforms" | grep -q -- '-1t$'; then
  echo "smoke_time_bench: no one-thread platform (-1t)" >&2
  exit 1
fi
awk -v s="$seconds" 'BEGIN { exit !(s <= 300) }' || {
  echo "smoke_time_bench: $seconds s is over the 300 s budget" >&2
  exit 1
}

# Again, from the cache: nothing may compile.
first=$seconds
timed_collection again
echo "second smoke collection (package cache warm): $seconds s (first: $first s)"
runs=$(find "$work/again" -path '*/runs/*inductor*.json' | sort)
n=$(echo "$runs" | grep -c . || true)
if [ "$n" -lt 8 ]; then
  echo "smoke_time_bench: expected at least 8 inductor runs, found $n" >&2
  exit 1
fi
compiled=$(grep -L '"cache_hit": *true' $runs || true)
if [ -n "$compiled" ]; then
  echo "smoke_time_bench: the second collection compiled again:" >&2
  echo "$compiled" >&2
  exit 1
fi
echo "inductor runs in the second collection: $n, every one a cache hit"
