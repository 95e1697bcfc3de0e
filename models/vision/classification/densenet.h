// DenseNet-BC (Huang et al. 2017, "Densely Connected Convolutional Networks"),
// laid out like torchvision.models.densenet121 so that state-dict keys
// ("features.denseblock2.denselayer3.conv1.weight",
// "features.transition1.norm.running_var", "classifier.bias") match
// torchvision 0.26 one for one. Every dense layer reads the concatenation of
// all earlier feature maps of its block (memory_efficient=False: no
// checkpointing, as in TorchBench). Registers the model id densenet121
// (growth rate 32, blocks 6/12/24/16, 64 initial features, bottleneck 4k).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <array>
#include <cstdint>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// BN-ReLU-Conv1x1 (to bn_size*k channels) then BN-ReLU-Conv3x3 (to k).
struct DenseLayerImpl : torch::nn::Module {
  DenseLayerImpl(int64_t num_input_features, int64_t growth_rate, int64_t bn_size, double drop_rate);
  // Takes the block's feature maps so far; returns the k new channels.
  torch::Tensor forward(const std::vector<torch::Tensor>& prev_features);

  torch::nn::BatchNorm2d norm1{nullptr}, norm2{nullptr};
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  double drop_rate = 0;
};
TORCH_MODULE(DenseLayer);

struct DenseBlockImpl : torch::nn::Module {
  DenseBlockImpl(int64_t num_layers, int64_t num_input_features, int64_t bn_size, int64_t growth_rate,
                 double drop_rate);
  torch::Tensor forward(torch::Tensor init_features);

  std::vector<DenseLayer> layers;  // registered as "denselayer1", "denselayer2", ...
};
TORCH_MODULE(DenseBlock);

struct DenseNetConfig {
  int64_t growth_rate = 32;
  std::array<int64_t, 4> block_config{6, 12, 24, 16};
  int64_t num_init_features = 64;
  int64_t bn_size = 4;
  double drop_rate = 0;
  int64_t num_classes = 1000;
};

struct DenseNetImpl : torch::nn::Module {
  explicit DenseNetImpl(const DenseNetConfig& config);
  torch::Tensor forward(torch::Tensor x);

  // conv0, norm0, relu0, pool0, denseblock1, transition1, ..., denseblock4, norm5
  torch::nn::Sequential features{nullptr};
  torch::nn::Linear classifier{nullptr};
};
TORCH_MODULE(DenseNet);

// Registers densenet121.
void AddDenseNetModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
