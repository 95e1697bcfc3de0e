#!/usr/bin/env python3
"""Times a model's step in Python's own PyTorch: the outside check of a
release-over-release change that TorchGauge reports (issue: the release
history). The backend is Python's own too: eager; torchscript, the forward
traced once by torch.jit.trace (loss, backward and optimizer eager, as the
collector runs it); inductor, the model under torch.compile (eval: the
forward; train: forward and backward through AOTAutograd, the Python
counterpart of the collector's AOTInductor joint graph); inductor_frozen
(eval only), torch.compile with torch._inductor.config.freezing, the
counterpart of the collector's frozen package; aoti_frozen (eval only),
Python's own AOTInductor with freezing (torch.export, then
torch._inductor.aoti_compile_and_package and aoti_load_package): the
collector's compile path taken from Python, without its TorchScript trace. The workload is the one the collector's harnesses run for the
same model at the smoke sizes (models/vision/classification/
torchvision_harness.cc, models/shared/hf_harness.cc):

- torchvision classifiers: images 3 x 64 x 64, Adam(lr 1e-3), cross-entropy
  against soft targets (class indices for squeezenet1_1);
- transformers language models: random token ids of 32, labels the same
  shape, Adam(lr 1e-3), the model's own loss; seq2seq eval feeds the ids to
  both encoder and decoder;
- eval runs under torch.inference_mode(), train runs forward, loss,
  zero_grad, backward, step.

Each repetition is timed with time.perf_counter_ns around one step (the CPU
is synchronous). Prints one JSON object: the model, mode, batch, threads,
torch version and commit, and every sample in ms.

Usage:
  python_eager_timing.py --model resnet18 --mode eval --batch 1 --threads 1 \
      [--backend eager|torchscript|inductor|inductor_frozen|aoti_frozen] [--warmup 3] [--repeat 20] [--extra-site DIR]

--extra-site appends a site-packages folder to the end of sys.path, so that
a release's venv (torch, maybe torchvision) can borrow transformers from the
reference environment without its torch shadowing the release's.
"""
import argparse
import json
import statistics
import sys
import time

TORCHVISION = {
    "alexnet": "alexnet",
    "densenet121": "densenet121",
    "mobilenet_v2": "mobilenet_v2",
    "mobilenet_v3_large": "mobilenet_v3_large",
    "resnet18": "resnet18",
    "resnet50": "resnet50",
    "resnext50_32x4d": "resnext50_32x4d",
    "shufflenet_v2_x1_0": "shufflenet_v2_x1_0",
    "squeezenet1_1": "squeezenet1_1",
    "vgg16": "vgg16",
}
# transformers class and config as the collector's families state them.
TRANSFORMERS = {
    "hf_bert": ("BertForMaskedLM", "BertConfig", {}),
    "hf_distil_bert": ("DistilBertForMaskedLM", "DistilBertConfig", {}),
    "hf_gpt2": ("GPT2LMHeadModel", "GPT2Config", {}),
    "hf_t5": (
        "T5ForConditionalGeneration",
        "T5Config",
        # t5-small
        {"d_model": 512, "d_ff": 2048, "num_layers": 6, "num_heads": 8, "d_kv": 64, "pad_token_id": 0, "decoder_start_token_id": 0},
    ),
}
SMOKE_IMAGE_SIDE = 64
SMOKE_SEQ_LEN = 32


def import_torchvision():
    """torchvision, or where its compiled operators do not match this torch
    (a release with no torchvision of its own on PyPI, borrowing another
    release's through --extra-site), its pure-Python model code alone: the
    package's __init__ registers the operators' fake kernels and fails, but
    the classifiers never call those operators."""
    try:
        import torchvision

        return torchvision
    except (RuntimeError, ImportError) as e:
        import importlib.util
        import types

        for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
            del sys.modules[name]
        spec = importlib.util.find_spec("torchvision")
        if spec is None or not spec.submodule_search_locations:
            raise
        pkg = types.ModuleType("torchvision")
        pkg.__path__ = list(spec.submodule_search_locations)
        pkg.__spec__ = importlib.util.spec_from_loader("torchvision", loader=None, is_package=True)
        pkg.__spec__.submodule_search_locations = pkg.__path__
        pkg.__version__ = "0+model-code-only"
        sys.modules["torchvision"] = pkg
        import torchvision.models

        print(f"python_eager_timing: torchvision's operators unavailable ({e}); its model code only", file=sys.stderr)
        return pkg


