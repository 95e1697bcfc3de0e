#include "models/nlp/longformer.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "models/nlp/bert_encoder.h"
#include "models/shared/hf_harness.h"
#include "models/nlp/long_document_lm.h"

namespace torchgauge::models {
namespace {

// allenai/longformer-base-4096's config.json.
struct LongformerConfig {
  int64_t vocab_size = 50265;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  int64_t max_position_embeddings = 4098;
  int64_t type_vocab_size = 1;
  int64_t pad_token_id = 1;
  int64_t attention_window = 512;  // every layer
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  double layer_norm_eps = 1e-5;
  double initializer_range = 0.02;
};

// torchbenchmark/models/hf_Longformer/__init__.py: DEFAULT_TRAIN_BSIZE = 2, DEFAULT_EVAL_BSIZE = 1.
const LongDocumentNames kNames = {
    .id = "hf_longformer",
    .paper_name = "hf_Longformer",
    .reference =
        "transformers.LongformerForMaskedLM(allenai/longformer-base-4096 config) (TorchBench hf_Longformer: "
        "AutoModelForMaskedLM)",
};

constexpr float kFloatMin = std::numeric_limits<float>::lowest();  // torch.finfo(torch.float32).min

struct LongformerEmbeddingsImpl : torch::nn::Module {
  explicit LongformerEmbeddingsImpl(const LongformerConfig& c)
      : word_embeddings(
            register_module("word_embeddings",
                            torch::nn::Embedding(
                                torch::nn::EmbeddingOptions(c.vocab_size, c.hidden_size).padding_idx(c.pad_token_id)))),
        token_type_embeddings(
            register_module("token_type_embeddings", torch::nn::Embedding(c.type_vocab_size, c.hidden_size))),
        LayerNorm(register_module("LayerNorm", MakeLayerNorm(c.hidden_size, c.layer_norm_eps))),
        position_embeddings(register_module(
            "position_embeddings",
            torch::nn::Embedding(
                torch::nn::EmbeddingOptions(c.max_position_embeddings, c.hidden_size).padding_idx(c.pad_token_id)))),
        padding_idx(c.pad_token_id),
        dropout_p(c.hidden_dropout_prob) {}

  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids) {
    TORCH_CHECK(input_ids.size(1) + padding_idx < position_embeddings->weight.size(0),
                "hf_longformer: sequence length ", input_ids.size(1), " exceeds the position table");
    auto position_ids = RobertaPositionIds(input_ids, padding_idx);
    auto inputs_embeds = word_embeddings(input_ids);
    auto position_embeds = position_embeddings(position_ids);
    auto type_embeds = token_type_embeddings(token_type_ids);
    auto embeddings = inputs_embeds + position_embeds;
    embeddings = embeddings + type_embeds;
    embeddings = LayerNorm(embeddings);
    return torch::dropout(embeddings, dropout_p, is_training());
  }

