// MobileNetV3-Large (Howard et al. 2019, "Searching for MobileNetV3"), laid out
// like torchvision.models.mobilenet_v3_large so that state-dict keys
// ("features.4.block.2.fc1.weight", "classifier.3.bias") match torchvision 0.26
// one for one. The blocks use squeeze-and-excitation with a hard-sigmoid gate
// and hard-swish activations in the deeper half, as in the paper's Table 1.
// Registers the model id mobilenet_v3_large (width 1.0, 224x224 inputs).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// One row of the paper's Table 1 (bneck): input, kernel, expanded and output
// channels, SE on/off, hard-swish (true) or ReLU, stride.
struct MobileNetV3BlockConfig {
  int64_t input_channels;
  int64_t kernel;
  int64_t expanded_channels;
  int64_t out_channels;
  bool use_se;
  bool use_hs;
  int64_t stride;
};

// Squeeze-and-excitation (Hu et al. 2018) with 1x1 convolutions "fc1"/"fc2"
// and MobileNetV3's hard-sigmoid gate.
struct SqueezeExcitationImpl : torch::nn::Module {
  SqueezeExcitationImpl(int64_t input_channels, int64_t squeeze_channels);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::AdaptiveAvgPool2d avgpool{nullptr};
  torch::nn::Conv2d fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(SqueezeExcitation);

struct MobileNetV3InvertedResidualImpl : torch::nn::Module {
  explicit MobileNetV3InvertedResidualImpl(const MobileNetV3BlockConfig& cnf);
  torch::Tensor forward(torch::Tensor x);

  bool use_res_connect = false;
  torch::nn::Sequential block{nullptr};
};
TORCH_MODULE(MobileNetV3InvertedResidual);

struct MobileNetV3Impl : torch::nn::Module {
  MobileNetV3Impl(const std::vector<MobileNetV3BlockConfig>& setting, int64_t last_channel, int64_t num_classes = 1000,
                  double dropout = 0.2);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential features{nullptr};
  torch::nn::AdaptiveAvgPool2d avgpool{nullptr};
  torch::nn::Sequential classifier{nullptr};
};
TORCH_MODULE(MobileNetV3);

// The paper's Table 1 (MobileNetV3-Large), width multiplier 1.0.
std::vector<MobileNetV3BlockConfig> MobileNetV3LargeSetting();

// Registers mobilenet_v3_large.
void AddMobileNetV3Models(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
