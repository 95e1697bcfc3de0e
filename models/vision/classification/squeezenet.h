// SqueezeNet (Iandola et al. 2016), version 1.1 from the authors' repository
// (forresti/SqueezeNet, "SqueezeNet_v1.1": 3x3/64 stem, pooling after
// fire3 and fire5), laid out like torchvision.models.squeezenet1_1: Fire
// modules with `squeeze`, `expand1x1`, `expand3x3` convolutions, and a
// Dropout / 1x1 conv / ReLU / global average pool classifier, indexed as in
// torchvision so state-dict keys ("features.3.squeeze.weight",
// "classifier.1.bias") match.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Squeeze to a few channels with 1x1 convolutions, then expand with parallel
// 1x1 and 3x3 convolutions whose outputs are concatenated.
struct FireImpl : torch::nn::Module {
  FireImpl(int64_t inplanes, int64_t squeeze_planes, int64_t expand1x1_planes, int64_t expand3x3_planes);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Conv2d squeeze{nullptr}, expand1x1{nullptr}, expand3x3{nullptr};
  torch::nn::ReLU squeeze_activation{nullptr}, expand1x1_activation{nullptr}, expand3x3_activation{nullptr};
};
TORCH_MODULE(Fire);

struct SqueezeNet11Impl : torch::nn::Module {
  explicit SqueezeNet11Impl(int64_t num_classes = 1000, double dropout = 0.5);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential features{nullptr};
  torch::nn::Sequential classifier{nullptr};
};
TORCH_MODULE(SqueezeNet11);

// Registers squeezenet1_1.
void AddSqueezeNetModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
