#!/usr/bin/env bash
# Runs one libFuzzer target over its seed corpus plus what it finds, and
# prints one summary line: executions, crashes, coverage (libFuzzer's cov:
# edges covered, ft: features), corpus size.
#   run_fuzzer.sh FUZZER SEED_DIR WORK_DIR RUNS [MAX_SECONDS]
# WORK_DIR is emptied first and then holds the inputs found this time (the
# seed corpus in the source tree is never written) and any crash artifact.
# A fixed -seed keeps CI runs repeatable. Exit status: libFuzzer's (non-zero
# on a crash, a sanitizer report, a leak or a timeout of one input).
set -uo pipefail
fuzzer=$1 seeds=$2 work=$3 runs=$4 max_s=${5:-0}
name=$(basename "$fuzzer")
dict="$(dirname "$0")/json.dict"
rm -rf "$work"
mkdir -p "$work/corpus"
log="$work/fuzz.log"
# -timeout: one input taking 10 s is a hang, reported as a crash.
# -rss_limit_mb: an input that makes the parser allocate 2 GiB is a finding.
"$fuzzer" -seed=1 -runs="$runs" -max_total_time="$max_s" -timeout=10 -rss_limit_mb=2048 \
  -dict="$dict" -print_final_stats=1 -artifact_prefix="$work/" \
  "$work/corpus" "$seeds" >"$log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
last=$(grep -E '^#[0-9]+' "$log" | tail -1)
cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
crashes=$(find "$work" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
if [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes="1 (no artifact)"; fi
printf 'fuzz %s: execs %s, crashes %s, cov %s, ft %s, corpus %s, exit %d\n' \
  "$name" "${execs:-?}" "$crashes" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$rc"
if [ "$rc" -ne 0 ]; then
  echo "--- last 60 lines of $log:"
  tail -60 "$log"
  ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* 2>/dev/null | sed 's/^/artifact: /'
fi
exit "$rc"
