// The CIFAR-10 ResNet and DenseNet of Phillip Lippe's UvA deep-learning
// course, tutorial 5 ("Inception, ResNet and DenseNet"), as TorchBench
// configures them in torchbenchmark/models/phlippe_resnet and
// phlippe_densenet (pytorch/benchmark, adapted from
// phlippe/uvadlc_notebooks_benchmarking PyTorch/Tutorial5_Inception_ResNet_DenseNet.py).
// Module names ("input_net.0.weight", "blocks.3.net.4.running_var",
// "blocks.3.downsample.bias", "blocks.1.transition.2.weight",
// "output_net.4.weight") match those classes, so their state dicts load by name.
//
// phlippe_resnet: TorchBench builds ResNetModel() with its defaults:
// num_blocks [3,3,3], c_hidden [16,32,64], ReLU, and the original
// (post-activation) ResNetBlock; TorchBench's copy has no PreActResNetBlock
// (the tutorial's pre-activation variant is not what TorchBench runs). The
// subsampling shortcut is a strided 1x1 convolution with a bias.
// phlippe_densenet: DenseNet() with its defaults: num_layers [6,6,6,6],
// bn_size 2, growth_rate 16, ReLU; each dense layer concatenates its new
// features in front of its input, transitions halve the channels and the
// resolution.
//
// The workload is TorchBench's: 32x32 images, integer CIFAR-10 targets,
// CrossEntropyLoss; SGD (lr 0.1, momentum 0.9, weight decay 1e-4) for the
// ResNet, AdamW (lr 1e-3, weight decay 1e-4) for the DenseNet. Deviation:
// TorchBench's train() runs forward, backward, step, zero_grad; ours runs
// the paper's Listing 1 order (zero_grad, backward, step), the same update.
// Smoke runs keep the 32x32 images (already small).
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

// Two 3x3 conv-BN pairs with a ReLU between; identity shortcut, or a strided
// 1x1 convolution when the block subsamples; ReLU after the sum.
struct PhlippeResNetBlockImpl : torch::nn::Module {
  PhlippeResNetBlockImpl(int64_t c_in, bool subsample, int64_t c_out);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential net{nullptr};
  torch::nn::Conv2d downsample{nullptr};  // only when subsampling
  torch::nn::ReLU act_fn{nullptr};
};
TORCH_MODULE(PhlippeResNetBlock);

struct PhlippeResNetConfig {
  int64_t num_classes = 10;
  std::vector<int64_t> num_blocks{3, 3, 3};
  std::vector<int64_t> c_hidden{16, 32, 64};
};

struct PhlippeResNetImpl : torch::nn::Module {
  explicit PhlippeResNetImpl(const PhlippeResNetConfig& config = {});
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential input_net{nullptr}, blocks{nullptr}, output_net{nullptr};
};
TORCH_MODULE(PhlippeResNet);

// BN-ReLU-1x1 conv (bn_size * growth_rate channels)-BN-ReLU-3x3 conv
// (growth_rate channels); the output is [new features, input] on channels.
struct PhlippeDenseLayerImpl : torch::nn::Module {
  PhlippeDenseLayerImpl(int64_t c_in, int64_t bn_size, int64_t growth_rate);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential net{nullptr};
};
TORCH_MODULE(PhlippeDenseLayer);

struct PhlippeDenseBlockImpl : torch::nn::Module {
  PhlippeDenseBlockImpl(int64_t c_in, int64_t num_layers, int64_t bn_size, int64_t growth_rate);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential block{nullptr};
};
TORCH_MODULE(PhlippeDenseBlock);

// BN-ReLU-1x1 conv-2x2 average pool.
struct PhlippeTransitionLayerImpl : torch::nn::Module {
  PhlippeTransitionLayerImpl(int64_t c_in, int64_t c_out);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential transition{nullptr};
};
TORCH_MODULE(PhlippeTransitionLayer);

struct PhlippeDenseNetConfig {
  int64_t num_classes = 10;
  std::vector<int64_t> num_layers{6, 6, 6, 6};
  int64_t bn_size = 2;
  int64_t growth_rate = 16;
};

struct PhlippeDenseNetImpl : torch::nn::Module {
  explicit PhlippeDenseNetImpl(const PhlippeDenseNetConfig& config = {});
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Sequential input_net{nullptr}, blocks{nullptr}, output_net{nullptr};
};
TORCH_MODULE(PhlippeDenseNet);

// Registers phlippe_resnet and phlippe_densenet.
void AddPhlippeModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
