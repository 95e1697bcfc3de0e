#!/usr/bin/env python3
"""AOTInductor compile step of the collector's `inductor` backend.

The collector traces its native C++ module into a TorchScript file whose graph
reads the parameters and buffers as module attributes, and saves the example
inputs beside it (torch::pickle_save). This tool converts that graph into an
ExportedProgram and compiles it with TorchInductor into a .pt2 package that
LibTorch loads and runs with no Python (torch::inductor::AOTIModelPackageLoader).

It is the only Python that runs at collect time, and it is never timed as a
step: the collector records its wall time as the compile latency. It prints
one JSON object on stdout: the phase times in milliseconds and the package.

Usage: aoti_compile.py --graph G.pt --inputs I.pt --out P.pt2 --threads N
"""
import argparse
import json
import os
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", required=True, help="TorchScript module saved by the collector")
    ap.add_argument("--inputs", required=True, help="example inputs (a tuple, torch::pickle_save)")
    ap.add_argument("--out", required=True, help="the .pt2 package to write")
    ap.add_argument("--threads", type=int, required=True, help="the run's intra-op thread count")
    args = ap.parse_args()

    import torch  # noqa: E402 (slow import: after argument errors)
    from torch._export.converter import TS2EPConverter

    # Inductor's CPU code generation picks its vectorisation and parallel
    # loops for the threads it is compiled under: the run's, not the machine's.
    torch.set_num_threads(args.threads)
    times = {}
    start = time.perf_counter()
    module = torch.jit.load(args.graph)
    example = torch.load(args.inputs, weights_only=True)
    if isinstance(example, torch.Tensor):
        example = (example,)
    example = tuple(example)
    with torch.no_grad():
        program = TS2EPConverter(module, example).convert()
    times["convert_ms"] = (time.perf_counter() - start) * 1e3

    start = time.perf_counter()
    tmp = args.out[: -len(".pt2")] + ".tmp.pt2" if args.out.endswith(".pt2") else args.out + ".tmp.pt2"
    with torch.no_grad():
        torch._inductor.aoti_compile_and_package(program, package_path=tmp)
    os.replace(tmp, args.out)
    times["compile_ms"] = (time.perf_counter() - start) * 1e3
    json.dump({"package": args.out, **times, "torch": torch.__version__}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
