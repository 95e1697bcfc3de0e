// sam and sam_fast: TorchBench's Segment Anything models (added since the
// paper, issue 38), written natively.
//
// The network is SAM ViT-H as torchbenchmark/models/sam/build_sam.py builds it
// (build_sam_vit_h): a 1024 x 1024 input, 16 x 16 patches, a ViT image
// encoder of 32 blocks (embed dim 1280, 16 heads, MLP ratio 4, LayerNorm eps
// 1e-6, qkv bias, an absolute position embedding) whose attention runs in
// 14 x 14 windows (the 64 x 64 token grid zero-padded to 70 x 70) except at
// blocks 7, 15, 23 and 31 (global), every block with decomposed relative
// position embeddings (rel_pos_h / rel_pos_w, MViTv2); a neck (1x1 conv to
// 256, LayerNorm2d, 3x3 conv, LayerNorm2d, no biases); the prompt encoder
// (random Fourier features of the point coordinates, a 2 x 128 Gaussian
// matrix shared with the image-wide positional encoding, four learned point
// / box-corner embeddings, a not-a-point embedding, the dense no-mask
// embedding, and the mask-input downscaling convolutions); and the mask
// decoder: a two-way transformer (2 blocks of token self-attention,
// token-to-image and image-to-token cross-attention at half width, an MLP of
// 2048 with ReLU, LayerNorm eps 1e-5, 8 heads, a final token-to-image
// attention), the output upscaling (two stride-2 transposed convolutions,
// LayerNorm2d, GELU) to 256 x 256 low-resolution masks, one hypernetwork MLP
// per mask token (3 layers to 32 channels) and the IoU head (3 layers to 4
// scores). 641,090,608 parameters.
//
// Module names follow transformers' SamModel (shared_image_embedding,
// vision_encoder.layers.<i>.attn.qkv, prompt_encoder.point_embed.<i>,
// mask_decoder.transformer.layers.<i>.cross_attn_token_to_image.q_proj,
// mask_decoder.output_hypernetworks_mlps.<i>.proj_in, ...), so its state
// dict loads by name. The Gaussian matrix is one buffer registered under
// shared_image_embedding and prompt_encoder.shared_embedding, as SamModel
// ties them. Initialisation as segment-anything's modules before TorchBench
// loads its checkpoint: PyTorch's defaults, zero relative and absolute
// position embeddings, N(0, 1) for the Gaussian matrix.
//
// The workload is TorchBench's eval, SamPredictor on one image with one
// point: set_image (the image resized to a 1024 long side, normalised with
// SAM's pixel mean and std, zero-padded to 1024 x 1024, encoded) then
// predict(point (500, 375), label 1, multimask_output=True): the prompt
// encoder (the point and a padding point, no box, the no-mask embedding),
// the mask decoder's three masks and IoU scores, the masks upscaled to the
// padded input, cropped and upscaled to the original size (Forward() returns
// these logits; TorchBench's threshold at 0 is one comparison after them).
// TorchBench reads truck.jpg (1800 x 1200); here a seeded random image of
// that size, already resized (1024 x 683, as ResizeLongestSide rounds), and
// the point in the resized frame. A batch of b is b such images, each with
// its point; TorchBench's eval ignores its batch size (32) and segments one
// image. There is no train: TorchBench's train() returns NotImplementedError.
//
// sam_fast is the same network as segment-anything-fast's
// build_sam_fast_vit_h builds it for TorchBench's sam_fast: image encoder,
// prompt encoder and mask decoder in bfloat16 (preprocessing and point
// coordinates in float32), and attention through scaled_dot_product_attention
// (the relative positions as its additive mask in the image encoder; the
// CUDA-only Triton flash kernel it prefers for ViT-H is not reproduced). Its
// torch.compile(mode="max-autotune") of the image encoder is the collector's
// backend choice here, not the model's.
//
// Smoke runs build a reduced configuration (SamSmokeConfig): a 256 x 256
// input, 2 encoder blocks of width 96 (3 heads, MLP 384), window 6 (the 16 x
// 16 grid padded to 18 x 18), global attention at block 1, the prompt encoder
// and mask decoder at their real widths, and a 450 x 300 original image.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// transformers' SamVisionConfig fields that the architecture uses.
struct SamVisionConfig {
  int64_t hidden_size = 1280;
  int64_t num_hidden_layers = 32;
  int64_t num_attention_heads = 16;
  std::vector<int64_t> global_attn_indexes = {7, 15, 23, 31};
  int64_t window_size = 14;
  int64_t image_size = 1024;
  int64_t patch_size = 16;
  int64_t mlp_dim = 5120;
  int64_t output_channels = 256;
  int64_t num_pos_feats = 128;
  double layer_norm_eps = 1e-6;
};

