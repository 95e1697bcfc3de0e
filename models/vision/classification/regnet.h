// RegNetY-12GF (Radosavovic et al. 2020, "Designing Network Design Spaces"),
// the timm_regnet model of TorchBench.
//
// TorchBench builds timm.create_model("regnety_120", pretrained=False)
// (torchbenchmark/models/timm_regnet/__init__.py; it used regnety_016 until
// pytorch/benchmark#951, June 2022, before the paper, and regnety_120 since).
// This is timm 1.0.31's RegNet with regnety_120's configuration: stem 3x3/2
// conv to 32 channels (BN, ReLU), four stages of widths 224/448/896/2240 and
// depths 2/5/11/1, Y-blocks (bottle ratio 1: 1x1 conv, 3x3 group conv with
// group width 112, squeeze-excite reducing to round(0.25 * block input
// channels), 1x1 conv, BN without activation, residual add, ReLU), a 1x1
// conv + BN projection shortcut on each stage's first block (stride 2), global
// average pool and a 1000-way Linear. Names follow timm's state dict
// (stem.conv, s1.b1.conv1.conv, s1.b1.conv1.bn, s1.b1.se.fc1, ...,
// s1.b1.downsample.conv, head.fc). timm's ConvNormAct / BatchNormAct2d are a
// conv and a BatchNorm2d whose activation the block applies here.
//
// Not implemented: drop path (timm's drop_path_rate defaults to 0 and
// TorchBench passes none, so timm builds Identity there).
//
// Initialisation: timm's regnet _init_weights: conv normal(0, sqrt(2 /
// fan_out)) with fan_out = k*k*out/groups, Linear normal(0, 0.01), zero
// biases, BatchNorm 1/0 except the last BN of each block, zeroed
// (zero_init_last=True).
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddRegNetModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
