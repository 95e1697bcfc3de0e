#include "models/vision/classification/efficientnet.h"

#include <torch/torch.h>

#include <cmath>
#include <string>

#include "models/vision/classification/timm_harness.h"

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

nn::Conv2d Conv(int64_t in, int64_t out, int64_t k, int64_t stride = 1, int64_t groups = 1, bool bias = false) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, k).stride(stride).padding((k - 1) / 2).groups(groups).bias(bias));
}

nn::BatchNorm2d Bn(int64_t c) { return nn::BatchNorm2d(nn::BatchNormOptions(c).eps(1e-5).momentum(0.1)); }

// timm's drop_path (stochastic depth) on a residual branch: a per-sample
// keep mask drawn as x.new_empty((N, 1, 1, 1)).bernoulli_(keep), scaled by
// 1 / keep. Identity in eval mode or at rate 0.
torch::Tensor DropPath(const torch::Tensor& x, double rate, bool training) {
  if (rate == 0.0 || !training) return x;
  const double keep = 1.0 - rate;
  auto mask = x.new_empty({x.size(0), 1, 1, 1}).bernoulli_(keep);
  if (keep > 0.0) mask.div_(keep);
  return x * mask;
}

// Squeeze-excite as timm's efficientnet blocks have it: global mean, 1x1
// reduce conv, SiLU, 1x1 expand conv, sigmoid gate.
struct SqueezeExciteImpl : nn::Module {
  SqueezeExciteImpl(int64_t channels, int64_t reduced)
      : conv_reduce(register_module("conv_reduce", Conv(channels, reduced, 1, 1, 1, true))),
        conv_expand(register_module("conv_expand", Conv(reduced, channels, 1, 1, 1, true))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto s = x.mean({2, 3}, /*keepdim=*/true);
    s = conv_expand(torch::silu(conv_reduce(s)));
    return x * torch::sigmoid(s);
  }
  nn::Conv2d conv_reduce, conv_expand;
};
TORCH_MODULE(SqueezeExcite);

struct BlockArgs {
  bool depthwise_separable;  // "ds" block (stage 0) or "ir" (inverted residual)
  int64_t in, out, kernel, stride, expand;
  double drop_path;
};

// Base class so that a stage can hold both block kinds.
struct MbBlock : nn::Module {
  virtual torch::Tensor forward(const torch::Tensor& x) = 0;
};

