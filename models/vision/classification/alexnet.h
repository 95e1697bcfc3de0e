// AlexNet (Krizhevsky et al. 2012) in the single-tower form of "One weird
// trick for parallelizing convolutional neural networks" (Krizhevsky 2014),
// which is what torchvision.models.alexnet implements: five convolutions
// (64-192-384-256-256 channels), adaptive 6x6 average pool, and a
// Dropout-Linear-ReLU classifier. Submodule indices follow torchvision so
// state-dict keys ("features.3.weight", "classifier.4.bias") match.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

struct AlexNetImpl : torch::nn::Module {
  explicit AlexNetImpl(int64_t num_classes = 1000, double dropout = 0.5);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential features{nullptr};
  torch::nn::AdaptiveAvgPool2d avgpool{nullptr};
  torch::nn::Sequential classifier{nullptr};
};
TORCH_MODULE(AlexNet);

// Registers alexnet.
void AddAlexNetModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
