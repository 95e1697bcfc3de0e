#include "models/vision/multimodal/clip.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "models/shared/hf_harness.h"

namespace torchgauge::models {

ClipConfig ClipVitBasePatch32Config() {
  // openai/clip-vit-base-patch32's config.json: the text tower keeps
  // CLIPTextConfig's widths (hidden 512, 8 heads, 12 layers, MLP 2048,
  // quick_gelu) with the legacy eos_token_id 2; the vision tower is
  // ViT-B/32 at 224.
  ClipConfig c;
  c.text = ClipTowerConfig{};
  c.vision = ClipTowerConfig{.hidden_size = 768,
                             .intermediate_size = 3072,
                             .num_hidden_layers = 12,
                             .num_attention_heads = 12,
                             .image_size = 224,
                             .patch_size = 32};
  c.projection_dim = 512;
  c.logit_scale_init_value = 2.6592;
  return c;
}

ClipConfig ClipSmokeConfig() {
  ClipConfig c = ClipVitBasePatch32Config();
  c.text.vocab_size = 1000;
  for (auto* tower : {&c.text, &c.vision}) {
    tower->hidden_size = 64;
    tower->intermediate_size = 256;
    tower->num_hidden_layers = 2;
    tower->num_attention_heads = 4;
  }
  c.vision.image_size = 64;
  c.vision.patch_size = 16;
  c.projection_dim = 32;
  return c;
}

ClipTowerConfig StableDiffusion2TextConfig() {
  // stabilityai/stable-diffusion-2's text_encoder/config.json.
  return ClipTowerConfig{.hidden_size = 1024,
                         .intermediate_size = 4096,
                         .num_hidden_layers = 23,
                         .num_attention_heads = 16,
                         .quick_gelu = false,
                         .vocab_size = 49408,
                         .max_position_embeddings = 77,
                         .eos_token_id = 2};
}

ClipTowerConfig StableDiffusionTextSmokeConfig() {
  ClipTowerConfig c = StableDiffusion2TextConfig();
  c.vocab_size = 1000;
  c.hidden_size = 64;
  c.intermediate_size = 256;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  return c;
}

namespace {

// PyTorch's init (weight 1, bias 0) is what _init_weights sets.
torch::nn::LayerNorm ClipLayerNorm(const ClipTowerConfig& c) { return MakeLayerNorm(c.hidden_size, c.layer_norm_eps); }

// A Linear initialised as _init_weights does: weight N(0, std), bias zero.
torch::nn::Linear ClipLinear(int64_t in, int64_t out, double stddev, bool bias = true) {
  torch::nn::Linear linear(torch::nn::LinearOptions(in, out).bias(bias));
  torch::NoGradGuard no_grad;
  linear->weight.normal_(0.0, stddev);
  if (bias) linear->bias.zero_();
  return linear;
}

torch::nn::Embedding ClipEmbedding(int64_t rows, int64_t dim, double stddev) {
  torch::nn::Embedding embedding(rows, dim);
  torch::NoGradGuard no_grad;
  embedding->weight.normal_(0.0, stddev);
  return embedding;
}

// transformers' in_proj_std: hidden^-0.5 (2 layers)^-0.5 factor.
double ClipInProjStd(const ClipTowerConfig& c) {
  return std::pow(static_cast<double>(c.hidden_size), -0.5) *
         std::pow(2.0 * static_cast<double>(c.num_hidden_layers), -0.5) * c.initializer_factor;
}

// _create_4d_causal_attention_mask, plus _prepare_4d_attention_mask's
// padding mask when one is given, added as CLIPAttention adds them.
torch::Tensor ClipTextMask(int64_t batch, int64_t seq, const torch::Tensor& attention_mask,
                           const torch::TensorOptions& options) {
  const torch::Scalar lowest = FinfoMin(c10::typeMetaToScalarType(options.dtype()));
  auto causal = torch::full({seq, seq}, lowest, options).triu(1);
  causal = causal.view({1, 1, seq, seq}).expand({batch, 1, seq, seq});
  if (!attention_mask.defined()) return causal;
  auto inverted = 1.0 - attention_mask.to(options.dtype()).view({batch, 1, 1, seq}).expand({batch, 1, seq, seq});
  auto padding = inverted.masked_fill(inverted.to(torch::kBool), lowest);
  return padding + causal;
}

}  // namespace

ClipAttentionImpl::ClipAttentionImpl(const ClipTowerConfig& c)
    : num_heads(c.num_attention_heads),
      head_dim(c.hidden_size / c.num_attention_heads),
      scale(std::pow(static_cast<double>(c.hidden_size / c.num_attention_heads), -0.5)) {
  TORCH_CHECK(head_dim * num_heads == c.hidden_size, "CLIP: hidden_size not divisible by num_attention_heads");
  const double in_std = ClipInProjStd(c);
  const double out_std = std::pow(static_cast<double>(c.hidden_size), -0.5) * c.initializer_factor;
  k_proj = register_module("k_proj", ClipLinear(c.hidden_size, c.hidden_size, in_std));
  v_proj = register_module("v_proj", ClipLinear(c.hidden_size, c.hidden_size, in_std));
  q_proj = register_module("q_proj", ClipLinear(c.hidden_size, c.hidden_size, in_std));
  out_proj = register_module("out_proj", ClipLinear(c.hidden_size, c.hidden_size, out_std));
}

torch::Tensor ClipAttentionImpl::forward(const torch::Tensor& hidden, const torch::Tensor& mask) {
  const int64_t batch = hidden.size(0), seq = hidden.size(1), embed = hidden.size(2);
  auto heads = [&](const torch::Tensor& x) { return x.view({batch, seq, -1, head_dim}).transpose(1, 2); };
  auto queries = heads(q_proj(hidden));
  auto keys = heads(k_proj(hidden));
  auto values = heads(v_proj(hidden));
  // eager_attention_forward: scores scaled after the product, the mask
  // added, softmax in fp32.
  auto weights = torch::matmul(queries, keys.transpose(-1, -2)) * scale;
  if (mask.defined()) weights = weights + mask;
  weights = torch::softmax(weights, -1, torch::kFloat).to(queries.scalar_type());
  auto out = torch::matmul(weights, values).transpose(1, 2).contiguous();
  return out_proj(out.reshape({batch, seq, embed}).contiguous());
}

ClipMlpImpl::ClipMlpImpl(const ClipTowerConfig& c)
    : fc1(register_module("fc1",
                          ClipLinear(c.hidden_size, c.intermediate_size,
                                     std::pow(2.0 * static_cast<double>(c.hidden_size), -0.5) * c.initializer_factor))),
      fc2(register_module("fc2", ClipLinear(c.intermediate_size, c.hidden_size, ClipInProjStd(c)))),
      quick_gelu(c.quick_gelu) {}

torch::Tensor ClipMlpImpl::forward(const torch::Tensor& x) {
  auto h = fc1(x);
  // QuickGELUActivation: x * sigmoid(1.702 x); GELUActivation: exact gelu.
  h = quick_gelu ? h * torch::sigmoid(1.702 * h) : torch::gelu(h);
  return fc2(h);
}

ClipEncoderLayerImpl::ClipEncoderLayerImpl(const ClipTowerConfig& c)
    : self_attn(register_module("self_attn", ClipAttention(c))),
      layer_norm1(register_module("layer_norm1", ClipLayerNorm(c))),
      mlp(register_module("mlp", ClipMlp(c))),
      layer_norm2(register_module("layer_norm2", ClipLayerNorm(c))) {}

torch::Tensor ClipEncoderLayerImpl::forward(torch::Tensor hidden, const torch::Tensor& mask) {
  hidden = hidden + self_attn(layer_norm1(hidden), mask);
  return hidden + mlp(layer_norm2(hidden));
}

ClipEncoderImpl::ClipEncoderImpl(const ClipTowerConfig& c)
    : layers(register_module("layers", torch::nn::ModuleList())) {
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layers->push_back(ClipEncoderLayer(c));
}

torch::Tensor ClipEncoderImpl::forward(torch::Tensor hidden, const torch::Tensor& mask) {
  for (const auto& layer : *layers) hidden = layer->as<ClipEncoderLayerImpl>()->forward(hidden, mask);
  return hidden;
}

ClipTextEmbeddingsImpl::ClipTextEmbeddingsImpl(const ClipTowerConfig& c)
    : token_embedding(
          register_module("token_embedding", ClipEmbedding(c.vocab_size, c.hidden_size, 0.02 * c.initializer_factor))),
      position_embedding(register_module(
          "position_embedding", ClipEmbedding(c.max_position_embeddings, c.hidden_size, 0.02 * c.initializer_factor))) {
}

torch::Tensor ClipTextEmbeddingsImpl::forward(const torch::Tensor& input_ids) {
  const int64_t seq = input_ids.size(-1);
  TORCH_CHECK(seq <= position_embedding->weight.size(0), "CLIP: sequence of ", seq, " exceeds max_position_embeddings");
  // transformers' non-persistent position_ids buffer, arange(seq).
  auto positions = torch::arange(seq, input_ids.options().dtype(torch::kLong)).unsqueeze(0);
  return token_embedding(input_ids) + position_embedding(positions);
}

ClipTextTransformerImpl::ClipTextTransformerImpl(const ClipTowerConfig& c)
    : embeddings(register_module("embeddings", ClipTextEmbeddings(c))),
      encoder(register_module("encoder", ClipEncoder(c))),
      final_layer_norm(register_module("final_layer_norm", ClipLayerNorm(c))),
      eos_token_id(c.eos_token_id) {}

ClipTextOutput ClipTextTransformerImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask) {
  const int64_t batch = input_ids.size(0), seq = input_ids.size(1);
  auto hidden = embeddings(input_ids);
  auto mask = ClipTextMask(batch, seq, attention_mask, hidden.options());
  hidden = final_layer_norm(encoder(hidden, mask));
  // The end-of-text position: the legacy argmax of the ids when
  // eos_token_id is 2, else the first id equal to eos_token_id.
  auto ids = input_ids.to(torch::kInt);
  auto eos = eos_token_id == 2 ? ids.argmax(-1) : (ids == eos_token_id).to(torch::kInt).argmax(-1);
  auto rows = torch::arange(batch, eos.options().dtype(torch::kLong));
  return {hidden, hidden.index({rows, eos})};
}

