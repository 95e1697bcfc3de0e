"""Parity reference (test-only) for pytorch_unet: U-Net as TorchBench vendors
milesial/Pytorch-UNet (torchbenchmark/models/pytorch_unet/pytorch_unet/unet/),
UNet(n_channels=3, n_classes=2, bilinear=True), restated in plain torch, and
TorchBench's training step: cross-entropy plus the multiclass Dice loss
(utils/dice_score.py, reduce_batch_first) on softmax probabilities and
one-hot masks, RMSprop(lr 1e-5, weight_decay 1e-8, momentum 0.9).

There is no PyPI package of this model. What the C++ model is checked
against is this independent statement of the published architecture: the
same parameter names and shapes, the eval output, the loss, the gradients of
the train step and the parameters after it. The input is small and odd-sized
(40 x 57) so that every max-pool drops a pixel and the decoder's padding to
the skip tensor is exercised, as at TorchBench's 640 x 959.
"""
import torch
from torch import nn
from torch.nn import functional as F

from parity_common import main

HEIGHT, WIDTH, CLASSES = 40, 57, 2


def double_conv(cin, cout, mid=None):
    mid = mid or cout
    return nn.Sequential(
        nn.Conv2d(cin, mid, 3, padding=1), nn.BatchNorm2d(mid), nn.ReLU(inplace=True),
        nn.Conv2d(mid, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class DoubleConv(nn.Module):
    def __init__(self, cin, cout, mid=None):
        super().__init__()
        self.double_conv = double_conv(cin, cout, mid)

    def forward(self, x):
        return self.double_conv(x)


class Down(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.maxpool_conv = nn.Sequential(nn.MaxPool2d(2), DoubleConv(cin, cout))

    def forward(self, x):
        return self.maxpool_conv(x)


class Up(nn.Module):
    """Bilinear x2 upsampling (align_corners), padded to the skip tensor,
    [skip, upsampled] concatenated, then DoubleConv through in / 2."""

    def __init__(self, cin, cout):
        super().__init__()
        self.conv = DoubleConv(cin, cout, cin // 2)

    def forward(self, below, skip):
        x = F.interpolate(below, scale_factor=2, mode="bilinear", align_corners=True)
        dy, dx = skip.size(2) - x.size(2), skip.size(3) - x.size(3)
        x = F.pad(x, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
        return self.conv(torch.cat([skip, x], dim=1))


class OutConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1)

    def forward(self, x):
        return self.conv(x)


class UNet(nn.Module):
    def __init__(self, channels=3, classes=CLASSES):
        super().__init__()
        self.inc = DoubleConv(channels, 64)
        self.down1, self.down2, self.down3 = Down(64, 128), Down(128, 256), Down(256, 512)
        self.down4 = Down(512, 512)  # 1024 // 2: bilinear halves the bottleneck
        self.up1, self.up2, self.up3, self.up4 = Up(1024, 256), Up(512, 128), Up(256, 64), Up(128, 64)
        self.outc = OutConv(64, classes)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x4 = self.down3(x3)
        y = self.up1(self.down4(x4), x4)
        y = self.up2(y, x3)
        y = self.up3(y, x2)
        return self.outc(self.up4(y, x1))


def dice(p, t, eps=1e-6):
    """Dice coefficient over the whole batch (reduce_batch_first)."""
    inter = torch.dot(p.reshape(-1), t.reshape(-1))
    total = p.sum() + t.sum()
    if total.item() == 0:
        total = 2 * inter
    return (2 * inter + eps) / (total + eps)


def unet_loss(logits, masks):
    probs = F.softmax(logits, dim=1).float()
    one_hot = F.one_hot(masks, CLASSES).permute(0, 3, 1, 2).float()
    mean_dice = sum(dice(probs[:, c], one_hot[:, c]) for c in range(CLASSES)) / CLASSES
    return F.cross_entropy(logits, masks) + (1 - mean_dice)


def build(model_id):
    if model_id != "pytorch_unet":
        raise SystemExit(f"unknown model {model_id}")
    inputs = {"images": torch.rand(1, 3, HEIGHT, WIDTH), "masks": torch.randint(0, 2, (1, HEIGHT, WIDTH))}
    return {
        "module": UNet(),
        "inputs": inputs,
        "forward": lambda m, i: m(i["images"]),
        "loss": lambda m, i: unet_loss(m(i["images"]), i["masks"]),
        "optimizer": lambda m: torch.optim.RMSprop(m.parameters(), lr=1e-5, weight_decay=1e-8, momentum=0.9),
        # lr 1e-5 moves each weight by less than the tolerance: the gradients
        # are what the step is checked by.
        "save_grads": True,
    }


if __name__ == "__main__":
    main(build)
