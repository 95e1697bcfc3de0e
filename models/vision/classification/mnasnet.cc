#include "models/vision/classification/mnasnet.h"

#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "models/vision/classification/torchvision_harness.h"

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

// The paper's BatchNorm decay 0.9997 (TensorFlow convention).
constexpr double kBnMomentum = 1.0 - 0.9997;

nn::BatchNorm2d Bn(int64_t c, double momentum) { return nn::BatchNorm2d(nn::BatchNorm2dOptions(c).momentum(momentum)); }

nn::ReLU ReLUInPlace() { return nn::ReLU(nn::ReLUOptions(true)); }

// Rounds to a multiple of `divisor`, rounding up unless that would add more
// than 10% (torchvision's _round_to_multiple_of with bias 0.9).
int64_t RoundToMultipleOf(double val, int64_t divisor) {
  const int64_t new_val = std::max(divisor, static_cast<int64_t>(val + divisor / 2.0) / divisor * divisor);
  return static_cast<double>(new_val) >= 0.9 * val ? new_val : new_val + divisor;
}

// A stack of inverted residuals. A Sequential subclass with a plain forward,
// because LibTorch cannot nest a bare Sequential (its forward is a template)
// in another.
struct MnasNetStackImpl : nn::SequentialImpl {
  using SequentialImpl::SequentialImpl;
  torch::Tensor forward(torch::Tensor x) { return SequentialImpl::forward(x); }
};
TORCH_MODULE(MnasNetStack);

// Only the first block strides and changes width, so only it lacks the skip.
MnasNetStack Stack(int64_t in_ch, int64_t out_ch, int64_t kernel_size, int64_t stride, int64_t exp_factor,
                   int64_t repeats) {
  TORCH_CHECK(repeats >= 1, "mnasnet: a stack needs at least one block, got ", repeats);
  MnasNetStack stack;
  stack->push_back(MnasNetInvertedResidual(in_ch, out_ch, kernel_size, stride, exp_factor, kBnMomentum));
  for (int64_t i = 1; i < repeats; ++i) {
    stack->push_back(MnasNetInvertedResidual(out_ch, out_ch, kernel_size, 1, exp_factor, kBnMomentum));
  }
  return stack;
}

}  // namespace

MnasNetInvertedResidualImpl::MnasNetInvertedResidualImpl(int64_t in_ch, int64_t out_ch, int64_t kernel_size,
                                                         int64_t stride, int64_t expansion_factor, double bn_momentum) {
  TORCH_CHECK(stride == 1 || stride == 2, "mnasnet: stride should be 1 or 2, got ", stride);
  TORCH_CHECK(kernel_size == 3 || kernel_size == 5, "mnasnet: kernel_size should be 3 or 5, got ", kernel_size);
  TORCH_CHECK(expansion_factor >= 1, "mnasnet: expansion factor must be positive, got ", expansion_factor);
  const int64_t mid_ch = in_ch * expansion_factor;
  apply_residual = in_ch == out_ch && stride == 1;
  layers = register_module(
      "layers", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(in_ch, mid_ch, 1).bias(false)), Bn(mid_ch, bn_momentum),
                               ReLUInPlace(),
                               nn::Conv2d(nn::Conv2dOptions(mid_ch, mid_ch, kernel_size)
                                              .padding(kernel_size / 2)
                                              .stride(stride)
                                              .groups(mid_ch)
                                              .bias(false)),
                               Bn(mid_ch, bn_momentum), ReLUInPlace(),
                               // Linear projection: no activation.
                               nn::Conv2d(nn::Conv2dOptions(mid_ch, out_ch, 1).bias(false)), Bn(out_ch, bn_momentum)));
}

torch::Tensor MnasNetInvertedResidualImpl::forward(torch::Tensor x) {
  if (apply_residual) return layers->forward(x) + x;
  return layers->forward(x);
}

