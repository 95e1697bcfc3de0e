// Stable Diffusion's conditional UNet (Rombach et al. 2022, "High-Resolution
// Image Synthesis with Latent Diffusion Models"), diffusers'
// UNet2DConditionModel, written as torch::nn modules whose names follow
// diffusers' attributes, so that its state dict loads by name for the parity
// test (tests/parity/ref_stable_diffusion_unet.py, diffusers 0.39.0).
//
// The architecture (diffusers' unet_2d_condition.py, unet_2d_blocks.py,
// resnet.py, transformer_2d.py, attention.py):
//  - time: the sinusoidal embedding of the timestep (block_out_channels[0]
//    frequencies 10000^(-i / half), cos before sin: flip_sin_to_cos, shift 0)
//    and time_embedding, a TimestepEmbedding MLP linear_1, SiLU, linear_2 to
//    4 * block_out_channels[0]. SDXL ("text_time" addition) adds add_embedding
//    (a TimestepEmbedding) of the pooled text embedding concatenated with the
//    sinusoidal embedding (addition_time_embed_dim each) of every time id.
//  - conv_in 3x3; down_blocks: per level layers_per_block ResnetBlock2Ds
//    (GroupNorm, SiLU, conv 3x3, plus the projected SiLU(temb), GroupNorm,
//    SiLU, conv 3x3, a 1x1 conv_shortcut when the widths differ), each
//    followed in a CrossAttnDownBlock2D by a Transformer2DModel, and a stride-2
//    3x3 conv (downsamplers.0.conv) on every level but the last.
//  - Transformer2DModel: GroupNorm (eps 1e-6), proj_in (Linear with
//    use_linear_projection, else a 1x1 conv), transformer_layers_per_block
//    BasicTransformerBlocks over the h * w tokens (LayerNorm + self-attention,
//    LayerNorm + cross-attention to encoder_hidden_states, LayerNorm + GEGLU
//    feed-forward of 4x width, each residual), proj_out and the residual.
//    Attention: bias-free to_q, to_k, to_v, scaled dot-product attention,
//    to_out.0 (with bias). The heads per level are the config's
//    attention_head_dim (diffusers reads it as the number of heads when
//    num_attention_heads is unset, as in both published configs).
//  - mid_block (UNetMidBlock2DCrossAttn): resnet, transformer, resnet.
//  - up_blocks: per level layers_per_block + 1 ResnetBlock2Ds, each over the
//    concatenation with the next skip (popped from the down path's outputs),
//    with transformers in a CrossAttnUpBlock2D, and nearest x2 upsampling and
//    a 3x3 conv (upsamplers.0.conv) on every level but the last.
//  - conv_norm_out (GroupNorm), SiLU, conv_out 3x3.
// Weights are PyTorch's default initialisation, as diffusers leaves them.
//
// stable_diffusion_unet (TorchBench's, torchbenchmark/models/
// stable_diffusion_unet): the UNet of stabilityai/stable-diffusion-2
// (unet/config.json), StableDiffusion2UnetConfig(). TorchBench's get_module()
// hands the UNet and one call's inputs: latents 1 x 4 x 128 x 128, timestep
// [1.0], encoder_hidden_states 1 x 1 x 1024 (one text token); batch 1 in both
// modes (ALLOW_CUSTOMIZE_BSIZE = False). Its train() raises
// NotImplementedError, so train is recorded unsupported. Eval here is one UNet
// forward on get_module()'s inputs (TorchBench's eval() runs the whole
// StableDiffusionPipeline: the CLIP text encoder, 50 Euler steps of this UNet
// and the VAE decoder, from downloaded weights). Smoke runs build
// StableDiffusionUnetSmokeConfig() (below) at 32 x 32 latents.
//
// stable_diffusion_xl (TorchBench's canary): the UNet of
// stabilityai/stable-diffusion-xl-base-1.0, StableDiffusionXlUnetConfig(),
// called as TorchBench's get_module() does: latents 1 x 4 x 256 x 256,
// timestep [1.0], encoder_hidden_states 1 x 1 x 2048, text_embeds 1 x 2560 and
// time_ids [1] (one id: 2560 + 256 = 2816 inputs of add_embedding). Eval only
// (train() raises NotImplementedError); smoke runs build
// StableDiffusionXlSmokeConfig().
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// diffusers' UNet2DConditionModel config, the fields these models set.
struct SdUnetConfig {
  int64_t in_channels = 4;
  int64_t out_channels = 4;
  int64_t sample_size = 96;  // latent side the checkpoint was trained at (config only)
  // True per level: CrossAttnDownBlock2D (and, mirrored, CrossAttnUpBlock2D);
  // false: DownBlock2D / UpBlock2D. up_block_types are the reverse.
  std::vector<bool> cross_attention = {true, true, true, false};
  std::vector<int64_t> block_out_channels = {320, 640, 1280, 1280};
  int64_t layers_per_block = 2;
  std::vector<int64_t> attention_head_dim = {5, 10, 20, 20};  // heads per level (diffusers' naming)
  std::vector<int64_t> transformer_layers_per_block = {1, 1, 1, 1};
  int64_t cross_attention_dim = 1024;
  bool use_linear_projection = true;
  int64_t norm_num_groups = 32;
  double norm_eps = 1e-5;
  // SDXL's addition_embed_type "text_time": add_time_proj / add_embedding.
  bool text_time_embedding = false;
  int64_t addition_time_embed_dim = 256;
  int64_t projection_class_embeddings_input_dim = 2816;
  int64_t time_embed_dim() const { return block_out_channels.front() * 4; }
};

