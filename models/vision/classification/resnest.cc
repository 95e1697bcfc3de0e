#include "models/vision/classification/resnest.h"

#include <torch/torch.h>

#include <string>

#include "models/vision/classification/timm_harness.h"

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

nn::Conv2d Conv(int64_t in, int64_t out, int64_t k, int64_t stride = 1, int64_t groups = 1, bool bias = false) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, k).stride(stride).padding(k / 2).groups(groups).bias(bias));
}
nn::BatchNorm2d Bn(int64_t c) { return nn::BatchNorm2d(nn::BatchNormOptions(c)); }

// timm make_divisible(v, divisor=8, min_value=32).
int64_t MakeDivisible(double v, int64_t divisor, int64_t min_value) {
  int64_t n = std::max(min_value, static_cast<int64_t>(v + divisor / 2.0) / divisor * divisor);
  if (static_cast<double>(n) < 0.9 * v) n += divisor;
  return n;
}

// timm SplitAttn with radix r, cardinality 1.
struct SplitAttnImpl : nn::Module {
  SplitAttnImpl(int64_t channels, int64_t radix_arg) : radix(radix_arg) {
    const int64_t mid = channels * radix_arg;
    const int64_t attn = MakeDivisible(channels * radix_arg * 0.25, 8, 32);
    conv = register_module("conv", Conv(channels, mid, 3, 1, radix_arg));
    bn0 = register_module("bn0", Bn(mid));
    fc1 = register_module("fc1", Conv(channels, attn, 1, 1, 1, true));
    bn1 = register_module("bn1", Bn(attn));
    fc2 = register_module("fc2", Conv(attn, mid, 1, 1, 1, true));
  }
  torch::Tensor forward(const torch::Tensor& input) {
    auto x = torch::relu(bn0(conv(input)));
    const int64_t b = x.size(0), rc = x.size(1), h = x.size(2), w = x.size(3);
    x = x.reshape({b, radix, rc / radix, h, w});
    auto gap = x.sum(1).mean({2, 3}, /*keepdim=*/true);
    gap = torch::relu(bn1(fc1(gap)));
    auto logits = fc2(gap);
    // RadixSoftmax (cardinality 1): softmax across the radix splits.
    auto attn = torch::softmax(logits.view({b, 1, radix, -1}).transpose(1, 2), 1).reshape({b, -1});
    auto out = (x * attn.reshape({b, radix, rc / radix, 1, 1})).sum(1);
    return out.contiguous();
  }
  int64_t radix;
  nn::Conv2d conv{nullptr}, fc1{nullptr}, fc2{nullptr};
  nn::BatchNorm2d bn0{nullptr}, bn1{nullptr};
};
TORCH_MODULE(SplitAttn);

struct ResNestBottleneckImpl : nn::Module {
  ResNestBottleneckImpl(int64_t in, int64_t planes, int64_t stride_arg) : stride(stride_arg) {
    conv1 = register_module("conv1", Conv(in, planes, 1));
    bn1 = register_module("bn1", Bn(planes));
    conv2 = register_module("conv2", SplitAttn(planes, 2));
    conv3 = register_module("conv3", Conv(planes, planes * 4, 1));
    bn3 = register_module("bn3", Bn(planes * 4));
    downsample = nn::Sequential();
    if (stride_arg == 1) {
      downsample->push_back(nn::Identity());
    } else {
      downsample->push_back(
          nn::AvgPool2d(nn::AvgPool2dOptions(2).stride(stride_arg).ceil_mode(true).count_include_pad(false)));
    }
    downsample->push_back(Conv(in, planes * 4, 1));
    downsample->push_back(Bn(planes * 4));
    register_module("downsample", downsample);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto out = torch::relu(bn1(conv1(x)));
    out = conv2(out);
    if (stride > 1) out = torch::avg_pool2d(out, 3, stride, 1);  // avd_last
    out = bn3(conv3(out));
    return torch::relu(out + downsample->forward(x));
  }
  int64_t stride;
  nn::Conv2d conv1{nullptr}, conv3{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn3{nullptr};
  SplitAttn conv2{nullptr};
  nn::Sequential downsample{nullptr};
};
TORCH_MODULE(ResNestBottleneck);

struct ResNestImpl : nn::Module {
  ResNestImpl() {
    conv1 = register_module("conv1", nn::Sequential(Conv(3, 32, 3, 2), Bn(32), nn::ReLU(), Conv(32, 32, 3), Bn(32),
                                                    nn::ReLU(), Conv(32, 64, 3)));
    bn1 = register_module("bn1", Bn(64));
    int64_t in = 64;
    const int64_t planes[] = {64, 128, 256, 512};
    for (int i = 0; i < 4; ++i) {
      auto layer = register_module("layer" + std::to_string(i + 1), nn::ModuleList());
      auto block = ResNestBottleneck(in, planes[i], i == 0 ? 1 : 2);
      layer->push_back(block);
      blocks.push_back(block);
      in = planes[i] * 4;
    }
    fc = register_module("fc", nn::Linear(in, 1000));

    // timm ResNet.init_weights(zero_init_last=True).
    torch::NoGradGuard no_grad;
    for (auto& m : modules(/*include_self=*/false)) {
      if (auto* conv = m->as<nn::Conv2d>()) nn::init::kaiming_normal_(conv->weight, 0, torch::kFanOut, torch::kReLU);
    }
    for (auto& b : blocks) b->bn3->weight.zero_();
  }

  torch::Tensor forward(const torch::Tensor& images) {
    TORCH_CHECK(images.dim() == 4 && images.size(1) == 3, "timm_resnest expects N x 3 x H x W images, got ",
                images.sizes());
    auto x = torch::relu(bn1(conv1->forward(images)));
    x = torch::max_pool2d(x, 3, 2, 1);
    for (auto& b : blocks) x = b(x);
    return fc(x.mean({2, 3}));
  }

  nn::Sequential conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  std::vector<ResNestBottleneck> blocks;
  nn::Linear fc{nullptr};
};

}  // namespace

void AddResNeStModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "timm_resnest";
  info.paper_name = "timm_resnest";
  info.domain = Domain::kVision;
  info.task = "image classification";
  info.reference = "timm 1.0.31 resnest14d (timm.create_model, pretrained=False), as TorchBench builds it";
  // torchbenchmark/models/timm_resnest/__init__.py:
  // DEFAULT_TRAIN_BSIZE = 32, DEFAULT_EVAL_BSIZE = 32.
  info.default_batch = {32, 32};
  info.cpu_batch = BatchSizes{8, 16};
  info.smoke_batch = {2, 2};
  info.create = [](const WorkloadOptions& opt) {
    auto net = std::make_shared<ResNestImpl>();
    return MakeTimmWorkload(opt, net, [net](const torch::Tensor& x) { return net->forward(x); });
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
