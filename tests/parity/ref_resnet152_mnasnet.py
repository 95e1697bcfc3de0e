"""Reference for the torchvision classifiers resnet152 and mnasnet1_0
(models/vision/classification/resnet.cc, models/vision/classification/mnasnet.cc): randomly initialised torchvision 0.26
models, nothing downloaded.

Training mirrors TorchBench's torchvision harness: Adam with its defaults and
CrossEntropyLoss against a uniform random tensor shaped like the logits.
mnasnet1_0's classifier dropout runs in the train step; the driver reseeds the
CPU generator before it and the dropout is the only random op in the step, on
both sides, so the masks are the same.

Images are smaller than TorchBench's 224x224 to keep the test inside its time
budget: behind the global average pool the image size is an input dimension,
not architecture, and every layer still runs (resnet152's last stage sees 2x2
maps at 64x64, mnasnet1_0's 4x4 at 128x128).
"""
import torch
import torchvision
from torch import nn

from parity_common import main

BATCH = 2
IMAGE_SIDE = {"resnet152": 64, "mnasnet1_0": 128}


def build(model_id):
    if model_id not in IMAGE_SIDE:
        raise SystemExit(f"unknown model {model_id}")
    model = getattr(torchvision.models, model_id)(weights=None)
    side = IMAGE_SIDE[model_id]
    inputs = {"images": torch.randn(BATCH, 3, side, side), "target": torch.rand(BATCH, 1000)}
    return {
        "module": model,
        "inputs": inputs,
        "forward": lambda m, i: m(i["images"]),
        "loss": lambda m, i: nn.functional.cross_entropy(m(i["images"]), i["target"]),
        "optimizer": lambda m: torch.optim.Adam(m.parameters()),
    }


if __name__ == "__main__":
    main(build)
