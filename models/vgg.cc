#include "models/vgg.h"

#include <torch/torch.h>

#include <memory>
#include <string>

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

namespace {

// TorchBench's torchvision harness (torchbenchmark/util/framework/vision/
// model_factory.py): 224x224 images, Adam with its defaults (lr 1e-3,
// betas 0.9/0.999, eps 1e-8) and CrossEntropyLoss against a uniform random
// tensor shaped like the logits (soft, unnormalised class-probability
// targets), drawn once at set-up so the step only does Listing 1's work.
class VggWorkload : public Workload {
 public:
  explicit VggWorkload(const WorkloadOptions& opt) : net_(Vgg16Config()) {
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
  Vgg net_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
};

}  // namespace

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
  info.smoke_batch = {1, 1};
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<VggWorkload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
