#include "models/vision/classification/efficientnet.h"

#include <torch/torch.h>

#include <cmath>
#include <string>

#include "models/vision/classification/efficientnet_blocks.h"
#include "models/vision/classification/timm_harness.h"

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

nn::Conv2d Conv(int64_t in, int64_t out, int64_t k, int64_t stride = 1, int64_t groups = 1, bool bias = false) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, k).stride(stride).padding((k - 1) / 2).groups(groups).bias(bias));
}

nn::BatchNorm2d Bn(int64_t c) { return nn::BatchNorm2d(nn::BatchNormOptions(c).eps(1e-5).momentum(0.1)); }

// efficientnet_b0's layers (efficientnet_blocks.h): PyTorch's symmetric
// padding, BatchNorm eps 1e-5, SiLU.
struct TorchStyle {
  using ConvModule = nn::Conv2d;
  static nn::Conv2d MakeConv(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t groups, bool bias) {
    return Conv(in, out, k, stride, groups, bias);
  }
  static nn::BatchNorm2d MakeBn(int64_t c) { return Bn(c); }
  static torch::Tensor Act(const torch::Tensor& x) { return torch::silu(x); }
};

struct EfficientNetImpl : nn::Module {
  explicit EfficientNetImpl(const EfficientNetConfig& c) {
    TORCH_CHECK(c.drop_path_rate >= 0.0 && c.drop_path_rate < 1.0,
                "timm_efficientnet: drop_path_rate must be in [0, 1)");
    TORCH_CHECK(c.num_classes > 0, "timm_efficientnet: num_classes must be positive");
    conv_stem = register_module("conv_stem", Conv(3, 32, 3, 2));
    bn1 = register_module("bn1", Bn(32));
    blocks = register_module("blocks", nn::ModuleList());
    const auto stages = timm::EfficientNetStages(/*depth_multiplier=*/1.0);
    for (auto& stage : timm::BuildStages<TorchStyle>(stages, 32, c.drop_path_rate, blocks)) {
      sequence.insert(sequence.end(), stage.begin(), stage.end());
    }
    conv_head = register_module("conv_head", Conv(stages.back().out, 1280, 1));
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
  std::vector<std::shared_ptr<timm::MbBlock>> sequence;
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
