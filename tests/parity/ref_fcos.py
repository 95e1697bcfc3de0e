"""Reference for detectron2_fcos_r_50_fpn (test-only): torchvision's FCOS
ResNet-50-FPN with detectron2's fcos_R_50_FPN_1x config mapped onto it:
resnet50 with FrozenBatchNorm2d (eps 1e-5), _resnet_fpn_extractor(
trainable_layers=3, returned_layers=[2, 3, 4], extra_blocks=LastLevelP6P7(256,
256)) -- the calls fcos_resnet50_fpn makes when given backbone weights -- and
FCOS(num_classes=80) (detectron2's num_classes). The frozen batch-norm
statistics are drawn at random (pretrained statistics are not the identity),
GroupNorm's affine parameters are drawn at random too, and cls_logits' weights
get std 0.1 instead of 0.01 so that, with random weights, the scores spread
over (0, 1) by position (no near-ties in the top-k and NMS order).
Tiny inputs: two seeded images (96x120 and 110x84) with seeded boxes and
contiguous labels 0..79, min_size 112 and max_size 160 in the transform,
score_thresh SCORE_THRESH so that random weights still give detections.

Saves: params (state dict), param_count, inputs, eval (detections per image
and the head's outputs), losses (the three), loss (their sum) and updated
(parameters after one SGD step with detectron2's optimizer: lr 0.01, momentum
0.9, weight decay 1e-4, none on GroupNorm parameters), read by
tests/parity/fcos_parity_test.cc.
"""
import argparse

import torch
from torch import nn
from torchvision.models.detection.backbone_utils import _resnet_fpn_extractor
from torchvision.models.detection.fcos import FCOS, fcos_resnet50_fpn
from torchvision.models.resnet import resnet50
from torchvision.ops.feature_pyramid_network import LastLevelP6P7
from torchvision.ops.misc import FrozenBatchNorm2d

TRAIN_SEED = 1234
MIN_SIZE, MAX_SIZE, SCORE_THRESH = 112, 160, 0.75
SIZES = [(96, 120), (110, 84)]
NUM_CLASSES = 80


def build():
    backbone = resnet50(weights=None, norm_layer=FrozenBatchNorm2d)
    backbone = _resnet_fpn_extractor(backbone, 3, returned_layers=[2, 3, 4], extra_blocks=LastLevelP6P7(256, 256))
    model = FCOS(backbone, NUM_CLASSES, min_size=MIN_SIZE, max_size=MAX_SIZE, score_thresh=SCORE_THRESH)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, FrozenBatchNorm2d):
                n = m.weight.numel()
                m.weight.copy_(torch.rand(n) * 0.5 + 0.5)
                m.bias.copy_(torch.randn(n) * 0.1)
                m.running_mean.copy_(torch.randn(n) * 0.1)
                m.running_var.copy_(torch.rand(n) * 0.5 + 0.75)
        for gn in model.head.modules():
            if isinstance(gn, nn.GroupNorm):
                gn.weight.copy_(torch.rand(gn.weight.shape) * 0.5 + 0.75)
                gn.bias.copy_(torch.randn(gn.bias.shape) * 0.1)
        model.head.classification_head.cls_logits.weight.normal_(0, 0.1)
    return model


def sample(h, w, n):
    image = torch.rand(3, h, w)
    boxes = []
    for _ in range(n):
        bw = float(torch.empty(1).uniform_(12, w * 0.7))
        bh = float(torch.empty(1).uniform_(12, h * 0.7))
        x0 = float(torch.empty(1).uniform_(0, w - bw))
        y0 = float(torch.empty(1).uniform_(0, h - bh))
        boxes.append([x0, y0, x0 + bw, y0 + bh])
    labels = torch.randint(0, NUM_CLASSES, (n,))
    return image, torch.tensor(boxes, dtype=torch.float32), labels


def optimizer_for(model):
    norm = [p for m in model.modules() if isinstance(m, nn.GroupNorm) for p in m.parameters(recurse=False)]
    norm_ids = {id(p) for p in norm}
    others = [p for p in model.parameters() if p.requires_grad and id(p) not in norm_ids]
    return torch.optim.SGD(
        [{"params": others}, {"params": norm, "weight_decay": 0.0}], lr=0.01, momentum=0.9, weight_decay=1e-4
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = build()
    inputs, images, targets = {}, [], []
    for i, ((h, w), n) in enumerate(zip(SIZES, (3, 4))):
        image, boxes, labels = sample(h, w, n)
        inputs.update({f"image{i}": image, f"boxes{i}": boxes, f"labels{i}": labels})
        images.append(image)
        targets.append({"boxes": boxes, "labels": labels})
    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    # fcos_resnet50_fpn without weights builds BatchNorm2d instead; same names
    # (plus num_batches_tracked).
    plain = fcos_resnet50_fpn(weights=None, weights_backbone=None, num_classes=NUM_CLASSES)
    plain_names = {k for k in plain.state_dict() if not k.endswith("num_batches_tracked")}
    assert plain_names == set(params), "state-dict names differ from fcos_resnet50_fpn's"

    captured = {}
    model.head.register_forward_hook(lambda m, i, o: captured.update({k: v.clone() for k, v in o.items()}))
    model.eval()
    with torch.no_grad():
        detections = model(images)
    evaluation = dict(captured)
    for i, d in enumerate(detections):
        for k in ("boxes", "scores", "labels"):
            evaluation[f"{k}{i}"] = d[k]

    optimizer = optimizer_for(model)
    model.train()
    torch.manual_seed(TRAIN_SEED)
    loss_dict = model(images, targets)
    loss = sum(v for v in loss_dict.values())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch.save(
        {
            "params": params,
            "param_count": sum(p.numel() for p in model.parameters()),
            "inputs": inputs,
            "eval": {k: v.detach().clone() for k, v in evaluation.items()},
            "losses": {k: v.detach().clone() for k, v in loss_dict.items()},
            "loss": loss.detach().clone(),
            "updated": {k: v.detach().clone() for k, v in model.named_parameters()},
        },
        args.out,
    )
    print({k: float(v.detach()) for k, v in loss_dict.items()}, [len(d["boxes"]) for d in detections])


if __name__ == "__main__":
    main()
