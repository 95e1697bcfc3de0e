#include "models/nlp/bart.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "models/shared/hf_harness.h"

namespace torchgauge::models {
namespace {

struct BartConfig {
  int64_t vocab_size = 50265;
  int64_t max_position_embeddings = 1024;
  int64_t d_model = 768;
  int64_t encoder_layers = 6;
  int64_t decoder_layers = 6;
  int64_t encoder_attention_heads = 12;
  int64_t decoder_attention_heads = 12;
  int64_t encoder_ffn_dim = 3072;
  int64_t decoder_ffn_dim = 3072;
  double dropout = 0.1;
  double attention_dropout = 0.1;
  double activation_dropout = 0.1;
  double encoder_layerdrop = 0.0;
  double decoder_layerdrop = 0.0;
  double init_std = 0.02;
  bool scale_embedding = false;
  int64_t pad_token_id = 1;
  int64_t decoder_start_token_id = 2;
};

// BartLearnedPositionalEmbedding's offset: position p reads row p + 2.
constexpr int64_t kPositionOffset = 2;

// nn.LayerNorm's default eps, which BART uses throughout.
torch::nn::LayerNorm MakeLayerNorm(int64_t dim) { return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})); }

// A stack's embed_tokens: BartScaledWordEmbedding reading `model.shared`'s
// table (an alias buffer, as TiedWeights keeps tied tensors), with the
// padding row's gradient masked as nn.Embedding(padding_idx) does.
struct ScaledTiedEmbeddingImpl : torch::nn::Module {
  ScaledTiedEmbeddingImpl(const torch::Tensor& shared, int64_t padding_idx_arg, double embed_scale_arg)
      : weight(register_buffer("weight", shared)), padding_idx(padding_idx_arg), embed_scale(embed_scale_arg) {}
  torch::Tensor forward(const torch::Tensor& ids) { return torch::embedding(weight, ids, padding_idx) * embed_scale; }
  torch::Tensor weight;
  int64_t padding_idx;
  double embed_scale;
};
TORCH_MODULE(ScaledTiedEmbedding);

// BART's multi-head attention (self, causal self, or cross) on the SDPA path.
struct BartAttentionImpl : torch::nn::Module {
  BartAttentionImpl(int64_t embed_dim, int64_t num_heads_arg, double dropout, bool is_causal_arg)
      : k_proj(register_module("k_proj", torch::nn::Linear(embed_dim, embed_dim))),
        v_proj(register_module("v_proj", torch::nn::Linear(embed_dim, embed_dim))),
        q_proj(register_module("q_proj", torch::nn::Linear(embed_dim, embed_dim))),
        out_proj(register_module("out_proj", torch::nn::Linear(embed_dim, embed_dim))),
        num_heads(num_heads_arg),
        head_dim(embed_dim / num_heads_arg),
        dropout_p(dropout),
        is_causal(is_causal_arg) {
    TORCH_CHECK(head_dim * num_heads_arg == embed_dim, "hf_bart: embed_dim ", embed_dim, " not divisible by ",
                num_heads_arg, " heads");
  }

  // key_value: the encoder output for cross-attention, undefined for
  // self-attention.
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& key_value = {}) {
    const auto bsz = hidden.size(0), tgt_len = hidden.size(1);
    const auto& current = key_value.defined() ? key_value : hidden;
    auto heads = [&](const torch::Tensor& t) { return t.view({t.size(0), t.size(1), -1, head_dim}).transpose(1, 2); };
    auto q = heads(q_proj(hidden));
    auto k = heads(k_proj(current));
    auto v = heads(v_proj(current));
    // transformers' sdpa_attention_forward: causal when the module is and the
    // query has more than one position.
    const bool causal = is_causal && tgt_len > 1;
    auto out = at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, is_training() ? dropout_p : 0.0, causal,
                                                /*scale=*/std::pow(static_cast<double>(head_dim), -0.5));
    out = out.transpose(1, 2).contiguous().reshape({bsz, tgt_len, -1}).contiguous();
    return out_proj(out);
  }

  torch::nn::Linear k_proj, v_proj, q_proj, out_proj;
  int64_t num_heads, head_dim;
  double dropout_p;
  bool is_causal;
};
TORCH_MODULE(BartAttention);

torch::Tensor Dropout(const torch::Tensor& x, double p, bool train) { return torch::dropout(x, p, train); }

struct BartEncoderLayerImpl : torch::nn::Module {
  explicit BartEncoderLayerImpl(const BartConfig& c)
      : self_attn(register_module("self_attn",
                                  BartAttention(c.d_model, c.encoder_attention_heads, c.attention_dropout, false))),
        self_attn_layer_norm(register_module("self_attn_layer_norm", MakeLayerNorm(c.d_model))),
        fc1(register_module("fc1", torch::nn::Linear(c.d_model, c.encoder_ffn_dim))),
        fc2(register_module("fc2", torch::nn::Linear(c.encoder_ffn_dim, c.d_model))),
        final_layer_norm(register_module("final_layer_norm", MakeLayerNorm(c.d_model))),
        dropout(c.dropout),
        activation_dropout(c.activation_dropout) {}