  torch::nn::Embedding word_embeddings, token_type_embeddings;
  torch::nn::LayerNorm LayerNorm;
  torch::nn::Embedding position_embeddings;
  int64_t padding_idx;
  double dropout_p;
};
TORCH_MODULE(LongformerEmbeddings);

// --- transformers' LongformerSelfAttention helpers, op for op. -------------

// Overlapping chunks of 2w with overlap w: [b, s, d] -> [b, s/w - 1, 2w, d].
torch::Tensor Chunk(const torch::Tensor& hidden, int64_t w) {
  auto h = hidden.view({hidden.size(0), hidden.size(1) / (w * 2), w * 2, hidden.size(2)});
  auto size = h.sizes().vec();
  size[1] = size[1] * 2 - 1;
  auto stride = h.strides().vec();
  stride[1] = stride[1] / 2;
  return h.as_strided(size, stride);
}

// Pads rows, then reads the result with rows and columns swapped.
torch::Tensor PadAndTransposeLastTwoDims(const torch::Tensor& x, std::vector<int64_t> padding) {
  auto padded = torch::nn::functional::pad(x, torch::nn::functional::PadFuncOptions(std::move(padding)));
  auto size = padded.sizes().vec();
  std::swap(size[size.size() - 1], size[size.size() - 2]);
  return padded.view(size);
}

// Shifts row i of every chunk i steps right (columns become diagonals).
torch::Tensor PadAndDiagonalize(torch::Tensor x) {
  const int64_t heads = x.size(0), chunks = x.size(1), w = x.size(2), hidden_dim = x.size(3);
  x = torch::nn::functional::pad(x, torch::nn::functional::PadFuncOptions({0, w + 1}));
  x = x.view({heads, chunks, -1});
  x = x.slice(2, 0, -w);
  x = x.view({heads, chunks, w, w + hidden_dim});
  return x.slice(3, 0, -1);
}

// -inf where the window reaches before the first or past the last token.
void MaskInvalidLocations(torch::Tensor& input, int64_t w) {
  auto beginning_mask_2d = input.new_ones({w, w + 1}).tril().flip({0});
  auto beginning_mask = beginning_mask_2d.unsqueeze(0).unsqueeze(2);
  auto ending_mask = beginning_mask.flip({1, 3});
  auto beginning_input = input.slice(1, 0, w).slice(3, 0, w + 1);
  beginning_mask = beginning_mask.expand(beginning_input.sizes());
  auto beginning_value =
      torch::where(beginning_mask.to(torch::kBool),
                   torch::full_like(beginning_input, -std::numeric_limits<float>::infinity()), beginning_input);
  input.slice(1, 0, w).slice(3, 0, w + 1).copy_(beginning_value);
  auto ending_input = input.slice(1, -w).slice(3, -(w + 1));
  ending_mask = ending_mask.expand(ending_input.sizes());
  auto ending_value =
      torch::where(ending_mask.to(torch::kBool),
                   torch::full_like(ending_input, -std::numeric_limits<float>::infinity()), ending_input);
  input.slice(1, -w).slice(3, -(w + 1)).copy_(ending_value);
}

// q k^T restricted to the band |i - j| <= w: [b, s, h, d] x2 -> [b, s, h, 2w + 1].
torch::Tensor SlidingChunksQueryKeyMatmul(torch::Tensor query, torch::Tensor key, int64_t w) {
  const int64_t bsz = query.size(0), seq = query.size(1), heads = query.size(2), dim = query.size(3);
  TORCH_CHECK(seq % (w * 2) == 0, "hf_longformer: sequence length should be a multiple of ", w * 2);
  const int64_t chunks_count = seq / w - 1;
  query = query.transpose(1, 2).reshape({bsz * heads, seq, dim});
  key = key.transpose(1, 2).reshape({bsz * heads, seq, dim});
  query = Chunk(query, w);
  key = Chunk(key, w);
  auto chunked_scores = torch::einsum("bcxd,bcyd->bcxy", {query, key});
  chunked_scores = PadAndTransposeLastTwoDims(chunked_scores, {0, 0, 0, 1});
  auto diagonal = chunked_scores.new_zeros({bsz * heads, chunks_count + 1, w, w * 2 + 1});
  diagonal.slice(1, 0, -1).slice(3, w).copy_(chunked_scores.slice(2, 0, w).slice(3, 0, w + 1));
  diagonal.select(1, -1).slice(2, w).copy_(chunked_scores.select(1, -1).slice(1, w).slice(2, 0, w + 1));
  diagonal.slice(1, 1).slice(3, 0, w).copy_(chunked_scores.slice(2, -(w + 1), -1).slice(3, w + 1));
  diagonal.select(1, 0).slice(1, 1, w).slice(2, 1, w).copy_(
      chunked_scores.select(1, 0).slice(1, 0, w - 1).slice(2, 1 - w));
  diagonal = diagonal.view({bsz, heads, seq, 2 * w + 1}).transpose(2, 1);
  MaskInvalidLocations(diagonal, w);
  return diagonal;
}

// The banded probabilities times the values: [b, s, h, 2w + 1] x [b, s, h, d].
torch::Tensor SlidingChunksMatmulAttnProbsValue(const torch::Tensor& attn_probs, torch::Tensor value, int64_t w) {
  const int64_t bsz = value.size(0), seq = value.size(1), heads = value.size(2), dim = value.size(3);
  const int64_t chunks_count = seq / w - 1;
  auto chunked_attn_probs = attn_probs.transpose(1, 2).reshape({bsz * heads, seq / w, w, 2 * w + 1});
  value = value.transpose(1, 2).reshape({bsz * heads, seq, dim});
  auto padded_value = torch::nn::functional::pad(value, torch::nn::functional::PadFuncOptions({0, 0, w, w}).value(-1));
  auto st = padded_value.strides();
  auto chunked_value =
      padded_value.as_strided({bsz * heads, chunks_count + 1, 3 * w, dim}, {st[0], w * st[1], st[1], st[2]});
  chunked_attn_probs = PadAndDiagonalize(chunked_attn_probs);
  auto context = torch::einsum("bcwd,bcdh->bcwh", {chunked_attn_probs, chunked_value});
  return context.view({bsz, heads, seq, dim}).transpose(1, 2);
}

// What every layer reads from the (padded) attention mask.
struct LongformerMask {
  torch::Tensor extended;         // [b, s]: 0 attend, finfo.min masked
  torch::Tensor is_index_masked;  // [b, s] bool
};

struct LongformerSelfAttentionImpl : torch::nn::Module {
  explicit LongformerSelfAttentionImpl(const LongformerConfig& c)
      : query(register_module("query", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        key(register_module("key", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        value(register_module("value", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        query_global(register_module("query_global", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        key_global(register_module("key_global", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        value_global(register_module("value_global", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        num_heads(c.num_attention_heads),
        head_dim(c.hidden_size / c.num_attention_heads),
        embed_dim(c.hidden_size),
        one_sided_window(c.attention_window / 2),
        dropout_p(c.attention_probs_dropout_prob) {
    TORCH_CHECK(c.hidden_size % c.num_attention_heads == 0, "hf_longformer: hidden size not divisible by heads");
    TORCH_CHECK(c.attention_window > 0 && c.attention_window % 2 == 0,
                "hf_longformer: the attention window must be positive and even");
  }

  torch::Tensor forward(const torch::Tensor& hidden, const LongformerMask& mask) {
    auto hidden_states = hidden.transpose(0, 1);  // [s, b, e]
    auto query_vectors = query(hidden_states);
    auto key_vectors = key(hidden_states);
    auto value_vectors = value(hidden_states);
    const int64_t seq = hidden_states.size(0), bsz = hidden_states.size(1);
    query_vectors.div_(std::sqrt(static_cast<double>(head_dim)));
    query_vectors = query_vectors.view({seq, bsz, num_heads, head_dim}).transpose(0, 1);
    key_vectors = key_vectors.view({seq, bsz, num_heads, head_dim}).transpose(0, 1);
    auto attn_scores = SlidingChunksQueryKeyMatmul(query_vectors, key_vectors, one_sided_window);
    // Masked keys: finfo.min spread over the same band.
    auto remove_from_windowed_attention_mask = (mask.extended != 0).unsqueeze(2).unsqueeze(3);
    auto float_mask = remove_from_windowed_attention_mask.to(query_vectors.scalar_type())
                          .masked_fill(remove_from_windowed_attention_mask, kFloatMin);
    auto diagonal_mask =
        SlidingChunksQueryKeyMatmul(float_mask.new_ones(float_mask.sizes()), float_mask, one_sided_window);
    attn_scores += diagonal_mask;
    auto attn_probs = torch::softmax(attn_scores, -1, torch::kFloat32);
    attn_probs = torch::masked_fill(attn_probs, mask.is_index_masked.unsqueeze(2).unsqueeze(3), 0.0);
    attn_probs = attn_probs.to(attn_scores.scalar_type());
    attn_probs = torch::dropout(attn_probs, dropout_p, is_training());
    value_vectors = value_vectors.view({seq, bsz, num_heads, head_dim}).transpose(0, 1);
    auto attn_output = SlidingChunksMatmulAttnProbsValue(attn_probs, value_vectors, one_sided_window);
    attn_output = attn_output.transpose(0, 1).reshape({seq, bsz, embed_dim}).contiguous();
    return attn_output.transpose(0, 1);
  }

  torch::nn::Linear query, key, value, query_global, key_global, value_global;
  int64_t num_heads, head_dim, embed_dim, one_sided_window;
  double dropout_p;
};
TORCH_MODULE(LongformerSelfAttention);

struct LongformerAttentionImpl : torch::nn::Module {
  explicit LongformerAttentionImpl(const LongformerConfig& c)
      : self(register_module("self", LongformerSelfAttention(c))),
        output(register_module("output", BertResidualOutput(c.hidden_size, BertBlocksOf(c)))) {}
  torch::Tensor forward(const torch::Tensor& hidden, const LongformerMask& mask) {
    return output(self(hidden, mask), hidden);
  }
  LongformerSelfAttention self;
  BertResidualOutput output;
};
TORCH_MODULE(LongformerAttention);

struct LongformerLayerImpl : torch::nn::Module {
  explicit LongformerLayerImpl(const LongformerConfig& c)
      : attention(register_module("attention", LongformerAttention(c))),
        intermediate(register_module("intermediate", BertIntermediate(BertBlocksOf(c)))),
        output(register_module("output", BertResidualOutput(c.intermediate_size, BertBlocksOf(c)))) {}
  torch::Tensor forward(const torch::Tensor& hidden, const LongformerMask& mask) {
    auto attention_output = attention(hidden, mask);
    return output(intermediate(attention_output), attention_output);
  }
  LongformerAttention attention;
  BertIntermediate intermediate;
  BertResidualOutput output;
};
TORCH_MODULE(LongformerLayer);

struct LongformerEncoderImpl : torch::nn::Module {
  explicit LongformerEncoderImpl(const LongformerConfig& c) : layer(register_module("layer", torch::nn::ModuleList())) {
    for (int64_t i = 0; i < c.num_hidden_layers; ++i) layer->push_back(LongformerLayer(c));
  }
  torch::Tensor forward(torch::Tensor hidden, const torch::Tensor& extended_mask, int64_t padding_len) {
    LongformerMask mask{extended_mask, extended_mask < 0};
    auto is_index_global_attn = extended_mask > 0;
    // The reference reads this flag on the host (a device sync, as there).
    const bool is_global_attn = is_index_global_attn.flatten().any().item<bool>();
    TORCH_CHECK(!is_global_attn, "hf_longformer: global attention is not implemented (see models/nlp/longformer.h)");
    for (const auto& l : *layer) hidden = l->as<LongformerLayerImpl>()->forward(hidden, mask);
    return hidden.slice(1, 0, hidden.size(1) - padding_len);
  }
  torch::nn::ModuleList layer;
};
TORCH_MODULE(LongformerEncoder);

// LongformerModel without the pooler (LongformerForMaskedLM builds it with
// add_pooling_layer=False).
struct LongformerModelImpl : torch::nn::Module {
  explicit LongformerModelImpl(const LongformerConfig& c)
      : embeddings(register_module("embeddings", LongformerEmbeddings(c))),
        encoder(register_module("encoder", LongformerEncoder(c))),
        config(c) {}

  torch::Tensor forward(torch::Tensor input_ids) {
    namespace F = torch::nn::functional;
    const int64_t bsz = input_ids.size(0), seq = input_ids.size(1);
    auto attention_mask = torch::ones({bsz, seq}, input_ids.options().dtype(torch::kFloat));
    auto token_type_ids = torch::zeros({bsz, seq}, input_ids.options());
    // _pad_to_window_size: pad tokens, unattended, token type 0.
    const int64_t padding_len = (config.attention_window - seq % config.attention_window) % config.attention_window;
    if (padding_len > 0) {
      input_ids = F::pad(input_ids, F::PadFuncOptions({0, padding_len}).value(config.pad_token_id));
      attention_mask = F::pad(attention_mask, F::PadFuncOptions({0, padding_len}).value(0));
      token_type_ids = F::pad(token_type_ids, F::PadFuncOptions({0, padding_len}).value(0));
    }
    // get_extended_attention_mask(...)[:, 0, 0, :]
    // torch::rsub(x, 1.0), not 1.0 - x: LibTorch computes Scalar - Tensor in place
    // on a new tensor, which the inductor backend's exporter rejects in eval.
    auto extended = torch::rsub(attention_mask.unsqueeze(1).unsqueeze(2), 1.0) * kFloatMin;
    extended = extended.select(1, 0).select(1, 0);
    auto embedding_output = embeddings(input_ids, token_type_ids);
    return encoder(embedding_output, extended, padding_len);
  }

  LongformerEmbeddings embeddings;
  LongformerEncoder encoder;
  LongformerConfig config;
};
TORCH_MODULE(LongformerModel);

// LongformerForMaskedLM (LongformerPreTrainedModel._init_weights, initializer_range 0.02).
struct LongformerForMaskedLMImpl : MaskedLmImpl<LongformerModel, RobertaLMHead> {
  explicit LongformerForMaskedLMImpl(const LongformerConfig& c)
      : MaskedLmImpl(c, "longformer", LongformerModel(c), "lm_head", BertBlocksOf(c)) {}
};
TORCH_MODULE(LongformerForMaskedLM);

}  // namespace

ModelInfo HfLongformerInfoForTest(int64_t num_hidden_layers) {
  return LongDocumentMaskedLmWithLayers<LongformerForMaskedLM, LongformerConfig>(kNames, num_hidden_layers);
}

void AddLongformerModels(std::vector<ModelInfo>& out) {
  out.push_back(LongDocumentMaskedLm<LongformerForMaskedLM>(kNames, LongformerConfig{}));
}

}  // namespace torchgauge::models