struct SamConfig {
  SamVisionConfig vision;
  // Prompt encoder and mask decoder (transformer_dim / prompt_embed_dim).
  int64_t hidden_size = 256;
  int64_t mask_input_channels = 16;
  int64_t decoder_layers = 2;
  int64_t decoder_heads = 8;
  int64_t decoder_mlp_dim = 2048;
  int64_t attention_downsample_rate = 2;
  int64_t num_multimask_outputs = 3;
  int64_t iou_head_depth = 3;
  int64_t iou_head_hidden_dim = 256;
  double decoder_layer_norm_eps = 1e-5;  // the two-way blocks' nn.LayerNorm default
  // Attention through scaled_dot_product_attention (sam_fast) instead of the
  // explicit softmax(q k^T + bias) v.
  bool sdpa = false;
};

// TorchBench's configuration (ViT-H) and the smoke runs' reduced one.
SamConfig SamVitHConfig();
SamConfig SamSmokeConfig();

// SamPositionalEmbedding: random Fourier features of coordinates in [0, 1].
struct SamPositionalEmbeddingImpl : torch::nn::Module {
  explicit SamPositionalEmbeddingImpl(int64_t num_pos_feats);
  torch::Tensor forward(const torch::Tensor& coords01);
  torch::Tensor positional_embedding;  // [2, num_pos_feats]
};
TORCH_MODULE(SamPositionalEmbedding);

struct SamVisionEncoderImpl : torch::nn::Module {
  explicit SamVisionEncoderImpl(const SamConfig& c);
  // pixel_values [B, 3, S, S] -> image embeddings [B, out, S/16, S/16].
  torch::Tensor forward(const torch::Tensor& pixel_values);
  std::shared_ptr<torch::nn::Module> patch_embed;  // .projection
  torch::nn::Conv2d projection{nullptr};
  torch::Tensor pos_embed;
  torch::nn::ModuleList layers{nullptr};
  std::shared_ptr<torch::nn::Module> neck;
};
TORCH_MODULE(SamVisionEncoder);

struct SamPromptEncoderImpl : torch::nn::Module {
  SamPromptEncoderImpl(const SamConfig& c, SamPositionalEmbedding shared);
  // Points [B, P, N, 2] in the input frame and labels [B, P, N], no box, no
  // mask: sparse [B, P, N + 1, C] and dense [B, C, s, s] embeddings.
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& points, const torch::Tensor& labels);
  SamPositionalEmbedding shared_embedding{nullptr};
  std::shared_ptr<torch::nn::Module> mask_embed;
  torch::nn::Embedding no_mask_embed{nullptr}, not_a_point_embed{nullptr};
  torch::nn::ModuleList point_embed{nullptr};
  int64_t image_size = 0, embedding_size = 0;
};
TORCH_MODULE(SamPromptEncoder);

struct SamMaskDecoderImpl : torch::nn::Module {
  explicit SamMaskDecoderImpl(const SamConfig& c);
  // Masks [B, P, M, 4s, 4s] and IoU predictions [B, P, M], M = 3 with
  // multimask_output, 1 without.
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& image_embeddings, const torch::Tensor& image_pe,
                                                  const torch::Tensor& sparse, const torch::Tensor& dense,
                                                  bool multimask_output);
  torch::nn::Embedding iou_token{nullptr}, mask_tokens{nullptr};
  std::shared_ptr<torch::nn::Module> transformer;
  torch::nn::ConvTranspose2d upscale_conv1{nullptr}, upscale_conv2{nullptr};
  torch::nn::LayerNorm upscale_layer_norm{nullptr};
  torch::nn::ModuleList output_hypernetworks_mlps{nullptr};
  std::shared_ptr<torch::nn::Module> iou_prediction_head;
  int64_t num_mask_tokens = 0;
};
TORCH_MODULE(SamMaskDecoder);

// transformers' SamModel.
struct SamModelImpl : torch::nn::Module {
  explicit SamModelImpl(const SamConfig& c);
  // get_image_wide_positional_embeddings(): [1, C, s, s].
  torch::Tensor ImageWidePositionalEmbeddings();
  SamPositionalEmbedding shared_image_embedding{nullptr};
  SamVisionEncoder vision_encoder{nullptr};
  SamPromptEncoder prompt_encoder{nullptr};
  SamMaskDecoder mask_decoder{nullptr};
  SamConfig config;
};
TORCH_MODULE(SamModel);

// The workload's settings: the network's configuration, its dtype (bfloat16
// for sam_fast) and the original image's size (H, W) before resizing.
struct SamSettings {
  SamConfig config = SamVitHConfig();
  torch::ScalarType dtype = torch::kFloat;
  int64_t original_height = 1200, original_width = 1800;
};
SamSettings SamSmokeSettings(bool fast);

std::unique_ptr<Workload> MakeSamWorkload(const WorkloadOptions& opt, const SamSettings& settings);

// The eval step's tensors for the parity test: image_embeddings, pred_masks
// (low resolution), iou_scores, mask_logits (upscaled to the original size,
// before the threshold) and masks (thresholded), from inputs().
std::map<std::string, torch::Tensor> SamEvalOutputs(Workload& workload);

// Registers sam and sam_fast.
void AddSamModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
