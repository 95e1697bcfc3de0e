// ShuffleNetV2 (Ma et al. 2018, "ShuffleNet V2: Practical Guidelines for
// Efficient CNN Architecture Design"), laid out like
// torchvision.models.shufflenet_v2_x1_0 so that state-dict keys
// ("stage2.0.branch1.0.weight", "stage3.4.branch2.5.running_mean", "fc.bias")
// match torchvision 0.26 one for one. Registers the model id
// shufflenet_v2_x1_0 (stage repeats 4/8/4, channels 24/116/232/464/1024).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/pimpl.h>

#include <array>
#include <cstdint>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Reshapes (N, g*c, H, W) to (N, g, c, H, W), swaps the group axes and
// flattens back, so that information crosses the two branches.
torch::Tensor ChannelShuffle(const torch::Tensor& x, int64_t groups);

// A stride-1 unit splits the channels in half and transforms one half; a
// stride-2 unit transforms the whole input on two branches (branch1 is only
// registered then, as torchvision's branch1 is an empty Sequential otherwise).
struct ShuffleNetV2InvertedResidualImpl : torch::nn::Module {
  ShuffleNetV2InvertedResidualImpl(int64_t inp, int64_t oup, int64_t stride);
  torch::Tensor forward(torch::Tensor x);

  int64_t stride = 1;
  torch::nn::Sequential branch1{nullptr}, branch2{nullptr};
};
TORCH_MODULE(ShuffleNetV2InvertedResidual);

struct ShuffleNetV2Impl : torch::nn::Module {
  ShuffleNetV2Impl(const std::array<int64_t, 3>& stages_repeats, const std::array<int64_t, 5>& stages_out_channels,
                   int64_t num_classes = 1000);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential conv1{nullptr};
  torch::nn::MaxPool2d maxpool{nullptr};
  torch::nn::Sequential stage2{nullptr}, stage3{nullptr}, stage4{nullptr};
  torch::nn::Sequential conv5{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(ShuffleNetV2);

// Registers shufflenet_v2_x1_0.
void AddShuffleNetV2Models(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
