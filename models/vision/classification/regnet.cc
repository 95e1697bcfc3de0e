#include "models/vision/classification/regnet.h"

#include <torch/torch.h>

#include <cmath>
#include <string>

#include "models/vision/classification/timm_harness.h"

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

// timm ConvNormAct: "conv" (no bias, "same" padding for odd kernels) and "bn";
// the activation is applied by the caller.
struct ConvBnImpl : nn::Module {
  ConvBnImpl(int64_t in, int64_t out, int64_t k, int64_t stride = 1, int64_t groups = 1)
      : conv(register_module(
            "conv",
            nn::Conv2d(nn::Conv2dOptions(in, out, k).stride(stride).padding((k - 1) / 2).groups(groups).bias(false)))),
        bn(register_module("bn", nn::BatchNorm2d(nn::BatchNormOptions(out).eps(1e-5).momentum(0.1)))) {}
  torch::Tensor forward(const torch::Tensor& x) { return bn(conv(x)); }
  nn::Conv2d conv;
  nn::BatchNorm2d bn;
};
TORCH_MODULE(ConvBn);

// timm SEModule (no BN in between): mean, fc1, ReLU, fc2, sigmoid gate.
struct SEModuleImpl : nn::Module {
  SEModuleImpl(int64_t channels, int64_t reduced)
      : fc1(register_module("fc1", nn::Conv2d(nn::Conv2dOptions(channels, reduced, 1)))),
        fc2(register_module("fc2", nn::Conv2d(nn::Conv2dOptions(reduced, channels, 1)))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto s = fc2(torch::relu(fc1(x.mean({2, 3}, /*keepdim=*/true))));
    return x * torch::sigmoid(s);
  }
  nn::Conv2d fc1, fc2;
};
TORCH_MODULE(SEModule);

// RegNet Y block (timm regnet.Bottleneck with bottle_ratio 1 and se_ratio 0.25).
struct YBlockImpl : nn::Module {
  YBlockImpl(int64_t in, int64_t out, int64_t stride, int64_t group_width) {
    TORCH_CHECK(out % group_width == 0, "timm_regnet: width ", out, " not a multiple of group width ", group_width);
    conv1 = register_module("conv1", ConvBn(in, out, 1));
    conv2 = register_module("conv2", ConvBn(out, out, 3, stride, out / group_width));
    se = register_module("se", SEModule(out, static_cast<int64_t>(std::round(in * 0.25))));
    conv3 = register_module("conv3", ConvBn(out, out, 1));
    if (stride != 1 || in != out) downsample = register_module("downsample", ConvBn(in, out, 1, stride));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto y = torch::relu(conv1(x));
    y = torch::relu(conv2(y));
    y = conv3(se(y));
    return torch::relu(y + (downsample ? downsample(x) : x));
  }
  ConvBn conv1{nullptr}, conv2{nullptr}, conv3{nullptr}, downsample{nullptr};
  SEModule se{nullptr};
};
TORCH_MODULE(YBlock);

struct RegNetImpl : nn::Module {
  RegNetImpl() {
    // regnety_120 (timm): widths, depths; group width 112, stem 32.
    const std::vector<int64_t> widths = {224, 448, 896, 2240}, depths = {2, 5, 11, 1};
    const int64_t group_width = 112;
    stem = register_module("stem", ConvBn(3, 32, 3, 2));
    int64_t in = 32;
    for (size_t s = 0; s < widths.size(); ++s) {
      auto stage = register_module(std::string("s").append(std::to_string(s + 1)), std::make_shared<nn::Module>());
      for (int64_t b = 0; b < depths[s]; ++b) {
        auto block = YBlock(in, widths[s], b == 0 ? 2 : 1, group_width);
        stage->register_module(std::string("b").append(std::to_string(b + 1)), block);
        blocks.push_back(block);
        in = widths[s];
      }
    }
    head = register_module("head", std::make_shared<nn::Module>());
    fc = head->register_module("fc", nn::Linear(in, 1000));

    // timm regnet _init_weights with zero_init_last.
    torch::NoGradGuard no_grad;
    for (auto& m : modules(/*include_self=*/false)) {
      if (auto* conv = m->as<nn::Conv2d>()) {
        const auto& o = conv->options;
        const double fan_out =
            static_cast<double>(o.kernel_size()->at(0) * o.kernel_size()->at(1) * o.out_channels() / o.groups());
        conv->weight.normal_(0.0, std::sqrt(2.0 / fan_out));
        if (conv->bias.defined()) conv->bias.zero_();
      } else if (auto* lin = m->as<nn::Linear>()) {
        lin->weight.normal_(0.0, 0.01);
        lin->bias.zero_();
      }
    }
    for (auto& b : blocks) b->conv3->bn->weight.zero_();
  }

  torch::Tensor forward(const torch::Tensor& images) {
    TORCH_CHECK(images.dim() == 4 && images.size(1) == 3, "timm_regnet expects N x 3 x H x W images, got ",
                images.sizes());
    auto x = torch::relu(stem(images));
    for (auto& b : blocks) x = b(x);
    return fc(x.mean({2, 3}));
  }

  ConvBn stem{nullptr};
  std::vector<YBlock> blocks;
  std::shared_ptr<nn::Module> head;
  nn::Linear fc{nullptr};
};

}  // namespace

void AddRegNetModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "timm_regnet";
  info.paper_name = "timm_regnet";
  info.domain = Domain::kVision;
  info.task = "image classification";
  info.reference = "timm 1.0.31 regnety_120 (timm.create_model, pretrained=False), as TorchBench builds it";
  // torchbenchmark/models/timm_regnet/__init__.py:
  // DEFAULT_TRAIN_BSIZE = 32, DEFAULT_EVAL_BSIZE = 32.
  info.default_batch = {32, 32};
  info.cpu_batch = BatchSizes{2, 4};
  info.smoke_batch = {2, 2};
  info.create = [](const WorkloadOptions& opt) {
    auto net = std::make_shared<RegNetImpl>();
    return MakeTimmWorkload(opt, net, [net](const torch::Tensor& x) { return net->forward(x); });
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
