#include "models/vision/generation/stable_diffusion_unet.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

namespace torchgauge::models {

SdUnetConfig StableDiffusion2UnetConfig() {
  // stabilityai/stable-diffusion-2 unet/config.json: in/out channels 4,
  // sample_size 96, down CrossAttnDownBlock2D x3 + DownBlock2D, up UpBlock2D +
  // CrossAttnUpBlock2D x3, block_out_channels (320, 640, 1280, 1280),
  // layers_per_block 2, attention_head_dim (5, 10, 20, 20), cross_attention_dim
  // 1024, use_linear_projection, norm_num_groups 32, norm_eps 1e-5, act silu,
  // flip_sin_to_cos, freq_shift 0, downsample_padding 1, mid_block_scale_factor 1.
  return SdUnetConfig{};
}

SdUnetConfig StableDiffusionUnetSmokeConfig() {
  SdUnetConfig c;
  c.sample_size = 32;
  c.cross_attention = {true, false};
  c.block_out_channels = {32, 64};
  c.layers_per_block = 1;
  c.attention_head_dim = {2, 4};
  c.transformer_layers_per_block = {1, 1};
  c.cross_attention_dim = 64;
  c.norm_num_groups = 8;
  return c;
}

SdUnetConfig StableDiffusionXlUnetConfig() {
  // stabilityai/stable-diffusion-xl-base-1.0 unet/config.json: sample_size
  // 128, down DownBlock2D + CrossAttnDownBlock2D x2, block_out_channels (320,
  // 640, 1280), layers_per_block 2, attention_head_dim (5, 10, 20),
  // transformer_layers_per_block (1, 2, 10), cross_attention_dim 2048,
  // use_linear_projection, addition_embed_type "text_time",
  // addition_time_embed_dim 256, projection_class_embeddings_input_dim 2816,
  // norm_num_groups 32, norm_eps 1e-5.
  SdUnetConfig c;
  c.sample_size = 128;
  c.cross_attention = {false, true, true};
  c.block_out_channels = {320, 640, 1280};
  c.attention_head_dim = {5, 10, 20};
  c.transformer_layers_per_block = {1, 2, 10};
  c.cross_attention_dim = 2048;
  c.text_time_embedding = true;
  c.addition_time_embed_dim = 256;
  c.projection_class_embeddings_input_dim = 2816;
  return c;
}

SdUnetConfig StableDiffusionXlSmokeConfig() {
  SdUnetConfig c = StableDiffusionXlUnetConfig();
  c.sample_size = 32;
  c.cross_attention = {false, true};
  c.block_out_channels = {32, 64};
  c.layers_per_block = 1;
  c.attention_head_dim = {2, 4};
  c.transformer_layers_per_block = {1, 2};
  c.cross_attention_dim = 64;
  c.norm_num_groups = 8;
  c.addition_time_embed_dim = 8;
  c.projection_class_embeddings_input_dim = 72;  // text_embeds 64 + one time id's 8
  return c;
}

torch::Tensor SdTimestepEmbedding(const torch::Tensor& timesteps, int64_t dim) {
  TORCH_CHECK(timesteps.dim() == 1, "timestep embedding: timesteps must be 1-D, got ", timesteps.sizes());
  const int64_t half = dim / 2;
  auto exponent =
      -std::log(10000.0) * torch::arange(0, half, torch::TensorOptions(timesteps.device()).dtype(torch::kFloat));
  exponent = exponent / static_cast<double>(half);  // downscale_freq_shift 0
  auto emb = timesteps.unsqueeze(1).to(torch::kFloat) * torch::exp(exponent).unsqueeze(0);
  emb = torch::cat({torch::cos(emb), torch::sin(emb)}, -1);  // flip_sin_to_cos
  if (dim % 2 == 1) emb = torch::nn::functional::pad(emb, torch::nn::functional::PadFuncOptions({0, 1, 0, 0}));
  return emb;
}

SdTimestepMlpImpl::SdTimestepMlpImpl(int64_t in, int64_t out) {
  linear_1 = register_module("linear_1", torch::nn::Linear(in, out));
  linear_2 = register_module("linear_2", torch::nn::Linear(out, out));
}

torch::Tensor SdTimestepMlpImpl::forward(const torch::Tensor& x) { return linear_2(torch::silu(linear_1(x))); }

namespace {

torch::nn::GroupNorm SdGroupNorm(int64_t groups, int64_t channels, double eps) {
  return torch::nn::GroupNorm(torch::nn::GroupNormOptions(groups, channels).eps(eps));
}

torch::nn::Conv2d SdConv(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2));
}