// stabilityai/stable-diffusion-2's unet/config.json (the defaults above).
SdUnetConfig StableDiffusion2UnetConfig();
// The reduced configuration of stable_diffusion_unet's smoke runs and parity:
// block_out_channels (32, 64), CrossAttnDownBlock2D + DownBlock2D (UpBlock2D
// + CrossAttnUpBlock2D), layers_per_block 1, heads (2, 4), one transformer
// layer, cross_attention_dim 64, 8 norm groups, linear projections.
SdUnetConfig StableDiffusionUnetSmokeConfig();
// stabilityai/stable-diffusion-xl-base-1.0's unet/config.json.
SdUnetConfig StableDiffusionXlUnetConfig();
// SDXL's reduced configuration: block_out_channels (32, 64), DownBlock2D +
// CrossAttnDownBlock2D, layers_per_block 1, heads (2, 4), transformer layers
// (1, 2), cross_attention_dim 64, 8 norm groups, text_time addition with
// addition_time_embed_dim 8 and 72 add_embedding inputs.
SdUnetConfig StableDiffusionXlSmokeConfig();

// diffusers' get_timestep_embedding(timesteps, dim, flip_sin_to_cos=True,
// downscale_freq_shift=0): [n] -> [n, dim] in fp32.
torch::Tensor SdTimestepEmbedding(const torch::Tensor& timesteps, int64_t dim);

struct SdTimestepMlpImpl : torch::nn::Module {  // diffusers' TimestepEmbedding
  SdTimestepMlpImpl(int64_t in, int64_t out);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Linear linear_1{nullptr}, linear_2{nullptr};
};
TORCH_MODULE(SdTimestepMlp);

struct SdResnetBlockImpl : torch::nn::Module {  // ResnetBlock2D
  SdResnetBlockImpl(int64_t in, int64_t out, int64_t temb, const SdUnetConfig& c);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& temb);
  torch::nn::GroupNorm norm1{nullptr}, norm2{nullptr};
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv_shortcut{nullptr};
  torch::nn::Linear time_emb_proj{nullptr};
};
TORCH_MODULE(SdResnetBlock);

struct SdAttentionImpl : torch::nn::Module {  // diffusers' Attention (AttnProcessor2_0)
  SdAttentionImpl(int64_t query_dim, int64_t context_dim, int64_t heads, int64_t head_dim);
  // context: the keys' and values' tokens (x itself for self-attention).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& context);
  torch::nn::Linear to_q{nullptr}, to_k{nullptr}, to_v{nullptr};
  torch::nn::ModuleList to_out{nullptr};  // Linear, Dropout(0)
  int64_t heads;
};
TORCH_MODULE(SdAttention);

struct SdGegluImpl : torch::nn::Module {  // GEGLU: a * gelu(gate) of one projection's halves
  SdGegluImpl(int64_t in, int64_t out);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Linear proj{nullptr};
};
TORCH_MODULE(SdGeglu);

struct SdFeedForwardImpl : torch::nn::Module {  // FeedForward(activation_fn="geglu")
  explicit SdFeedForwardImpl(int64_t dim);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::ModuleList net{nullptr};  // GEGLU to 4 * dim, Dropout(0), Linear back to dim
  SdGeglu geglu{nullptr};
  torch::nn::Linear out{nullptr};
};
TORCH_MODULE(SdFeedForward);

