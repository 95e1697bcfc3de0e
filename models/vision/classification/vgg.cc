#include "models/vision/classification/vgg.h"

#include <torch/torch.h>

#include <memory>
#include <string>

#include "models/vision/classification/torchvision_harness.h"

namespace torchgauge::models {

namespace nn = torch::nn;

std::vector<int64_t> Vgg16Config() {
  const int64_t M = kVggMaxPool;
  return {64, 64, M, 128, 128, M, 256, 256, 256, M, 512, 512, 512, M, 512, 512, 512, M};
}

VggImpl::VggImpl(const std::vector<int64_t>& config, int64_t num_classes, double dropout) {
  TORCH_CHECK(!config.empty(), "VGG needs at least one layer");
  TORCH_CHECK(num_classes >= 1, "num_classes must be positive");
  TORCH_CHECK(dropout >= 0.0 && dropout <= 1.0, "dropout must be in [0, 1], got ", dropout);
  features = nn::Sequential();
  int64_t channels = 3;
  for (int64_t width : config) {
    TORCH_CHECK(width >= 0, "negative layer width in VGG config");
    if (width == kVggMaxPool) {
      features->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2)));
    } else {
      features->push_back(nn::Conv2d(nn::Conv2dOptions(channels, width, 3).padding(1)));
      features->push_back(nn::ReLU(nn::ReLUOptions(true)));
      channels = width;
    }
  }
  register_module("features", features);
  avgpool = register_module("avgpool", nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({7, 7})));
  classifier = register_module(
      "classifier", nn::Sequential(nn::Linear(channels * 7 * 7, 4096), nn::ReLU(nn::ReLUOptions(true)),
                                   nn::Dropout(dropout), nn::Linear(4096, 4096), nn::ReLU(nn::ReLUOptions(true)),
                                   nn::Dropout(dropout), nn::Linear(4096, num_classes)));

  // torchvision's initialisation: He-normal (fan_out) convolutions with zero
  // bias, N(0, 0.01) linear layers with zero bias.
  for (auto& m : modules(/*include_self=*/false)) {
    if (auto* conv = m->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      nn::init::zeros_(conv->bias);
    } else if (auto* linear = m->as<nn::Linear>()) {
      nn::init::normal_(linear->weight, 0.0, 0.01);
      nn::init::zeros_(linear->bias);
    }
  }
}

torch::Tensor VggImpl::forward(torch::Tensor x) {
  x = torch::flatten(avgpool(features->forward(x)), 1);
  return classifier->forward(x);
}

void AddVggModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "vgg16";
  info.paper_name = "vgg16";
  info.domain = Domain::kVision;
  info.task = "image classification";
  info.reference = "torchvision.models.vgg16";
  // pytorch/benchmark torchbenchmark/models/vgg16/__init__.py:
  // DEFAULT_TRAIN_BSIZE 64, DEFAULT_EVAL_BSIZE 4.
  info.default_batch = {64, 4};
  // The CPU suite's sizes (the full suite on a CPU device): VGG-16 is about 15.5 GFLOPs an
  // image forward, so training 64 would take about a minute a step on 2 cores: 4/4.
  info.cpu_batch = BatchSizes{4, 4};
  info.smoke_batch = {1, 1};
  info.create = [](const WorkloadOptions& opt) {
    Vgg net(Vgg16Config());
    auto forward = [net](const torch::Tensor& x) mutable { return net->forward(x); };
    return MakeTorchvisionWorkload(opt, net.ptr(), forward);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