ClipVisionEmbeddingsImpl::ClipVisionEmbeddingsImpl(const ClipTowerConfig& c)
    : class_embedding(register_parameter("class_embedding", torch::randn({c.hidden_size}))),
      patch_embedding(register_module(
          "patch_embedding",
          torch::nn::Conv2d(
              torch::nn::Conv2dOptions(c.num_channels, c.hidden_size, c.patch_size).stride(c.patch_size).bias(false)))),
      position_embedding(register_module(
          "position_embedding", ClipEmbedding((c.image_size / c.patch_size) * (c.image_size / c.patch_size) + 1,
                                              c.hidden_size, c.initializer_range * c.initializer_factor))),
      image_size(c.image_size) {
  torch::NoGradGuard no_grad;
  class_embedding.normal_(0.0, std::pow(static_cast<double>(c.hidden_size), -0.5) * c.initializer_factor);
  patch_embedding->weight.normal_(0.0, c.initializer_range * c.initializer_factor);
}

torch::Tensor ClipVisionEmbeddingsImpl::forward(const torch::Tensor& pixel_values) {
  const int64_t batch = pixel_values.size(0);
  TORCH_CHECK(pixel_values.size(2) == image_size && pixel_values.size(3) == image_size, "CLIP: input image of ",
              pixel_values.size(2), "x", pixel_values.size(3), " does not match the model's ", image_size);
  auto patches = patch_embedding(pixel_values.to(patch_embedding->weight.scalar_type())).flatten(2).transpose(1, 2);
  auto cls = class_embedding.expand({batch, 1, -1});
  auto embeddings = torch::cat({cls, patches}, 1);
  // transformers' non-persistent position_ids buffer, arange(positions).
  auto positions = torch::arange(embeddings.size(1), pixel_values.options().dtype(torch::kLong)).unsqueeze(0);
  return embeddings + position_embedding(positions);
}

