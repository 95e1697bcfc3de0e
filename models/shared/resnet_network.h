// torchvision's ResNet network (He et al. 2016, "Deep Residual Learning for
// Image Recognition"; ResNeXt: Xie et al. 2017, "Aggregated Residual
// Transformations"), laid out like torchvision.models.resnet so that
// state-dict keys ("layer1.0.conv1.weight", "layer2.0.downsample.1.running_mean")
// match torchvision 0.26 one for one. Like torchvision (ResNet v1.5), a
// Bottleneck strides in its 3x3 convolution. Shared (models/shared/): the
// resnet family (vision/classification/resnet.h) registers it, and MoCo
// (other/), docTR's detector and the quantized ResNet-50 build on it.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>


namespace torchgauge::models {

// Two 3x3 convolutions (resnet18/34).
struct BasicBlockImpl : torch::nn::Module {
  static constexpr int64_t kExpansion = 1;
  // `downsample` may be empty (nullptr) when the identity shortcut fits.
  BasicBlockImpl(int64_t inplanes, int64_t planes, int64_t stride, torch::nn::Sequential downsample, int64_t groups,
                 int64_t base_width);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::ReLU relu{nullptr};
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(BasicBlock);

// 1x1 reduce, grouped 3x3, 1x1 expand by 4 (resnet50+, ResNeXt).
struct BottleneckImpl : torch::nn::Module {
  static constexpr int64_t kExpansion = 4;
  BottleneckImpl(int64_t inplanes, int64_t planes, int64_t stride, torch::nn::Sequential downsample, int64_t groups,
                 int64_t base_width);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  torch::nn::ReLU relu{nullptr};
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(Bottleneck);

struct ResNetConfig {
  bool bottleneck = false;       // BasicBlock or Bottleneck
  std::vector<int64_t> layers;   // blocks per stage, four stages
  int64_t groups = 1;            // ResNeXt cardinality
  int64_t width_per_group = 64;  // ResNeXt bottleneck width d
  int64_t num_classes = 1000;
};

struct ResNetImpl : torch::nn::Module {
  explicit ResNetImpl(const ResNetConfig& config);
  torch::Tensor forward(torch::Tensor x);

  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::ReLU relu{nullptr};
  torch::nn::MaxPool2d maxpool{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  torch::nn::AdaptiveAvgPool2d avgpool{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(ResNet);

ResNetConfig ResNet18Config();
ResNetConfig ResNet50Config();
ResNetConfig ResNet152Config();
ResNetConfig ResNeXt50_32x4dConfig();

}  // namespace torchgauge::models
