#include "models/vision/classification/squeezenet.h"

#include <torch/torch.h>

#include <memory>
#include <string>

#include "models/vision/classification/torchvision_harness.h"

namespace torchgauge::models {

namespace nn = torch::nn;

FireImpl::FireImpl(int64_t inplanes, int64_t squeeze_planes, int64_t expand1x1_planes, int64_t expand3x3_planes) {
  TORCH_CHECK(inplanes > 0 && squeeze_planes > 0 && expand1x1_planes > 0 && expand3x3_planes > 0,
              "Fire module widths must be positive");
  squeeze = register_module("squeeze", nn::Conv2d(nn::Conv2dOptions(inplanes, squeeze_planes, 1)));
  squeeze_activation = register_module("squeeze_activation", nn::ReLU(nn::ReLUOptions(true)));
  expand1x1 = register_module("expand1x1", nn::Conv2d(nn::Conv2dOptions(squeeze_planes, expand1x1_planes, 1)));
  expand1x1_activation = register_module("expand1x1_activation", nn::ReLU(nn::ReLUOptions(true)));
  expand3x3 =
      register_module("expand3x3", nn::Conv2d(nn::Conv2dOptions(squeeze_planes, expand3x3_planes, 3).padding(1)));
  expand3x3_activation = register_module("expand3x3_activation", nn::ReLU(nn::ReLUOptions(true)));
}

torch::Tensor FireImpl::forward(torch::Tensor x) {
  x = squeeze_activation(squeeze(x));
  return torch::cat({expand1x1_activation(expand1x1(x)), expand3x3_activation(expand3x3(x))}, 1);
}

SqueezeNet11Impl::SqueezeNet11Impl(int64_t num_classes, double dropout) {
  TORCH_CHECK(num_classes >= 1, "num_classes must be positive");
  TORCH_CHECK(dropout >= 0.0 && dropout <= 1.0, "dropout must be in [0, 1], got ", dropout);
  // ceil_mode pooling is Caffe's rounding, which the published widths assume.
  auto pool = [] { return nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).ceil_mode(true)); };
  features = register_module(
      "features", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(3, 64, 3).stride(2)), nn::ReLU(nn::ReLUOptions(true)),
                                 pool(), Fire(64, 16, 64, 64), Fire(128, 16, 64, 64), pool(), Fire(128, 32, 128, 128),
                                 Fire(256, 32, 128, 128), pool(), Fire(256, 48, 192, 192), Fire(384, 48, 192, 192),
                                 Fire(384, 64, 256, 256), Fire(512, 64, 256, 256)));
  // No fully connected layer: a 1x1 convolution produces one map per class,
  // averaged globally.
  auto final_conv = nn::Conv2d(nn::Conv2dOptions(512, num_classes, 1));
  classifier =
      register_module("classifier", nn::Sequential(nn::Dropout(dropout), final_conv, nn::ReLU(nn::ReLUOptions(true)),
                                                   nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1}))));

  // torchvision's initialisation: He-uniform convolutions, except the final
  // one, N(0, 0.01) so that the initial class scores start small; zero bias.
  for (auto& m : modules(/*include_self=*/false)) {
    if (auto* conv = m->as<nn::Conv2d>()) {
      if (conv == final_conv.get()) {
        nn::init::normal_(conv->weight, 0.0, 0.01);
      } else {
        nn::init::kaiming_uniform_(conv->weight);
      }
      nn::init::zeros_(conv->bias);
    }
  }
}

torch::Tensor SqueezeNet11Impl::forward(torch::Tensor x) {
  return torch::flatten(classifier->forward(features->forward(x)), 1);
}

void AddSqueezeNetModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "squeezenet1_1";
  info.paper_name = "squeezenet1_1";
  info.domain = Domain::kVision;
  info.task = "image classification";
  info.reference = "torchvision.models.squeezenet1_1";
  // pytorch/benchmark torchbenchmark/models/squeezenet1_1/__init__.py:
  // DEFAULT_TRAIN_BSIZE 32, DEFAULT_EVAL_BSIZE 16.
  info.default_batch = {32, 16};
  info.smoke_batch = {2, 2};
  // TorchBench's squeezenet1_1 (torchbenchmark/models/squeezenet1_1/
  // __init__.py) overrides the torchvision harness's train(): CrossEntropyLoss
  // against random class indices (Adam with its defaults, as the harness).
  // Its 16 accumulated micro-batches emulate the original batch of 512; one
  // Listing 1 step here is one micro-batch.
  info.create = [](const WorkloadOptions& opt) {
    SqueezeNet11 net;
    auto forward = [net](const torch::Tensor& x) mutable { return net->forward(x); };
    return MakeTorchvisionWorkload(opt, net.ptr(), forward, 1000, VisionTargets::kClassIndices);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
