#include "models/vision/classification/vovnet.h"

#include <torch/torch.h>

#include <string>

#include "models/vision/classification/timm_harness.h"

namespace torchgauge::models {
namespace {

namespace nn = torch::nn;

// timm ConvNormAct with ReLU: "conv" and "bn", ReLU applied in forward.
struct ConvBnReluImpl : nn::Module {
  ConvBnReluImpl(int64_t in, int64_t out, int64_t k, int64_t stride = 1)
      : conv(register_module("conv",
                             nn::Conv2d(nn::Conv2dOptions(in, out, k).stride(stride).padding(k / 2).bias(false)))),
        bn(register_module("bn", nn::BatchNorm2d(nn::BatchNormOptions(out)))) {}
  torch::Tensor forward(const torch::Tensor& x) { return torch::relu(bn(conv(x))); }
  nn::Conv2d conv;
  nn::BatchNorm2d bn;
};
TORCH_MODULE(ConvBnRelu);

// One-shot aggregation: a chain of 3x3 convs whose outputs (and the block
// input) are concatenated once and aggregated by a 1x1 conv.
struct OsaBlockImpl : nn::Module {
  OsaBlockImpl(int64_t in, int64_t mid, int64_t out, int64_t layers) {
    conv_mid = register_module("conv_mid", nn::ModuleList());
    int64_t c = in;
    for (int64_t i = 0; i < layers; ++i) {
      auto layer = ConvBnRelu(c, mid, 3);
      conv_mid->push_back(layer);
      chain.push_back(layer);
      c = mid;
    }
    conv_concat = register_module("conv_concat", ConvBnRelu(in + layers * mid, out, 1));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    std::vector<torch::Tensor> outputs{x};
    for (auto& layer : chain) outputs.push_back(layer(outputs.back()));
    return conv_concat(torch::cat(outputs, 1));
  }
  nn::ModuleList conv_mid{nullptr};
  std::vector<ConvBnRelu> chain;
  ConvBnRelu conv_concat{nullptr};
};
TORCH_MODULE(OsaBlock);

struct VovNetImpl : nn::Module {
  VovNetImpl() {
    stem = register_module(
        "stem", nn::ModuleList(ConvBnRelu(3, 64, 3, 2), ConvBnRelu(64, 64, 3, 1), ConvBnRelu(64, 128, 3, 2)));
    const int64_t conv_chs[] = {128, 160, 192, 224}, out_chs[] = {256, 512, 768, 1024}, blocks_per[] = {1, 1, 2, 2};
    stages = register_module("stages", nn::ModuleList());
    int64_t in = 128;
    for (int s = 0; s < 4; ++s) {
      auto stage = std::make_shared<nn::Module>();
      auto blocks = stage->register_module("blocks", nn::ModuleList());
      std::vector<OsaBlock> list;
      for (int64_t b = 0; b < blocks_per[s]; ++b) {
        auto block = OsaBlock(in, conv_chs[s], out_chs[s], 5);
        blocks->push_back(block);
        list.push_back(block);
        in = out_chs[s];
      }
      stages->push_back(stage);
      stage_blocks.push_back(std::move(list));
    }
    head = register_module("head", std::make_shared<nn::Module>());
    fc = head->register_module("fc", nn::Linear(in, 1000));

    torch::NoGradGuard no_grad;
    for (auto& m : modules(/*include_self=*/false)) {
      if (auto* conv = m->as<nn::Conv2d>()) nn::init::kaiming_normal_(conv->weight, 0, torch::kFanOut, torch::kReLU);
    }
    fc->bias.zero_();
  }

  torch::Tensor forward(const torch::Tensor& images) {
    TORCH_CHECK(images.dim() == 4 && images.size(1) == 3, "timm_vovnet expects N x 3 x H x W images, got ",
                images.sizes());
    auto x = images;
    for (const auto& m : *stem) x = m->as<ConvBnReluImpl>()->forward(x);
    for (size_t s = 0; s < stage_blocks.size(); ++s) {
      if (s > 0) x = torch::max_pool2d(x, 3, 2, 0, 1, /*ceil_mode=*/true);
      for (auto& b : stage_blocks[s]) x = b(x);
    }
    return fc(x.mean({2, 3}));
  }

  nn::ModuleList stem{nullptr}, stages{nullptr};
  std::vector<std::vector<OsaBlock>> stage_blocks;
  std::shared_ptr<nn::Module> head;
  nn::Linear fc{nullptr};
};

}  // namespace

void AddVovNetModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "timm_vovnet";
  info.paper_name = "timm_vovnet";
  info.domain = Domain::kVision;
  // TorchBench files it as COMPUTER_VISION.DETECTION (a detection backbone);
  // the timm model is the ImageNet classifier.
  info.task = "image classification (detection backbone)";
  info.reference = "timm 1.0.31 vovnet39a (timm.create_model, pretrained=False), as TorchBench builds it";
  // torchbenchmark/models/timm_vovnet/__init__.py:
  // DEFAULT_TRAIN_BSIZE = 32, DEFAULT_EVAL_BSIZE = 32.
  info.default_batch = {32, 32};
  info.cpu_batch = BatchSizes{2, 4};
  info.smoke_batch = {2, 2};
  info.create = [](const WorkloadOptions& opt) {
    auto net = std::make_shared<VovNetImpl>();
    return MakeTimmWorkload(opt, net, [net](const torch::Tensor& x) { return net->forward(x); });
  };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
