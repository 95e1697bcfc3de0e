// Vision Transformer (Dosovitskiy et al. 2021, "An Image is Worth 16x16
// Words"), the timm_vision_transformer and timm_vision_transformer_large
// models of TorchBench.
//
// TorchBench builds timm's vit_small_patch16_224 (torchbenchmark/models/
// timm_vision_transformer/__init__.py: model_name="vit_small_patch16_224").
// The C++ model was first checked against torchvision (timm was not
// installed then): torchvision's VisionTransformer class is
// the same architecture (pre-norm blocks, class token, learned position
// embedding, LayerNorm eps 1e-6, exact GELU, no dropout), so parameter
// names follow torchvision's state dict (conv_proj, class_token,
// encoder.pos_embedding, encoder.layers.encoder_layer_N.*, heads.head) and
// parity is checked against torchvision. Variants are thin configurations:
//   ViT-S/16: hidden 384, 12 layers, 6 heads, MLP 1536 (timm vit_small_patch16_224)
//   ViT-B/16: hidden 768, 12 layers, 12 heads, MLP 3072 (torchvision vit_b_16,
//             timm vit_base_patch16_224); reachable from tests only.
//   ViT-g/14: hidden 1408, 40 layers, 16 heads, MLP 6144 (mlp_ratio 48/11),
//             patch 14 at 224 (257 tokens): timm vit_giant_patch14_224, which
//             TorchBench's timm_vision_transformer_large builds
//             (torchbenchmark/models/timm_vision_transformer_large/__init__.py
//             has used vit_giant_patch14_224 since it was added in 2022, not
//             vit_large_patch16_224). 1,012,611,432 parameters, as timm's.
// timm's VisionTransformer with these arguments has the same parameters one
// for one (patch_embed.proj = conv_proj, cls_token = class_token, pos_embed =
// encoder.pos_embedding, blocks.i.attn.qkv = the packed in_proj, attn.proj =
// out_proj, mlp.fc1/fc2 = mlp.0/mlp.3, norm = encoder.ln, head = heads.head);
// tests/parity/ref_timm.py checks that timm's model and torchvision's compute
// the same output and train step from the same weights.
// Initialisation is timm's (VisionTransformer.init_weights, mode ""):
// pos_embed trunc_normal(0.02), cls_token normal(1e-6), Linear weights (the
// packed qkv included) trunc_normal(0.02) with zero biases, the patch conv and
// LayerNorms PyTorch's defaults.
#pragma once

#include <memory>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

struct VitConfig {
  int64_t image_size = 224;
  int64_t patch_size = 16;
  int64_t num_layers = 12;
  int64_t num_heads = 6;
  int64_t hidden_dim = 384;
  int64_t mlp_dim = 1536;
  int64_t num_classes = 1000;
};

VitConfig VitSmallPatch16Config();  // timm vit_small_patch16_224 (TorchBench)
VitConfig VitBasePatch16Config();   // torchvision vit_b_16 / timm vit_base_patch16_224
VitConfig VitGiantPatch14Config();  // timm vit_giant_patch14_224 (TorchBench's timm_vision_transformer_large)

// The network alone (no optimizer, no inputs), e.g. to count parameters.
std::shared_ptr<torch::nn::Module> MakeVisionTransformer(const VitConfig& config);

// Builds the TorchBench workload (SGD-Nesterov as timm's create_optimizer
// "sgd", cross-entropy) for any configuration; the registry uses ViT-S/16
// (timm_vision_transformer) and ViT-g/14 (timm_vision_transformer_large).
std::unique_ptr<Workload> MakeVisionTransformerWorkload(const WorkloadOptions& opt, const VitConfig& config);

void AddVisionTransformerModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
