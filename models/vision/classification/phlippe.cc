#include "models/vision/classification/phlippe.h"

#include <torch/nn/functional/loss.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

nn::ReLU ReLU() { return nn::ReLU(); }

nn::Conv2d Conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding, bool bias) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(bias));
}

// The tutorial's initialisation: He-normal convolutions for ReLU (fan-out in
// the ResNet, fan-in in the DenseNet), unit BN scale, zero BN shift; Linear
// and convolution biases keep PyTorch's defaults.
void InitParams(nn::Module& net, torch::nn::init::FanModeType fan_mode) {
  torch::NoGradGuard no_grad;
  for (auto& m : net.modules(/*include_self=*/false)) {
    if (auto* conv = m->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(conv->weight, 0.0, fan_mode, torch::kReLU);
    } else if (auto* bn = m->as<nn::BatchNorm2d>()) {
      nn::init::ones_(bn->weight);
      nn::init::zeros_(bn->bias);
    }
  }
}

}  // namespace

PhlippeResNetBlockImpl::PhlippeResNetBlockImpl(int64_t c_in, bool subsample, int64_t c_out) {
  if (!subsample) c_out = c_in;  // only a subsampling block changes the width
  TORCH_CHECK(c_in >= 1 && c_out >= 1, "phlippe_resnet: channel counts must be positive");
  net = register_module("net", nn::Sequential(Conv(c_in, c_out, 3, subsample ? 2 : 1, 1, false), nn::BatchNorm2d(c_out),
                                              ReLU(), Conv(c_out, c_out, 3, 1, 1, false), nn::BatchNorm2d(c_out)));
  // A strided 1x1 convolution keeps the top-left value of each 2x2 window.
  if (subsample) downsample = register_module("downsample", Conv(c_in, c_out, 1, 2, 0, true));
  act_fn = register_module("act_fn", ReLU());
}

torch::Tensor PhlippeResNetBlockImpl::forward(torch::Tensor x) {
  auto z = net->forward(x);
  if (downsample) x = downsample(x);
  return act_fn(z + x);
}

PhlippeResNetImpl::PhlippeResNetImpl(const PhlippeResNetConfig& c) {
  TORCH_CHECK(!c.num_blocks.empty() && c.num_blocks.size() == c.c_hidden.size(),
              "phlippe_resnet: num_blocks and c_hidden need one entry per group");
  TORCH_CHECK(c.num_classes >= 1, "phlippe_resnet: num_classes must be positive");
  input_net = register_module(
      "input_net", nn::Sequential(Conv(3, c.c_hidden[0], 3, 1, 1, false), nn::BatchNorm2d(c.c_hidden[0]), ReLU()));
  nn::Sequential b;
  for (size_t group = 0; group < c.num_blocks.size(); ++group) {
    for (int64_t i = 0; i < c.num_blocks[group]; ++i) {
      // The first block of each group subsamples, except in the first group.
      const bool subsample = i == 0 && group > 0;
      b->push_back(PhlippeResNetBlock(c.c_hidden[subsample ? group - 1 : group], subsample, c.c_hidden[group]));
    }
  }
  blocks = register_module("blocks", b);
  output_net =
      register_module("output_net", nn::Sequential(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1})),
                                                   nn::Flatten(), nn::Linear(c.c_hidden.back(), c.num_classes)));
  InitParams(*this, torch::kFanOut);
}

torch::Tensor PhlippeResNetImpl::forward(torch::Tensor x) {
  return output_net->forward(blocks->forward(input_net->forward(x)));
}

PhlippeDenseLayerImpl::PhlippeDenseLayerImpl(int64_t c_in, int64_t bn_size, int64_t growth_rate) {
  net = register_module("net",
                        nn::Sequential(nn::BatchNorm2d(c_in), ReLU(), Conv(c_in, bn_size * growth_rate, 1, 1, 0, false),
                                       nn::BatchNorm2d(bn_size * growth_rate), ReLU(),
                                       Conv(bn_size * growth_rate, growth_rate, 3, 1, 1, false)));
}

torch::Tensor PhlippeDenseLayerImpl::forward(torch::Tensor x) { return torch::cat({net->forward(x), x}, 1); }

PhlippeDenseBlockImpl::PhlippeDenseBlockImpl(int64_t c_in, int64_t num_layers, int64_t bn_size, int64_t growth_rate) {
  nn::Sequential layers;
  for (int64_t i = 0; i < num_layers; ++i)
    layers->push_back(PhlippeDenseLayer(c_in + i * growth_rate, bn_size, growth_rate));
  block = register_module("block", layers);
}

torch::Tensor PhlippeDenseBlockImpl::forward(torch::Tensor x) { return block->forward(x); }

PhlippeTransitionLayerImpl::PhlippeTransitionLayerImpl(int64_t c_in, int64_t c_out) {
  transition =
      register_module("transition", nn::Sequential(nn::BatchNorm2d(c_in), ReLU(), Conv(c_in, c_out, 1, 1, 0, false),
                                                   nn::AvgPool2d(nn::AvgPool2dOptions(2).stride(2))));
}

torch::Tensor PhlippeTransitionLayerImpl::forward(torch::Tensor x) { return transition->forward(x); }