torch::nn::Linear SdLinear(int64_t in, int64_t out, bool bias) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
}

// Downsample2D (a stride-2 3x3 conv, padding 1) or Upsample2D (nearest x2,
// then a 3x3 conv): the one submodule "conv".
struct SdResampleImpl : torch::nn::Module {
  SdResampleImpl(int64_t channels, bool down) : down(down) {
    conv = register_module("conv", SdConv(channels, channels, 3, down ? 2 : 1));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    if (down) return conv(x);
    namespace F = torch::nn::functional;
    return conv(F::interpolate(
        x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2.0, 2.0}).mode(torch::kNearest)));
  }
  torch::nn::Conv2d conv{nullptr};
  bool down;
};
TORCH_MODULE(SdResample);

}  // namespace

SdResnetBlockImpl::SdResnetBlockImpl(int64_t in, int64_t out, int64_t temb, const SdUnetConfig& c) {
  norm1 = register_module("norm1", SdGroupNorm(c.norm_num_groups, in, c.norm_eps));
  conv1 = register_module("conv1", SdConv(in, out, 3));
  time_emb_proj = register_module("time_emb_proj", torch::nn::Linear(temb, out));
  norm2 = register_module("norm2", SdGroupNorm(c.norm_num_groups, out, c.norm_eps));
  conv2 = register_module("conv2", SdConv(out, out, 3));
  if (in != out) conv_shortcut = register_module("conv_shortcut", SdConv(in, out, 1));
}

torch::Tensor SdResnetBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& temb) {
  auto h = conv1(torch::silu(norm1(x)));
  h = h + time_emb_proj(torch::silu(temb)).unsqueeze(-1).unsqueeze(-1);
  h = conv2(torch::silu(norm2(h)));                   // dropout 0
  return (conv_shortcut ? conv_shortcut(x) : x) + h;  // output_scale_factor 1
}

SdAttentionImpl::SdAttentionImpl(int64_t query_dim, int64_t context_dim, int64_t heads, int64_t head_dim)
    : heads(heads) {
  const int64_t inner = heads * head_dim;
  to_q = register_module("to_q", SdLinear(query_dim, inner, false));
  to_k = register_module("to_k", SdLinear(context_dim, inner, false));
  to_v = register_module("to_v", SdLinear(context_dim, inner, false));
  to_out = register_module("to_out", torch::nn::ModuleList());
  to_out->push_back(SdLinear(inner, query_dim, true));
  to_out->push_back(torch::nn::Dropout(0.0));
}

torch::Tensor SdAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& context) {
  const int64_t b = x.size(0);
  auto split = [&](const torch::Tensor& t) { return t.view({b, -1, heads, t.size(-1) / heads}).transpose(1, 2); };
  auto o = torch::scaled_dot_product_attention(split(to_q(x)), split(to_k(context)), split(to_v(context)));
  o = o.transpose(1, 2).reshape({b, -1, o.size(1) * o.size(3)});
  return to_out->ptr<torch::nn::LinearImpl>(0)->forward(o);
}

SdGegluImpl::SdGegluImpl(int64_t in, int64_t out) { proj = register_module("proj", torch::nn::Linear(in, out * 2)); }

