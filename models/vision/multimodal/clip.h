// CLIP (Radford et al. 2021, "Learning Transferable Visual Models From
// Natural Language Supervision"): a ViT image tower and a causal
// Transformer text tower, each pooled and projected into one embedding
// space, as transformers 4.57.1 writes it (models/clip/modeling_clip.py,
// eager attention). Module names follow transformers' CLIPModel and
// CLIPTextModel, so the reference's state dict loads by name.
//
// Both towers are stacks of the same pre-norm encoder layer (CLIPEncoderLayer:
// LayerNorm, multi-head self-attention with separate q/k/v/out projections,
// residual; LayerNorm, fc1, activation, fc2, residual). The vision tower
// embeds 2-D patches (a bias-free convolution with stride = patch), prepends
// a learned class embedding, adds learned positions, applies pre_layrnorm
// before the encoder and post_layernorm to the class token's state. The
// text tower adds learned positions to token embeddings, attends causally
// (an additive mask of float min above the diagonal, plus the padding mask
// when one is given), applies final_layer_norm, and pools the state at the
// end-of-text token: transformers keeps the legacy rule "argmax of the input
// ids" (the end-of-text token has the highest id) when the config's
// eos_token_id is 2, as the published openai/clip-vit-base-patch32 and
// Stable Diffusion 2 configs have it, and takes the first position equal to
// eos_token_id otherwise. Both rules are implemented.
//
// Registered models (TorchBench, added since the paper):
//  - hf_clip: CLIPModel at openai/clip-vit-base-patch32's configuration
//    (vision ViT-B/32 at 224: hidden 768, 12 layers, 12 heads, MLP 3072;
//    text: vocab 49408, 77 positions, hidden 512, 12 layers, 8 heads, MLP
//    2048; both quick_gelu, LayerNorm eps 1e-5; projection 512, logit_scale
//    init 2.6592): 151,277,313 parameters. Batch 32 for train and eval; the
//    inputs are one image and one caption ("the dog is here": BOS, four word
//    tokens, EOS) repeated over the batch, as hf_clip/__init__.py builds them
//    with CLIPProcessor(padding=True), here a seeded normalised random image
//    and seeded word ids. Eval is model(**inputs) (image and text
//    embeddings, logits_per_image); train is TorchBench's
//    ContrastiveLossWithTemperature(0.07) over the normalised image and text
//    embeddings and one AdamW step (lr 5e-4, weight decay 1e-4, eps 1e-6).
//    Its loss does not read logit_scale, which therefore gets no gradient
//    and stays put, as in Python. Smoke runs: ClipSmokeConfig() (vision 64x64
//    with patch 16, text vocab 1000; both hidden 64, 2 layers, 4 heads, MLP
//    256; projection 32), batch 4.
//  - stable_diffusion_text_encoder: CLIPTextModel at stabilityai/stable-
//    diffusion-2's text_encoder configuration (OpenCLIP ViT-H/14's text
//    tower without its last layer: vocab 49408, 77 positions, hidden 1024,
//    23 layers, 16 heads, MLP 4096, exact gelu, eps 1e-5, eos_token_id 2):
//    340,387,840 parameters. Eval only, batch 1: TorchBench's train() raises
//    NotImplementedError; its get_module() hands the text encoder one
//    1 x 10 batch of random ids in [0, 32000), which is what eval runs here
//    (the last hidden state and the pooled output). Smoke runs: vocab 1000,
//    hidden 64, 2 layers, 4 heads, MLP 256.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// One tower's configuration (transformers' CLIPTextConfig or
// CLIPVisionConfig; a tower reads the fields that apply to it).
struct ClipTowerConfig {
  int64_t hidden_size = 512;
  int64_t intermediate_size = 2048;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 8;
  double layer_norm_eps = 1e-5;
  bool quick_gelu = true;  // hidden_act "quick_gelu"; false: "gelu" (exact)
  // Text only.
  int64_t vocab_size = 49408;
  int64_t max_position_embeddings = 77;
  int64_t eos_token_id = 2;  // 2: legacy pooling at the argmax of the ids
  // Vision only.
  int64_t image_size = 224;
  int64_t patch_size = 32;
  int64_t num_channels = 3;
  // _init_weights: the vision embeddings' std, and the factor on every std.
  double initializer_range = 0.02;
  double initializer_factor = 1.0;
};

struct ClipConfig {
  ClipTowerConfig text;
  ClipTowerConfig vision;
  int64_t projection_dim = 512;
  double logit_scale_init_value = 2.6592;
};

ClipConfig ClipVitBasePatch32Config();             // openai/clip-vit-base-patch32 (hf_clip)
ClipConfig ClipSmokeConfig();                      // hf_clip's smoke runs
ClipTowerConfig StableDiffusion2TextConfig();      // stabilityai/stable-diffusion-2 text_encoder
ClipTowerConfig StableDiffusionTextSmokeConfig();  // its smoke runs

