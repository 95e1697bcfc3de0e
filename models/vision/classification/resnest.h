// ResNeSt-14d (Zhang et al. 2020, "ResNeSt: Split-Attention Networks"), the
// timm_resnest model of TorchBench.
//
// TorchBench builds timm.create_model("resnest14d", pretrained=False)
// (torchbenchmark/models/timm_resnest/__init__.py). This is timm 1.0.31's
// ResNet with ResNestBottleneck blocks and resnest14d's arguments: "deep"
// stem (3x3/2 conv 3->32, BN, ReLU, 3x3 conv 32->32, BN, ReLU, 3x3 conv
// 32->64, then bn1, ReLU, 3x3/2 max pool), layers [1, 1, 1, 1] of bottleneck
// blocks (planes 64/128/256/512, expansion 4, radix 2, cardinality 1, base
// width 64), split attention in place of the 3x3 conv (grouped conv to
// radix x width channels, BN, ReLU, sum over the radix splits, global mean,
// fc1 -> BN -> ReLU -> fc2, softmax across the radix, weighted sum of the
// splits), "avd": the stride of a downsampling block moves to a 3x3/2
// average pool after split attention, and "avg_down" shortcuts (2x2/2 average
// pool with ceil_mode and count_include_pad=False, then 1x1 conv and BN).
// Names follow timm's state dict (conv1.0, conv1.1, ..., bn1,
// layer1.0.conv2.conv, layer1.0.conv2.bn0, layer1.0.conv2.fc1, ...,
// layer2.0.downsample.1, fc).
//
// Not implemented: drop path / drop block (timm defaults them to off and
// TorchBench passes none).
//
// Initialisation: timm's ResNet.init_weights: convs kaiming_normal (fan_out,
// ReLU gain), BatchNorm 1/0 with each block's bn3 weight zeroed
// (zero_init_last), Linear and conv biases PyTorch defaults.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddResNeStModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