torch::Tensor SdGegluImpl::forward(const torch::Tensor& x) {
  auto halves = proj(x).chunk(2, -1);
  return halves[0] * torch::gelu(halves[1]);
}

SdFeedForwardImpl::SdFeedForwardImpl(int64_t dim) {
  net = register_module("net", torch::nn::ModuleList());
  geglu = SdGeglu(dim, dim * 4);
  out = torch::nn::Linear(dim * 4, dim);
  net->push_back(geglu);
  net->push_back(torch::nn::Dropout(0.0));
  net->push_back(out);
}

torch::Tensor SdFeedForwardImpl::forward(const torch::Tensor& x) { return out(geglu(x)); }

SdTransformerBlockImpl::SdTransformerBlockImpl(int64_t dim, int64_t heads, int64_t head_dim, int64_t context_dim) {
  auto layer_norm = [dim] { return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(1e-5)); };
  norm1 = register_module("norm1", layer_norm());
  attn1 = register_module("attn1", SdAttention(dim, dim, heads, head_dim));
  norm2 = register_module("norm2", layer_norm());
  attn2 = register_module("attn2", SdAttention(dim, context_dim, heads, head_dim));
  norm3 = register_module("norm3", layer_norm());
  ff = register_module("ff", SdFeedForward(dim));
}

torch::Tensor SdTransformerBlockImpl::forward(torch::Tensor x, const torch::Tensor& context) {
  auto n = norm1(x);
  x = attn1(n, n) + x;
  x = attn2(norm2(x), context) + x;
  return ff(norm3(x)) + x;
}

SdTransformer2DImpl::SdTransformer2DImpl(int64_t channels, int64_t heads, int64_t layers, const SdUnetConfig& c) {
  // Transformer2DModel's GroupNorm eps is 1e-6 whatever the UNet's norm_eps.
  norm = register_module("norm", SdGroupNorm(c.norm_num_groups, channels, 1e-6));
  if (c.use_linear_projection) {
    linear_in = register_module("proj_in", torch::nn::Linear(channels, channels));
  } else {
    conv_in = register_module("proj_in", SdConv(channels, channels, 1));
  }
  transformer_blocks = register_module("transformer_blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < layers; ++i) {
    transformer_blocks->push_back(SdTransformerBlock(channels, heads, channels / heads, c.cross_attention_dim));
  }
  if (c.use_linear_projection) {
    linear_out = register_module("proj_out", torch::nn::Linear(channels, channels));
  } else {
    conv_out = register_module("proj_out", SdConv(channels, channels, 1));
  }
}

torch::Tensor SdTransformer2DImpl::forward(const torch::Tensor& x, const torch::Tensor& context) {
  const int64_t b = x.size(0), h = x.size(2), w = x.size(3);
  auto tokens = [&](const torch::Tensor& t) { return t.permute({0, 2, 3, 1}).reshape({b, h * w, t.size(1)}); };
  auto image = [&](const torch::Tensor& t) {
    return t.reshape({b, h, w, t.size(-1)}).permute({0, 3, 1, 2}).contiguous();
  };
  auto s = norm(x);
  s = linear_in ? linear_in(tokens(s)) : tokens(conv_in(s));
  for (const auto& block : *transformer_blocks) s = block->as<SdTransformerBlock>()->forward(s, context);
  s = linear_out ? image(linear_out(s)) : conv_out(image(s));
  return s + x;
}

