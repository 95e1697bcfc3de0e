// VGG (Simonyan & Zisserman 2015, "Very Deep Convolutional Networks for
// Large-Scale Image Recognition"), configuration D = VGG-16 without batch
// norm, laid out like torchvision.models.vgg16: `features` (a Sequential of
// 3x3 convolutions, ReLUs and max-pools, indexed as torchvision indexes
// them, so the first convolution is "features.0"), `avgpool` (adaptive, 7x7)
// and `classifier` (Linear-ReLU-Dropout twice, then Linear; "classifier.6").
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// One entry per layer of `features`: an output width for a 3x3 convolution
// (followed by ReLU), or kVggMaxPool.
inline constexpr int64_t kVggMaxPool = 0;

struct VggImpl : torch::nn::Module {
  VggImpl(const std::vector<int64_t>& config, int64_t num_classes = 1000, double dropout = 0.5);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential features{nullptr};
  torch::nn::AdaptiveAvgPool2d avgpool{nullptr};
  torch::nn::Sequential classifier{nullptr};
};
TORCH_MODULE(Vgg);

// The paper's Table 1, column D: 13 convolutions in five blocks.
std::vector<int64_t> Vgg16Config();

// Registers vgg16.
void AddVggModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
