#!/usr/bin/env bash
# The counted measurement end to end (docs/counted.md): the real collector
# under Valgrind's Callgrind and the real comparison.
#  1. Two collections of one build (r00, r01-a-longer-build-id) of two
#     small real runs: a model whose eval calls aten::relu (ncf, its MLP)
#     and one whose eval does not
#     (pyhpc_equation_of_state, elementwise arithmetic). Their instructions
#     and estimated cycles agree within 0.05 %, and `compare` flags no
#     counted change between them.
#  2. A third collection (p00) with a planted cost on aten::relu
#     (--plant-cost: a fixed loop before each call of the CPU kernel), sized
#     to about +1 % of ncf's step per call: `compare` flags ncf's
#     instructions and cycles as regressions and nothing of the other run,
#     and the functions that moved name the planted function first.
#  3. The results pass `validate` (the contract's reader) and the site renders them,
#     with the counts in the model page's counted trend.
# With REPLAYS (default 1) of more than 1, as the bench label runs it, the
# replay is REPLAYS collections r01, r02, ... of the one build, each compared
# with r00: none may flag a counted change.
# The first replay's build id is longer than the others (and so is its
# results folder): the counts may not depend on the length of either. Before
# counted workers ran in the platform folder with relative paths and
# placeholder ids, ncf eval moved by +0.16 % instructions and +0.61 %
# estimated cycles between ids of 2 and 3 characters (docs/counted.md), so
# a replay must agree within 0.05 %, tighter than the acceptance's bounds.
# Usage: counted_test.sh COLLECT REPORT PYTHON WORK_DIR [REPLAYS]
set -euo pipefail
collect="$1"
report="$2"
python="$3"
work="$4"
replays="${5:-1}"
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

collect_build r00
replay_builds=()
for (( i = 1; i <= replays; i++ )); do
  b=$(printf 'r%02d' "$i")
  [ "$i" = 1 ] && b="r01-a-longer-build-id"
  collect_build "$b"
  replay_builds+=("$b")
done
read -r ncf_ir ncf_cyc < <(counts r00 ncf)
# The planted loop is about 5 instructions per iteration.
plant=$("$python" -c "print(int($ncf_ir * 0.01 / 5))")
echo "ncf: $ncf_ir instructions, $ncf_cyc estimated cycles per step; planting $plant iterations on aten::relu"
collect_build p00 --plant-cost "aten::relu=$plant"

"$python" - "$results" "${replay_builds[@]}" <<'EOF'
import json, pathlib, statistics, sys
root = pathlib.Path(sys.argv[1])
def med(build, run, key):
    r = json.loads((root / build / "cpu-counted" / "runs" / run).read_text())
    return statistics.median(s[key] for s in r["counted"]["steps"])
runs = sorted(p.name for p in (root / "r00" / "cpu-counted" / "runs").glob("*.json"))
assert len(runs) == 2, runs
for replay in sys.argv[2:]:
    for run in runs:
        for key in ("instructions", "est_cycles"):
            a, b = med("r00", run, key), med(replay, run, key)
            d = 100 * (b - a) / a
            print(f"replay {replay} {run} {key}: {a:.0f} -> {b:.0f} ({d:+.4f} %)")
            assert abs(d) <= 0.05, f"{run} {key} differs by {d:.4f} % between two collections of one build"
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

"$python" - "$work/site" <<'EOF'
import pathlib, re, sys
site = pathlib.Path(sys.argv[1])
page = (site / "models" / "ncf.html").read_text()
assert "Counted across builds" in page and 'data-source="counted"' in page, "ncf's page has no counted trend"
history = [p.read_text() for p in site.rglob("*.js") if "history/ncf" in p.read_text()[:200]]
assert any(re.search(r'"counted":\[\{', h) and '"cycles":[' in h for h in history), "ncf's history has no counts"
print("site: ncf's page charts its counts")
EOF

set +e
replay_rcs=()
for b in "${replay_builds[@]}"; do
  "$report" compare --results "$results" --base r00 --new "$b" --json "$work/replay-$b.json" \
    --markdown "$work/replay-$b.md" >/dev/null 2>&1
  replay_rcs+=("$?")
done
"$report" compare --results "$results" --base r00 --new p00 --json "$work/planted.json" \
  --markdown "$work/planted.md" >/dev/null 2>&1
planted_rc=$?
set -e
echo "compare exit codes: replays ${replay_rcs[*]}, planted $planted_rc"
for rc in "${replay_rcs[@]}"; do
  [ "$rc" = 0 ] || { echo "a replay's compare exited $rc, not 0"; exit 1; }
done
"$python" - "$work" "$planted_rc" "${replay_builds[@]}" <<'EOF'
import json, pathlib, sys
work = pathlib.Path(sys.argv[1])
planted_rc = int(sys.argv[2])
def counted(path):
    changes = json.loads((work / path).read_text())["platforms"][0]["changes"]
    return [c for c in changes if c["metric"] in ("instructions", "est_cycles")]
for b in sys.argv[3:]:
    replay = counted(f"replay-{b}.json")
    assert len(replay) == 4, replay
    flagged = [c for c in replay if c["verdict"] in ("regression", "improvement")]
    assert not flagged, f"replay {b} of one build flagged {flagged}"
    worst = max(abs(c["delta_percent"]) for c in replay)
    print(f"replay {b}: nothing flagged (largest counted difference {worst:.4f} %)")
print(f"{len(sys.argv[3:])} replay(s) of one build: no counted change flagged")
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
# The suite summary of a counted comparison: the counts' geomean, and the rule that judged them.
assert "### Counted summary" in md and "No run was timed in both builds." in md, md[-3000:]
assert "Counted metrics (instructions, est\\_cycles" in md, "the rules must say how counts are judged"
summary = json.loads((work / "planted.json").read_text())["platforms"][0]["counted_summary"]
assert len(summary) == 1 and summary[0]["runs"] == 2, summary
assert summary[0]["geomean_instructions_ratio"] > 1.005, summary
print(f"planted: counted summary {summary[0]}")
print("counted_test: ok")
EOF
