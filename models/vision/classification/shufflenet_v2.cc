#include "models/vision/classification/shufflenet_v2.h"

#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/optim/adam.h>

#include <memory>
#include <string>

#include "models/vision/classification/torchvision_harness.h"

namespace torchgauge::models {
namespace {

torch::nn::Conv2d Conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding, int64_t groups) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).groups(groups).bias(false));
}

// Depthwise 3x3 (no activation after it: the paper's unit keeps the
// depthwise convolution linear).
torch::nn::Conv2d Depthwise(int64_t channels, int64_t stride) {
  return Conv(channels, channels, 3, stride, 1, channels);
}

}  // namespace

torch::Tensor ChannelShuffle(const torch::Tensor& x, int64_t groups) {
  TORCH_CHECK(x.dim() == 4, "channel shuffle expects NCHW, got ", x.sizes());
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  TORCH_CHECK(groups > 0 && c % groups == 0, "channels ", c, " not divisible by groups ", groups);
  return x.view({n, groups, c / groups, h, w}).transpose(1, 2).contiguous().view({n, c, h, w});
}

ShuffleNetV2InvertedResidualImpl::ShuffleNetV2InvertedResidualImpl(int64_t inp, int64_t oup, int64_t stride_arg)
    : stride(stride_arg) {
  TORCH_CHECK(stride_arg >= 1 && stride_arg <= 3, "illegal stride value ", stride_arg);
  const int64_t branch_features = oup / 2;
  TORCH_CHECK(stride_arg > 1 || inp == branch_features * 2, "stride 1 needs inp == oup (got inp ", inp, ", oup ", oup,
              ")");
  namespace nn = torch::nn;
  if (stride_arg > 1) {
    branch1 = register_module("branch1", nn::Sequential(Depthwise(inp, stride_arg), nn::BatchNorm2d(inp),
                                                        Conv(inp, branch_features, 1, 1, 0, 1),
                                                        nn::BatchNorm2d(branch_features), nn::ReLU(true)));
  }
  branch2 = register_module(
      "branch2",
      nn::Sequential(Conv(stride_arg > 1 ? inp : branch_features, branch_features, 1, 1, 0, 1),
                     nn::BatchNorm2d(branch_features), nn::ReLU(true), Depthwise(branch_features, stride_arg),
                     nn::BatchNorm2d(branch_features), Conv(branch_features, branch_features, 1, 1, 0, 1),
                     nn::BatchNorm2d(branch_features), nn::ReLU(true)));
}

torch::Tensor ShuffleNetV2InvertedResidualImpl::forward(torch::Tensor x) {
  torch::Tensor out;
  if (stride == 1) {
    auto halves = x.chunk(2, 1);
    out = torch::cat({halves[0], branch2->forward(halves[1])}, 1);
  } else {
    out = torch::cat({branch1->forward(x), branch2->forward(x)}, 1);
  }
  return ChannelShuffle(out, 2);
}

ShuffleNetV2Impl::ShuffleNetV2Impl(const std::array<int64_t, 3>& stages_repeats,
                                   const std::array<int64_t, 5>& stages_out_channels, int64_t num_classes) {
  TORCH_CHECK(num_classes > 0, "num_classes must be positive, got ", num_classes);
  namespace nn = torch::nn;
  int64_t input_channels = 3;
  int64_t output_channels = stages_out_channels[0];
  conv1 = register_module("conv1", nn::Sequential(Conv(input_channels, output_channels, 3, 2, 1, 1),
                                                  nn::BatchNorm2d(output_channels), nn::ReLU(true)));
  input_channels = output_channels;
  maxpool = register_module("maxpool", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));

  nn::Sequential* stages[3] = {&stage2, &stage3, &stage4};
  for (int i = 0; i < 3; ++i) {
    TORCH_CHECK(stages_repeats[i] >= 1, "stage repeats must be positive");
    output_channels = stages_out_channels[i + 1];
    nn::Sequential seq;
    seq->push_back(ShuffleNetV2InvertedResidual(input_channels, output_channels, 2));
    for (int64_t r = 1; r < stages_repeats[i]; ++r) {
      seq->push_back(ShuffleNetV2InvertedResidual(output_channels, output_channels, 1));
    }
    *stages[i] = register_module("stage" + std::to_string(i + 2), seq);
    input_channels = output_channels;
  }
  output_channels = stages_out_channels[4];
  conv5 = register_module("conv5", nn::Sequential(Conv(input_channels, output_channels, 1, 1, 0, 1),
                                                  nn::BatchNorm2d(output_channels), nn::ReLU(true)));
  fc = register_module("fc", nn::Linear(output_channels, num_classes));
  // torchvision keeps PyTorch's default initialisation for this model, and so
  // does LibTorch.
}

torch::Tensor ShuffleNetV2Impl::forward(torch::Tensor x) {
  x = maxpool(conv1->forward(x));
  x = stage4->forward(stage3->forward(stage2->forward(x)));
  x = conv5->forward(x);
  return fc(x.mean({2, 3}));  // global average pool
}

void AddShuffleNetV2Models(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "shufflenet_v2_x1_0";
  info.paper_name = "shufflenet_v2_x1_0";
  info.domain = Domain::kVision;
  info.task = "image classification";
  info.reference = "torchvision.models.shufflenet_v2_x1_0";
  // DEFAULT_TRAIN_BSIZE / DEFAULT_EVAL_BSIZE in pytorch/benchmark
  // torchbenchmark/models/shufflenet_v2_x1_0/__init__.py.
  info.default_batch = {128, 64};
  // The CPU suite's sizes (the full suite on a CPU device): 32/32 (channel shuffles and
  // depthwise convolutions dominate on CPU).
  info.cpu_batch = BatchSizes{32, 32};
  info.smoke_batch = {1, 1};
  info.create = [](const WorkloadOptions& opt) {
    ShuffleNetV2 net(std::array<int64_t, 3>{4, 8, 4}, std::array<int64_t, 5>{24, 116, 232, 464, 1024});
    auto forward = [net](const torch::Tensor& x) mutable { return net->forward(x); };
    return MakeTorchvisionWorkload(opt, net.ptr(), forward);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
