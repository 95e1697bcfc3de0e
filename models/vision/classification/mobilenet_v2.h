// MobileNetV2 (Sandler et al. 2018, "MobileNetV2: Inverted Residuals and
// Linear Bottlenecks"), laid out like torchvision.models.mobilenet_v2 so that
// state-dict keys ("features.0.0.weight", "features.2.conv.1.1.running_mean",
// "classifier.1.weight") match torchvision 0.26 one for one. Registers the
// model id mobilenet_v2 (width multiplier 1.0, 224x224 inputs).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Expand 1x1 (skipped when expand_ratio is 1), depthwise 3x3, linear 1x1
// projection; a residual connection when the shape is unchanged.
struct MobileNetV2InvertedResidualImpl : torch::nn::Module {
  MobileNetV2InvertedResidualImpl(int64_t inp, int64_t oup, int64_t stride, int64_t expand_ratio);
  torch::Tensor forward(torch::Tensor x);

  bool use_res_connect = false;
  torch::nn::Sequential conv{nullptr};
};
TORCH_MODULE(MobileNetV2InvertedResidual);

struct MobileNetV2Impl : torch::nn::Module {
  explicit MobileNetV2Impl(int64_t num_classes = 1000, double width_mult = 1.0, double dropout = 0.2);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential features{nullptr};
  torch::nn::Sequential classifier{nullptr};
};
TORCH_MODULE(MobileNetV2);

// Registers mobilenet_v2.
void AddMobileNetV2Models(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