struct SdTransformerBlockImpl : torch::nn::Module {  // BasicTransformerBlock
  SdTransformerBlockImpl(int64_t dim, int64_t heads, int64_t head_dim, int64_t context_dim);
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& context);
  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr}, norm3{nullptr};
  SdAttention attn1{nullptr}, attn2{nullptr};
  SdFeedForward ff{nullptr};
};
TORCH_MODULE(SdTransformerBlock);

struct SdTransformer2DImpl : torch::nn::Module {  // Transformer2DModel (continuous input)
  SdTransformer2DImpl(int64_t channels, int64_t heads, int64_t layers, const SdUnetConfig& c);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& context);
  torch::nn::GroupNorm norm{nullptr};
  // proj_in / proj_out: Linear with use_linear_projection, else 1x1 Conv2d.
  torch::nn::Linear linear_in{nullptr}, linear_out{nullptr};
  torch::nn::Conv2d conv_in{nullptr}, conv_out{nullptr};
  torch::nn::ModuleList transformer_blocks{nullptr};
};
TORCH_MODULE(SdTransformer2D);

// CrossAttnDownBlock2D (with attentions) or DownBlock2D.
struct SdDownBlockImpl : torch::nn::Module {
  SdDownBlockImpl(const SdUnetConfig& c, size_t level);
  // Appends each resnet's (or transformer's) output and the downsampler's to
  // `skips`; returns the block's output.
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& temb, const torch::Tensor& context,
                        std::vector<torch::Tensor>& skips);
  torch::nn::ModuleList resnets{nullptr}, attentions{nullptr}, downsamplers{nullptr};
};
TORCH_MODULE(SdDownBlock);

struct SdMidBlockImpl : torch::nn::Module {  // UNetMidBlock2DCrossAttn
  explicit SdMidBlockImpl(const SdUnetConfig& c);
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& temb, const torch::Tensor& context);
  torch::nn::ModuleList resnets{nullptr}, attentions{nullptr};
};
TORCH_MODULE(SdMidBlock);

// CrossAttnUpBlock2D (with attentions) or UpBlock2D; `level` counts from the
// bottom (up_blocks.0 is the deepest).
struct SdUpBlockImpl : torch::nn::Module {
  SdUpBlockImpl(const SdUnetConfig& c, size_t level);
  // Pops one skip per resnet from the back of `skips`.
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& temb, const torch::Tensor& context,
                        std::vector<torch::Tensor>& skips);
  torch::nn::ModuleList resnets{nullptr}, attentions{nullptr}, upsamplers{nullptr};
};
TORCH_MODULE(SdUpBlock);

// SDXL's added conditions (TorchBench's added_cond_kwargs).
struct SdAddedConditions {
  torch::Tensor text_embeds;  // [batch, pooled width]
  torch::Tensor time_ids;     // [batch * k] or [batch, k]
};

struct SdUnetImpl : torch::nn::Module {  // UNet2DConditionModel
  explicit SdUnetImpl(const SdUnetConfig& c);
  // sample [batch, in, h, w] (h, w divisible by 2^(levels - 1)); timestep
  // [1] or [batch]; context [batch, tokens, cross_attention_dim]. Returns
  // [batch, out, h, w].
  torch::Tensor forward(const torch::Tensor& sample, const torch::Tensor& timestep, const torch::Tensor& context,
                        const std::optional<SdAddedConditions>& added = std::nullopt);
  SdUnetConfig config;
  SdTimestepMlp time_embedding{nullptr}, add_embedding{nullptr};
  torch::nn::Conv2d conv_in{nullptr}, conv_out{nullptr};
  torch::nn::ModuleList down_blocks{nullptr}, up_blocks{nullptr};
  SdMidBlock mid_block{nullptr};
  torch::nn::GroupNorm conv_norm_out{nullptr};
};
TORCH_MODULE(SdUnet);

// The parameter count of SdUnet(c) without holding all of it at once, for the
// published configurations (866M and 2.6B parameters: 3.5 and 10 GB whole).
// Each of the UNet's top-level modules is built in turn from the same
// constructors, with its transformers at depth 0, and each transformer's
// depth times one BasicTransformerBlock of its level is added (at most 0.7 GB
// held at once). The parity test checks it against the whole model at the
// reduced configurations.
int64_t SdUnetParameterCount(const SdUnetConfig& c);

// Registers stable_diffusion_unet and stable_diffusion_xl.
void AddStableDiffusionUnetModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