SdDownBlockImpl::SdDownBlockImpl(const SdUnetConfig& c, size_t level) {
  const int64_t out = c.block_out_channels[level];
  const int64_t in = level == 0 ? out : c.block_out_channels[level - 1];
  resnets = register_module("resnets", torch::nn::ModuleList());
  if (c.cross_attention[level]) attentions = register_module("attentions", torch::nn::ModuleList());
  for (int64_t j = 0; j < c.layers_per_block; ++j) {
    resnets->push_back(SdResnetBlock(j == 0 ? in : out, out, c.time_embed_dim(), c));
    if (attentions) {
      attentions->push_back(
          SdTransformer2D(out, c.attention_head_dim[level], c.transformer_layers_per_block[level], c));
    }
  }
  if (level + 1 < c.block_out_channels.size()) {
    downsamplers = register_module("downsamplers", torch::nn::ModuleList());
    downsamplers->push_back(SdResample(out, /*down=*/true));
  }
}

torch::Tensor SdDownBlockImpl::forward(torch::Tensor x, const torch::Tensor& temb, const torch::Tensor& context,
                                       std::vector<torch::Tensor>& skips) {
  for (size_t j = 0; j < resnets->size(); ++j) {
    x = resnets->ptr<SdResnetBlockImpl>(j)->forward(x, temb);
    if (attentions) x = attentions->ptr<SdTransformer2DImpl>(j)->forward(x, context);
    skips.push_back(x);
  }
  if (downsamplers) {
    x = downsamplers->ptr<SdResampleImpl>(0)->forward(x);
    skips.push_back(x);
  }
  return x;
}

SdMidBlockImpl::SdMidBlockImpl(const SdUnetConfig& c) {
  const int64_t ch = c.block_out_channels.back();
  resnets = register_module("resnets", torch::nn::ModuleList());
  attentions = register_module("attentions", torch::nn::ModuleList());
  resnets->push_back(SdResnetBlock(ch, ch, c.time_embed_dim(), c));
  attentions->push_back(SdTransformer2D(ch, c.attention_head_dim.back(), c.transformer_layers_per_block.back(), c));
  resnets->push_back(SdResnetBlock(ch, ch, c.time_embed_dim(), c));
}

torch::Tensor SdMidBlockImpl::forward(torch::Tensor x, const torch::Tensor& temb, const torch::Tensor& context) {
  x = resnets->ptr<SdResnetBlockImpl>(0)->forward(x, temb);
  x = attentions->ptr<SdTransformer2DImpl>(0)->forward(x, context);
  return resnets->ptr<SdResnetBlockImpl>(1)->forward(x, temb);
}

SdUpBlockImpl::SdUpBlockImpl(const SdUnetConfig& c, size_t level) {
  // diffusers' loop over reversed(block_out_channels): this level's width,
  // the previous (deeper) level's, and the input width of the matching down
  // level, which the last resnet's skip carries.
  const size_t n = c.block_out_channels.size();
  const size_t mirror = n - 1 - level;
  const int64_t out = c.block_out_channels[mirror];
  const int64_t prev = c.block_out_channels[level == 0 ? n - 1 : mirror + 1];
  const int64_t in = c.block_out_channels[mirror == 0 ? 0 : mirror - 1];
  const int64_t layers = c.layers_per_block + 1;
  resnets = register_module("resnets", torch::nn::ModuleList());
  if (c.cross_attention[mirror]) attentions = register_module("attentions", torch::nn::ModuleList());
  for (int64_t j = 0; j < layers; ++j) {
    const int64_t skip = j == layers - 1 ? in : out;
    resnets->push_back(SdResnetBlock((j == 0 ? prev : out) + skip, out, c.time_embed_dim(), c));
    if (attentions) {
      attentions->push_back(
          SdTransformer2D(out, c.attention_head_dim[mirror], c.transformer_layers_per_block[mirror], c));
    }
  }
  if (level + 1 < n) {
    upsamplers = register_module("upsamplers", torch::nn::ModuleList());
    upsamplers->push_back(SdResample(out, /*down=*/false));
  }
}

