"""Reference for the torchvision classifiers resnet18, resnet50, resnext50_32x4d,
vgg16, alexnet and squeezenet1_1 (models/vision/classification/resnet.cc, vgg.cc, alexnet.cc,
squeezenet.cc): randomly initialised torchvision 0.26 models, nothing downloaded.

Training mirrors TorchBench: Adam with its defaults and CrossEntropyLoss
against a uniform random tensor shaped like the logits (the torchvision
harness), or against random class indices (squeezenet1_1's own train()).
"""
import torch
import torchvision
from torch import nn

from parity_common import main

BATCH = 2
SOFT_TARGET_MODELS = {"resnet18", "resnet50", "resnext50_32x4d", "vgg16", "alexnet"}
CLASS_INDEX_MODELS = {"squeezenet1_1"}


def build(model_id):
    if model_id not in SOFT_TARGET_MODELS | CLASS_INDEX_MODELS:
        raise SystemExit(f"unknown model {model_id}")
    model = getattr(torchvision.models, model_id)(weights=None)
    images = torch.randn(BATCH, 3, 224, 224)
    if model_id in SOFT_TARGET_MODELS:
        target = torch.rand(BATCH, 1000)
    else:
        target = torch.randint(0, 1000, (BATCH,))
    return {
        "module": model,
        "inputs": {"images": images, "target": target},
        "forward": lambda m, i: m(i["images"]),
        "loss": lambda m, i: nn.functional.cross_entropy(m(i["images"]), i["target"]),
        "optimizer": lambda m: torch.optim.Adam(m.parameters()),
    }


if __name__ == "__main__":
    main(build)
