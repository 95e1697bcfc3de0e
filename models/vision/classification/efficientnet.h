// EfficientNet-B0 (Tan & Le 2019, "EfficientNet: Rethinking Model Scaling for
// Convolutional Neural Networks"), the timm_efficientnet model of TorchBench.
//
// TorchBench builds timm.create_model("efficientnet_b0", pretrained=False)
// (torchbenchmark/models/timm_efficientnet/__init__.py); this is timm 1.0.31's
// EfficientNet with that variant's arguments: stem 3x3/2 conv to 32 channels,
// seven stages of MBConv blocks
//   ds_r1_k3_s1_e1_c16, ir_r2_k3_s2_e6_c24, ir_r2_k5_s2_e6_c40,
//   ir_r3_k3_s2_e6_c80, ir_r3_k5_s1_e6_c112, ir_r4_k5_s2_e6_c192,
//   ir_r1_k3_s1_e6_c320 (all with squeeze-excite, reduce = block input * 0.25),
// a 1x1 conv head to 1280 channels, SiLU everywhere, BatchNorm eps 1e-5 /
// momentum 0.1 (timm's non-"tf_" variants use PyTorch defaults and symmetric
// padding), global average pool and a 1000-way Linear. Parameter and buffer
// names follow timm's state dict (conv_stem, bn1, blocks.S.B.conv_pw, ...,
// conv_head, bn2, classifier). timm's BatchNormAct2d is a BatchNorm2d
// followed by its activation; here the activation is applied by the block
// (the state dict is the same).
//
// Stochastic depth: timm scales drop_path_rate linearly over the 16 blocks
// and applies DropPath on the residual branch (timm's drop_path: a per-sample
// Bernoulli(keep) mask of shape N x 1 x 1 x 1, divided by keep). TorchBench
// passes no drop_path_rate, so efficientnet_b0 runs with 0 (and drop_rate 0:
// no classifier dropout); the registered workload does the same. The block is
// implemented for rate > 0 with the same random draws (x.new_empty(...).
// bernoulli_(keep) in forward order), and a parity test checks a rate of 0.2
// against timm with the same seed.
//
// Initialisation: timm's _init_weight_goog (conv: normal(0, sqrt(2 / fan_out)),
// fan_out = k*k*out/groups; BatchNorm: 1, 0; Linear: uniform(+-1/sqrt(out)),
// zero bias).
#pragma once

#include <memory>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

struct EfficientNetConfig {
  double drop_path_rate = 0.0;  // TorchBench / timm default for efficientnet_b0
  int64_t num_classes = 1000;
};

// The TorchBench workload (timm harness) for EfficientNet-B0 with `config`.
std::unique_ptr<Workload> MakeEfficientNetWorkload(const WorkloadOptions& opt, const EfficientNetConfig& config);

void AddEfficientNetModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