torch::Tensor SdUpBlockImpl::forward(torch::Tensor x, const torch::Tensor& temb, const torch::Tensor& context,
                                     std::vector<torch::Tensor>& skips) {
  for (size_t j = 0; j < resnets->size(); ++j) {
    TORCH_CHECK(!skips.empty(), "stable diffusion UNet: no skip left for an up block");
    x = torch::cat({x, skips.back()}, 1);
    skips.pop_back();
    x = resnets->ptr<SdResnetBlockImpl>(j)->forward(x, temb);
    if (attentions) x = attentions->ptr<SdTransformer2DImpl>(j)->forward(x, context);
  }
  if (upsamplers) x = upsamplers->ptr<SdResampleImpl>(0)->forward(x);
  return x;
}

namespace {

void SdCheckConfig(const SdUnetConfig& c) {
  const size_t n = c.block_out_channels.size();
  TORCH_CHECK(n >= 1 && c.cross_attention.size() == n && c.attention_head_dim.size() == n &&
                  c.transformer_layers_per_block.size() == n,
              "stable diffusion UNet: one block type, head count and transformer depth per level");
}

SdTimestepMlp SdTimeEmbedding(const SdUnetConfig& c) {
  return SdTimestepMlp(c.block_out_channels.front(), c.time_embed_dim());
}

SdTimestepMlp SdAddEmbedding(const SdUnetConfig& c) {
  return SdTimestepMlp(c.projection_class_embeddings_input_dim, c.time_embed_dim());
}

}  // namespace

SdUnetImpl::SdUnetImpl(const SdUnetConfig& c) : config(c) {
  SdCheckConfig(c);
  const int64_t first = c.block_out_channels.front();
  conv_in = register_module("conv_in", SdConv(c.in_channels, first, 3));
  time_embedding = register_module("time_embedding", SdTimeEmbedding(c));
  if (c.text_time_embedding) add_embedding = register_module("add_embedding", SdAddEmbedding(c));
  down_blocks = register_module("down_blocks", torch::nn::ModuleList());
  up_blocks = register_module("up_blocks", torch::nn::ModuleList());
  for (size_t i = 0; i < c.block_out_channels.size(); ++i) {
    down_blocks->push_back(SdDownBlock(c, i));
    up_blocks->push_back(SdUpBlock(c, i));
  }
  mid_block = register_module("mid_block", SdMidBlock(c));
  conv_norm_out = register_module("conv_norm_out", SdGroupNorm(c.norm_num_groups, first, c.norm_eps));
  conv_out = register_module("conv_out", SdConv(first, c.out_channels, 3));
}

torch::Tensor SdUnetImpl::forward(const torch::Tensor& sample, const torch::Tensor& timestep,
                                  const torch::Tensor& context, const std::optional<SdAddedConditions>& added) {
  const int64_t b = sample.size(0);
  auto steps = (timestep.dim() == 0 ? timestep.unsqueeze(0) : timestep).expand({b});
  auto emb = time_embedding(SdTimestepEmbedding(steps, config.block_out_channels.front()).to(sample.scalar_type()));
  if (config.text_time_embedding) {
    TORCH_CHECK(added.has_value(), "stable diffusion XL UNet: text_embeds and time_ids are required");
    auto time_embeds = SdTimestepEmbedding(added->time_ids.flatten(), config.addition_time_embed_dim).reshape({b, -1});
    auto add = torch::cat({added->text_embeds, time_embeds.to(added->text_embeds.scalar_type())}, -1);
    emb = emb + add_embedding(add.to(emb.scalar_type()));
  }
  auto x = conv_in(sample);
  std::vector<torch::Tensor> skips = {x};
  for (const auto& block : *down_blocks) x = block->as<SdDownBlock>()->forward(x, emb, context, skips);
  x = mid_block(x, emb, context);
  for (const auto& block : *up_blocks) x = block->as<SdUpBlock>()->forward(x, emb, context, skips);
  return conv_out(torch::silu(conv_norm_out(x)));
}