ClipVisionTransformerImpl::ClipVisionTransformerImpl(const ClipTowerConfig& c)
    : embeddings(register_module("embeddings", ClipVisionEmbeddings(c))),
      pre_layrnorm(register_module("pre_layrnorm", ClipLayerNorm(c))),
      encoder(register_module("encoder", ClipEncoder(c))),
      post_layernorm(register_module("post_layernorm", ClipLayerNorm(c))) {}

torch::Tensor ClipVisionTransformerImpl::forward(const torch::Tensor& pixel_values) {
  auto hidden = encoder(pre_layrnorm(embeddings(pixel_values)), torch::Tensor());
  return post_layernorm(hidden.select(1, 0));
}

ClipModelImpl::ClipModelImpl(const ClipConfig& c)
    : text_model(register_module("text_model", ClipTextTransformer(c.text))),
      vision_model(register_module("vision_model", ClipVisionTransformer(c.vision))),
      visual_projection(register_module(
          "visual_projection",
          ClipLinear(c.vision.hidden_size, c.projection_dim,
                     std::pow(static_cast<double>(c.vision.hidden_size), -0.5) * c.vision.initializer_factor, false))),
      text_projection(register_module(
          "text_projection",
          ClipLinear(c.text.hidden_size, c.projection_dim,
                     std::pow(static_cast<double>(c.text.hidden_size), -0.5) * c.text.initializer_factor, false))),
      logit_scale(register_parameter("logit_scale", torch::tensor(c.logit_scale_init_value, torch::kFloat))) {}

