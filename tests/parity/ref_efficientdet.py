"""Reference for timm_efficientdet (test-only): effdet 0.4.1's
tf_efficientdet_d1 (timm 1.0.31 backbone), built as TorchBench builds it
(effdet.create_model, pretrained=False, pretrained_backbone=False, the
config's 90 classes) at a small image size.

--model timm_efficientdet: DetBenchTrain with its AnchorLabeler
(create_labeler=True, effdet's bench_labeler path). Saves the bench's state
dict, the eval output (the class and box outputs of all levels, arranged as
effdet's _post_process arranges them and concatenated: B x anchors x 94),
one train step (loss, class and box losses) with TorchBench's optimizer
(timm create_optimizer "momentum", SGD momentum 0.9, weight decay 4e-5 off
1-D parameters and biases, lr as models/vision/detection/efficientdet.cc states) and
clip_grad_norm_(10), and the parameters after it.

--model timm_efficientdet_predict: DetBenchPredict's detections (with
img_info) on the same kind of inputs, in eval mode.
"""
import argparse
import math

import torch

import effdet
from timm.optim import create_optimizer_v2

TRAIN_SEED = 1234
SIZE = 128
LR = 1e-4 + (0.01 - 1e-4) / 5.0


def targets(batch, size, gen):
    """6 + 3 i boxes for image i (y1, x1, y2, x2, sides log-uniform in [0.05, 0.6] of the image), classes
    1..90, padded to 100 rows with -1 as effdet's DetectionFastCollate pads."""
    bbox = torch.full((batch, 100, 4), -1.0)
    cls = torch.full((batch, 100), -1.0)
    for i in range(batch):
        n = 6 + 3 * i
        hw = torch.exp(torch.empty(n, 2).uniform_(math.log(0.05), math.log(0.6), generator=gen)) * size
        corner = torch.rand(n, 2, generator=gen) * (size - hw)
        bbox[i, :n] = torch.cat([corner, corner + hw], 1)
        cls[i, :n] = torch.randint(1, 91, (n,), generator=gen).float()
    return bbox, cls


def flat_outputs(class_out, box_out):
    b = class_out[0].shape[0]
    c = torch.cat([x.permute(0, 2, 3, 1).reshape(b, -1, 90) for x in class_out], 1)
    bx = torch.cat([x.permute(0, 2, 3, 1).reshape(b, -1, 4) for x in box_out], 1)
    return torch.cat([c, bx], 2)


def build(task):
    extra = {"bench_labeler": True} if task == "train" else {}
    return effdet.create_model("tf_efficientdet_d1", bench_task=task, pretrained=False, pretrained_backbone=False,
                               image_size=(SIZE, SIZE), **extra)


def predict(out):
    torch.manual_seed(0)
    bench = build("predict")
    bench.eval()
    gen = torch.Generator().manual_seed(5)
    images = torch.randn(2, 3, SIZE, SIZE, generator=gen)
    img_info = {"img_scale": torch.ones(2), "img_size": torch.full((2, 2), float(SIZE))}
    with torch.no_grad():
        dets = bench(images, img_info=img_info)
    saved = {
        "params": {k: v.detach().clone() for k, v in bench.state_dict().items()},
        "param_count": sum(p.numel() for p in bench.parameters()),
        "inputs": {"images": images, **img_info},
        "output": dets,
        "loss": torch.zeros(()),
        "updated": {},
    }
    torch.save(saved, out)


def train(out):
    torch.manual_seed(0)
    bench = build("train")
    gen = torch.Generator().manual_seed(7)
    images = torch.randn(2, 3, SIZE, SIZE, generator=gen)
    bbox, cls = targets(2, SIZE, gen)
    optimizer = create_optimizer_v2(bench, opt="momentum", lr=LR, weight_decay=4e-5, momentum=0.9)
    params = {k: v.detach().clone() for k, v in bench.state_dict().items()}
    bench.eval()
    with torch.no_grad():
        output = flat_outputs(*bench.model(images))
    bench.train()
    torch.manual_seed(TRAIN_SEED)
    result = bench(images, {"bbox": bbox, "cls": cls})
    optimizer.zero_grad()
    result["loss"].backward()
    torch.nn.utils.clip_grad_norm_(bench.parameters(), 10.0)
    optimizer.step()
    saved = {
        "params": params,
        "param_count": sum(p.numel() for p in bench.parameters()),
        "inputs": {"images": images, "bbox": bbox, "cls": cls},
        "output": output,
        "loss": result["loss"].detach().clone(),
        "class_loss": result["class_loss"].detach().clone(),
        "box_loss": result["box_loss"].detach().clone(),
        "updated": {k: v.detach().clone() for k, v in bench.named_parameters()},
    }
    torch.save(saved, out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.use_deterministic_algorithms(True, warn_only=True)
    if args.model == "timm_efficientdet_predict":
        predict(args.out)
    else:
        train(args.out)


if __name__ == "__main__":
    main()