PhlippeDenseNetImpl::PhlippeDenseNetImpl(const PhlippeDenseNetConfig& c) {
  TORCH_CHECK(!c.num_layers.empty(), "phlippe_densenet: needs at least one dense block");
  TORCH_CHECK(c.bn_size >= 1 && c.growth_rate >= 1 && c.num_classes >= 1,
              "phlippe_densenet: bn_size, growth_rate and num_classes must be positive");
  int64_t c_hidden = c.growth_rate * c.bn_size;
  // No BN or activation here: every dense layer starts with its own.
  input_net = register_module("input_net", nn::Sequential(Conv(3, c_hidden, 3, 1, 1, true)));
  nn::Sequential b;
  for (size_t i = 0; i < c.num_layers.size(); ++i) {
    b->push_back(PhlippeDenseBlock(c_hidden, c.num_layers[i], c.bn_size, c.growth_rate));
    c_hidden += c.num_layers[i] * c.growth_rate;
    if (i + 1 < c.num_layers.size()) {  // no transition after the last block
      b->push_back(PhlippeTransitionLayer(c_hidden, c_hidden / 2));
      c_hidden /= 2;
    }
  }
  blocks = register_module("blocks", b);
  // The block outputs have not passed a non-linearity yet.
  output_net = register_module("output_net", nn::Sequential(nn::BatchNorm2d(c_hidden), ReLU(),
                                                            nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1})),
                                                            nn::Flatten(), nn::Linear(c_hidden, c.num_classes)));
  InitParams(*this, torch::kFanIn);
}

torch::Tensor PhlippeDenseNetImpl::forward(torch::Tensor x) {
  return output_net->forward(blocks->forward(input_net->forward(x)));
}

namespace {

constexpr int64_t kNumClasses = 10;  // CIFAR-10
constexpr int64_t kImageSide = 32;

// TorchBench's phlippe_* workload: CIFAR-10-shaped random images and class
// targets, cross-entropy, the model's own optimizer.
class PhlippeWorkload : public LossWorkload {
 public:
  using MakeOptimizer = std::function<std::unique_ptr<torch::optim::Optimizer>(std::vector<torch::Tensor>)>;

  PhlippeWorkload(const WorkloadOptions& opt, std::shared_ptr<nn::Module> net,
                  std::function<torch::Tensor(const torch::Tensor&)> forward, const MakeOptimizer& make_optimizer)
      : net_(std::move(net)), forward_(std::move(forward)) {
    TORCH_CHECK(opt.batch_size >= 1, "phlippe: batch size must be positive, got ", opt.batch_size);
    net_->to(opt.device);
    net_->train(opt.mode == Mode::kTrain);
    const auto on_device = torch::TensorOptions(opt.device);
    inputs_["images"] = torch::randn({opt.batch_size, 3, kImageSide, kImageSide}, on_device);
    inputs_["target"] = torch::randint(0, kNumClasses, {opt.batch_size}, on_device.dtype(torch::kLong));
    samples_per_step_ = opt.batch_size;
    if (opt.mode == Mode::kTrain) optimizer_ = make_optimizer(net_->parameters());
  }

  nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override { return forward_(inputs_.at("images")); }

  torch::Tensor Loss(const torch::Tensor& logits) override {
    return nn::functional::cross_entropy(logits, inputs_.at("target"));
  }

 private:
  std::shared_ptr<nn::Module> net_;
  std::function<torch::Tensor(const torch::Tensor&)> forward_;
};

ModelInfo Base(const std::string& id) {
  ModelInfo info;
  info.id = id;
  info.paper_name = id;
  info.domain = Domain::kVision;
  info.task = "image classification";
  // DEFAULT_TRAIN_BSIZE / DEFAULT_EVAL_BSIZE in pytorch/benchmark
  // torchbenchmark/models/<id>/__init__.py: 128 / 128 for both.
  info.default_batch = {128, 128};
  info.smoke_batch = {2, 2};
  return info;
}

}  // namespace

void AddPhlippeModels(std::vector<ModelInfo>& out) {
  ModelInfo resnet = Base("phlippe_resnet");
  resnet.reference =
      "TorchBench phlippe_resnet (UvA DL tutorial 5 ResNetModel, re-stated in tests/parity/ref_phlippe.py)";
  resnet.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    PhlippeResNet net;
    auto forward = [net](const torch::Tensor& x) mutable { return net->forward(x); };
    return std::make_unique<PhlippeWorkload>(opt, net.ptr(), forward, [](std::vector<torch::Tensor> params) {
      return std::make_unique<torch::optim::SGD>(std::move(params),
                                                 torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(1e-4));
    });
  };
  out.push_back(std::move(resnet));

  ModelInfo densenet = Base("phlippe_densenet");
  densenet.reference =
      "TorchBench phlippe_densenet (UvA DL tutorial 5 DenseNet, re-stated in tests/parity/ref_phlippe.py)";
  densenet.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    PhlippeDenseNet net;
    auto forward = [net](const torch::Tensor& x) mutable { return net->forward(x); };
    return std::make_unique<PhlippeWorkload>(opt, net.ptr(), forward, [](std::vector<torch::Tensor> params) {
      return std::make_unique<torch::optim::AdamW>(std::move(params),
                                                   torch::optim::AdamWOptions(1e-3).weight_decay(1e-4));
    });
  };
  out.push_back(std::move(densenet));
}

}  // namespace torchgauge::models