  torch::Tensor forward(torch::Tensor hidden) {
    const bool train = is_training();
    auto residual = hidden;
    hidden = Dropout(self_attn(hidden), dropout, train);
    hidden = self_attn_layer_norm(residual + hidden);
    residual = hidden;
    hidden = Dropout(torch::gelu(fc1(hidden)), activation_dropout, train);
    hidden = Dropout(fc2(hidden), dropout, train);
    hidden = final_layer_norm(residual + hidden);
    // As the reference: fp16 activations that overflowed are clamped.
    if (hidden.scalar_type() == torch::kHalf &&
        (torch::isinf(hidden).any().item<bool>() || torch::isnan(hidden).any().item<bool>())) {
      const double clamp_value = static_cast<double>(std::numeric_limits<c10::Half>::max()) - 1000;
      hidden = torch::clamp(hidden, -clamp_value, clamp_value);
    }
    return hidden;
  }

  BartAttention self_attn;
  torch::nn::LayerNorm self_attn_layer_norm;
  torch::nn::Linear fc1, fc2;
  torch::nn::LayerNorm final_layer_norm;
  double dropout, activation_dropout;
};
TORCH_MODULE(BartEncoderLayer);

struct BartDecoderLayerImpl : torch::nn::Module {
  explicit BartDecoderLayerImpl(const BartConfig& c)
      : self_attn(register_module("self_attn",
                                  BartAttention(c.d_model, c.decoder_attention_heads, c.attention_dropout, true))),
        self_attn_layer_norm(register_module("self_attn_layer_norm", MakeLayerNorm(c.d_model))),
        encoder_attn(register_module("encoder_attn",
                                     BartAttention(c.d_model, c.decoder_attention_heads, c.attention_dropout, false))),
        encoder_attn_layer_norm(register_module("encoder_attn_layer_norm", MakeLayerNorm(c.d_model))),
        fc1(register_module("fc1", torch::nn::Linear(c.d_model, c.decoder_ffn_dim))),
        fc2(register_module("fc2", torch::nn::Linear(c.decoder_ffn_dim, c.d_model))),
        final_layer_norm(register_module("final_layer_norm", MakeLayerNorm(c.d_model))),
        dropout(c.dropout),
        activation_dropout(c.activation_dropout) {}

  torch::Tensor forward(torch::Tensor hidden, const torch::Tensor& encoder_hidden) {
    const bool train = is_training();
    auto residual = hidden;
    hidden = Dropout(self_attn(hidden), dropout, train);
    hidden = self_attn_layer_norm(residual + hidden);
    residual = hidden;
    hidden = Dropout(encoder_attn(hidden, encoder_hidden), dropout, train);
    hidden = encoder_attn_layer_norm(residual + hidden);
    residual = hidden;
    hidden = Dropout(torch::gelu(fc1(hidden)), activation_dropout, train);
    hidden = Dropout(fc2(hidden), dropout, train);
    return final_layer_norm(residual + hidden);
  }

  BartAttention self_attn;
  torch::nn::LayerNorm self_attn_layer_norm;
  BartAttention encoder_attn;
  torch::nn::LayerNorm encoder_attn_layer_norm;
  torch::nn::Linear fc1, fc2;
  torch::nn::LayerNorm final_layer_norm;
  double dropout, activation_dropout;
};
TORCH_MODULE(BartDecoderLayer);

