"""Reference for vision_maskrcnn (test-only): torchvision's Mask R-CNN
ResNet-50-FPN built as TorchBench's maskrcnn_resnet50_fpn(pretrained=True)
builds it, without downloading the weights: resnet50 with FrozenBatchNorm2d,
_resnet_fpn_extractor(trainable_layers=3), MaskRCNN(num_classes=91) and
overwrite_eps(model, 0.0) -- the calls maskrcnn_resnet50_fpn makes with COCO_V1
weights. The frozen batch-norm statistics are drawn at random (pretrained
statistics are not the identity). Tiny inputs: two seeded images (96x120 and
110x84) with seeded boxes, labels and ellipse masks, min_size 112 and max_size
160 in the transform, box_score_thresh 0.0 so that random weights still give
detections (with 0.05 none survive).

Saves: params (state dict), param_count, inputs, eval (detections per image,
the RPN's proposals, the box predictor's outputs), losses (the five), loss
(their sum) and updated (parameters after one SGD step, TorchBench's
optimizer), read by tests/parity/maskrcnn_parity_test.cc.
"""
import argparse

import torch
from torchvision.models.detection._utils import overwrite_eps
from torchvision.models.detection.backbone_utils import _resnet_fpn_extractor
from torchvision.models.detection.mask_rcnn import MaskRCNN, maskrcnn_resnet50_fpn
from torchvision.models.resnet import resnet50
from torchvision.ops.misc import FrozenBatchNorm2d

TRAIN_SEED = 1234
MIN_SIZE, MAX_SIZE, SCORE_THRESH = 112, 160, 0.0
SIZES = [(96, 120), (110, 84)]


def build():
    backbone = _resnet_fpn_extractor(resnet50(weights=None, norm_layer=FrozenBatchNorm2d), 3)
    model = MaskRCNN(backbone, num_classes=91, min_size=MIN_SIZE, max_size=MAX_SIZE, box_score_thresh=SCORE_THRESH)
    overwrite_eps(model, 0.0)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, FrozenBatchNorm2d):
                n = m.weight.numel()
                m.weight.copy_(torch.rand(n) * 0.5 + 0.5)
                m.bias.copy_(torch.randn(n) * 0.1)
                m.running_mean.copy_(torch.randn(n) * 0.1)
                m.running_var.copy_(torch.rand(n) * 0.5 + 0.75)
    return model


def sample(h, w, n):
    image = torch.rand(3, h, w)
    boxes, masks = [], []
    ys = (torch.arange(h, dtype=torch.float32) + 0.5).view(-1, 1)
    xs = (torch.arange(w, dtype=torch.float32) + 0.5).view(1, -1)
    for _ in range(n):
        bw = float(torch.empty(1).uniform_(12, w * 0.7))
        bh = float(torch.empty(1).uniform_(12, h * 0.7))
        x0 = float(torch.empty(1).uniform_(0, w - bw))
        y0 = float(torch.empty(1).uniform_(0, h - bh))
        boxes.append([x0, y0, x0 + bw, y0 + bh])
        ex = (xs - (x0 + bw / 2)) / (bw / 2)
        ey = (ys - (y0 + bh / 2)) / (bh / 2)
        masks.append((ex * ex + ey * ey <= 1).to(torch.uint8))
    labels = torch.randint(1, 91, (n,))
    return image, torch.tensor(boxes, dtype=torch.float32), labels, torch.stack(masks)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = build()
    inputs, images, targets = {}, [], []
    for i, ((h, w), n) in enumerate(zip(SIZES, (3, 4))):
        image, boxes, labels, masks = sample(h, w, n)
        inputs.update({f"image{i}": image, f"boxes{i}": boxes, f"labels{i}": labels, f"masks{i}": masks})
        images.append(image)
        targets.append({"boxes": boxes, "labels": labels, "masks": masks})
    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    # maskrcnn_resnet50_fpn without weights builds BatchNorm2d instead; same
    # names (plus num_batches_tracked) and, as torchvision's docs state,
    # 44,401,393 parameters once FrozenBatchNorm2d turns the BN affine
    # parameters into buffers.
    plain = maskrcnn_resnet50_fpn(weights=None, weights_backbone=None)
    plain_names = {k for k in plain.state_dict() if not k.endswith("num_batches_tracked")}
    assert plain_names == set(params), "state-dict names differ from maskrcnn_resnet50_fpn's"

    captured = {}
    model.rpn.register_forward_hook(lambda m, i, o: captured.__setitem__("proposals", [p.clone() for p in o[0]]))
    model.roi_heads.box_predictor.register_forward_hook(lambda m, i, o: captured.__setitem__("box", o))
    model.eval()
    with torch.no_grad():
        detections = model(images)
    evaluation = {"class_logits": captured["box"][0], "box_regression": captured["box"][1]}
    for i, d in enumerate(detections):
        for k in ("boxes", "scores", "labels", "masks"):
            evaluation[f"{k}{i}"] = d[k]
        evaluation[f"proposals{i}"] = captured["proposals"][i]

    # TorchBench's optimizer and _train step.
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(trainable, lr=0.02, momentum=0.9, weight_decay=1e-4)
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
            "plain_param_count": sum(p.numel() for p in plain.parameters()),
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
