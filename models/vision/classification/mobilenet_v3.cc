#include "models/vision/classification/mobilenet_v3.h"

#include <torch/nn/functional/loss.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/functional.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>

#include <algorithm>
#include <memory>
#include <string>

#include "models/vision/classification/torchvision_harness.h"

namespace torchgauge::models {
namespace {

int64_t MakeDivisible(double v, int64_t divisor) {
  int64_t new_v = std::max(divisor, static_cast<int64_t>(v + divisor / 2.0) / divisor * divisor);
  if (static_cast<double>(new_v) < 0.9 * v) new_v += divisor;
  return new_v;
}

enum class Act { kNone, kReLU, kHardswish };

// LibTorch has no Hardswish module. torchvision's blocks use the out-of-place
// op and its classifier the in-place one; both are kept so that the same ATen
// operators run.
torch::nn::Functional HardswishLayer() {
  return torch::nn::Functional([](torch::Tensor x) { return torch::hardswish(x); });
}
torch::nn::Functional HardswishInplaceLayer() {
  return torch::nn::Functional([](torch::Tensor x) { return torch::hardswish_(x); });
}

// torchvision's Conv2dNormActivation with MobileNetV3's BatchNorm settings
// (eps 1e-3, momentum 0.01, from the TF reference): "<i>.0" conv, "<i>.1" BN,
// "<i>.2" activation when there is one. A Sequential subclass with a plain
// forward, because LibTorch cannot nest a bare Sequential in another.
struct ConvBnActImpl : torch::nn::SequentialImpl {
  using SequentialImpl::SequentialImpl;
  torch::Tensor forward(torch::Tensor x) { return SequentialImpl::forward(x); }
};
TORCH_MODULE(ConvBnAct);

ConvBnAct MakeConvBnAct(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups, Act act) {
  ConvBnAct s(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel)
                                    .stride(stride)
                                    .padding((kernel - 1) / 2)
                                    .groups(groups)
                                    .bias(false)),
              torch::nn::BatchNorm2d(torch::nn::BatchNormOptions(out).eps(1e-3).momentum(0.01)));
  if (act == Act::kReLU) s->push_back(torch::nn::ReLU());
  if (act == Act::kHardswish) s->push_back(HardswishLayer());
  return s;
}

}  // namespace

std::vector<MobileNetV3BlockConfig> MobileNetV3LargeSetting() {
  // in, k, exp, out, SE, HS, stride
  return {
      {16, 3, 16, 16, false, false, 1},  {16, 3, 64, 24, false, false, 2},  {24, 3, 72, 24, false, false, 1},
      {24, 5, 72, 40, true, false, 2},   {40, 5, 120, 40, true, false, 1},  {40, 5, 120, 40, true, false, 1},
      {40, 3, 240, 80, false, true, 2},  {80, 3, 200, 80, false, true, 1},  {80, 3, 184, 80, false, true, 1},
      {80, 3, 184, 80, false, true, 1},  {80, 3, 480, 112, true, true, 1},  {112, 3, 672, 112, true, true, 1},
      {112, 5, 672, 160, true, true, 2}, {160, 5, 960, 160, true, true, 1}, {160, 5, 960, 160, true, true, 1},
  };
}

SqueezeExcitationImpl::SqueezeExcitationImpl(int64_t input_channels, int64_t squeeze_channels)
    : avgpool(register_module("avgpool", torch::nn::AdaptiveAvgPool2d(1))),
      fc1(register_module("fc1", torch::nn::Conv2d(torch::nn::Conv2dOptions(input_channels, squeeze_channels, 1)))),
      fc2(register_module("fc2", torch::nn::Conv2d(torch::nn::Conv2dOptions(squeeze_channels, input_channels, 1)))) {}

torch::Tensor SqueezeExcitationImpl::forward(torch::Tensor x) {
  auto scale = fc2(torch::relu(fc1(avgpool(x))));
  // The hard sigmoid is MobileNetV3's cheap, quantisation-friendly gate.
  return torch::hardsigmoid(scale) * x;
}