def build(model_id, mode, batch):
    import torch

    if model_id in TORCHVISION:
        torchvision = import_torchvision()

        net = getattr(torchvision.models, TORCHVISION[model_id])(weights=None)
        images = torch.randn(batch, 3, SMOKE_IMAGE_SIDE, SMOKE_IMAGE_SIDE)
        if model_id == "squeezenet1_1":
            target = torch.randint(0, 1000, (batch,))
        else:
            target = torch.rand(batch, 1000)

        def forward(module):
            return module(images)

        def loss_of(out):
            return torch.nn.functional.cross_entropy(out, target)

        return net, forward, loss_of, (images,)
    if model_id in TRANSFORMERS:
        # transformers imports torchvision when it is installed.
        import_torchvision()
        import transformers

        cls, cfg_cls, kw = TRANSFORMERS[model_id]
        config = getattr(transformers, cfg_cls)(**kw)
        net = getattr(transformers, cls)(config)
        ids = torch.randint(0, config.vocab_size, (batch, SMOKE_SEQ_LEN))
        labels = torch.randint(0, config.vocab_size, (batch, SMOKE_SEQ_LEN))
        seq2seq = model_id == "hf_t5"

        def forward(module):
            if mode == "train":
                return module(input_ids=ids, labels=labels)
            if seq2seq:
                return module(input_ids=ids, decoder_input_ids=ids)
            return module(input_ids=ids)

        def loss_of(out):
            return out["loss"] if isinstance(out, dict) else out.loss

        return net, forward, loss_of, (ids,)
    raise SystemExit(f"python_eager_timing: no Python reference for model '{model_id}'")


def supports(model, mode, backend):
    """Whether this timer runs the model on that backend: every model with a
    reference eager and under torch.compile; a traced forward takes a
    transformers model in eval only, and not an encoder-decoder."""
    if model in TORCHVISION:
        return True
    if model not in TRANSFORMERS:
        return False
    return backend != "torchscript" or (mode == "eval" and model != "hf_t5")


def compiled(net, a, example):
    """The module a step calls: the model itself (eager), its forward traced
    once (torchscript), or the model under torch.compile (inductor)."""
    import torch

    if a.backend == "torchscript":
        if not supports(a.model, a.mode, a.backend):
            raise SystemExit(f"python_eager_timing: torchscript {a.mode} of {a.model} is not timed here")
        with torch.no_grad() if a.mode == "eval" else torch.enable_grad():
            # strict=False: transformers' forward returns a dict-like output.
            traced = torch.jit.trace(net, example, strict=False, check_trace=False)
        if a.model in TRANSFORMERS:
            # A traced module takes its inputs by position.
            return lambda input_ids: traced(input_ids)
        return traced
    if a.backend == "aoti_frozen":
        return aoti_frozen(net, a, example)
    if a.backend == "inductor_frozen":
        if a.mode != "eval":
            raise SystemExit("python_eager_timing: inductor_frozen runs eval only (freezing folds the weights)")
        # Freezing applies to a graph compiled without grad: the eval step's
        # first call, under inference_mode.
        torch._inductor.config.freezing = True
    if a.backend in ("inductor", "inductor_frozen"):
        return torch.compile(net)
    return net


def aoti_frozen(net, a, example):
    """The model exported (torch.export, no grad) and compiled ahead of time
    with freezing into a package in a temporary folder, loaded back: a
    callable taking the model's inputs by position."""
    import os
    import tempfile

    import torch

    if a.mode != "eval":
        raise SystemExit("python_eager_timing: aoti_frozen runs eval only (freezing folds the weights)")
    torch._inductor.config.freezing = True
    folder = tempfile.mkdtemp(prefix="python_aoti_")
    with torch.no_grad():
        program = torch.export.export(net, tuple(example))
        package = torch._inductor.aoti_compile_and_package(program, package_path=os.path.join(folder, "model.pt2"))
    runner = torch._inductor.aoti_load_package(package)
    if a.model in TRANSFORMERS:
        # The exported forward returns the model's output as a tuple of tensors.
        return lambda input_ids: {"logits": runner(input_ids)[0]}
    return runner


def make_step(a):
    """One step of the model (a.model, a.mode, a.batch, a.backend), with
    a.threads threads and a.seed's weights and inputs, as a function: what
    this timer times and tools/python_counted.py counts."""
    import torch

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    net, forward, loss_of, example = build(a.model, a.mode, a.batch)
    net.train(a.mode == "train")
    module = compiled(net, a, example)
    if a.mode == "train":
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)

        def step():
            loss = loss_of(forward(module))
            opt.zero_grad()
            loss.backward()
            opt.step()

    else:

        def step():
            with torch.inference_mode():
                forward(module)

    return step


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--mode", choices=["train", "eval"], required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--backend", choices=["eager", "torchscript", "inductor", "inductor_frozen", "aoti_frozen"],
                    default="eager")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--extra-site", action="append", default=[])
    a = ap.parse_args()
    sys.path.extend(a.extra_site)
    import torch

    step = make_step(a)
    for _ in range(a.warmup):
        step()
    samples = []
    for _ in range(a.repeat):
        t0 = time.perf_counter_ns()
        step()
        samples.append((time.perf_counter_ns() - t0) / 1e6)
    import torch.version as tv

    print(
        json.dumps(
            {
                "model": a.model,
                "mode": a.mode,
                "batch": a.batch,
                "threads": a.threads,
                "backend": a.backend,
                "torch": torch.__version__,
                "torch_commit": getattr(tv, "git_version", None),
                "samples_ms": samples,
                "median_ms": statistics.median(samples),
            }
        )
    )


if __name__ == "__main__":
    main()