int64_t SdUnetParameterCount(const SdUnetConfig& c) {
  SdCheckConfig(c);
  torch::NoGradGuard no_grad;
  auto count = [](torch::nn::Module& m) {
    int64_t n = 0;
    for (const auto& p : m.parameters()) n += p.numel();
    return n;
  };
  // Each block is built with transformers of no layers (their GroupNorm and
  // projections only); each transformer's layers are added as its depth
  // times one BasicTransformerBlock of its level.
  SdUnetConfig shell = c;
  std::fill(shell.transformer_layers_per_block.begin(), shell.transformer_layers_per_block.end(), 0);
  auto layers = [&](const torch::nn::ModuleList& attentions, size_t level) -> int64_t {
    if (!attentions) return 0;
    const int64_t width = c.block_out_channels[level], heads = c.attention_head_dim[level];
    const int64_t one = count(*SdTransformerBlock(width, heads, width / heads, c.cross_attention_dim));
    return static_cast<int64_t>(attentions->size()) * c.transformer_layers_per_block[level] * one;
  };
  const size_t n = c.block_out_channels.size();
  const int64_t first = c.block_out_channels.front();
  int64_t total = count(*SdConv(c.in_channels, first, 3)) + count(*SdTimeEmbedding(c)) +
                  count(*SdGroupNorm(c.norm_num_groups, first, c.norm_eps)) + count(*SdConv(first, c.out_channels, 3));
  if (c.text_time_embedding) total += count(*SdAddEmbedding(c));
  {
    SdMidBlock mid(shell);
    total += count(*mid) + layers(mid->attentions, n - 1);
  }
  for (size_t i = 0; i < n; ++i) {
    SdDownBlock down(shell, i);
    total += count(*down) + layers(down->attentions, i);
    down = nullptr;
    SdUpBlock up(shell, i);
    total += count(*up) + layers(up->attentions, n - 1 - i);
  }
  return total;
}

