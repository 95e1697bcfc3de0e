#!/usr/bin/env bash
# The frozen Inductor variant against Python's own: for two vision models and
# one NLP model (eval, the ci suite's smoke sizes and batch, one thread), the
# speedup over eager of the collector's inductor_frozen backend (its
# AOTInductor package compiled with freezing), its eager run's median over its
# frozen run's, each run's steps back to back in its own worker as the Python
# timer runs them (a paired pass alternates eager and compiled steps in one
# process, and each evicts the other's weights from the caches: the small
# frozen packages then ran 10-20 % slower), beside the speedup of Python's
# torch.compile with torch._inductor.config.freezing over Python eager
# (tools/python_eager_timing.py, same model, batch and threads), and beside
# Python's own AOTInductor with freezing (torch.export, then
# aoti_compile_and_package: the collector's compiler path without its
# TorchScript trace). The sides alternate, ROUNDS rounds: collector, Python
# eager, torch.compile frozen, AOTInductor frozen. Prints one row per model
# with each round's speedups, their medians, and the ratios of the
# collector's to each Python one. Each side's speedup is its own eager over
# its own frozen; the eagers differ (LibTorch from C++ against torch from
# Python). Ahead-of-time compiles choose some kernels otherwise than
# torch.compile does (a frozen fp32 linear: oneDNN's packed GEMM in a
# package, MKL's in torch.compile), and torch.compile's calls pass through
# Dynamo's guards and Python; docs/backends.md gives the measured table.
# Usage: inductor_frozen_bench.sh COLLECTOR PYTHON WORK_DIR [ROUNDS]
set -euo pipefail
collect="$1"
python="$2"
work="$3"
rounds="${4:-3}"
root="$(cd "$(dirname "$0")/.." && pwd)"
rm -rf "$work"
mkdir -p "$work"
export TORCHGAUGE_CACHE="$work/cache"
for model in resnet18 mobilenet_v2 hf_bert; do
  for round in $(seq "$rounds"); do
    out="$work/collect/$model.$round"
    "$collect" run --suite ci --model "^$model\$" --mode eval --backend eager --backend inductor_frozen --threads 1 \
      --warmup 3 --repeat 20 --processes 1 --pairing off --no-summary --out "$out" \
      >"$work/$model.$round.log" 2>&1 || {
      tail -20 "$work/$model.$round.log"
      echo "inductor_frozen_bench: the collection of $model failed" >&2
      exit 1
    }
    batch=$("$python" -c 'import glob, json, sys; print(json.load(open(glob.glob(sys.argv[1] + "/*/*/runs/*.json")[0]))["batch_size"])' "$out")
    for backend in eager inductor_frozen aoti_frozen; do
      "$python" "$root/tools/python_eager_timing.py" --model "$model" --mode eval --batch "$batch" --threads 1 \
        --backend "$backend" --warmup 3 --repeat 20 >"$work/python.$model.$round.$backend.json" \
        2>"$work/python.$model.$round.$backend.log" || {
        tail -20 "$work/python.$model.$round.$backend.log"
        echo "inductor_frozen_bench: Python's $backend of $model failed" >&2
        exit 1
      }
    done
  done
done
"$python" - "$work" "$rounds" <<'PY'
import glob, json, statistics, sys

work, rounds = sys.argv[1], int(sys.argv[2])
print("| model | batch | collector inductor_frozen (rounds) | Python torch.compile freezing (rounds) "
      "| Python AOTInductor freezing (rounds) | collector / torch.compile | collector / AOTInductor |")
print("|---|--:|---|---|---|--:|--:|")
worst, worst_aot = 0.0, 0.0
for model in ("resnet18", "mobilenet_v2", "hf_bert"):
    ours, theirs, aot, batch = [], [], [], None
    for r in range(1, rounds + 1):
        runs = {}
        for backend in ("eager", "inductor_frozen"):
            (path,) = glob.glob(f"{work}/collect/{model}.{r}/*/*/runs/*.eval.{backend}.*.json")
            run = runs[backend] = json.load(open(path))
            if run["status"] != "ok":
                sys.exit(f"inductor_frozen_bench: {model} {backend} round {r}: {run['status']}: "
                         f"{run.get('reason') or run.get('error')}")
        batch = runs["eager"]["batch_size"]
        ours.append(runs["eager"]["timing"]["median_ms"] / runs["inductor_frozen"]["timing"]["median_ms"])
        medians = {b: json.load(open(f"{work}/python.{model}.{r}.{b}.json"))["median_ms"]
                   for b in ("eager", "inductor_frozen", "aoti_frozen")}
        theirs.append(medians["eager"] / medians["inductor_frozen"])
        aot.append(medians["eager"] / medians["aoti_frozen"])
    a, b, c = statistics.median(ours), statistics.median(theirs), statistics.median(aot)
    worst, worst_aot = max(worst, abs(a / b - 1)), max(worst_aot, abs(a / c - 1))
    fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs)
    print(f"| {model} | {batch} | {a:.2f}x ({fmt(ours)}) | {b:.2f}x ({fmt(theirs)}) | {c:.2f}x ({fmt(aot)}) "
          f"| {a / b:.3f} | {a / c:.3f} |")
print(f"\nlargest difference of the medians: {100 * worst:.1f} % from torch.compile, {100 * worst_aot:.1f} % from "
      "Python's AOTInductor (target: within 10 %)")
PY
