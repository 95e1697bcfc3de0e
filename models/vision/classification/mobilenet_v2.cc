#include "models/vision/classification/mobilenet_v2.h"

#include <torch/nn/functional/loss.h>
#include <torch/nn/functional/pooling.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/functional.h>
#include <torch/nn/modules/conv.h>
#include <torch/optim/adam.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>

#include "models/vision/classification/torchvision_harness.h"

namespace torchgauge::models {
namespace {

// Channel counts are rounded to multiples of 8 (the TF reference's rule, kept
// by torchvision) without dropping more than 10% of the requested width.
int64_t MakeDivisible(double v, int64_t divisor) {
  int64_t new_v = std::max(divisor, static_cast<int64_t>(v + divisor / 2.0) / divisor * divisor);
  if (static_cast<double>(new_v) < 0.9 * v) new_v += divisor;
  return new_v;
}

// torchvision's Conv2dNormActivation with ReLU6: "<i>.0" conv (no bias, the
// BN supplies it), "<i>.1" BN, "<i>.2" ReLU6 (through aten::relu6, as in
// Python; LibTorch's ReLU6 module calls hardtanh directly). A Sequential subclass with a
// plain forward, because LibTorch cannot nest a bare Sequential in another.
struct ConvBnReLU6Impl : torch::nn::SequentialImpl {
  using SequentialImpl::SequentialImpl;
  torch::Tensor forward(torch::Tensor x) { return SequentialImpl::forward(x); }
};
TORCH_MODULE(ConvBnReLU6);

ConvBnReLU6 MakeConvBnReLU6(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups) {
  return ConvBnReLU6(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel)
                                           .stride(stride)
                                           .padding((kernel - 1) / 2)
                                           .groups(groups)
                                           .bias(false)),
                     torch::nn::BatchNorm2d(out),
                     torch::nn::Functional([](torch::Tensor x) { return torch::relu6(x); }));
}

}  // namespace

MobileNetV2InvertedResidualImpl::MobileNetV2InvertedResidualImpl(int64_t inp, int64_t oup, int64_t stride,
                                                                 int64_t expand_ratio) {
  TORCH_CHECK(stride == 1 || stride == 2, "stride should be 1 or 2, got ", stride);
  TORCH_CHECK(expand_ratio >= 1, "expand_ratio must be >= 1, got ", expand_ratio);
  const int64_t hidden = inp * expand_ratio;
  use_res_connect = stride == 1 && inp == oup;
  torch::nn::Sequential layers;
  if (expand_ratio != 1) layers->push_back(MakeConvBnReLU6(inp, hidden, 1, 1, 1));
  layers->push_back(MakeConvBnReLU6(hidden, hidden, 3, stride, hidden));
  // The projection is linear: the paper shows a ReLU here destroys
  // information in the low-dimensional bottleneck.
  layers->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(hidden, oup, 1).bias(false)));
  layers->push_back(torch::nn::BatchNorm2d(oup));
  conv = register_module("conv", layers);
}

torch::Tensor MobileNetV2InvertedResidualImpl::forward(torch::Tensor x) {
  if (use_res_connect) return x + conv->forward(x);
  return conv->forward(x);
}

MobileNetV2Impl::MobileNetV2Impl(int64_t num_classes, double width_mult, double dropout) {
  TORCH_CHECK(num_classes > 0, "num_classes must be positive, got ", num_classes);
  TORCH_CHECK(width_mult > 0, "width_mult must be positive, got ", width_mult);
  // Table 2 of the paper: expansion t, output channels c, repeats n, stride s.
  struct Stage {
    int64_t t, c, n, s;
  };
  constexpr std::array<Stage, 7> kSettings{{
      {1, 16, 1, 1},
      {6, 24, 2, 2},
      {6, 32, 3, 2},
      {6, 64, 4, 2},
      {6, 96, 3, 1},
      {6, 160, 3, 2},
      {6, 320, 1, 1},
  }};
  int64_t input_channel = MakeDivisible(32 * width_mult, 8);
  const int64_t last_channel = MakeDivisible(1280 * std::max(1.0, width_mult), 8);

  torch::nn::Sequential f;
  f->push_back(MakeConvBnReLU6(3, input_channel, 3, 2, 1));
  for (const auto& st : kSettings) {
    const int64_t output_channel = MakeDivisible(st.c * width_mult, 8);
    for (int64_t i = 0; i < st.n; ++i) {
      f->push_back(MobileNetV2InvertedResidual(input_channel, output_channel, i == 0 ? st.s : 1, st.t));
      input_channel = output_channel;
    }
  }
  f->push_back(MakeConvBnReLU6(input_channel, last_channel, 1, 1, 1));
  features = register_module("features", f);
  classifier = register_module(
      "classifier", torch::nn::Sequential(torch::nn::Dropout(dropout), torch::nn::Linear(last_channel, num_classes)));

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

torch::Tensor MobileNetV2Impl::forward(torch::Tensor x) {
  x = features->forward(x);
  x = torch::nn::functional::adaptive_avg_pool2d(x, torch::nn::functional::AdaptiveAvgPool2dFuncOptions(1));
  return classifier->forward(torch::flatten(x, 1));
}

void AddMobileNetV2Models(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "mobilenet_v2";
  info.paper_name = "mobilenet_v2";
  info.domain = Domain::kVision;
  info.task = "image classification";
  info.reference = "torchvision.models.mobilenet_v2";
  // DEFAULT_TRAIN_BSIZE / DEFAULT_EVAL_BSIZE in pytorch/benchmark
  // torchbenchmark/models/mobilenet_v2/__init__.py (unchanged since the paper).
  info.default_batch = {96, 16};
  // The CPU suite's sizes (the full suite on a CPU device): depthwise convolutions are slow
  // on CPU, so 16/16 rather than a train batch of 96.
  info.cpu_batch = BatchSizes{16, 16};
  info.smoke_batch = {1, 1};
  info.create = [](const WorkloadOptions& opt) {
    MobileNetV2 net;
    auto forward = [net](const torch::Tensor& x) mutable { return net->forward(x); };
    return MakeTorchvisionWorkload(opt, net.ptr(), forward);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
