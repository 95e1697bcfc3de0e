#!/usr/bin/env bash
# A release-over-release history in one command (`./gauge history`):
#   ./gauge history 2.13.0 2.14.1 2.15.0 [-- run options...]
# For each torch release: bootstrap its own venv and build directory
# (tools/bootstrap.sh, --torch) and build the collector. Then collect the
# suite in interleaved rounds: round 1 runs every release once (oldest
# first), round 2 again in the reverse order, and so on, each run in one
# worker process; `torchgauge-collect pool` then makes each release one
# build of the one results tree (build id = version) whose runs hold one
# process per round. A slow stretch of the machine so lands on every
# release, instead of on the one collected in it (docs/nightly.md). Then
# render the site of the whole tree (the same tree and site the nightly
# uses) and write the comparison of each release with the one before it
# (Markdown and JSON, beside the site, in $site/releases/).
#
# Options before `--`:
#   --suite NAME        suite to collect (default smoke)
#   --rounds N          rounds, so worker processes per run (default 5; the
#                       comparison's rank test needs 4 against 4 to reach
#                       p < 0.05). With --measure counted among the run
#                       options the default is 1 and 1 is allowed: counts
#                       do not move with the machine (docs/counted.md), and
#                       the comparison judges them on one process each
#   --resume            keep what an interrupted history already collected
#                       (each round's run goes on with `run --resume`)
# Run options after `--` go to every `torchgauge-collect run` (for example
# --threads 1 --repeat 10); --processes is the rounds' to set.
# Environment: TORCHGAUGE_RESULTS (default ./results-history; the rounds
# are kept beside it, in <results>.rounds/), TORCHGAUGE_SITE (default
# ./public-history), TORCHGAUGE_REPORT (a built torchgauge-report to use),
# and tools/bootstrap.sh's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

suite=smoke
rounds=
resume=()
releases=()
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) suite="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --resume) resume=(--resume); shift ;;
    --) shift; break ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) echo "history: unknown option $1 (run options go after --)" >&2; exit 2 ;;
    *) releases+=("$1"); shift ;;
  esac
done
run_opts=("$@")
counted=0
prev_opt=""
for o in "${run_opts[@]+"${run_opts[@]}"}"; do
  case "$o" in
    --processes|--processes=*)
      echo "history: --processes is set by --rounds (each round is one worker process per run)" >&2; exit 2 ;;
    --measure=counted) counted=1 ;;
    counted) [ "$prev_opt" = --measure ] && counted=1 ;;
  esac
  prev_opt="$o"
done
least=2
(( counted )) && least=1
[ -n "$rounds" ] || rounds=$(( counted ? 1 : 5 ))
if ! [[ "$rounds" =~ ^[0-9]+$ ]] || [ "$rounds" -lt "$least" ]; then
  echo "history: --rounds must be a whole number of at least $least (got '$rounds')" >&2
  exit 2
fi
if [ ${#releases[@]} -lt 2 ]; then
  echo "history: give at least two torch releases, oldest first (e.g. 2.14.1 2.15.0)" >&2
  exit 2
fi
results="${TORCHGAUGE_RESULTS:-$root/results-history}"
site="${TORCHGAUGE_SITE:-$root/public-history}"
unset TORCHGAUGE_PYTHON TORCHGAUGE_LIBTORCH TORCHGAUGE_BUILD

log() { printf '[history] %s\n' "$*" >&2; }

# 1. Each release's collector, in its own venv and build directory.
# The reporter does not link LibTorch: the newest release's tree builds it,
# unless TORCHGAUGE_REPORT names one already built.
declare -A collector
newest="${releases[${#releases[@]}-1]}"
for v in "${releases[@]}"; do
  start=$(date +%s)
  targets="torchgauge-collect"
  [ "$v" = "$newest" ] && [ -z "${TORCHGAUGE_REPORT:-}" ] && targets="torchgauge-collect torchgauge-report"
  dir=$(TORCHGAUGE_TORCH="$v" TG_TARGETS="$targets" bash -c \
    'source tools/bootstrap.sh && tg_bootstrap && tg_build $TG_TARGETS && echo "$TG_BUILD"')
  collector[$v]="$dir/collector/torchgauge-collect"
  log "torch $v: built in $(( $(date +%s) - start )) s ($dir)"
done
report="${TORCHGAUGE_REPORT:-$dir/reporter/torchgauge-report}"  # $dir: the newest release's tree

# 2. The collections, interleaved: every release once per round, the order
# reversed each round (A B C, C B A, ...), each run in one worker process.
rounds_dir="$results.rounds"
round_dirs=()
for (( r = 1; r <= rounds; r++ )); do
  order=("${releases[@]}")
  if (( r % 2 == 0 )); then
    order=()
    for (( i = ${#releases[@]} - 1; i >= 0; i-- )); do order+=("${releases[$i]}"); done
  fi
  for v in "${order[@]}"; do
    start=$(date +%s)
    log "round $r of $rounds: suite $suite under torch $v"
    "${collector[$v]}" run --suite "$suite" --out "$rounds_dir/round-$r" --build-id "$v" --processes 1 \
      "${resume[@]+"${resume[@]}"}" "${run_opts[@]+"${run_opts[@]}"}"
    log "round $r, torch $v: collected in $(( $(date +%s) - start )) s"
  done
  round_dirs+=("$rounds_dir/round-$r")
done
# One build per release, each round one worker process of its runs; one
# round (counted) is the results tree as it is.
if (( ${#round_dirs[@]} == 1 )); then
  rm -rf "$results"
  cp -a "${round_dirs[0]}" "$results"
else
  "${collector[$newest]}" pool --into "$results" --replace "${round_dirs[@]}"
fi

# 3. The site, and each release against the one before.
"$report" build --results "$results" --out "$site"
mkdir -p "$site/releases"
prev=""
for v in "${releases[@]}"; do
  if [ -n "$prev" ]; then
    rc=0
    "$report" compare --results "$results" --base "$prev" --new "$v" \
      --markdown "$site/releases/$prev..$v.md" --json "$site/releases/$prev..$v.json" || rc=$?
    case "$rc" in
      0) verdict="no regression" ;;
      1) verdict="regression" ;;
      3) verdict="inconclusive or cannot tell (too many noisy runs, or too few samples: see the JSON's outcome)" ;;
      *) echo "history: compare $prev..$v failed (exit $rc)" >&2; exit "$rc" ;;
    esac
    log "$prev -> $v: $verdict ($site/releases/$prev..$v.md)"
  fi
  prev="$v"
done
log "results: $results"
log "site:    $site/index.html"