struct ClipAttentionImpl : torch::nn::Module {
  explicit ClipAttentionImpl(const ClipTowerConfig& c);
  // `mask`: additive [batch or 1, 1, seq, seq], or undefined.
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& mask);
  torch::nn::Linear k_proj{nullptr}, v_proj{nullptr}, q_proj{nullptr}, out_proj{nullptr};
  int64_t num_heads, head_dim;
  double scale;
};
TORCH_MODULE(ClipAttention);

struct ClipMlpImpl : torch::nn::Module {
  explicit ClipMlpImpl(const ClipTowerConfig& c);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  bool quick_gelu;
};
TORCH_MODULE(ClipMlp);

struct ClipEncoderLayerImpl : torch::nn::Module {
  explicit ClipEncoderLayerImpl(const ClipTowerConfig& c);
  torch::Tensor forward(torch::Tensor hidden, const torch::Tensor& mask);
  ClipAttention self_attn{nullptr};
  torch::nn::LayerNorm layer_norm1{nullptr};
  ClipMlp mlp{nullptr};
  torch::nn::LayerNorm layer_norm2{nullptr};
};
TORCH_MODULE(ClipEncoderLayer);

struct ClipEncoderImpl : torch::nn::Module {
  explicit ClipEncoderImpl(const ClipTowerConfig& c);
  torch::Tensor forward(torch::Tensor hidden, const torch::Tensor& mask);
  torch::nn::ModuleList layers{nullptr};
};
TORCH_MODULE(ClipEncoder);

struct ClipTextEmbeddingsImpl : torch::nn::Module {
  explicit ClipTextEmbeddingsImpl(const ClipTowerConfig& c);
  torch::Tensor forward(const torch::Tensor& input_ids);
  torch::nn::Embedding token_embedding{nullptr}, position_embedding{nullptr};
};
TORCH_MODULE(ClipTextEmbeddings);

// The text tower's outputs: the last hidden state after final_layer_norm
// [batch, seq, hidden] and its pooled row at the end-of-text token.
struct ClipTextOutput {
  torch::Tensor last_hidden_state, pooled;
};

// transformers' CLIPTextTransformer.
struct ClipTextTransformerImpl : torch::nn::Module {
  explicit ClipTextTransformerImpl(const ClipTowerConfig& c);
  // attention_mask: [batch, seq] of 1 (attend) and 0 (padding), or undefined.
  ClipTextOutput forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask = {});
  ClipTextEmbeddings embeddings{nullptr};
  ClipEncoder encoder{nullptr};
  torch::nn::LayerNorm final_layer_norm{nullptr};
  int64_t eos_token_id;
};
TORCH_MODULE(ClipTextTransformer);

struct ClipVisionEmbeddingsImpl : torch::nn::Module {
  explicit ClipVisionEmbeddingsImpl(const ClipTowerConfig& c);
  torch::Tensor forward(const torch::Tensor& pixel_values);
  torch::Tensor class_embedding;
  torch::nn::Conv2d patch_embedding{nullptr};
  torch::nn::Embedding position_embedding{nullptr};
  int64_t image_size;
};
TORCH_MODULE(ClipVisionEmbeddings);

// transformers' CLIPVisionTransformer; forward returns the pooled output
// (post_layernorm of the class token's last state).
struct ClipVisionTransformerImpl : torch::nn::Module {
  explicit ClipVisionTransformerImpl(const ClipTowerConfig& c);
  torch::Tensor forward(const torch::Tensor& pixel_values);
  ClipVisionEmbeddings embeddings{nullptr};
  torch::nn::LayerNorm pre_layrnorm{nullptr};  // sic, transformers' name
  ClipEncoder encoder{nullptr};
  torch::nn::LayerNorm post_layernorm{nullptr};
};
TORCH_MODULE(ClipVisionTransformer);

// CLIPModel's outputs: the L2-normalised embeddings and
// logits_per_image = logit_scale.exp() * image_embeds text_embeds^T.
struct ClipOutput {
  torch::Tensor image_embeds, text_embeds, logits_per_image;
};

// transformers' CLIPModel, initialised as its _init_weights does.
struct ClipModelImpl : torch::nn::Module {
  explicit ClipModelImpl(const ClipConfig& c);
  ClipOutput forward(const torch::Tensor& input_ids, const torch::Tensor& pixel_values,
                     const torch::Tensor& attention_mask = {});
  ClipTextTransformer text_model{nullptr};
  ClipVisionTransformer vision_model{nullptr};
  torch::nn::Linear visual_projection{nullptr}, text_projection{nullptr};
  torch::Tensor logit_scale;
};
TORCH_MODULE(ClipModel);

// transformers' CLIPTextModel (the text tower alone, no projection).
struct ClipTextModelImpl : torch::nn::Module {
  explicit ClipTextModelImpl(const ClipTowerConfig& c);
  ClipTextOutput forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask = {});
  ClipTextTransformer text_model{nullptr};
};
TORCH_MODULE(ClipTextModel);

void AddClipModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
