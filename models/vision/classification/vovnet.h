// VoVNet-39 (Lee et al. 2019, "An Energy and GPU-Computation Efficient
// Backbone Network for Real-Time Object Detection"), the timm_vovnet model of
// TorchBench.
//
// TorchBench builds timm.create_model("vovnet39a", pretrained=False)
// (torchbenchmark/models/timm_vovnet/__init__.py). This is timm 1.0.31's
// VovNet with the vovnet39a configuration: stem of three 3x3 conv-BN-ReLU
// (3->64 /2, 64->64, 64->128 /2), four stages of one-shot-aggregation (OSA)
// blocks (per stage: conv widths 128/160/192/224, outputs 256/512/768/1024,
// 1/1/2/2 blocks, 5 layers per block; stages 2-4 start with a 3x3/2 max pool,
// ceil_mode), each block a chain of five 3x3 conv-BN-ReLU whose input and
// five outputs are concatenated and aggregated by a 1x1 conv-BN-ReLU; no
// residual, no attention: vovnet39a is the V1 design (timm attn="", residual
// False; the eSE attention belongs to ese_vovnet39b, which TorchBench does
// not run); global average pool and a 1000-way Linear. Names follow timm's
// state dict (stem.N.conv, stages.S.blocks.B.conv_mid.L.conv,
// stages.S.blocks.B.conv_concat.bn, head.fc).
//
// Not implemented: drop path (timm default 0; TorchBench passes none).
//
// Initialisation: timm's VovNet: convs kaiming_normal (fan_out, ReLU gain),
// Linear bias zero (weight PyTorch default), BatchNorm 1/0.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddVovNetModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
