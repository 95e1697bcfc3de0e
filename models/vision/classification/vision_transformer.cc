#include "models/vision/classification/vision_transformer.h"

#include <torch/torch.h>

#include <cmath>
#include <string>

namespace torchgauge::models {
namespace {

// timm's trunc_normal_(std, a=-2, b=2) (inverse-CDF sampling, as
// timm.layers.weight_init does it), mean 0.
void TruncNormal(torch::Tensor t, double std) {
  auto norm_cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
  const double l = norm_cdf(-2.0 / std), u = norm_cdf(2.0 / std);
  t.uniform_(2 * l - 1, 2 * u - 1);
  t.erfinv_();
  t.mul_(std * std::sqrt(2.0));
  t.clamp_(-2.0, 2.0);
}

// Multi-head self-attention laid out like torch.nn.MultiheadAttention (one
// packed in_proj for q, k, v and an out_proj Linear) so that the state dict
// matches torchvision's; the attention itself is the fused scaled-dot-product
// kernel, as timm's Attention uses.
struct SelfAttentionImpl : torch::nn::Module {
  SelfAttentionImpl(int64_t dim, int64_t heads) : num_heads(heads) {
    TORCH_CHECK(dim % heads == 0, "ViT: hidden_dim ", dim, " not divisible by num_heads ", heads);
    in_proj_weight = register_parameter("in_proj_weight", torch::empty({3 * dim, dim}));
    in_proj_bias = register_parameter("in_proj_bias", torch::zeros({3 * dim}));
    out_proj = register_module("out_proj", torch::nn::Linear(dim, dim));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    const int64_t b = x.size(0), n = x.size(1), d = x.size(2);
    auto qkv = torch::nn::functional::linear(x, in_proj_weight, in_proj_bias)
                   .view({b, n, 3, num_heads, d / num_heads})
                   .permute({2, 0, 3, 1, 4});
    auto out = torch::scaled_dot_product_attention(qkv[0], qkv[1], qkv[2]);
    return out_proj(out.transpose(1, 2).reshape({b, n, d}));
  }

  int64_t num_heads;
  torch::Tensor in_proj_weight, in_proj_bias;
  torch::nn::Linear out_proj{nullptr};
};
TORCH_MODULE(SelfAttention);

torch::nn::LayerNorm MakeLayerNorm(int64_t dim) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(1e-6));
}

// Pre-norm transformer block: x + attn(ln_1(x)), then y + mlp(ln_2(y)).
// torchvision's MLPBlock is Sequential(Linear, GELU, Dropout, Linear,
// Dropout), hence the parameter indices 0 and 3.
struct EncoderBlockImpl : torch::nn::Module {
  EncoderBlockImpl(const VitConfig& c)
      : ln_1(register_module("ln_1", MakeLayerNorm(c.hidden_dim))),
        self_attention(register_module("self_attention", SelfAttention(c.hidden_dim, c.num_heads))),
        ln_2(register_module("ln_2", MakeLayerNorm(c.hidden_dim))),
        mlp(register_module("mlp",
                            torch::nn::Sequential(torch::nn::Linear(c.hidden_dim, c.mlp_dim), torch::nn::GELU(),
                                                  torch::nn::Dropout(0.0), torch::nn::Linear(c.mlp_dim, c.hidden_dim),
                                                  torch::nn::Dropout(0.0)))) {}

  torch::Tensor forward(const torch::Tensor& input) {
    auto x = self_attention(ln_1(input)) + input;
    return x + mlp->forward(ln_2(x));
  }

  torch::nn::LayerNorm ln_1;
  SelfAttention self_attention;
  torch::nn::LayerNorm ln_2;
  torch::nn::Sequential mlp;
};
TORCH_MODULE(EncoderBlock);

struct EncoderImpl : torch::nn::Module {
  EncoderImpl(const VitConfig& c, int64_t seq_length) {
    pos_embedding = register_parameter("pos_embedding", torch::randn({1, seq_length, c.hidden_dim}) * 0.02);
    layers = register_module("layers", torch::nn::ModuleDict());
    for (int64_t i = 0; i < c.num_layers; ++i) {
      auto block = EncoderBlock(c);
      layers->update({{"encoder_layer_" + std::to_string(i), block.ptr()}});
      blocks.push_back(block);
    }
    ln = register_module("ln", MakeLayerNorm(c.hidden_dim));
  }

