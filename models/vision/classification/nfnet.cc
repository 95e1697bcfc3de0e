#include "models/vision/classification/nfnet.h"

#include <torch/torch.h>

#include <cmath>
#include <string>

#include "models/vision/classification/timm_harness.h"

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

constexpr double kGeluGamma = 1.7015043497085571;  // timm _nonlin_gamma["gelu"]
constexpr double kAlpha = 0.2;
constexpr double kAttnGain = 2.0;

// GELU scaled by the NF gamma (timm GammaAct with gamma_in_act).
torch::Tensor GammaGelu(const torch::Tensor& x) { return torch::gelu(x).mul_(kGeluGamma); }

// timm ScaledStdConv2dSame: weight standardisation (per output channel, via
// batch_norm over the flattened weight, eps 1e-5) with gain * fan_in^-1/2,
// and TF SAME padding (static for stride 1, dynamic otherwise).
struct ScaledStdConv2dImpl : nn::Module {
  ScaledStdConv2dImpl(int64_t in, int64_t out, int64_t k, int64_t stride_arg = 1, int64_t groups_arg = 1)
      : out_channels(out), kernel(k), stride(stride_arg), groups(groups_arg) {
    weight = register_parameter("weight", torch::empty({out, in / groups_arg, k, k}));
    bias = register_parameter("bias", torch::zeros({out}));
    gain = register_parameter("gain", torch::ones({out, 1, 1, 1}));
    scale = 1.0 / std::sqrt(static_cast<double>(in / groups_arg * k * k));
    static_padding = stride_arg == 1 ? (k - 1) / 2 : 0;
    torch::NoGradGuard no_grad;
    nn::init::kaiming_normal_(weight, 0, torch::kFanIn, torch::kLinear);
  }
  torch::Tensor forward(torch::Tensor x) {
    if (stride != 1) {
      auto same = [&](int64_t size) {
        return std::max<int64_t>((size + stride - 1) / stride * stride - stride + kernel - size, 0);
      };
      const int64_t ph = same(x.size(2)), pw = same(x.size(3));
      x = torch::constant_pad_nd(x, {pw / 2, pw - pw / 2, ph / 2, ph - ph / 2}, 0);
    }
    auto w = torch::batch_norm(weight.reshape({1, out_channels, -1}), (gain * scale).view(-1), {}, {}, {},
                               /*training=*/true, /*momentum=*/0.0, /*eps=*/1e-5, /*cudnn_enabled=*/true)
                 .reshape_as(weight);
    return torch::conv2d(x, w, bias, stride, static_padding, 1, groups);
  }
  int64_t out_channels, kernel, stride, groups, static_padding;
  double scale;
  torch::Tensor weight, bias, gain;
};
TORCH_MODULE(ScaledStdConv2d);

// timm SEModule (rd_ratio 0.5, ReLU, sigmoid gate) with plain convs.
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

struct DownsampleAvgImpl : nn::Module {
  DownsampleAvgImpl(int64_t in, int64_t out, int64_t stride_arg)
      : stride(stride_arg), conv(register_module("conv", ScaledStdConv2d(in, out, 1))) {}
  torch::Tensor forward(torch::Tensor x) {
    if (stride > 1) x = torch::avg_pool2d(x, 2, stride, 0, /*ceil_mode=*/true, /*count_include_pad=*/false);
    return conv(x);
  }
  int64_t stride;
  ScaledStdConv2d conv;
};
TORCH_MODULE(DownsampleAvg);

// timm NormFreeBlock as dm_nfnet configures it (reg False, extra_conv,
// skipinit, attn_last SE).
struct NormFreeBlockImpl : nn::Module {
  NormFreeBlockImpl(int64_t in, int64_t out, int64_t stride, double beta_arg) : beta(beta_arg) {
    const int64_t group_width = 128;
    const int64_t groups = (out / 2) / group_width;
    const int64_t mid = groups * group_width;
    if (in != out || stride != 1) downsample = register_module("downsample", DownsampleAvg(in, out, stride));
    conv1 = register_module("conv1", ScaledStdConv2d(in, mid, 1));
    conv2 = register_module("conv2", ScaledStdConv2d(mid, mid, 3, stride, groups));
    conv2b = register_module("conv2b", ScaledStdConv2d(mid, mid, 3, 1, groups));
    conv3 = register_module("conv3", ScaledStdConv2d(mid, out, 1));
    attn_last = register_module("attn_last", SEModule(out, out / 2));
    skipinit_gain = register_parameter("skipinit_gain", torch::zeros({}));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto out = GammaGelu(x) * beta;
    auto shortcut = downsample ? downsample(out) : x;
    out = conv1(out);
    out = conv2(GammaGelu(out));
    out = conv2b(GammaGelu(out));
    out = conv3(GammaGelu(out));
    out = kAttnGain * attn_last(out);
    out = out * skipinit_gain;
    return out * kAlpha + shortcut;
  }
  double beta;
  DownsampleAvg downsample{nullptr};
  ScaledStdConv2d conv1{nullptr}, conv2{nullptr}, conv2b{nullptr}, conv3{nullptr};
  SEModule attn_last{nullptr};
  torch::Tensor skipinit_gain;
};
TORCH_MODULE(NormFreeBlock);