ClipOutput ClipModelImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& pixel_values,
                                  const torch::Tensor& attention_mask) {
  auto image_embeds = visual_projection(vision_model(pixel_values));
  auto text_embeds = text_projection(text_model(input_ids, attention_mask).pooled);
  // _get_vector_norm: (sum x^2)^0.5, spelled as transformers spells it.
  auto norm = [](const torch::Tensor& x) { return torch::pow(torch::sum(torch::pow(x, 2), -1, true), 0.5); };
  image_embeds = image_embeds / norm(image_embeds);
  text_embeds = text_embeds / norm(text_embeds);
  auto logits_per_text = torch::matmul(text_embeds, image_embeds.t()) * logit_scale.exp();
  return {image_embeds, text_embeds, logits_per_text.t()};
}

ClipTextModelImpl::ClipTextModelImpl(const ClipTowerConfig& c)
    : text_model(register_module("text_model", ClipTextTransformer(c))) {}

ClipTextOutput ClipTextModelImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask) {
  return text_model(input_ids, attention_mask);
}

namespace {

// hf_clip/__init__.py: ContrastiveLossWithTemperature(temperature=0.07) and
// AdamW(lr=5e-4, weight_decay=1e-4, eps=1e-6).
constexpr double kClipTemperature = 0.07;
constexpr double kClipLr = 5e-4, kClipWeightDecay = 1e-4, kClipEps = 1e-6;
// "the dog is here" through CLIPProcessor: BOS, four word tokens, EOS.
constexpr int64_t kClipWords = 4;

class ClipWorkload : public LossWorkload {
 public:
  ClipWorkload(const WorkloadOptions& opt, const ClipConfig& config)
      : LossWorkload(ZeroGradAt::kBeforeForward), net_(config), projection_dim_(config.projection_dim) {
    TORCH_CHECK(opt.batch_size >= 1, "hf_clip: batch size must be >= 1, got ", opt.batch_size);
    net_->to(opt.device);
    const int64_t batch = opt.batch_size, vocab = config.text.vocab_size, side = config.vision.image_size;
    // One image and one caption, repeated over the batch as TorchBench
    // repeats its COCO photo and its text. CLIP's vocabulary ends with
    // <|startoftext|> and <|endoftext|>.
    auto ids = torch::TensorOptions(opt.device).dtype(torch::kLong);
    auto image = torch::randn({1, config.vision.num_channels, side, side}, torch::TensorOptions(opt.device));
    auto words = torch::randint(0, vocab - 2, {1, kClipWords}, ids);
    auto caption = torch::cat({torch::full({1, 1}, vocab - 2, ids), words, torch::full({1, 1}, vocab - 1, ids)}, 1);
    inputs_["pixel_values"] = image.repeat({batch, 1, 1, 1});
    inputs_["input_ids"] = caption.repeat({batch, 1});
    inputs_["attention_mask"] = torch::ones_like(inputs_["input_ids"]);
    samples_per_step_ = batch;
    if (opt.mode == Mode::kTrain) {
      auto options = torch::optim::AdamWOptions(kClipLr).weight_decay(kClipWeightDecay).eps(kClipEps);
      optimizer_ = std::make_unique<torch::optim::AdamW>(net_->parameters(), options);
    }
  }

  torch::nn::Module& net() override { return *net_; }

  // model(**inputs). In eval, [image_embeds | text_embeds |
  // logits_per_image] side by side, everything CLIPOutput carries that
  // depends on the weights; in train the embeddings the loss reads (the
  // logits are computed all the same, as in Python, and left unused).
  torch::Tensor Forward() override {
    auto out = net_->forward(inputs_.at("input_ids"), inputs_.at("pixel_values"), inputs_.at("attention_mask"));
    if (net_->is_training()) return torch::cat({out.image_embeds, out.text_embeds}, 1);
    return torch::cat({out.image_embeds, out.text_embeds, out.logits_per_image}, 1);
  }

 protected:
  // ContrastiveLossWithTemperature: symmetric cross-entropy over
  // image_embeds text_embeds^T / 0.07, the diagonal as labels.
  torch::Tensor Loss(const torch::Tensor& output) override {
    auto image = output.slice(1, 0, projection_dim_);
    auto text = output.slice(1, projection_dim_, 2 * projection_dim_);
    auto logits = torch::matmul(image, text.t()) / kClipTemperature;
    auto labels = torch::arange(logits.size(0), logits.options().dtype(torch::kLong));
    auto loss = torch::cross_entropy_loss(logits, labels) + torch::cross_entropy_loss(logits.t(), labels);
    return loss / 2;
  }

