#!/usr/bin/env bash
# A release-over-release history in one command (`./gauge history`):
#   ./gauge history 2.13.0 2.14.1 2.15.0 [-- run options...]
# For each torch release, in order: bootstrap its own venv and build
# directory (tools/bootstrap.sh, --torch), build the collector, and collect
# the suite into the one results tree with the release as the build id. Then
# render the site of the whole tree (the same tree and site the nightly
# uses) and write the comparison of each release with the one before it
# (Markdown and JSON, beside the site, in $site/releases/).
#
# Options before `--`:
#   --suite NAME        suite to collect (default smoke)
#   --resume            keep what an interrupted history already collected
#                       (each release's run goes on with `run --resume`)
# Run options after `--` go to every `torchgauge-collect run` (for example
# --processes 5 --threads 1).
# Environment: TORCHGAUGE_RESULTS (default ./results-history),
# TORCHGAUGE_SITE (default ./public-history), TORCHGAUGE_REPORT (a built
# torchgauge-report to use), and tools/bootstrap.sh's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

suite=smoke
resume=()
releases=()
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) suite="$2"; shift 2 ;;
    --resume) resume=(--resume); shift ;;
    --) shift; break ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) echo "history: unknown option $1 (run options go after --)" >&2; exit 2 ;;
    *) releases+=("$1"); shift ;;
  esac
done
run_opts=("$@")
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

# 2. The collections, one build per release.
for v in "${releases[@]}"; do
  start=$(date +%s)
  log "collecting suite $suite under torch $v"
  "${collector[$v]}" run --suite "$suite" --out "$results" --build-id "$v" "${resume[@]+"${resume[@]}"}" \
    "${run_opts[@]+"${run_opts[@]}"}"
  log "torch $v: collected in $(( $(date +%s) - start )) s"
done

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
      3) verdict="inconclusive (too many noisy runs)" ;;
      *) echo "history: compare $prev..$v failed (exit $rc)" >&2; exit "$rc" ;;
    esac
    log "$prev -> $v: $verdict ($site/releases/$prev..$v.md)"
  fi
  prev="$v"
done
log "results: $results"
log "site:    $site/index.html"