struct NfNetImpl : nn::Module {
  NfNetImpl() {
    stem = register_module("stem", std::make_shared<nn::Module>());
    stem_convs = {ScaledStdConv2d(3, 16, 3, 2), ScaledStdConv2d(16, 32, 3, 1), ScaledStdConv2d(32, 64, 3, 1),
                  ScaledStdConv2d(64, 128, 3, 2)};
    for (size_t i = 0; i < stem_convs.size(); ++i) stem->register_module("conv" + std::to_string(i + 1), stem_convs[i]);

    const int64_t depths[] = {1, 2, 6, 3}, widths[] = {256, 512, 1536, 1536};
    stages = register_module("stages", nn::ModuleList());
    int64_t in = 128;
    double expected_var = 1.0;
    for (int s = 0; s < 4; ++s) {
      auto stage = nn::ModuleList();
      for (int64_t b = 0; b < depths[s]; ++b) {
        const int64_t stride = (b == 0 && s > 0) ? 2 : 1;  // the quad stem already has stride 4
        auto block = NormFreeBlock(in, widths[s], stride, 1.0 / std::sqrt(expected_var));
        stage->push_back(block);
        blocks.push_back(block);
        if (b == 0) expected_var = 1.0;
        expected_var += kAlpha * kAlpha;
        in = widths[s];
      }
      stages->push_back(stage);
    }
    final_conv = register_module("final_conv", ScaledStdConv2d(in, 2 * in, 1));
    head = register_module("head", std::make_shared<nn::Module>());
    fc = head->register_module("fc", nn::Linear(2 * in, 1000));

    // timm NormFreeNet init: convs kaiming_normal(fan_in, linear) and zero
    // bias (the std convs did theirs on construction), head.fc normal(0, .01).
    torch::NoGradGuard no_grad;
    for (auto& m : modules(/*include_self=*/false)) {
      if (auto* conv = m->as<nn::Conv2d>()) {
        nn::init::kaiming_normal_(conv->weight, 0, torch::kFanIn, torch::kLinear);
        conv->bias.zero_();
      }
    }
    fc->weight.normal_(0.0, 0.01);
    fc->bias.zero_();
  }

  torch::Tensor forward(const torch::Tensor& images) {
    TORCH_CHECK(images.dim() == 4 && images.size(1) == 3, "timm_nfnet expects N x 3 x H x W images, got ",
                images.sizes());
    auto x = images;
    for (size_t i = 0; i < stem_convs.size(); ++i) {
      x = stem_convs[i](x);
      if (i + 1 < stem_convs.size()) x = GammaGelu(x);
    }
    for (auto& b : blocks) x = b(x);
    x = GammaGelu(final_conv(x));
    return fc(x.mean({2, 3}));
  }

  std::shared_ptr<nn::Module> stem, head;
  std::vector<ScaledStdConv2d> stem_convs;
  nn::ModuleList stages{nullptr};
  std::vector<NormFreeBlock> blocks;
  ScaledStdConv2d final_conv{nullptr};
  nn::Linear fc{nullptr};
};

}  // namespace

void AddNfNetModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "timm_nfnet";
  info.paper_name = "timm_nfnet";  // Table 1 of the paper misprints it "timm_nfnct"
  info.domain = Domain::kVision;
  info.task = "image classification";
  info.reference = "timm 1.0.31 dm_nfnet_f0 (timm.create_model, pretrained=False), as TorchBench builds it";
  // torchbenchmark/models/timm_nfnet/__init__.py:
  // DEFAULT_TRAIN_BSIZE = 128, DEFAULT_EVAL_BSIZE = 128.
  info.default_batch = {128, 128};
  info.cpu_batch = BatchSizes{2, 4};
  info.smoke_batch = {1, 1};
  info.create = [](const WorkloadOptions& opt) {
    auto net = std::make_shared<NfNetImpl>();
    TimmWorkloadConfig config;
    config.image_size = 192;       // dm_nfnet_f0 default_cfg input_size
    config.smoke_image_size = 32;  // stride 32: a 1 x 1 final map (a step is dominated by the 71 M weights anyway)
    return MakeTimmWorkload(
        opt, net, [net](const torch::Tensor& x) { return net->forward(x); }, config);
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