 private:
  ClipModel net_;
  int64_t projection_dim_;
};

// stable_diffusion_text_encoder/__init__.py, get_module(): ids drawn from
// [0, 32000), batch 1, 10 positions.
constexpr int64_t kSdTextIdsHigh = 32000, kSdTextSeq = 10;

class SdTextEncoderWorkload : public Workload {
 public:
  SdTextEncoderWorkload(const WorkloadOptions& opt, const ClipTowerConfig& config) : net_(config) {
    TORCH_CHECK(opt.batch_size >= 1, "stable_diffusion_text_encoder: batch size must be >= 1");
    net_->to(opt.device);
    inputs_["input_ids"] = torch::randint(0, std::min(kSdTextIdsHigh, config.vocab_size), {opt.batch_size, kSdTextSeq},
                                          torch::TensorOptions(opt.device).dtype(torch::kLong));
    samples_per_step_ = opt.batch_size;
  }

  torch::nn::Module& net() override { return *net_; }

  // The last hidden state with the pooled output appended as one more row:
  // [batch, seq + 1, hidden].
  torch::Tensor Forward() override {
    auto out = net_->forward(inputs_.at("input_ids"));
    return torch::cat({out.last_hidden_state, out.pooled.unsqueeze(1)}, 1);
  }

  torch::Tensor TrainStep() override { TORCH_CHECK(false, "stable_diffusion_text_encoder has no train mode"); }

 private:
  ClipTextModel net_;
};

ModelInfo HfClipInfo() {
  ModelInfo info;
  info.id = "hf_clip";
  info.paper_name = "(not in the paper's list)";
  info.domain = Domain::kVision;
  info.task = "vision-language";
  info.reference =
      "TorchBench hf_clip (added since the paper): transformers.CLIPModel at openai/clip-vit-base-patch32's "
      "configuration (ViT-B/32 at 224, text hidden 512, projection 512, quick_gelu), random weights; one image "
      "and one 6-token caption repeated over the batch; train: ContrastiveLossWithTemperature(0.07) on the "
      "embeddings, AdamW(lr 5e-4, wd 1e-4, eps 1e-6); smoke runs: both towers hidden 64, 2 layers, 4 heads, "
      "MLP 256, image 64 with patch 16, vocab 1000, projection 32";
  // hf_clip/__init__.py: DEFAULT_TRAIN_BSIZE = DEFAULT_EVAL_BSIZE = 32.
  info.default_batch = {32, 32};
  info.smoke_batch = {4, 4};
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<ClipWorkload>(opt, opt.smoke ? ClipSmokeConfig() : ClipVitBasePatch32Config());
  };
  return info;
}

ModelInfo SdTextEncoderInfo() {
  ModelInfo info;
  info.id = "stable_diffusion_text_encoder";
  info.paper_name = "(not in the paper's list)";
  info.domain = Domain::kVision;
  info.task = "image generation";
  info.reference =
      "TorchBench stable_diffusion_text_encoder (added since the paper): transformers.CLIPTextModel at "
      "stabilityai/stable-diffusion-2's text_encoder configuration (hidden 1024, 23 layers, 16 heads, MLP 4096, "
      "gelu), random weights, on get_module()'s 1 x 10 random ids in [0, 32000); smoke runs: hidden 64, "
      "2 layers, 4 heads, MLP 256, vocab 1000";
  // DEFAULT_TRAIN_BSIZE = DEFAULT_EVAL_BSIZE = 1, ALLOW_CUSTOMIZE_BSIZE = False.
  info.default_batch = {1, 1};
  info.smoke_batch = {1, 1};
  info.supports_train = false;
  info.unsupported_reason =
      "train: TorchBench implements eval only (stable_diffusion_text_encoder/__init__.py: train() raises "
      "NotImplementedError(\"Train test is not implemented for the stable diffusion model.\"))";
  info.create = [](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<SdTextEncoderWorkload>(
        opt, opt.smoke ? StableDiffusionTextSmokeConfig() : StableDiffusion2TextConfig());
  };
  return info;
}

}  // namespace

void AddClipModels(std::vector<ModelInfo>& out) {
  out.push_back(HfClipInfo());
  out.push_back(SdTextEncoderInfo());
}

}  // namespace torchgauge::models