MnasNetImpl::MnasNetImpl(double alpha, int64_t num_classes, double dropout) {
  TORCH_CHECK(alpha > 0.0, "mnasnet: alpha should be greater than 0, got ", alpha);
  TORCH_CHECK(num_classes >= 1, "mnasnet: num_classes must be positive, got ", num_classes);
  constexpr std::array<int64_t, 8> kBaseDepths{32, 16, 24, 40, 80, 96, 192, 320};
  std::array<int64_t, 8> d{};
  for (size_t i = 0; i < d.size(); ++i) d[i] = RoundToMultipleOf(static_cast<double>(kBaseDepths[i]) * alpha, 8);

  nn::Sequential l;
  // Stem: a regular 3x3 convolution, then a depthwise-separable one without skip.
  l->push_back(nn::Conv2d(nn::Conv2dOptions(3, d[0], 3).padding(1).stride(2).bias(false)));
  l->push_back(Bn(d[0], kBnMomentum));
  l->push_back(ReLUInPlace());
  l->push_back(nn::Conv2d(nn::Conv2dOptions(d[0], d[0], 3).padding(1).stride(1).groups(d[0]).bias(false)));
  l->push_back(Bn(d[0], kBnMomentum));
  l->push_back(ReLUInPlace());
  l->push_back(nn::Conv2d(nn::Conv2dOptions(d[0], d[1], 1).bias(false)));
  l->push_back(Bn(d[1], kBnMomentum));
  // The searched B1 body: (kernel, stride, expansion, repeats) per stack.
  l->push_back(Stack(d[1], d[2], 3, 2, 3, 3));
  l->push_back(Stack(d[2], d[3], 5, 2, 3, 3));
  l->push_back(Stack(d[3], d[4], 5, 2, 6, 3));
  l->push_back(Stack(d[4], d[5], 3, 1, 6, 2));
  l->push_back(Stack(d[5], d[6], 5, 2, 6, 4));
  l->push_back(Stack(d[6], d[7], 3, 1, 6, 1));
  // Final mapping to the classifier's input.
  l->push_back(nn::Conv2d(nn::Conv2dOptions(d[7], 1280, 1).bias(false)));
  l->push_back(Bn(1280, kBnMomentum));
  l->push_back(ReLUInPlace());
  layers = register_module("layers", l);
  classifier = register_module("classifier", nn::Sequential(nn::Dropout(nn::DropoutOptions(dropout).inplace(true)),
                                                            nn::Linear(1280, num_classes)));

  // torchvision's initialisation.
  torch::NoGradGuard no_grad;
  for (auto& m : modules(/*include_self=*/false)) {
    if (auto* c = m->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
      if (c->bias.defined()) nn::init::zeros_(c->bias);
    } else if (auto* bn = m->as<nn::BatchNorm2d>()) {
      nn::init::ones_(bn->weight);
      nn::init::zeros_(bn->bias);
    } else if (auto* lin = m->as<nn::Linear>()) {
      nn::init::kaiming_uniform_(lin->weight, 0.0, torch::kFanOut, torch::kSigmoid);
      nn::init::zeros_(lin->bias);
    }
  }
}

torch::Tensor MnasNetImpl::forward(torch::Tensor x) {
  x = layers->forward(x);
  // Global average pooling, dropping H and W.
  x = x.mean({2, 3});
  return classifier->forward(x);
}

void AddMnasNetModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "mnasnet1_0";
  info.paper_name = "mnasnet1_0";
  info.domain = Domain::kVision;
  info.task = "image classification";
  info.reference = "torchvision.models.mnasnet1_0";
  // DEFAULT_TRAIN_BSIZE / DEFAULT_EVAL_BSIZE in pytorch/benchmark
  // torchbenchmark/models/mnasnet1_0/__init__.py.
  info.default_batch = {32, 32};
  info.smoke_batch = {1, 1};
  info.create = [](const WorkloadOptions& opt) {
    MnasNet net;
    auto forward = [net](const torch::Tensor& x) mutable { return net->forward(x); };
    return MakeTorchvisionWorkload(opt, net.ptr(), forward);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
