#include "models/vision/classification/alexnet.h"

#include <torch/torch.h>

#include <memory>
#include <string>

#include "models/vision/classification/torchvision_harness.h"

namespace torchgauge::models {

namespace nn = torch::nn;

AlexNetImpl::AlexNetImpl(int64_t num_classes, double dropout) {
  TORCH_CHECK(num_classes >= 1, "num_classes must be positive");
  TORCH_CHECK(dropout >= 0.0 && dropout <= 1.0, "dropout must be in [0, 1], got ", dropout);
  auto relu = [] { return nn::ReLU(nn::ReLUOptions(true)); };
  auto pool = [] { return nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2)); };
  features = register_module(
      "features", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(3, 64, 11).stride(4).padding(2)), relu(), pool(),
                                 nn::Conv2d(nn::Conv2dOptions(64, 192, 5).padding(2)), relu(), pool(),
                                 nn::Conv2d(nn::Conv2dOptions(192, 384, 3).padding(1)), relu(),
                                 nn::Conv2d(nn::Conv2dOptions(384, 256, 3).padding(1)), relu(),
                                 nn::Conv2d(nn::Conv2dOptions(256, 256, 3).padding(1)), relu(), pool()));
  avgpool = register_module("avgpool", nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({6, 6})));
  // Dropout sits before the first two linear layers here (not after, as in
  // VGG): that is the "one weird trick" layout torchvision follows.
  classifier = register_module(
      "classifier", nn::Sequential(nn::Dropout(dropout), nn::Linear(256 * 6 * 6, 4096), relu(), nn::Dropout(dropout),
                                   nn::Linear(4096, 4096), relu(), nn::Linear(4096, num_classes)));
  // torchvision keeps PyTorch's default layer initialisation for AlexNet,
  // which the C++ layers share.
}

torch::Tensor AlexNetImpl::forward(torch::Tensor x) {
  x = torch::flatten(avgpool(features->forward(x)), 1);
  return classifier->forward(x);
}

void AddAlexNetModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "alexnet";
  info.paper_name = "alexnet";
  info.domain = Domain::kVision;
  info.task = "image classification";
  info.reference = "torchvision.models.alexnet";
  // pytorch/benchmark torchbenchmark/models/alexnet/__init__.py:
  // DEFAULT_TRAIN_BSIZE 128, DEFAULT_EVAL_BSIZE 128.
  info.default_batch = {128, 128};
  // The CPU suite's sizes (the full suite on a CPU device): a train step at 128 took
  // 10.3 s and an eval step 5.7 s on 2 cores (torchgauge full suite, 2026-11-24), so 16/32.
  info.cpu_batch = BatchSizes{16, 32};
  info.smoke_batch = {2, 2};
  info.create = [](const WorkloadOptions& opt) {
    AlexNet net;
    auto forward = [net](const torch::Tensor& x) mutable { return net->forward(x); };
    return MakeTorchvisionWorkload(opt, net.ptr(), forward);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
