#!/usr/bin/env python3
"""AOTInductor compile step of the collector's `inductor` backend.

The collector traces its native C++ module into a TorchScript file whose graph
reads the parameters and buffers as module attributes, and saves the example
inputs beside it (torch::pickle_save). This tool converts that graph into an
ExportedProgram and compiles it with TorchInductor into a .pt2 package that
LibTorch loads and runs with no Python (torch::inductor::AOTIModelPackageLoader).

With --joint (train runs) the graph computes the loss: the program is
turned into its joint forward-backward (torch.export's
_export_forward_backward), whose package returns the loss and then the
gradients of the parameters, in the order printed as "outputs" (attribute
names); buffer updates (BatchNorm's running statistics) are written in place
into the tensors the collector hands the package.

Small tensors are never inlined into the generated code
(always_keep_tensor_constants): every parameter and buffer stays a constant the
collector supplies, so an optimizer step reaches the package and a cached
package never carries the weights of the run that built it.

With --freeze (the collector's inductor_frozen backend, eval only) Inductor
compiles with freezing (torch._inductor.config.freezing), as torch.compile
does for the HUD's CPU runs: the weights become constants of the graph,
folded and, on CPU, prepacked into oneDNN's layouts, and the package carries
them. The collector then hands it nothing, and keys its cache by the weights.

It is the only Python that runs at collect time, and it is never timed as a
step: the collector records its wall time as the compile latency. It prints
one JSON object on stdout: the phase times in milliseconds, the package and,
with --joint, the outputs. Once the package is written, the build directories
Inductor left for it in its cache directory are removed (remove_build_dirs),
unless another compile is running there (compiling).

Usage: aoti_compile.py --graph G.pt --inputs I.pt --out P.pt2 --threads N [--joint | --freeze]
"""
import argparse
import contextlib
import fcntl
import json
import os
import pathlib
import posixpath
import shutil
import sys
import time
import traceback
import zipfile

# The last line of stderr on a failure starts with this prefix
# (collector/backends/inductor_backend.cc reads that line: failure_line below).
FAILURE_PREFIX = "aoti_compile failed: "


