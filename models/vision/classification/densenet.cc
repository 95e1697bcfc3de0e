#include "models/vision/classification/densenet.h"

#include <torch/nn/functional/dropout.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/functional/pooling.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/pooling.h>
#include <torch/optim/adam.h>

#include <memory>
#include <string>

#include "models/vision/classification/torchvision_harness.h"

namespace torchgauge::models {
namespace {

// torchvision's _Transition (norm, relu, conv, pool): a Sequential subclass
// with a plain forward, because LibTorch cannot nest a bare Sequential in
// another.
struct TransitionImpl : torch::nn::SequentialImpl {
  using SequentialImpl::SequentialImpl;
  torch::Tensor forward(torch::Tensor x) { return SequentialImpl::forward(x); }
};
TORCH_MODULE(Transition);

}  // namespace

DenseLayerImpl::DenseLayerImpl(int64_t num_input_features, int64_t growth_rate, int64_t bn_size, double drop_rate_arg)
    : norm1(register_module("norm1", torch::nn::BatchNorm2d(num_input_features))),
      norm2(register_module("norm2", torch::nn::BatchNorm2d(bn_size * growth_rate))),
      conv1(register_module(
          "conv1",
          torch::nn::Conv2d(torch::nn::Conv2dOptions(num_input_features, bn_size * growth_rate, 1).bias(false)))),
      conv2(register_module(
          "conv2",
          torch::nn::Conv2d(torch::nn::Conv2dOptions(bn_size * growth_rate, growth_rate, 3).padding(1).bias(false)))),
      drop_rate(drop_rate_arg) {
  TORCH_CHECK(drop_rate_arg >= 0 && drop_rate_arg < 1, "drop_rate must be in [0, 1), got ", drop_rate_arg);
}

torch::Tensor DenseLayerImpl::forward(const std::vector<torch::Tensor>& prev_features) {
  // The concatenation is what makes DenseNet dense (and memory-hungry): every
  // layer re-reads all earlier outputs of its block.
  // In-place ReLUs, as torchvision's, save one activation-sized buffer each.
  auto bottleneck = conv1(norm1(torch::cat(prev_features, 1)).relu_());
  auto out = conv2(norm2(bottleneck).relu_());
  if (drop_rate > 0) {
    out = torch::nn::functional::dropout(
        out, torch::nn::functional::DropoutFuncOptions().p(drop_rate).training(is_training()));
  }
  return out;
}

DenseBlockImpl::DenseBlockImpl(int64_t num_layers, int64_t num_input_features, int64_t bn_size, int64_t growth_rate,
                               double drop_rate) {
  TORCH_CHECK(num_layers >= 1, "a dense block needs at least one layer, got ", num_layers);
  for (int64_t i = 0; i < num_layers; ++i) {
    layers.push_back(
        register_module("denselayer" + std::to_string(i + 1),
                        DenseLayer(num_input_features + i * growth_rate, growth_rate, bn_size, drop_rate)));
  }
}

torch::Tensor DenseBlockImpl::forward(torch::Tensor init_features) {
  std::vector<torch::Tensor> features{std::move(init_features)};
  features.reserve(layers.size() + 1);
  for (auto& layer : layers) features.push_back(layer->forward(features));
  return torch::cat(features, 1);
}

DenseNetImpl::DenseNetImpl(const DenseNetConfig& config) {
  TORCH_CHECK(config.growth_rate > 0 && config.bn_size > 0 && config.num_init_features > 0,
              "growth_rate, bn_size and num_init_features must be positive");
  TORCH_CHECK(config.num_classes > 0, "num_classes must be positive, got ", config.num_classes);
  namespace nn = torch::nn;
  features = register_module("features", nn::Sequential());
  features->push_back("conv0",
                      nn::Conv2d(nn::Conv2dOptions(3, config.num_init_features, 7).stride(2).padding(3).bias(false)));
  features->push_back("norm0", nn::BatchNorm2d(config.num_init_features));
  features->push_back("relu0", nn::ReLU(nn::ReLUOptions(true)));
  features->push_back("pool0", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));
  int64_t num_features = config.num_init_features;
  const size_t n_blocks = config.block_config.size();
  for (size_t i = 0; i < n_blocks; ++i) {
    const int64_t num_layers = config.block_config[i];
    features->push_back("denseblock" + std::to_string(i + 1),
                        DenseBlock(num_layers, num_features, config.bn_size, config.growth_rate, config.drop_rate));
    num_features += num_layers * config.growth_rate;
    if (i + 1 != n_blocks) {
      // Transitions halve channels (the "C" in DenseNet-BC, compression 0.5)
      // and spatial size.
      Transition trans;
      trans->push_back("norm", nn::BatchNorm2d(num_features));
      trans->push_back("relu", nn::ReLU(nn::ReLUOptions(true)));
      trans->push_back("conv", nn::Conv2d(nn::Conv2dOptions(num_features, num_features / 2, 1).bias(false)));
      trans->push_back("pool", nn::AvgPool2d(nn::AvgPool2dOptions(2).stride(2)));
      features->push_back("transition" + std::to_string(i + 1), trans);
      num_features /= 2;
    }
  }
  features->push_back("norm5", nn::BatchNorm2d(num_features));
  classifier = register_module("classifier", nn::Linear(num_features, config.num_classes));

  // torchvision's initialisation, so that training from scratch behaves alike
  // (Linear weights keep their default initialisation there too).
  torch::NoGradGuard no_grad;
  for (auto& m : modules(/*include_self=*/false)) {
    if (auto* c = m->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(c->weight);
    } else if (auto* bn = m->as<nn::BatchNorm2d>()) {
      nn::init::constant_(bn->weight, 1);
      nn::init::constant_(bn->bias, 0);
    } else if (auto* l = m->as<nn::Linear>()) {
      nn::init::constant_(l->bias, 0);
    }
  }
}

torch::Tensor DenseNetImpl::forward(torch::Tensor x) {
  auto out = features->forward(x).relu_();
  out = torch::nn::functional::adaptive_avg_pool2d(out, torch::nn::functional::AdaptiveAvgPool2dFuncOptions(1));
  return classifier(torch::flatten(out, 1));
}

void AddDenseNetModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "densenet121";
  info.paper_name = "densenet121";
  info.domain = Domain::kVision;
  info.task = "image classification";
  info.reference = "torchvision.models.densenet121";
  // DEFAULT_TRAIN_BSIZE / DEFAULT_EVAL_BSIZE in pytorch/benchmark
  // torchbenchmark/models/densenet121/__init__.py (train 256 is the paper's
  // ImageNet batch, per the comment there).
  info.default_batch = {256, 64};
  // The CPU suite's sizes (the full suite on a CPU device): train at 256 runs out of
  // memory on a 24 GiB machine and eval at 64 took 6.9 s on 2 cores, so 8/16.
  info.cpu_batch = BatchSizes{8, 16};
  info.smoke_batch = {1, 1};
  info.create = [](const WorkloadOptions& opt) {
    const DenseNetConfig config{};
    DenseNet net(config);
    auto forward = [net](const torch::Tensor& x) mutable { return net->forward(x); };
    return MakeTorchvisionWorkload(opt, net.ptr(), forward, config.num_classes);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