namespace {

// TorchBench's get_module() inputs: one text token of context, timestep 1.0.
constexpr int64_t kSdTextTokens = 1;
constexpr int64_t kSd2LatentSide = 128, kSdxlLatentSide = 256, kSdSmokeLatentSide = 32;
constexpr int64_t kSdxlTextEmbeds = 2560, kSdxlSmokeTextEmbeds = 64;

class SdUnetWorkload : public Workload {
 public:
  SdUnetWorkload(const WorkloadOptions& opt, const SdUnetConfig& config, int64_t side, int64_t text_embeds,
                 std::string id)
      : net_(config), id_(std::move(id)) {
    TORCH_CHECK(opt.mode == Mode::kEval, id_, ": TorchBench implements eval only");
    TORCH_CHECK(opt.batch_size >= 1, id_, ": batch size must be positive, got ", opt.batch_size);
    net_->to(opt.device);
    const auto f = torch::TensorOptions(opt.device);
    const int64_t b = opt.batch_size;
    inputs_["sample"] = torch::randn({b, config.in_channels, side, side}, f);
    inputs_["timestep"] = torch::tensor({1.0}, f.dtype(torch::kFloat));
    inputs_["encoder_hidden_states"] = torch::randn({b, kSdTextTokens, config.cross_attention_dim}, f);
    if (config.text_time_embedding) {
      inputs_["text_embeds"] = torch::randn({b, text_embeds}, f);
      inputs_["time_ids"] = torch::ones({b}, f.dtype(torch::kLong));  // TorchBench: torch.tensor([1]) at batch 1
    }
    samples_per_step_ = b;
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override {
    std::optional<SdAddedConditions> added;
    if (net_->config.text_time_embedding) added = SdAddedConditions{inputs_.at("text_embeds"), inputs_.at("time_ids")};
    return net_->forward(inputs_.at("sample"), inputs_.at("timestep"), inputs_.at("encoder_hidden_states"), added);
  }

  torch::Tensor TrainStep() override {
    TORCH_CHECK(false, id_, " has no train mode (TorchBench implements eval only)");
  }

 private:
  SdUnet net_;
  std::string id_;
};

ModelInfo SdUnetInfo() {
  ModelInfo info;
  info.id = "stable_diffusion_unet";
  info.paper_name = "(not in the paper's list)";
  info.domain = Domain::kVision;
  info.task = "image generation";
  info.reference =
      "diffusers UNet2DConditionModel at stabilityai/stable-diffusion-2's unet config (block_out_channels (320, 640, "
      "1280, 1280), layers_per_block 2, heads (5, 10, 20, 20), cross_attention_dim 1024, linear projections), random "
      "weights, as torchbenchmark/models/stable_diffusion_unet's get_module(): one forward on 4 x 128 x 128 latents, "
      "timestep 1, one 1024-wide text token; smoke: block_out_channels (32, 64), layers_per_block 1, heads (2, 4), "
      "cross_attention_dim 64, 8 norm groups, 32 x 32 latents";
  // __init__.py: DEFAULT_TRAIN_BSIZE = DEFAULT_EVAL_BSIZE = 1,
  // ALLOW_CUSTOMIZE_BSIZE = False.
  info.default_batch = {1, 1};
  info.smoke_batch = {1, 1};
  info.supports_train = false;
  info.unsupported_reason =
      "train: TorchBench implements eval only (stable_diffusion_unet/__init__.py: train() raises "
      "NotImplementedError(\"Train test is not implemented for the stable diffusion model.\"))";
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<SdUnetWorkload>(
        opt, opt.smoke ? StableDiffusionUnetSmokeConfig() : StableDiffusion2UnetConfig(),
        opt.smoke ? kSdSmokeLatentSide : kSd2LatentSide, 0, "stable_diffusion_unet");
  };
  return info;
}

ModelInfo SdxlUnetInfo() {
  ModelInfo info;
  info.id = "stable_diffusion_xl";
  info.paper_name = "(not in the paper's list)";
  info.domain = Domain::kVision;
  info.task = "image generation";
  info.reference =
      "diffusers UNet2DConditionModel at stabilityai/stable-diffusion-xl-base-1.0's unet config (block_out_channels "
      "(320, 640, 1280), layers_per_block 2, heads (5, 10, 20), transformer layers (1, 2, 10), cross_attention_dim "
      "2048, text_time added embedding), random weights, as torchbenchmark/canary_models/stable_diffusion_xl: one "
      "forward on 4 x 256 x 256 latents, timestep 1, one 2048-wide text token, text_embeds 2560, one time id; smoke: "
      "block_out_channels (32, 64), layers_per_block 1, heads (2, 4), transformer layers (1, 2), "
      "cross_attention_dim 64, 8 norm groups, addition_time_embed_dim 8, text_embeds 64, 32 x 32 latents";
  // __init__.py: DEFAULT_TRAIN_BSIZE = DEFAULT_EVAL_BSIZE = 1,
  // ALLOW_CUSTOMIZE_BSIZE = False.
  info.default_batch = {1, 1};
  info.smoke_batch = {1, 1};
  info.supports_train = false;
  info.unsupported_reason =
      "train: TorchBench implements eval only (canary_models/stable_diffusion_xl/__init__.py: train() raises "
      "NotImplementedError(\"Train is not implemented for the stable diffusion XL model.\"))";
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<SdUnetWorkload>(opt,
                                            opt.smoke ? StableDiffusionXlSmokeConfig() : StableDiffusionXlUnetConfig(),
                                            opt.smoke ? kSdSmokeLatentSide : kSdxlLatentSide,
                                            opt.smoke ? kSdxlSmokeTextEmbeds : kSdxlTextEmbeds, "stable_diffusion_xl");
  };
  return info;
}

}  // namespace

void AddStableDiffusionUnetModels(std::vector<ModelInfo>& out) {
  out.push_back(SdUnetInfo());
  out.push_back(SdxlUnetInfo());
}

}  // namespace torchgauge::models