  torch::Tensor forward(torch::Tensor x) {
    x = x + pos_embedding;
    for (auto& block : blocks) x = block(x);
    return ln(x);
  }

  torch::Tensor pos_embedding;
  torch::nn::ModuleDict layers{nullptr};
  std::vector<EncoderBlock> blocks;
  torch::nn::LayerNorm ln{nullptr};
};
TORCH_MODULE(Encoder);

struct VisionTransformerImpl : torch::nn::Module {
  explicit VisionTransformerImpl(const VitConfig& c) : config(c) {
    TORCH_CHECK(c.image_size % c.patch_size == 0, "ViT: image_size must be a multiple of patch_size");
    const int64_t patches = (c.image_size / c.patch_size) * (c.image_size / c.patch_size);
    conv_proj = register_module(
        "conv_proj", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, c.hidden_dim, c.patch_size).stride(c.patch_size)));
    class_token = register_parameter("class_token", torch::zeros({1, 1, c.hidden_dim}));
    encoder = register_module("encoder", Encoder(c, patches + 1));
    heads = register_module("heads", torch::nn::ModuleDict());
    head = torch::nn::Linear(c.hidden_dim, c.num_classes);
    heads->update({{"head", head.ptr()}});

    // timm's VisionTransformer.init_weights (mode ""): pos_embed
    // trunc_normal(0.02), cls_token normal(1e-6), every Linear (the packed
    // qkv included) trunc_normal(0.02) with zero bias; the patch conv and
    // LayerNorms keep PyTorch's defaults.
    torch::NoGradGuard no_grad;
    TruncNormal(encoder->pos_embedding, 0.02);
    class_token.normal_(0.0, 1e-6);
    for (auto& m : modules(/*include_self=*/false)) {
      if (auto* attn = m->as<SelfAttentionImpl>()) {
        TruncNormal(attn->in_proj_weight, 0.02);
        attn->in_proj_bias.zero_();
      } else if (auto* lin = m->as<torch::nn::Linear>()) {
        TruncNormal(lin->weight, 0.02);
        lin->bias.zero_();
      }
    }
  }

  torch::Tensor forward(const torch::Tensor& images) {
    TORCH_CHECK(images.dim() == 4 && images.size(1) == 3 && images.size(2) == config.image_size &&
                    images.size(3) == config.image_size,
                "ViT expects N x 3 x ", config.image_size, " x ", config.image_size, " images, got ", images.sizes());
    auto x = conv_proj(images).flatten(2).transpose(1, 2);
    x = torch::cat({class_token.expand({x.size(0), -1, -1}), x}, 1);
    x = encoder(x);
    return head(x.select(1, 0));
  }

  VitConfig config;
  torch::nn::Conv2d conv_proj{nullptr};
  torch::Tensor class_token;
  Encoder encoder{nullptr};
  torch::nn::ModuleDict heads{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(VisionTransformer);

class VitWorkload : public LossWorkload {
 public:
  VitWorkload(const WorkloadOptions& opt, const VitConfig& config) : config_(config), net_(config) {
    TORCH_CHECK(opt.batch_size >= 1, "batch size must be positive");
    net_->to(opt.device);
    auto f = torch::TensorOptions(opt.device);
    inputs_["images"] = torch::randn({opt.batch_size, 3, config.image_size, config.image_size}, f);
    inputs_["target"] = torch::randint(0, config.num_classes, {opt.batch_size}, f.dtype(torch::kLong));
    samples_per_step_ = opt.batch_size;

    // TorchBench's TimmConfig: timm create_optimizer(opt="sgd", lr=1e-4,
    // momentum=0.9, weight_decay=1e-4). timm maps "sgd" to Nesterov SGD and
    // exempts biases, 1-d parameters and the model's no_weight_decay set
    // (position embedding, class token) from weight decay.
    std::vector<torch::Tensor> decay, no_decay;
    for (const auto& p : net_->named_parameters()) {
      const auto& name = p.key();
      bool exempt = p.value().dim() <= 1 || (name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0) ||
                    name == "class_token" || name == "encoder.pos_embedding";
      (exempt ? no_decay : decay).push_back(p.value());
    }
    auto options = [](double wd) {
      return std::make_unique<torch::optim::SGDOptions>(
          torch::optim::SGDOptions(1e-4).momentum(0.9).nesterov(true).weight_decay(wd));
    };
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(no_decay, options(0.0));
    groups.emplace_back(decay, options(1e-4));
    optimizer_ = std::make_unique<torch::optim::SGD>(groups, torch::optim::SGDOptions(1e-4));
  }

  torch::nn::Module& net() override { return *net_; }
  torch::Tensor Forward() override { return net_->forward(inputs_["images"]); }

  std::optional<double> AnalyticFlops(Mode mode) const override {
    const double h = config_.hidden_dim, mlp = config_.mlp_dim;
    const double patches = std::pow(config_.image_size / config_.patch_size, 2), n = patches + 1;
    const double patch_macs = patches * 3.0 * config_.patch_size * config_.patch_size * h;
    // Per layer: qkv and output projections, q.k^T and attn.v, and the MLP.
    const double layer_macs = n * (4 * h * h + 2 * h * mlp) + 2 * n * n * h;
    const double macs = patch_macs + config_.num_layers * layer_macs + h * config_.num_classes;
    const double forward = 2.0 * macs * samples_per_step_;
    return mode == Mode::kTrain ? 3.0 * forward : forward;
  }

 private:
  torch::Tensor Loss(const torch::Tensor& logits) override {
    return torch::nn::functional::cross_entropy(logits, inputs_.at("target"));
  }

  VitConfig config_;
  VisionTransformer net_;
};

}  // namespace

