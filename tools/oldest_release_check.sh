#!/usr/bin/env bash
# The second LibTorch: builds the collector against the oldest torch release
# TorchGauge supports and runs a small collection with it (ctest
# oldest_release_test, label bench). With --adapter-only it builds the
# adapter alone and collects nothing (ctest oldest_release_adapter_test,
# label integration, part of ./gauge test).
#
# The pin's build is what the tests exercise; this one is there to catch an
# API break in the adapter (models/torch_compat), the collector or the models
# against the other end of the supported range. So it builds the whole
# collector, every model included, but without optimisation (build type None):
# on 2 cores that is about half the time of a Release build, and nothing is
# timed from it. It is built with clang: against <torch/torch.h>'s
# precompiled header g++ spends about 14 s per file re-instantiating the
# header's templates, which clang does once (measured 2026-11-29 against
# 2.9.0: an empty file 14.8 s with g++, 4.4 s with clang; bert_pytorch.cc
# 20.4 s and 6.8 s), and this build is CI's longest single step. It also
# keeps the collector and the models clang-clean. Then one small model is collected eager and inductor, train
# and eval, and every result must be ok with that release's identity in its
# manifest.
#
#   tools/oldest_release_check.sh --adapter-only | [RESULTS_DIR]
# Environment: TORCHGAUGE_OLDEST (the release; default the first line of
# tools/torch_releases.txt), and tools/bootstrap.sh's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source tools/bootstrap.sh
release="${TORCHGAUGE_OLDEST:-$TG_OLDEST}"
adapter_only=0
if [ "${1:-}" = --adapter-only ]; then adapter_only=1; shift; fi
results="${1:-$root/build/check-torch-$release-results}"

export TORCHGAUGE_TORCH="$release"
export TORCHGAUGE_BUILD="$root/build/check-torch-$release"
export TORCHGAUGE_BUILD_TYPE=None
export TORCHGAUGE_CXX="${TORCHGAUGE_CXX:-clang++}"
unset TORCHGAUGE_PYTHON TORCHGAUGE_LIBTORCH

start=$(date +%s)
tg_bootstrap
echo "[oldest] torch $release: bootstrapped in $(( $(date +%s) - start )) s" >&2
start=$(date +%s)
# --adapter-only: the adapter between releases (models/torch_compat.{h,cc})
# and the precompiled <torch/torch.h>, no collection.
if [ "$adapter_only" = 1 ]; then
  tg_build torchgauge_torch_compat
  echo "[oldest] torch $release: the adapter built in $(( $(date +%s) - start )) s" >&2
  exit 0
fi
tg_build torchgauge-collect
echo "[oldest] torch $release: collector built in $(( $(date +%s) - start )) s" >&2

collect="$TG_BUILD/collector/torchgauge-collect"
rm -rf "$results"
start=$(date +%s)
"$collect" run --model '^resnet18$' --mode train eval --backend eager inductor --device cpu --precision fp32 \
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