MobileNetV3InvertedResidualImpl::MobileNetV3InvertedResidualImpl(const MobileNetV3BlockConfig& cnf) {
  TORCH_CHECK(cnf.stride == 1 || cnf.stride == 2, "illegal stride value ", cnf.stride);
  use_res_connect = cnf.stride == 1 && cnf.input_channels == cnf.out_channels;
  const Act act = cnf.use_hs ? Act::kHardswish : Act::kReLU;
  torch::nn::Sequential layers;
  if (cnf.expanded_channels != cnf.input_channels) {
    layers->push_back(MakeConvBnAct(cnf.input_channels, cnf.expanded_channels, 1, 1, 1, act));
  }
  layers->push_back(
      MakeConvBnAct(cnf.expanded_channels, cnf.expanded_channels, cnf.kernel, cnf.stride, cnf.expanded_channels, act));
  if (cnf.use_se) {
    layers->push_back(SqueezeExcitation(cnf.expanded_channels, MakeDivisible(cnf.expanded_channels / 4, 8)));
  }
  layers->push_back(MakeConvBnAct(cnf.expanded_channels, cnf.out_channels, 1, 1, 1, Act::kNone));
  block = register_module("block", layers);
}

torch::Tensor MobileNetV3InvertedResidualImpl::forward(torch::Tensor x) {
  auto result = block->forward(x);
  if (use_res_connect) result += x;
  return result;
}

MobileNetV3Impl::MobileNetV3Impl(const std::vector<MobileNetV3BlockConfig>& setting, int64_t last_channel,
                                 int64_t num_classes, double dropout) {
  TORCH_CHECK(!setting.empty(), "the inverted residual setting should not be empty");
  TORCH_CHECK(num_classes > 0, "num_classes must be positive, got ", num_classes);
  torch::nn::Sequential f;
  f->push_back(MakeConvBnAct(3, setting.front().input_channels, 3, 2, 1, Act::kHardswish));
  for (const auto& cnf : setting) f->push_back(MobileNetV3InvertedResidual(cnf));
  const int64_t lastconv_in = setting.back().out_channels;
  const int64_t lastconv_out = 6 * lastconv_in;
  f->push_back(MakeConvBnAct(lastconv_in, lastconv_out, 1, 1, 1, Act::kHardswish));
  features = register_module("features", f);
  avgpool = register_module("avgpool", torch::nn::AdaptiveAvgPool2d(1));
  classifier = register_module(
      "classifier", torch::nn::Sequential(torch::nn::Linear(lastconv_out, last_channel), HardswishInplaceLayer(),
                                          torch::nn::Dropout(torch::nn::DropoutOptions(dropout).inplace(true)),
                                          torch::nn::Linear(last_channel, num_classes)));

  // torchvision's initialisation, so that training from scratch behaves alike.
  torch::NoGradGuard no_grad;
  for (auto& m : modules(/*include_self=*/false)) {
    if (auto* c = m->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_normal_(c->weight, 0, torch::kFanOut);
      if (c->bias.defined()) torch::nn::init::zeros_(c->bias);
    } else if (auto* bn = m->as<torch::nn::BatchNorm2d>()) {
      torch::nn::init::ones_(bn->weight);
      torch::nn::init::zeros_(bn->bias);
    } else if (auto* l = m->as<torch::nn::Linear>()) {
      torch::nn::init::normal_(l->weight, 0, 0.01);
      torch::nn::init::zeros_(l->bias);
    }
  }
}

torch::Tensor MobileNetV3Impl::forward(torch::Tensor x) {
  x = avgpool(features->forward(x));
  return classifier->forward(torch::flatten(x, 1));
}

void AddMobileNetV3Models(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "mobilenet_v3_large";
  info.paper_name = "mobilenet_v3_large";
  info.domain = Domain::kVision;
  info.task = "image classification";
  info.reference = "torchvision.models.mobilenet_v3_large";
  // DEFAULT_TRAIN_BSIZE / DEFAULT_EVAL_BSIZE in pytorch/benchmark
  // torchbenchmark/models/mobilenet_v3_large/__init__.py.
  info.default_batch = {32, 32};
  info.smoke_batch = {1, 1};
  info.create = [](const WorkloadOptions& opt) {
    MobileNetV3 net(MobileNetV3LargeSetting(), MakeDivisible(1280, 8));
    auto forward = [net](const torch::Tensor& x) mutable { return net->forward(x); };
    return MakeTorchvisionWorkload(opt, net.ptr(), forward);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
