#!/usr/bin/env bash
# The counted suite's repeatability and cost (docs/counted.md, label bench):
# two collections of one build with `--suite counted`, c1 and c2, run side
# by side, one worker per core (counts do not move with the load). Prints
# the wall time of each, and per run the difference between the two in
# instructions and estimated cycles, with the share of runs within 0.25 %
# and 0.5 %; fails when fewer than 90 % of the runs both collected are
# within those bounds.
# Usage: counted_suite_bench.sh COLLECT PYTHON WORK_DIR [run options...]
#   (run options, e.g. --model '^ncf$', narrow the suite for a trial)
set -euo pipefail
collect="$1"
python="$2"
work="$3"
shift 3
rm -rf "$work"
mkdir -p "$work"
pids=()
for b in c1 c2; do
  (
    t0=$SECONDS
    "$collect" run --suite counted --no-probe --no-summary --build-id "$b" --platform-id cpu-counted \
      --out "$work/results" "$@" >"$work/$b.log" 2>&1
    echo "$b: collected in $((SECONDS - t0)) s"
  ) &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
[ "$rc" = 0 ] || { tail -20 "$work"/c1.log "$work"/c2.log; exit 1; }
"$python" - "$work/results" <<'PY'
import json, pathlib, statistics, sys
root = pathlib.Path(sys.argv[1])
def load(b):
    out = {}
    for p in (root / b / "cpu-counted" / "runs").glob("*.json"):
        r = json.loads(p.read_text())
        if r["status"] == "ok" and r.get("counted"):
            steps = r["counted"]["steps"]
            out[p.name[:-5]] = (statistics.median(s["instructions"] for s in steps),
                                statistics.median(s["est_cycles"] for s in steps), r["duration_s"])
    return out
a, b = load("c1"), load("c2")
both = sorted(set(a) & set(b))
assert both, "no run was counted in both collections"
within = {"instructions": 0, "est_cycles": 0}
print(f"{'run':55} {'instr %':>10} {'cycles %':>10} {'s (c1)':>8}")
for k in both:
    di = 100 * (b[k][0] - a[k][0]) / a[k][0]
    dc = 100 * (b[k][1] - a[k][1]) / a[k][1]
    within["instructions"] += abs(di) <= 0.25
    within["est_cycles"] += abs(dc) <= 0.5
    print(f"{k:55} {di:+10.4f} {dc:+10.4f} {a[k][2]:8.0f}")
n = len(both)
print(f"{n} runs in both collections ({len(a)} and {len(b)} ok); instructions within 0.25 %: "
      f"{within['instructions']}/{n}; estimated cycles within 0.5 %: {within['est_cycles']}/{n}")
print(f"sum of run durations: c1 {sum(v[2] for v in a.values()):.0f} s, c2 {sum(v[2] for v in b.values()):.0f} s")
assert within["instructions"] >= 0.9 * n and within["est_cycles"] >= 0.9 * n, "repeatability below 90 % of runs"
PY
