"""Reference for the torchvision classifiers mobilenet_v2, mobilenet_v3_large,
densenet121 and shufflenet_v2_x1_0 (models/vision/classification/mobilenet_v2.cc, mobilenet_v3.cc,
densenet.cc, shufflenet_v2.cc): randomly initialised torchvision 0.26 models,
nothing downloaded.

Training mirrors TorchBench's torchvision harness: Adam with its defaults and
CrossEntropyLoss against a uniform random tensor shaped like the logits. The
MobileNets' classifier dropout runs in the train step; the driver reseeds the
CPU generator before it and the dropout is the only random op in the step, on
both sides, so the masks are the same.
"""
import torch
import torchvision
from torch import nn

from parity_common import main

BATCH = 2
MODELS = {"mobilenet_v2", "mobilenet_v3_large", "densenet121", "shufflenet_v2_x1_0"}


def build(model_id):
    if model_id not in MODELS:
        raise SystemExit(f"unknown model {model_id}")
    model = getattr(torchvision.models, model_id)(weights=None)
    inputs = {"images": torch.randn(BATCH, 3, 224, 224), "target": torch.rand(BATCH, 1000)}
    return {
        "module": model,
        "inputs": inputs,
        "forward": lambda m, i: m(i["images"]),
        "loss": lambda m, i: nn.functional.cross_entropy(m(i["images"]), i["target"]),
        "optimizer": lambda m: torch.optim.Adam(m.parameters()),
    }


if __name__ == "__main__":
    main(build)
