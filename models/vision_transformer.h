// Vision Transformer (Dosovitskiy et al. 2021, "An Image is Worth 16x16
// Words"), the timm_vision_transformer model of TorchBench.
//
// TorchBench builds timm's vit_small_patch16_224 (torchbenchmark/models/
// timm_vision_transformer/__init__.py: model_name="vit_small_patch16_224").
// timm is not a dependency here; torchvision's VisionTransformer class is
// the same architecture (pre-norm blocks, class token, learned position
// embedding, LayerNorm eps 1e-6, exact GELU, no dropout), so parameter
// names follow torchvision's state dict (conv_proj, class_token,
// encoder.pos_embedding, encoder.layers.encoder_layer_N.*, heads.head) and
// parity is checked against torchvision. Variants are thin configurations:
//   ViT-S/16: hidden 384, 12 layers, 6 heads, MLP 1536 (timm vit_small_patch16_224)
//   ViT-B/16: hidden 768, 12 layers, 12 heads, MLP 3072 (torchvision vit_b_16,
//             timm vit_base_patch16_224); reachable from tests only.
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

// Builds the TorchBench workload (SGD-Nesterov as timm's create_optimizer
// "sgd", cross-entropy) for any configuration; the registry uses ViT-S/16.
std::unique_ptr<Workload> MakeVisionTransformerWorkload(const WorkloadOptions& opt, const VitConfig& config);

void AddVisionTransformerModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
