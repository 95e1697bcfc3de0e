// NFNet-F0 (Brock et al. 2021, "High-Performance Large-Scale Image
// Recognition Without Normalization"), the timm_nfnet model of TorchBench.
//
// TorchBench builds timm.create_model("dm_nfnet_f0", pretrained=False)
// (torchbenchmark/models/timm_nfnet/__init__.py), input 3 x 192 x 192
// (the model's default_cfg). This is timm 1.0.31's NormFreeNet with the
// DeepMind F0 configuration: no normalisation layers; every conv is a
// ScaledStdConv2dSame (weight standardised per output channel with
// F.batch_norm over the weight, eps 1e-5, times a learned per-channel gain and
// fan_in^-1/2; TF "SAME" padding, dynamic for the stride-2 convs; with bias);
// GELU activations multiplied by the NF gamma 1.7015043497085571 (gamma in the
// activation, as DeepMind's code); "deep_quad" stem (3x3 convs 3->16 /2,
// 16->32, 32->64, 64->128 /2); stages of depths 1/2/6/3 and widths
// 256/512/1536/1536 of NF bottleneck blocks (pre-activation scaled by
// beta = 1/sqrt(expected variance), 1x1 conv to width/2, two 3x3 group convs
// of group width 128, 1x1 conv, squeeze-excite (reduce 0.5) times the attention
// gain 2, times the learned skipinit gain, times alpha 0.2, plus the shortcut:
// identity, or 2x2 average pool (stride 2, ceil_mode, count_include_pad False)
// and a 1x1 std conv on the first block of a stage); final 1x1 std conv to
// 3072, GELU*gamma, global average pool and a 1000-way Linear. Names follow
// timm's state dict (stem.conv1.gain, stages.S.B.conv2b.weight,
// stages.S.B.attn_last.fc1, stages.S.B.skipinit_gain, final_conv, head.fc).
//
// Not implemented: drop path (timm default 0; TorchBench passes none).
//
// Initialisation: timm's NormFreeNet: convs (std convs and SE convs)
// kaiming_normal(fan_in, linear), zero bias; gains 1; skipinit gains 0
// (each residual branch starts switched off); head.fc normal(0, 0.01), zero
// bias.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddNfNetModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