// timm DepthwiseSeparableConv: dw conv, BN+SiLU, SE, pw conv, BN.
struct DepthwiseSeparableImpl : MbBlock {
  explicit DepthwiseSeparableImpl(const BlockArgs& a)
      : has_skip(a.stride == 1 && a.in == a.out), drop_path(a.drop_path) {
    conv_dw = register_module("conv_dw", Conv(a.in, a.in, a.kernel, a.stride, a.in));
    bn1 = register_module("bn1", Bn(a.in));
    se = register_module("se", SqueezeExcite(a.in, static_cast<int64_t>(std::round(a.in * 0.25))));
    conv_pw = register_module("conv_pw", Conv(a.in, a.out, 1));
    bn2 = register_module("bn2", Bn(a.out));
  }
  torch::Tensor forward(const torch::Tensor& x) override {
    auto y = torch::silu(bn1(conv_dw(x)));
    y = bn2(conv_pw(se(y)));
    return has_skip ? DropPath(y, drop_path, is_training()) + x : y;
  }
  bool has_skip;
  double drop_path;
  nn::Conv2d conv_dw{nullptr}, conv_pw{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  SqueezeExcite se{nullptr};
};

// timm InvertedResidual (MBConv): pw expand, BN+SiLU, dw conv, BN+SiLU, SE,
// pw linear projection, BN, residual with drop path.
struct InvertedResidualImpl : MbBlock {
  explicit InvertedResidualImpl(const BlockArgs& a) : has_skip(a.stride == 1 && a.in == a.out), drop_path(a.drop_path) {
    const int64_t mid = a.in * a.expand;
    conv_pw = register_module("conv_pw", Conv(a.in, mid, 1));
    bn1 = register_module("bn1", Bn(mid));
    conv_dw = register_module("conv_dw", Conv(mid, mid, a.kernel, a.stride, mid));
    bn2 = register_module("bn2", Bn(mid));
    se = register_module("se", SqueezeExcite(mid, static_cast<int64_t>(std::round(a.in * 0.25))));
    conv_pwl = register_module("conv_pwl", Conv(mid, a.out, 1));
    bn3 = register_module("bn3", Bn(a.out));
  }
  torch::Tensor forward(const torch::Tensor& x) override {
    auto y = torch::silu(bn1(conv_pw(x)));
    y = torch::silu(bn2(conv_dw(y)));
    y = bn3(conv_pwl(se(y)));
    return has_skip ? DropPath(y, drop_path, is_training()) + x : y;
  }
  bool has_skip;
  double drop_path;
  nn::Conv2d conv_pw{nullptr}, conv_dw{nullptr}, conv_pwl{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  SqueezeExcite se{nullptr};
};

struct EfficientNetImpl : nn::Module {
  explicit EfficientNetImpl(const EfficientNetConfig& c) {
    TORCH_CHECK(c.drop_path_rate >= 0.0 && c.drop_path_rate < 1.0,
                "timm_efficientnet: drop_path_rate must be in [0, 1)");
    TORCH_CHECK(c.num_classes > 0, "timm_efficientnet: num_classes must be positive");
    // kind (ds = true), repeats, kernel, stride, expansion, output channels.
    struct Stage {
      bool ds;
      int64_t repeats, kernel, stride, expand, out;
    };
    const std::vector<Stage> stages = {{true, 1, 3, 1, 1, 16},  {false, 2, 3, 2, 6, 24},  {false, 2, 5, 2, 6, 40},
                                       {false, 3, 3, 2, 6, 80}, {false, 3, 5, 1, 6, 112}, {false, 4, 5, 2, 6, 192},
                                       {false, 1, 3, 1, 6, 320}};
    int64_t total = 0;
    for (const auto& s : stages) total += s.repeats;

    conv_stem = register_module("conv_stem", Conv(3, 32, 3, 2));
    bn1 = register_module("bn1", Bn(32));
    blocks = register_module("blocks", nn::ModuleList());
    int64_t in = 32, index = 0;
    for (const auto& s : stages) {
      nn::ModuleList stage;
      for (int64_t r = 0; r < s.repeats; ++r, ++index) {
        BlockArgs a{s.ds,
                    in,
                    s.out,
                    s.kernel,
                    r == 0 ? s.stride : 1,
                    s.expand,
                    c.drop_path_rate * static_cast<double>(index) / static_cast<double>(total)};
        std::shared_ptr<MbBlock> block;
        if (s.ds) {
          block = std::make_shared<DepthwiseSeparableImpl>(a);
        } else {
          block = std::make_shared<InvertedResidualImpl>(a);
        }
        stage->push_back(block);
        sequence.push_back(block);
        in = s.out;
      }
      blocks->push_back(stage);
    }
    conv_head = register_module("conv_head", Conv(in, 1280, 1));
    bn2 = register_module("bn2", Bn(1280));
    classifier = register_module("classifier", nn::Linear(1280, c.num_classes));

    // timm _init_weight_goog.
    torch::NoGradGuard no_grad;
    for (auto& m : modules(/*include_self=*/false)) {
      if (auto* conv = m->as<nn::Conv2d>()) {
        const auto& o = conv->options;
        const double fan_out =
            static_cast<double>(o.kernel_size()->at(0) * o.kernel_size()->at(1) * o.out_channels() / o.groups());
        conv->weight.normal_(0.0, std::sqrt(2.0 / fan_out));
        if (conv->bias.defined()) conv->bias.zero_();
      } else if (auto* bn = m->as<nn::BatchNorm2d>()) {
        bn->weight.fill_(1.0);
        bn->bias.zero_();
      } else if (auto* fc = m->as<nn::Linear>()) {
        const double range = 1.0 / std::sqrt(static_cast<double>(fc->weight.size(0)));
        fc->weight.uniform_(-range, range);
        fc->bias.zero_();
      }
    }
  }

  torch::Tensor forward(const torch::Tensor& images) {
    TORCH_CHECK(images.dim() == 4 && images.size(1) == 3, "timm_efficientnet expects N x 3 x H x W images, got ",
                images.sizes());
    auto x = torch::silu(bn1(conv_stem(images)));
    for (auto& block : sequence) x = block->forward(x);
    x = torch::silu(bn2(conv_head(x)));
    return classifier(x.mean({2, 3}));
  }

  nn::Conv2d conv_stem{nullptr}, conv_head{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  nn::ModuleList blocks{nullptr};
  std::vector<std::shared_ptr<MbBlock>> sequence;
  nn::Linear classifier{nullptr};
};
TORCH_MODULE(EfficientNet);

}  // namespace

std::unique_ptr<Workload> MakeEfficientNetWorkload(const WorkloadOptions& opt, const EfficientNetConfig& config) {
  auto net = std::make_shared<EfficientNetImpl>(config);
  return MakeTimmWorkload(opt, net, [net](const torch::Tensor& x) { return net->forward(x); });
}

void AddEfficientNetModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "timm_efficientnet";
  info.paper_name = "timm_efficientnet";
  info.domain = Domain::kVision;
  info.task = "image classification";
  info.reference = "timm 1.0.31 efficientnet_b0 (timm.create_model, pretrained=False), as TorchBench builds it";
  // torchbenchmark/models/timm_efficientnet/__init__.py:
  // DEFAULT_TRAIN_BSIZE = 32, DEFAULT_EVAL_BSIZE = 64.
  info.default_batch = {32, 64};
  info.cpu_batch = BatchSizes{8, 16};
  info.smoke_batch = {2, 2};
  info.create = [](const WorkloadOptions& opt) { return MakeEfficientNetWorkload(opt, EfficientNetConfig{}); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
