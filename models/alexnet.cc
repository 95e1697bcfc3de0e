#include "models/alexnet.h"

#include <torch/torch.h>

#include <memory>
#include <string>

namespace torchgauge::models {

namespace nn = torch::nn;

AlexNetImpl::AlexNetImpl(int64_t num_classes, double dropout) {
  TORCH_CHECK(num_classes >= 1, "num_classes must be positive");
  TORCH_CHECK(dropout >= 0.0 && dropout <= 1.0, "dropout must be in [0, 1], got ", dropout);
  auto relu = [] { return nn::ReLU(nn::ReLUOptions(true)); };
  auto pool = [] { return nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2)); };
  features = register_module(
      "features",
      nn::Sequential(nn::Conv2d(nn::Conv2dOptions(3, 64, 11).stride(4).padding(2)), relu(), pool(),
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

namespace {

// TorchBench's torchvision harness (torchbenchmark/util/framework/vision/
// model_factory.py): 224x224 images, Adam with its defaults (lr 1e-3,
// betas 0.9/0.999, eps 1e-8) and CrossEntropyLoss against a uniform random
// tensor shaped like the logits (soft, unnormalised class-probability
// targets), drawn once at set-up so the step only does Listing 1's work.
class AlexNetWorkload : public Workload {
 public:
  explicit AlexNetWorkload(const WorkloadOptions& opt) {
    TORCH_CHECK(opt.batch_size >= 1, "batch size must be positive, got ", opt.batch_size);
    net_->to(opt.device);
    net_->train(opt.mode == Mode::kTrain);
    const auto on_device = torch::TensorOptions(opt.device);
    // Image size is an input dimension, not architecture (adaptive pooling): smoke runs use 64x64.
    const int64_t side = opt.smoke ? 64 : 224;
    inputs_["images"] = torch::randn({opt.batch_size, 3, side, side}, on_device);
    inputs_["target"] = torch::rand({opt.batch_size, 1000}, on_device);
    samples_per_step_ = opt.batch_size;
    if (opt.mode == Mode::kTrain) {
      optimizer_ = std::make_unique<torch::optim::Adam>(net_->parameters(), torch::optim::AdamOptions(1e-3));
    }
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override { return net_->forward(inputs_.at("images")); }

  torch::Tensor TrainStep() override {
    TORCH_CHECK(optimizer_ != nullptr, "TrainStep() needs a workload created in train mode");
    auto loss = torch::nn::functional::cross_entropy(Forward(), inputs_.at("target"));
    optimizer_->zero_grad();
    loss.backward();
    optimizer_->step();
    return loss.detach();
  }

 private:
  AlexNet net_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
};

}  // namespace

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
  info.smoke_batch = {2, 2};
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<AlexNetWorkload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