// One stack: tied token embedding plus learned positions, LayerNorm on the
// embeddings, dropout, then the layers (with LayerDrop's draw in training).
struct BartStackImpl : torch::nn::Module {
  BartStackImpl(const BartConfig& c, bool is_decoder_arg, const torch::Tensor& shared)
      : embed_tokens(register_module(
            "embed_tokens", ScaledTiedEmbedding(shared, c.pad_token_id,
                                                c.scale_embedding ? std::sqrt(static_cast<double>(c.d_model)) : 1.0))),
        embed_positions(register_module("embed_positions",
                                        torch::nn::Embedding(c.max_position_embeddings + kPositionOffset, c.d_model))),
        layers(register_module("layers", torch::nn::ModuleList())),
        layernorm_embedding(register_module("layernorm_embedding", MakeLayerNorm(c.d_model))),
        is_decoder(is_decoder_arg),
        dropout(c.dropout),
        layerdrop(is_decoder_arg ? c.decoder_layerdrop : c.encoder_layerdrop) {
    const int64_t n = is_decoder_arg ? c.decoder_layers : c.encoder_layers;
    for (int64_t i = 0; i < n; ++i) {
      if (is_decoder_arg) {
        layers->push_back(BartDecoderLayer(c));
      } else {
        layers->push_back(BartEncoderLayer(c));
      }
    }
  }

  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& encoder_hidden = {}) {
    const auto bsz = input_ids.size(0), seq = input_ids.size(1);
    TORCH_CHECK(seq + kPositionOffset <= embed_positions->weight.size(0), "hf_bart: sequence length ", seq,
                " exceeds max_position_embeddings");
    auto inputs_embeds = embed_tokens(input_ids);
    // The encoder's position ids are expanded over the batch, the decoder's
    // (its cache positions) are one row; the shapes decide how the embedding
    // gradient is reduced, so both are kept.
    auto positions = torch::arange(seq, input_ids.options());
    positions = is_decoder ? positions.unsqueeze(0) : positions.expand({bsz, -1});
    auto embed_pos = embed_positions(positions + kPositionOffset);
    auto hidden = inputs_embeds + embed_pos;
    hidden = Dropout(layernorm_embedding(hidden), dropout, is_training());
    for (const auto& layer : *layers) {
      if (is_training()) {
        // LayerDrop: the reference draws this even at probability 0.
        if (torch::rand({}).item<double>() < layerdrop) continue;
      }
      hidden = is_decoder ? layer->as<BartDecoderLayerImpl>()->forward(hidden, encoder_hidden)
                          : layer->as<BartEncoderLayerImpl>()->forward(hidden);
    }
    return hidden;
  }

  ScaledTiedEmbedding embed_tokens;
  torch::nn::Embedding embed_positions;
  torch::nn::ModuleList layers;
  torch::nn::LayerNorm layernorm_embedding;
  bool is_decoder;
  double dropout, layerdrop;
};
TORCH_MODULE(BartStack);

struct BartModelImpl : torch::nn::Module {
  explicit BartModelImpl(const BartConfig& c)
      : shared(register_module(
            "shared",
            torch::nn::Embedding(torch::nn::EmbeddingOptions(c.vocab_size, c.d_model).padding_idx(c.pad_token_id)))),
        encoder(register_module("encoder", BartStack(c, /*is_decoder=*/false, shared->weight))),
        decoder(register_module("decoder", BartStack(c, /*is_decoder=*/true, shared->weight))) {}
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& decoder_input_ids) {
    auto encoder_hidden = encoder(input_ids);
    return decoder(decoder_input_ids, encoder_hidden);
  }
  torch::nn::Embedding shared;
  BartStack encoder, decoder;
};
TORCH_MODULE(BartModel);

struct BartForConditionalGenerationImpl : torch::nn::Module {
  explicit BartForConditionalGenerationImpl(const BartConfig& c)
      : model(register_module("model", BartModel(c))),
        lm_head(register_module("lm_head", TiedWeights(model->shared->weight))),
        final_logits_bias(register_buffer("final_logits_bias", torch::zeros({1, c.vocab_size}))) {
    // BartPreTrainedModel._init_weights with init_std. The tied stacks'
    // embed_tokens and lm_head read the shared table.
    InitHfWeights(*this, c.init_std);
  }

  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& decoder_input_ids) {
    auto logits = lm_head(model(input_ids, decoder_input_ids));
    return logits + final_logits_bias;
  }

  BartModel model;
  TiedWeights lm_head;
  torch::Tensor final_logits_bias;
};
TORCH_MODULE(BartForConditionalGeneration);

}  // namespace

void AddBartModels(std::vector<ModelInfo>& out) {
  const BartConfig config;
  auto info = LanguageModelInfo({
      .id = "hf_bart",
      .paper_name = "hf_Bart",
      .reference = "transformers.BartForConditionalGeneration(\"facebook/bart-base\" config) (TorchBench hf_Bart: "
                   "AutoModelForSeq2SeqLM)",
      // torchbenchmark/models/hf_Bart/__init__.py: DEFAULT_TRAIN_BSIZE = 4, DEFAULT_EVAL_BSIZE = 1.
      .default_batch = {4, 1},
      .objective = LmObjective::kSeq2Seq,
      .vocab_size = config.vocab_size,
      // TorchBench's Hugging Face model table (basic_configs.py, "hf_Bart"): 512 and 512.
      .train_seq_len = 512,
      .eval_seq_len = 512,
      .pad_token_id = config.pad_token_id,
      .decoder_start_token_id = config.decoder_start_token_id,
      .build =
          [] {
            BartForConditionalGeneration net(BartConfig{});
            auto forward = [net](const torch::Tensor& ids, const torch::Tensor& decoder_ids) mutable {
              return net->forward(ids, decoder_ids);
            };
            return LanguageModel{net.ptr(), forward};
          },
  });
  // One train step at 4 x 512 source and target tokens is several TFLOP, far
  // over 2 s on 2 CPU cores.
  info.cpu_batch = BatchSizes{1, 1};
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
