#!/usr/bin/env bash
# The counted measurement end to end (docs/counted.md): the real collector
# under Valgrind's Callgrind and the real comparison.
#  1. Two collections of one build (b1, b2) of two small real runs: a model
#     whose eval calls aten::relu (ncf, its MLP) and one whose eval does not
#     (pyhpc_equation_of_state, elementwise arithmetic).
#     Their instructions agree within 0.25 % and estimated cycles within
#     0.5 %, and `compare` flags no counted change between them.
#  2. A third collection (b3) with a planted cost on aten::relu
#     (--plant-cost: a fixed loop before each call of the CPU kernel), sized
#     to about +1 % of ncf's step per call: `compare` flags ncf's
#     instructions and cycles as regressions and nothing of the other run,
#     and the functions that moved name the planted function first.
#  3. The results pass `validate` (the contract's reader) and the site renders them.
# Usage: counted_test.sh COLLECT REPORT PYTHON WORK_DIR
set -euo pipefail
collect="$1"
report="$2"
python="$3"
work="$4"
rm -rf "$work"
mkdir -p "$work"
results="$work/results"

collect_build() {  # BUILD [extra run options]
  local build="$1"
  shift
  local t0=$SECONDS
  "$collect" run --suite ci --model '^ncf$|^pyhpc_equation_of_state$' --mode eval --backend eager \
    --precision fp32 --measure counted --warmup 1 --repeat 3 --no-probe --no-summary \
    --build-id "$build" --platform-id cpu-counted --out "$results" "$@" >"$work/$build.log" 2>&1 || {
    tail -40 "$work/$build.log"
    exit 1
  }
  echo "collected $build in $((SECONDS - t0)) s"
}

counts() {  # BUILD MODEL -> "median instructions, median cycles"
  "$python" - "$results/$1/cpu-counted/runs/$2.eval.eager.fp32.json" <<'EOF'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "ok", (r["status"], r.get("reason"))
c = r["counted"]
assert c["cpu_capability"] == "AVX2", c["cpu_capability"]
assert r["settings"]["threads"] == 1 and r["settings"]["measure"] == "counted"
steps = c["steps"]
print(statistics.median(s["instructions"] for s in steps), statistics.median(s["est_cycles"] for s in steps))
EOF
}

collect_build b1
collect_build b2
read -r ncf_ir ncf_cyc < <(counts b1 ncf)
# The planted loop is about 5 instructions per iteration.
plant=$("$python" -c "print(int($ncf_ir * 0.01 / 5))")
echo "ncf: $ncf_ir instructions, $ncf_cyc estimated cycles per step; planting $plant iterations on aten::relu"
collect_build b3 --plant-cost "aten::relu=$plant"

"$python" - "$results" <<'EOF'
import json, pathlib, statistics, sys
root = pathlib.Path(sys.argv[1])
def med(build, run, key):
    r = json.loads((root / build / "cpu-counted" / "runs" / run).read_text())
    return statistics.median(s[key] for s in r["counted"]["steps"])
runs = sorted(p.name for p in (root / "b1" / "cpu-counted" / "runs").glob("*.json"))
assert len(runs) == 2, runs
for run in runs:
    for key, bound in (("instructions", 0.25), ("est_cycles", 0.5)):
        a, b = med("b1", run, key), med("b2", run, key)
        d = 100 * (b - a) / a
        print(f"replay {run} {key}: {a:.0f} -> {b:.0f} ({d:+.4f} %)")
        assert abs(d) <= bound, f"{run} {key} differs by {d:.4f} % between two collections of one build"
EOF

"$report" validate "$results" >"$work/validate.log" 2>&1 || {
  cat "$work/validate.log"
  exit 1
}
# The site renders counted results (no time, no memory: not measured).
"$report" build --results "$results" --out "$work/site" >"$work/site.log" 2>&1 || {
  tail -30 "$work/site.log"
  exit 1
}

set +e
"$report" compare --results "$results" --base b1 --new b2 --json "$work/replay.json" --markdown "$work/replay.md" \
  >/dev/null 2>&1
replay_rc=$?
"$report" compare --results "$results" --base b1 --new b3 --json "$work/planted.json" --markdown "$work/planted.md" \
  >/dev/null 2>&1
planted_rc=$?
set -e
echo "compare exit codes: replay $replay_rc, planted $planted_rc"
"$python" - "$work" "$replay_rc" "$planted_rc" <<'EOF'
import json, pathlib, sys
work = pathlib.Path(sys.argv[1])
replay_rc, planted_rc = int(sys.argv[2]), int(sys.argv[3])
def counted(path):
    changes = json.loads((work / path).read_text())["platforms"][0]["changes"]
    return [c for c in changes if c["metric"] in ("instructions", "est_cycles")]
replay = counted("replay.json")
assert len(replay) == 4, replay
flagged = [c for c in replay if c["verdict"] in ("regression", "improvement")]
assert not flagged, f"a replay of one build flagged {flagged}"
assert replay_rc == 0, replay_rc
planted = counted("planted.json")
for c in planted:
    print(f"planted: {c['model']} {c['metric']} {c['delta_percent']:+.2f} % {c['verdict']}")
    if c["model"] == "ncf":
        assert c["verdict"] == "regression", c
        top = c["functions"]["top"]
        assert top and top[0]["function"] == "torchgauge_planted_cost", top[:3]
        print(f"  functions: {top[0]['function']} {100 * top[0]['share']:.1f} % of the change")
    else:
        assert c["verdict"] == "unchanged", c
assert planted_rc == 1, planted_rc
md = (work / "planted.md").read_text()
assert "Functions that moved: ncf" in md and "torchgauge\\_planted\\_cost" in md, md[-2000:]
assert "--measure counted" in md, "the reproduction command must count"
print("counted_test: ok")
EOF
