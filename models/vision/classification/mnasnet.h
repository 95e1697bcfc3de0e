// MNASNet (Tan et al. 2019, "MnasNet: Platform-Aware Neural Architecture
// Search for Mobile"), the B1 variant as torchvision.models.mnasnet1_0 builds
// it (depth multiplier 1.0, torchvision's _version 2 stem), laid out so that
// state-dict keys ("layers.0.weight", "layers.8.0.layers.3.weight",
// "classifier.1.bias") match torchvision 0.26 one for one. Registers
// mnasnet1_0.
//
// As in torchvision, BatchNorm momentum is 1 - 0.9997 (the paper's TensorFlow
// decay 0.9997 in PyTorch's convention), and the classifier's dropout (p 0.2)
// works in place. No deviations from torchvision.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Pointwise expand, depthwise kxk (k 3 or 5), linear pointwise projection;
// a residual connection when the shape is unchanged.
struct MnasNetInvertedResidualImpl : torch::nn::Module {
  MnasNetInvertedResidualImpl(int64_t in_ch, int64_t out_ch, int64_t kernel_size, int64_t stride,
                              int64_t expansion_factor, double bn_momentum);
  torch::Tensor forward(torch::Tensor x);

  bool apply_residual = false;
  torch::nn::Sequential layers{nullptr};
};
TORCH_MODULE(MnasNetInvertedResidual);

struct MnasNetImpl : torch::nn::Module {
  explicit MnasNetImpl(double alpha = 1.0, int64_t num_classes = 1000, double dropout = 0.2);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential layers{nullptr};
  torch::nn::Sequential classifier{nullptr};
};
TORCH_MODULE(MnasNet);

// Registers mnasnet1_0.
void AddMnasNetModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
