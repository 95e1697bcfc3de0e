#!/usr/bin/env bash
# The second LibTorch: builds the collector against the oldest torch release
# TorchGauge supports and runs a small collection with it.
#
# The pin's build is what the tests exercise; this one is there to catch an
# API break in the adapter (models/torch_compat), the collector or the models
# against the other end of the supported range. It builds without
# optimisation (build type None): on 2 cores that is about half the time of a
# Release build, and nothing is timed from it. It is built with clang:
# against <torch/torch.h>'s precompiled header g++ spends about 14 s per file
# re-instantiating the header's templates, which clang does once (measured
# 2026-11-29 against 2.9.0: an empty file 14.8 s with g++, 4.4 s with clang;
# bert_pytorch.cc 20.4 s and 6.8 s). It also keeps the collector and the
# models clang-clean. Then resnet18 is collected eager and inductor, train
# and eval, and every result must be ok with that release's identity in its
# manifest.
#
#   tools/oldest_release_check.sh [--ci] [RESULTS_DIR]
#
# Without --ci (ctest oldest_release_test, label bench) it builds every model
# family. With --ci (ctest oldest_release_ci_test, label integration, part of
# ./gauge test) it builds the collector with the families below
# (TORCHGAUGE_MODEL_FAMILIES, models/CMakeLists.txt), in build/check-torch-
# <release>-ci: every family would cost CI about 1,900 s of compile time.
# Between them they use what the models take from LibTorch: convolutions
# and batch norm (resnet), embeddings, layer norm and attention (hf bert),
# rotary embeddings, a key-value cache and generation (llama), recurrent
# cells (tacotron2), EmbeddingBag (dlrm), torchvision's detection operators
# loaded at run time (maskrcnn), distributions and an environment (sac), and
# the tiny test models. The shared harnesses are always built.
# Environment: TORCHGAUGE_OLDEST (the release; default the first line of
# tools/torch_releases.txt), and tools/bootstrap.sh's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source tools/bootstrap.sh
release="${TORCHGAUGE_OLDEST:-$TG_OLDEST}"
ci=0
if [ "${1:-}" = --ci ]; then ci=1; shift; fi
tree="$root/build/check-torch-$release"
if [ "$ci" = 1 ]; then
  tree="$tree-ci"
  export TORCHGAUGE_MODEL_FAMILIES='^vision/classification/resnet\.cc$;^nlp/bert\.cc$;^nlp/llama\.cc$;^speech/tacotron2\.cc$;^recommendation/dlrm\.cc$;^vision/detection/maskrcnn\.cc$;^rl/sac\.cc$;^test_models\.cc$'
else
  unset TORCHGAUGE_MODEL_FAMILIES
fi
results="${1:-$tree-results}"

export TORCHGAUGE_TORCH="$release"
export TORCHGAUGE_BUILD="$tree"
export TORCHGAUGE_BUILD_TYPE=None
export TORCHGAUGE_CXX="${TORCHGAUGE_CXX:-clang++}"
unset TORCHGAUGE_PYTHON TORCHGAUGE_LIBTORCH

start=$(date +%s)
tg_bootstrap
echo "[oldest] torch $release: bootstrapped in $(( $(date +%s) - start )) s" >&2
start=$(date +%s)
tg_build torchgauge-collect
echo "[oldest] torch $release: collector built in $(( $(date +%s) - start )) s" >&2
collect="$TG_BUILD/collector/torchgauge-collect"
[ "$ci" = 0 ] || "$collect" list >&2  # the families built
rm -rf "$results"
start=$(date +%s)
# The ci suite ("models": "all") holds whatever the build registered; the
# default suite (smoke) names models a --ci build leaves out.
"$collect" run --suite ci --model '^resnet18$' --mode train eval --backend eager inductor --device cpu --precision fp32 \
  --batch-size 2 --warmup 1 --repeat 2 --threads 1 --no-probe --build-id "torch-$release" --out "$results" >&2
echo "[oldest] torch $release: collected in $(( $(date +%s) - start )) s" >&2

# Every run ok, and measured by this release: its manifest names it.
"$TG_PY" - "$results" "$release" <<'EOF'
import json, pathlib, sys
root, release = pathlib.Path(sys.argv[1]), sys.argv[2]
results = [json.loads(p.read_text()) for p in root.glob("*/*/runs/*.json")]
manifests = [json.loads(p.read_text()) for p in root.glob("*/*/manifest.json")]
problems = []
seen = set()
for r in results:
    key = (r.get("backend"), r.get("mode"))
    seen.add(key)
    if r.get("status") != "ok":
        problems.append(f"{key}: status {r.get('status')}: {r.get('reason', '')}")
want = {(b, m) for b in ("eager", "inductor") for m in ("train", "eval")}
if seen != want:
    problems.append(f"runs {sorted(seen)}, expected {sorted(want)}")
versions = {m.get("libtorch", {}).get("version") for m in manifests}
if not manifests or versions != {release}:
    problems.append(f"manifests name torch {sorted(map(str, versions))}, expected {release}")
if problems:
    print("oldest release check FAILED:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"oldest release check: torch {release}, {len(results)} runs ok (eager and inductor, train and eval)")
EOF
