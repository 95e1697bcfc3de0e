#!/usr/bin/env python3
"""Counts a model's step in Python's own PyTorch under Callgrind: the
outside check of a counted change between two releases that TorchGauge
reports (docs/counted.md, "Across releases").

The step is tools/python_eager_timing.py's (the same workload as the
collector's harness at the smoke sizes); PyTorch's own
torch.utils.benchmark.Timer.collect_callgrind counts it, in a subprocess
under Valgrind that builds the model in its setup, warms the step up once
and then counts `--repeats` steps, one each. The counts are instructions
(Ir) of the whole step, the Python interpreter's share included, which the
collector's C++ step does not have: compare the change between releases,
not the totals. Valgrind has no AVX-512, so ATen runs its AVX2 kernels, as
the collector's counted runs do.

Prints one JSON object: the model, mode, batch, threads, backend, torch
version and commit, the instructions of each counted step, and those of
the median step per shared object (`by_object`, self cost; an entry
Callgrind names without its object, an inlined header function say, is
grouped under its source file's name instead): the torch libraries' part
(`torch_libraries`: the entries of libtorch*, libc10*) is work the
collector's C++ step does too, without the interpreter's.

Usage:
  python_counted.py --model resnet18 --mode eval --batch 2 [--threads 1]
      [--backend eager|torchscript] [--repeats 3] [--extra-site DIR]
"""
import argparse
import json
import os
import statistics
import sys

TOOLS = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--mode", choices=["train", "eval"], required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--backend", choices=["eager", "torchscript"], default="eager")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--extra-site", action="append", default=[])
    a = ap.parse_args()
    sys.path.extend(a.extra_site)
    sys.path.insert(0, TOOLS)
    import python_eager_timing as pet

    if not pet.supports(a.model, a.mode, a.backend):
        raise SystemExit(f"python_counted: no Python reference for {a.model} {a.mode} {a.backend}")
    import torch
    import torch.version as tv
    from torch.utils.benchmark import Timer

    # What the subprocess under Valgrind runs first, uncounted: the same
    # step this process would build.
    options = {k: getattr(a, k) for k in ("model", "mode", "batch", "threads", "backend", "seed")}
    setup = "\n".join(
        [
            "import sys, types",
            f"sys.path[:0] = {[TOOLS]!r}",
            f"sys.path.extend({a.extra_site!r})",
            "import python_eager_timing as pet",
            f"step = pet.make_step(types.SimpleNamespace(**{options!r}))",
        ]
    )
    os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
    # collect_callgrind starts `python` from PATH, and checks that it is this
    # interpreter: a venv's is not on PATH unless activated.
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    timer = Timer(stmt="step()", setup=setup, num_threads=a.threads)
    stats = timer.collect_callgrind(number=1, repeats=a.repeats, collect_baseline=False, retain_out_file=False)
    if not isinstance(stats, tuple):
        stats = (stats,)
    counts = [s.counts(denoise=False) for s in stats]
    median_stats = sorted(stats, key=lambda s: s.counts(denoise=False))[(len(stats) - 1) // 2]
    by_object = {}
    for entry in median_stats.stats(inclusive=False):
        name = object_of(entry.function)
        by_object[name] = by_object.get(name, 0) + entry.count
    print(
        json.dumps(
            {
                **options,
                "torch": torch.__version__,
                "torch_commit": getattr(tv, "git_version", None),
                "instructions": counts,
                "median_instructions": statistics.median(counts),
                "by_object": dict(sorted(by_object.items(), key=lambda kv: -kv[1])),
                "torch_libraries": sum(n for o, n in by_object.items() if o.startswith(("libtorch", "libc10"))),
            }
        )
    )


def object_of(function):
    """The shared object (its file name) a Callgrind function entry belongs
    to: "file:function [/path/lib.so]", or the file itself where no object
    is named."""
    function = function.strip()
    if function.endswith("]") and "[" in function:
        return os.path.basename(function[function.rindex("[") + 1 : -1])
    return os.path.basename(function.split(":", 1)[0]) or "???"


if __name__ == "__main__":
    main()