def failure_line(exc):
    """One line naming a failure: the exception's type and its message's first
    line, then, where that line does not say what failed, the first line that
    does: the operator Inductor could not lower ("target: aten...."), or the
    C++ compiler's first error."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = f"{type(exc).__name__}: {lines[0] if lines else ''}"
    detail = next((l for l in lines[1:] if l.startswith("target:") or ": error: " in l or l.startswith("error:")), None)
    if detail:
        where, _, what = detail.partition(" ")  # where: a generated file's long temporary path, or "target:"
        detail = f"{os.path.basename(where)} {what}".rstrip()
        text += f" ({detail[:200]})"
    return FAILURE_PREFIX + text


def remove_build_dirs(package, cache_dir):
    """Removes the build directories Inductor left in its cache directory
    (cache_dir) for this package, and returns them. Each holds the generated
    C++, the compiled model and a copy of the weights: about 1 GB for a model
    of 250M parameters, over 20 GB for one night's full suite on CPU. The
    package holds everything a run loads. A directory is this package's when
    it holds one of the package's wrapper sources (their names are hashes of
    the code), so a concurrent compile's directories and the shared caches
    (precompiled headers, kernels) are left alone."""
    with zipfile.ZipFile(package) as z:
        sources = {posixpath.basename(n) for n in z.namelist() if n.endswith(".wrapper.cpp")}
    root = pathlib.Path(cache_dir)
    if not sources or not root.is_dir():
        return []
    removed = []
    for d in sorted(root.iterdir()):
        if d.is_dir() and not d.is_symlink() and any((d / s).is_file() for s in sources):
            shutil.rmtree(d)
            removed.append(d)
    return removed


LOCK_NAME = "torchgauge-aoti.lock"


@contextlib.contextmanager
def compiling(cache_dir):
    """Holds a shared lock on LOCK_NAME in Inductor's cache directory while
    a compile runs. Two compiles of the same graph (two tests, or two Slurm
    shards on one node) build in the same directory there, its name a hash
    of the code, so one's clean-up must not remove it while the other still
    builds in it (a FileNotFoundError for its wrapper_metadata.json, seen
    under ctest -j2): clean-up takes the lock exclusively
    (remove_build_dirs_when_alone)."""
    root = pathlib.Path(cache_dir)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / LOCK_NAME, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        yield


def remove_build_dirs_when_alone(package, cache_dir):
    """remove_build_dirs, when no compile holds the lock (compiling);
    otherwise None and nothing is removed: the directories stay for a later
    compile of this package to remove."""
    root = pathlib.Path(cache_dir)
    if not root.is_dir():
        return []
    with open(root / LOCK_NAME, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None
        return remove_build_dirs(package, cache_dir)


def export_static_shapes():
    """TS2EPConverter exports every input dimension as dynamic (Dim.AUTO). The
    collector's runs never change shape and packages are cached per shape, so
    every dimension is made static instead: Inductor then specialises its code
    to the shapes (as torch.compile does by default), and guards on symbolic
    sizes that the exporter cannot solve (adaptive pooling's) cannot fail the
    export. The converter reads Dim from its module, so that name is replaced
    with one whose AUTO is STATIC."""
    import torch
    import torch._export.converter as converter

    class StaticDims:
        AUTO = torch.export.Dim.STATIC

    converter.Dim = StaticDims


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", required=True, help="TorchScript module saved by the collector")
    ap.add_argument("--inputs", required=True, help="example inputs (a tuple, torch::pickle_save)")
    ap.add_argument("--out", required=True, help="the .pt2 package to write")
    ap.add_argument("--threads", type=int, required=True, help="the run's intra-op thread count")
    ap.add_argument("--joint", action="store_true", help="the graph returns a loss: compile forward and backward")
    ap.add_argument("--freeze", action="store_true", help="fold and prepack the weights into the package (eval)")
    args = ap.parse_args()
    if args.joint and args.freeze:
        ap.error("--freeze compiles a forward only; a joint graph's weights are trained")

    import torch  # noqa: E402 (slow import: after argument errors)
    from torch._export.converter import TS2EPConverter
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    export_static_shapes()

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
    outputs = None
    if args.joint:
        from torch.export.graph_signature import OutputKind
        from torch.export.experimental import _export_forward_backward

        from torch.export.graph_signature import InputKind

        program = TS2EPConverter(module, example).convert()
        # The converter lifts the module's own attributes as buffers; those
        # that are parameters of the TorchScript module are the trained ones.
        parameters = {name for name, _ in module.named_parameters()}
        for spec in program.graph_signature.input_specs:
            if spec.kind == InputKind.BUFFER and spec.target in parameters:
                spec.kind = InputKind.PARAMETER
                spec.persistent = None
                program.state_dict[spec.target] = torch.nn.Parameter(program.state_dict[spec.target])
        program.verifier().check(program)
        program = _export_forward_backward(program, joint_loss_index=0)
        # The package returns the user-visible outputs: the loss, then one
        # gradient per trained parameter (buffer mutations are applied in place).
        outputs = []
        for spec in program.graph_signature.output_specs:
            if spec.kind == OutputKind.LOSS_OUTPUT:
                outputs.append("loss")
            elif spec.kind == OutputKind.GRADIENT_TO_PARAMETER:
                outputs.append(spec.target)
            elif spec.kind != OutputKind.BUFFER_MUTATION:
                raise RuntimeError(f"unexpected output of the joint program: {spec.kind} {spec.target}")
        if not outputs or outputs[0] != "loss":
            raise RuntimeError(f"the joint program does not return the loss first: {outputs}")
    else:
        with torch.no_grad():
            program = TS2EPConverter(module, example).convert()
    times["convert_ms"] = (time.perf_counter() - start) * 1e3

    start = time.perf_counter()
    if args.freeze:
        torch._inductor.config.freezing = True
    else:
        torch._inductor.config.always_keep_tensor_constants = True
    # This process's own temporary name: two collections sharing the cache
    # (Slurm shards on one node, the tests beside a collection) may compile
    # the same key at once, and each must rename only a package it finished.
    stem = args.out[: -len(".pt2")] if args.out.endswith(".pt2") else args.out
    tmp = f"{stem}.{os.getpid()}.tmp.pt2"
    # A joint program differentiates inside its graph; a forward needs no grad.
    with compiling(cache_dir()), contextlib.nullcontext() if args.joint else torch.no_grad():
        torch._inductor.aoti_compile_and_package(program, package_path=tmp)
    os.replace(tmp, args.out)
    times["compile_ms"] = (time.perf_counter() - start) * 1e3
    try:
        removed = remove_build_dirs_when_alone(args.out, cache_dir())
        if removed is None:
            sys.stderr.write("another compile is running: Inductor's build directories are kept\n")
        for d in removed or []:
            sys.stderr.write(f"removed Inductor's build directory {d}\n")
    except OSError as e:  # the package is written: a leftover directory is no failure
        sys.stderr.write(f"warning: Inductor's build directories were not removed: {e}\n")
    result = {"package": args.out, **times, "torch": torch.__version__}
    if outputs is not None:
        result["outputs"] = outputs
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # noqa: BLE001 (every failure is reported the same way)
        # The traceback for the log, then one line that names the failure: the
        # collector records it as the run's reason (a compiler's last lines are
        # often a traceback's code or a C++ warning, not the cause).
        traceback.print_exc()
        sys.stderr.write(f"\n{failure_line(e)}\n")
        sys.exit(1)
