#include "models/shared/resnet_network.h"

#include <torch/torch.h>

#include <utility>

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

nn::Conv2d Conv3x3(int64_t in, int64_t out, int64_t stride, int64_t groups) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).groups(groups).bias(false));
}

nn::Conv2d Conv1x1(int64_t in, int64_t out, int64_t stride = 1) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false));
}

}  // namespace

BasicBlockImpl::BasicBlockImpl(int64_t inplanes, int64_t planes, int64_t stride, nn::Sequential ds, int64_t groups,
                               int64_t base_width) {
  // The basic block has no notion of cardinality; torchvision rejects these too.
  TORCH_CHECK(groups == 1 && base_width == 64, "BasicBlock supports only groups=1 and base_width=64");
  TORCH_CHECK(stride >= 1, "stride must be positive");
  conv1 = register_module("conv1", Conv3x3(inplanes, planes, stride, 1));
  bn1 = register_module("bn1", nn::BatchNorm2d(planes));
  relu = register_module("relu", nn::ReLU(nn::ReLUOptions(true)));
  conv2 = register_module("conv2", Conv3x3(planes, planes, 1, 1));
  bn2 = register_module("bn2", nn::BatchNorm2d(planes));
  if (ds) downsample = register_module("downsample", ds);
}

torch::Tensor BasicBlockImpl::forward(torch::Tensor x) {
  auto identity = downsample ? downsample->forward(x) : x;
  auto out = relu(bn1(conv1(x)));
  out = bn2(conv2(out));
  out += identity;
  return relu(out);
}

BottleneckImpl::BottleneckImpl(int64_t inplanes, int64_t planes, int64_t stride, nn::Sequential ds, int64_t groups,
                               int64_t base_width) {
  TORCH_CHECK(groups >= 1 && base_width >= 1 && stride >= 1, "groups, base_width and stride must be positive");
  // ResNeXt's width rule: d channels per group, scaled from the 64-wide stage.
  const int64_t width =
      static_cast<int64_t>(static_cast<double>(planes) * (static_cast<double>(base_width) / 64.0)) * groups;
  conv1 = register_module("conv1", Conv1x1(inplanes, width));
  bn1 = register_module("bn1", nn::BatchNorm2d(width));
  conv2 = register_module("conv2", Conv3x3(width, width, stride, groups));
  bn2 = register_module("bn2", nn::BatchNorm2d(width));
  conv3 = register_module("conv3", Conv1x1(width, planes * kExpansion));
  bn3 = register_module("bn3", nn::BatchNorm2d(planes * kExpansion));
  relu = register_module("relu", nn::ReLU(nn::ReLUOptions(true)));
  if (ds) downsample = register_module("downsample", ds);
}

torch::Tensor BottleneckImpl::forward(torch::Tensor x) {
  auto identity = downsample ? downsample->forward(x) : x;
  auto out = relu(bn1(conv1(x)));
  out = relu(bn2(conv2(out)));
  out = bn3(conv3(out));
  out += identity;
  return relu(out);
}

namespace {

// One stage: the first block changes resolution and width, so it alone may
// need a projection shortcut.
template <typename Block>
nn::Sequential MakeLayer(int64_t& inplanes, int64_t planes, int64_t blocks, int64_t stride, const ResNetConfig& c) {
  constexpr int64_t expansion = Block::ContainedType::kExpansion;
  nn::Sequential downsample{nullptr};
  if (stride != 1 || inplanes != planes * expansion) {
    downsample = nn::Sequential(Conv1x1(inplanes, planes * expansion, stride), nn::BatchNorm2d(planes * expansion));
  }
  nn::Sequential layer;
  layer->push_back(Block(inplanes, planes, stride, downsample, c.groups, c.width_per_group));
  inplanes = planes * expansion;
  for (int64_t i = 1; i < blocks; ++i) {
    layer->push_back(Block(inplanes, planes, 1, nn::Sequential(nullptr), c.groups, c.width_per_group));
  }
  return layer;
}

}  // namespace

ResNetImpl::ResNetImpl(const ResNetConfig& c) {
  TORCH_CHECK(c.layers.size() == 4, "ResNet needs four stages, got ", c.layers.size());
  TORCH_CHECK(c.num_classes >= 1, "num_classes must be positive");
  int64_t inplanes = 64;
  conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(3, inplanes, 7).stride(2).padding(3).bias(false)));
  bn1 = register_module("bn1", nn::BatchNorm2d(inplanes));
  relu = register_module("relu", nn::ReLU(nn::ReLUOptions(true)));
  maxpool = register_module("maxpool", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));
  const int64_t planes[4] = {64, 128, 256, 512};
  const int64_t strides[4] = {1, 2, 2, 2};
  nn::Sequential* stages[4] = {&layer1, &layer2, &layer3, &layer4};
  for (int i = 0; i < 4; ++i) {
    auto stage = c.bottleneck ? MakeLayer<Bottleneck>(inplanes, planes[i], c.layers[i], strides[i], c)
                              : MakeLayer<BasicBlock>(inplanes, planes[i], c.layers[i], strides[i], c);
    *stages[i] = register_module("layer" + std::to_string(i + 1), stage);
  }
  avgpool = register_module("avgpool", nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1})));
  fc = register_module("fc", nn::Linear(inplanes, c.num_classes));

  // torchvision's initialisation: He-normal (fan_out) convolutions, unit BN
  // scale; the classifier keeps Linear's default. Parity tests overwrite all
  // of it, but the collector measures freshly initialised nets.
  for (auto& m : modules(/*include_self=*/false)) {
    if (auto* conv = m->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
    } else if (auto* bn = m->as<nn::BatchNorm2d>()) {
      nn::init::ones_(bn->weight);
      nn::init::zeros_(bn->bias);
    }
  }
}

torch::Tensor ResNetImpl::forward(torch::Tensor x) {
  x = maxpool(relu(bn1(conv1(x))));
  x = layer4->forward(layer3->forward(layer2->forward(layer1->forward(x))));
  x = torch::flatten(avgpool(x), 1);
  return fc(x);
}

ResNetConfig ResNet18Config() { return {false, {2, 2, 2, 2}, 1, 64, 1000}; }
ResNetConfig ResNet50Config() { return {true, {3, 4, 6, 3}, 1, 64, 1000}; }
ResNetConfig ResNet152Config() { return {true, {3, 8, 36, 3}, 1, 64, 1000}; }
ResNetConfig ResNeXt50_32x4dConfig() { return {true, {3, 4, 6, 3}, 32, 4, 1000}; }

}  // namespace torchgauge::models