VitConfig VitSmallPatch16Config() { return VitConfig{}; }

VitConfig VitBasePatch16Config() {
  VitConfig c;
  c.num_heads = 12;
  c.hidden_dim = 768;
  c.mlp_dim = 3072;
  return c;
}

VitConfig VitGiantPatch14Config() {
  VitConfig c;
  c.patch_size = 14;
  c.num_layers = 40;
  c.num_heads = 16;
  c.hidden_dim = 1408;
  c.mlp_dim = 6144;  // timm: int(1408 * 48 / 11)
  return c;
}

std::shared_ptr<torch::nn::Module> MakeVisionTransformer(const VitConfig& config) {
  return std::make_shared<VisionTransformerImpl>(config);
}

std::unique_ptr<Workload> MakeVisionTransformerWorkload(const WorkloadOptions& opt, const VitConfig& config) {
  return std::make_unique<VitWorkload>(opt, config);
}

void AddVisionTransformerModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "timm_vision_transformer";
  info.paper_name = "timm_vision_transformer";
  info.domain = Domain::kVision;
  info.task = "image classification";
  info.reference =
      "timm vit_small_patch16_224 (as TorchBench builds it); parity against torchvision "
      "VisionTransformer with ViT-S/16 hyperparameters (same architecture)";
  // torchbenchmark/models/timm_vision_transformer/__init__.py:
  // DEFAULT_TRAIN_BSIZE = 32, DEFAULT_EVAL_BSIZE = 32.
  info.default_batch = {32, 32};
  // The CPU suite's sizes (the full suite on a CPU device): ViT-S/16 is about 4.6 GFLOPs
  // an image forward: 8/8.
  info.cpu_batch = BatchSizes{8, 8};
  info.smoke_batch = {1, 1};
  info.create = [](const WorkloadOptions& opt) { return MakeVisionTransformerWorkload(opt, VitSmallPatch16Config()); };
  out.push_back(std::move(info));

  ModelInfo large;
  large.id = "timm_vision_transformer_large";
  large.paper_name = "timm_vision_transformer_large";
  large.domain = Domain::kVision;
  large.task = "image classification";
  large.reference =
      "timm vit_giant_patch14_224 (as TorchBench builds it); parity against torchvision VisionTransformer with "
      "ViT-g/14 hyperparameters and fewer layers, itself checked against timm's model with the same weights";
  // torchbenchmark/models/timm_vision_transformer_large/__init__.py:
  // DEFAULT_TRAIN_BSIZE = 32, DEFAULT_EVAL_BSIZE = 32.
  large.default_batch = {32, 32};
  // About 1.5 TFLOP per training image: even batch 1 takes far more than 2 s
  // on a CPU.
  large.cpu_batch = BatchSizes{1, 1};
  large.smoke_batch = {1, 1};
  large.create = [](const WorkloadOptions& opt) { return MakeVisionTransformerWorkload(opt, VitGiantPatch14Config()); };
  out.push_back(std::move(large));
}

}  // namespace torchgauge::models
