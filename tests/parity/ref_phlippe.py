"""Reference for phlippe_resnet and phlippe_densenet (models/vision/classification/phlippe.cc): the
CIFAR-10 ResNet and DenseNet of Phillip Lippe's UvA deep-learning tutorial 5,
re-stated here in plain torch as TorchBench's torchbenchmark/models/
phlippe_resnet and phlippe_densenet define them (there is no pip package to
import). Module names follow those classes, so the state-dict keys are
TorchBench's.

TorchBench's settings: ResNetModel() and DenseNet() with their defaults
(ResNet: num_blocks [3,3,3], c_hidden [16,32,64], ReLU, post-activation
ResNetBlock; DenseNet: num_layers [6,6,6,6], bn_size 2, growth_rate 16, ReLU),
32x32 images, integer targets over 10 classes, CrossEntropyLoss, SGD (lr 0.1,
momentum 0.9, weight decay 1e-4) for the ResNet and AdamW (lr 1e-3, weight
decay 1e-4) for the DenseNet.

Published parameter counts (the tutorial's results table for CIFAR-10):
ResNet 272,378 and DenseNet 239,146; asserted below for the re-statement.
"""
import torch
from torch import nn

from parity_common import main

BATCH = 4
NUM_CLASSES = 10
PUBLISHED_PARAMS = {"phlippe_resnet": 272378, "phlippe_densenet": 239146}


class ResNetBlock(nn.Module):
    def __init__(self, c_in, subsample, c_out):
        super().__init__()
        if not subsample:
            c_out = c_in
        stride = 2 if subsample else 1
        self.net = nn.Sequential(
            nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(c_out),
            nn.ReLU(),
            nn.Conv2d(c_out, c_out, 3, padding=1, bias=False),
            nn.BatchNorm2d(c_out),
        )
        self.downsample = nn.Conv2d(c_in, c_out, 1, stride=2) if subsample else None
        self.act_fn = nn.ReLU()

    def forward(self, x):
        z = self.net(x)
        if self.downsample is not None:
            x = self.downsample(x)
        return self.act_fn(z + x)


class ResNetModel(nn.Module):
    def __init__(self, num_blocks=(3, 3, 3), c_hidden=(16, 32, 64)):
        super().__init__()
        self.input_net = nn.Sequential(
            nn.Conv2d(3, c_hidden[0], 3, padding=1, bias=False), nn.BatchNorm2d(c_hidden[0]), nn.ReLU()
        )
        blocks = []
        for group, count in enumerate(num_blocks):
            for i in range(count):
                subsample = i == 0 and group > 0
                blocks.append(ResNetBlock(c_hidden[group - 1 if subsample else group], subsample, c_hidden[group]))
        self.blocks = nn.Sequential(*blocks)
        self.output_net = nn.Sequential(nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(c_hidden[-1], NUM_CLASSES))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        return self.output_net(self.blocks(self.input_net(x)))


class DenseLayer(nn.Module):
    def __init__(self, c_in, bn_size, growth_rate):
        super().__init__()
        self.net = nn.Sequential(
            nn.BatchNorm2d(c_in),
            nn.ReLU(),
            nn.Conv2d(c_in, bn_size * growth_rate, 1, bias=False),
            nn.BatchNorm2d(bn_size * growth_rate),
            nn.ReLU(),
            nn.Conv2d(bn_size * growth_rate, growth_rate, 3, padding=1, bias=False),
        )

    def forward(self, x):
        return torch.cat([self.net(x), x], dim=1)


class DenseBlock(nn.Module):
    def __init__(self, c_in, num_layers, bn_size, growth_rate):
        super().__init__()
        self.block = nn.Sequential(*[DenseLayer(c_in + i * growth_rate, bn_size, growth_rate) for i in range(num_layers)])

    def forward(self, x):
        return self.block(x)


class TransitionLayer(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.transition = nn.Sequential(
            nn.BatchNorm2d(c_in), nn.ReLU(), nn.Conv2d(c_in, c_out, 1, bias=False), nn.AvgPool2d(2, stride=2)
        )

    def forward(self, x):
        return self.transition(x)


class DenseNet(nn.Module):
    def __init__(self, num_layers=(6, 6, 6, 6), bn_size=2, growth_rate=16):
        super().__init__()
        c_hidden = growth_rate * bn_size
        self.input_net = nn.Sequential(nn.Conv2d(3, c_hidden, 3, padding=1))
        blocks = []
        for i, n in enumerate(num_layers):
            blocks.append(DenseBlock(c_hidden, n, bn_size, growth_rate))
            c_hidden += n * growth_rate
            if i < len(num_layers) - 1:
                blocks.append(TransitionLayer(c_hidden, c_hidden // 2))
                c_hidden //= 2
        self.blocks = nn.Sequential(*blocks)
        self.output_net = nn.Sequential(
            nn.BatchNorm2d(c_hidden), nn.ReLU(), nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(c_hidden, NUM_CLASSES)
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        return self.output_net(self.blocks(self.input_net(x)))


def build(model_id):
    if model_id == "phlippe_resnet":
        model = ResNetModel()
        optimizer = lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    elif model_id == "phlippe_densenet":
        model = DenseNet()
        optimizer = lambda m: torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=1e-4)
    else:
        raise SystemExit(f"unknown model {model_id}")
    count = sum(p.numel() for p in model.parameters())
    if count != PUBLISHED_PARAMS[model_id]:
        raise SystemExit(f"{model_id}: {count} parameters, the tutorial publishes {PUBLISHED_PARAMS[model_id]}")
    inputs = {"images": torch.randn(BATCH, 3, 32, 32), "target": torch.randint(0, NUM_CLASSES, (BATCH,))}
    return {
        "module": model,
        "inputs": inputs,
        "forward": lambda m, i: m(i["images"]),
        "loss": lambda m, i: nn.functional.cross_entropy(m(i["images"]), i["target"]),
        "optimizer": optimizer,
    }


if __name__ == "__main__":
    main(build)
