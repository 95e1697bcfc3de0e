#include "models/nlp/bigbird.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <tuple>
#include <utility>

#include "models/nlp/bert_encoder.h"
#include "models/shared/hf_harness.h"
#include "models/nlp/long_document_lm.h"

namespace torchgauge::models {
namespace {

struct BigBirdConfig {
  int64_t vocab_size = 50358;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  int64_t max_position_embeddings = 4096;
  int64_t type_vocab_size = 2;
  int64_t pad_token_id = 0;
  int64_t block_size = 64;
  int64_t num_random_blocks = 3;
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  double layer_norm_eps = 1e-12;
  double initializer_range = 0.02;
};

// torchbenchmark/models/hf_BigBird/__init__.py: DEFAULT_TRAIN_BSIZE = 2, DEFAULT_EVAL_BSIZE = 1.
const LongDocumentNames kNames = {
    .id = "hf_bigbird",
    .paper_name = "hf_BigBird",
    .reference =
        "transformers.BigBirdForMaskedLM(BigBirdConfig(attention_type=\"block_sparse\")) (TorchBench hf_BigBird: "
        "AutoModelForMaskedLM)",
};

// The blocks BigBird shares with BERT, with its hidden_act "gelu_new".
BertBlocksConfig Blocks(const BigBirdConfig& c) { return BertBlocksOf(c, HiddenAct::kGeluNew); }

// ---------------------------------------------------------------------------
// numpy's legacy global generator (np.random.seed / np.random.permutation).

class NumpyLegacyRandom {
 public:
  // np.random.seed(int): MT19937's init_genrand, which std::mt19937 uses too.
  explicit NumpyLegacyRandom(uint32_t seed) : mt_(seed) {}

  // numpy's random_interval: a value in [0, max] by masked rejection over
  // 32-bit outputs.
  uint32_t Interval(uint32_t max) {
    if (max == 0) return 0;
    uint32_t mask = max;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    uint32_t value;
    while ((value = (static_cast<uint32_t>(mt_()) & mask)) > max) {
    }
    return value;
  }

  // RandomState.permutation(1-D array): a shuffled copy, Fisher-Yates from
  // the last element down.
  std::vector<int32_t> Permutation(std::vector<int32_t> x) {
    for (size_t i = x.size(); i-- > 1;) std::swap(x[i], x[Interval(static_cast<uint32_t>(i))]);
    return x;
  }

 private:
  std::mt19937 mt_;
};

// Python's a[begin:end] for non-negative bounds.
std::vector<int32_t> Slice(const std::vector<int32_t>& v, int64_t begin, int64_t end) {
  begin = std::min<int64_t>(begin, v.size());
  end = std::min<int64_t>(end, v.size());
  if (end <= begin) return {};
  return {v.begin() + begin, v.begin() + end};
}

// transformers' BigBirdBlockSparseAttention._bigbird_block_rand_mask for one
// head: rows are query blocks 1 .. n-2, columns the random key blocks.
std::vector<std::vector<int32_t>> BlockRandMask(NumpyLegacyRandom& rng, int64_t seq_length, int64_t block_size,
                                                int64_t num_rand_blocks, int64_t last_idx, bool training) {
  const int64_t num_blocks = seq_length / block_size;
  std::vector<std::vector<int32_t>> rand_attn(num_blocks - 2, std::vector<int32_t>(num_rand_blocks, 0));
  if (!training) return rand_attn;  // "During inference (eval) no randomness"
  std::vector<int32_t> middle_seq;
  for (int64_t b = 1; b < num_blocks - 1; ++b) middle_seq.push_back(static_cast<int32_t>(b));
  int64_t last = num_blocks - 1;
  if (last_idx > 2 * block_size) last = last_idx / block_size - 1;
  const int64_t r = num_rand_blocks;
  for (int64_t i = 1; i < num_blocks - 1; ++i) {
    int64_t start = i - 2;
    const int64_t end = i;
    std::vector<int32_t> choice;
    if (i == 1) {
      choice = rng.Permutation(Slice(middle_seq, 2, last));
    } else if (i == 2) {
      choice = rng.Permutation(Slice(middle_seq, 3, last));
    } else if (i == num_blocks - 3 || i == num_blocks - 2) {
      choice = rng.Permutation(Slice(middle_seq, 0, last));
    } else if (start > last) {
      start = last;
      choice = rng.Permutation(Slice(middle_seq, 0, start));
    } else if (end + 1 == last) {
      choice = rng.Permutation(Slice(middle_seq, 0, start));
    } else {
      auto pool = Slice(middle_seq, 0, start);
      auto tail = Slice(middle_seq, end + 1, last);
      pool.insert(pool.end(), tail.begin(), tail.end());
      choice = rng.Permutation(std::move(pool));
    }
    TORCH_CHECK(static_cast<int64_t>(choice.size()) >= r, "hf_bigbird: too few blocks to draw random attention from");
    for (int64_t c = 0; c < r; ++c) rand_attn[i - 1][c] = choice[c];
  }
  return rand_attn;
}

// The random key blocks of one layer: [heads, seq/block - 2, random blocks],
// as transformers' bigbird_block_sparse_attention draws them after
// np.random.seed(layer_idx). The draw depends only on its arguments, so it is
// cached (as plain numbers: the tensor is made in the caller's grad mode).
torch::Tensor RandomAttentionPlan(const BigBirdConfig& c, int64_t layer_idx, int64_t seq_length, bool training) {
  static std::mutex mutex;
  static std::map<std::tuple<int64_t, int64_t, int64_t, bool>, std::vector<int64_t>> cache;
  TORCH_CHECK(seq_length == 1024 || seq_length == 3072 || seq_length == 4096, "hf_bigbird: block-sparse attention at ",
              seq_length,
              " tokens needs transformers' per-head random plan, which is not implemented (only 1024, 3072 and "
              "4096 tokens, the lengths TorchBench uses, are)");
  const int64_t rows = seq_length / c.block_size - 2;
  std::vector<int64_t> plan;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto key = std::make_tuple(layer_idx, seq_length, c.num_attention_heads, training);
    auto it = cache.find(key);
    if (it == cache.end()) {
      std::vector<int64_t> values;
      NumpyLegacyRandom rng(static_cast<uint32_t>(layer_idx));
      for (int64_t h = 0; h < c.num_attention_heads; ++h) {
        // The paper's plan: drawn for max_position_embeddings tokens with only
        // the first 1024 tokens eligible, then cut to this length.
        auto head = BlockRandMask(rng, c.max_position_embeddings, c.block_size, c.num_random_blocks,
                                  /*last_idx=*/1024, training);
        for (int64_t i = 0; i < rows; ++i) values.insert(values.end(), head[i].begin(), head[i].end());
      }
      it = cache.emplace(key, std::move(values)).first;
    }
    plan = it->second;
  }
  return torch::tensor(plan, torch::kLong).view({c.num_attention_heads, rows, c.num_random_blocks});
}

// ---------------------------------------------------------------------------
// Modules.

struct BigBirdEmbeddingsImpl : torch::nn::Module {
  explicit BigBirdEmbeddingsImpl(const BigBirdConfig& c)
      : word_embeddings(
            register_module("word_embeddings",
                            torch::nn::Embedding(
                                torch::nn::EmbeddingOptions(c.vocab_size, c.hidden_size).padding_idx(c.pad_token_id)))),
        position_embeddings(
            register_module("position_embeddings", torch::nn::Embedding(c.max_position_embeddings, c.hidden_size))),
        token_type_embeddings(
            register_module("token_type_embeddings", torch::nn::Embedding(c.type_vocab_size, c.hidden_size))),
        LayerNorm(register_module("LayerNorm", MakeLayerNorm(c.hidden_size, c.layer_norm_eps))),
        dropout_p(c.hidden_dropout_prob) {}

  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids) {
    const auto seq_length = input_ids.size(1);
    TORCH_CHECK(seq_length <= position_embeddings->weight.size(0), "hf_bigbird: sequence length ", seq_length,
                " exceeds max_position_embeddings");
    auto position_ids = torch::arange(seq_length, input_ids.options()).unsqueeze(0);
    auto inputs_embeds = word_embeddings(input_ids);
    auto type_embeds = token_type_embeddings(token_type_ids);
    auto embeddings = inputs_embeds + type_embeds;
    embeddings += position_embeddings(position_ids);
    // BigBird applies dropout before the LayerNorm (BERT does it after).
    embeddings = torch::dropout(embeddings, dropout_p, is_training());
    return LayerNorm(embeddings);
  }

  torch::nn::Embedding word_embeddings, position_embeddings, token_type_embeddings;
  torch::nn::LayerNorm LayerNorm;
  double dropout_p;
};
TORCH_MODULE(BigBirdEmbeddings);

// The masks transformers derives from the 2-D attention mask for the
// block-sparse path (BigBirdModel.create_masks_for_block_sparse_attn).
struct BlockSparseMasks {
  torch::Tensor blocked, band, from, to;
};

BlockSparseMasks MakeBlockSparseMasks(const torch::Tensor& attention_mask, int64_t block_size) {
  const auto bsz = attention_mask.size(0), seq = attention_mask.size(1);
  BlockSparseMasks m;
  m.blocked = attention_mask.view({bsz, seq / block_size, block_size});
  auto exp_blocked_to_pad =
      torch::cat({m.blocked.slice(1, 1, -3), m.blocked.slice(1, 2, -2), m.blocked.slice(1, 3, -1)}, 2);
  m.band = torch::einsum("blq,blk->blqk", {m.blocked.slice(1, 2, -2), exp_blocked_to_pad}).unsqueeze(1);
  m.from = attention_mask.view({bsz, 1, seq, 1});
  m.to = attention_mask.view({bsz, 1, 1, seq});
  return m;
}

// transformers' torch_bmm_nd: batched a @ b over the leading dims.
torch::Tensor BmmNd(const torch::Tensor& a, const torch::Tensor& b, int64_t ndim) {
  auto shape = a.sizes().slice(0, ndim - 2).vec();
  shape.push_back(a.size(ndim - 2));
  shape.push_back(b.size(ndim - 1));
  return torch::bmm(a.reshape({-1, a.size(-2), a.size(-1)}), b.reshape({-1, b.size(-2), b.size(-1)})).view(shape);
}

// transformers' torch_bmm_nd_transpose: batched a @ b^T over the leading dims.
torch::Tensor BmmNdTranspose(const torch::Tensor& a, const torch::Tensor& b, int64_t ndim) {
  auto shape = a.sizes().slice(0, ndim - 2).vec();
  shape.push_back(a.size(ndim - 2));
  shape.push_back(b.size(ndim - 2));
  return torch::bmm(a.reshape({-1, a.size(-2), a.size(-1)}), b.reshape({-1, b.size(-2), b.size(-1)}).transpose(1, 2))
      .view(shape);
}

// transformers' torch_gather_b2: picks blocks `indices` [b, h, n, r] out of
// params [b, h, blocks, block, d] with one index_select.
torch::Tensor GatherB2(const torch::Tensor& params, const torch::Tensor& indices) {
  const int64_t to_gather = indices.size(-2) * indices.size(-1);
  const int64_t pick_from = params.size(2);
  auto shift = torch::arange(indices.size(0) * indices.size(1) * to_gather, indices.options());
  auto indices_shift = torch::div(shift, to_gather, "floor") * pick_from;
  auto flattened_indices = indices.view(-1) + indices_shift;
  auto flattened_params = params.reshape({-1, params.size(-2), params.size(-1)});
  auto out = flattened_params.index_select(0, flattened_indices);
  return out.reshape({params.size(0), params.size(1), to_gather, params.size(3), params.size(4)});
}

struct BigBirdSelfAttentionImpl : torch::nn::Module {
  BigBirdSelfAttentionImpl(const BigBirdConfig& c, int64_t layer_idx_arg)
      : query(register_module("query", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        key(register_module("key", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        value(register_module("value", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        config(c),
        layer_idx(layer_idx_arg),
        num_heads(c.num_attention_heads),
        head_size(c.hidden_size / c.num_attention_heads) {
    TORCH_CHECK(c.hidden_size % c.num_attention_heads == 0, "hf_bigbird: hidden size not divisible by heads");
  }

  torch::Tensor SplitHeads(const torch::Tensor& t) const {
    return t.view({t.size(0), -1, num_heads, head_size}).transpose(1, 2);
  }

  // BigBirdSelfAttention ("original_full", short sequences): eager softmax
  // attention with dropout on the probabilities.
  torch::Tensor Full(const torch::Tensor& hidden, const torch::Tensor& extended_mask) {
    const auto bsz = hidden.size(0), len = hidden.size(1);
    auto q = SplitHeads(query(hidden));
    auto k = SplitHeads(key(hidden));
    auto v = SplitHeads(value(hidden));
    auto scores = torch::matmul(q, k.transpose(-1, -2));
    scores = scores / std::sqrt(static_cast<double>(head_size));
    scores = scores + extended_mask;
    auto probs = torch::softmax(scores, -1);
    probs = torch::dropout(probs, config.attention_probs_dropout_prob, is_training());
    auto context = torch::matmul(probs, v);
    return context.permute({0, 2, 1, 3}).contiguous().view({bsz, len, num_heads * head_size});
  }

  // BigBirdBlockSparseAttention.forward and bigbird_block_sparse_attention.
  torch::Tensor BlockSparse(const torch::Tensor& hidden, const BlockSparseMasks& masks) {
    const int64_t bsz = hidden.size(0), seq = hidden.size(1);
    const int64_t bs = config.block_size, r = config.num_random_blocks, h = num_heads;
    TORCH_CHECK(seq % bs == 0, "hf_bigbird: sequence length must be a multiple of the block size");
    const int64_t nb = seq / bs;
    auto query_layer = SplitHeads(query(hidden));
    auto key_layer = SplitHeads(key(hidden));
    auto value_layer = SplitHeads(value(hidden));

    const double rsqrt_d = 1.0 / std::sqrt(static_cast<double>(head_size));
    const double penalty = -10000.0;

    auto rand_attn = RandomAttentionPlan(config, layer_idx, seq, is_training()).to(hidden.device());
    rand_attn = rand_attn.unsqueeze(0);
    std::vector<torch::Tensor> copies(bsz, rand_attn);
    rand_attn = torch::cat(copies, 0);  // [bsz, h, nb - 2, r]

    // _create_rand_mask_from_inputs
    std::vector<torch::Tensor> per_batch;
    for (int64_t b = 0; b < bsz; ++b) per_batch.push_back(masks.blocked[b].index({rand_attn[b].flatten()}));
    auto rand_mask = torch::stack(per_batch).view({bsz, h, nb - 2, r * bs});
    rand_mask = torch::einsum("blq,bhlk->bhlqk", {masks.blocked.slice(1, 1, -1), rand_mask});

    auto bq = query_layer.view({bsz, h, nb, bs, -1});
    auto bk = key_layer.view({bsz, h, nb, bs, -1});
    auto bv = value_layer.view({bsz, h, nb, bs, -1});

    auto gathered_key = GatherB2(bk, rand_attn).view({bsz, h, nb - 2, r * bs, -1});
    auto gathered_value = GatherB2(bv, rand_attn).view({bsz, h, nb - 2, r * bs, -1});
    const auto& to_mask = masks.to;

    // 1st part: q[0] attends to every key (global block).
    auto first_product = BmmNdTranspose(bq.select(2, 0), key_layer, 4);
    first_product = first_product * rsqrt_d;
    // torch::rsub(x, 1.0), not 1.0 - x: LibTorch computes Scalar - Tensor in place
    // on a new tensor, which the inductor backend's exporter rejects in eval.
    first_product += torch::rsub(to_mask, 1.0) * penalty;
    auto first_attn_weights = torch::softmax(first_product, -1);
    auto first_context_layer = BmmNd(first_attn_weights, value_layer, 4).unsqueeze(2);

    // 2nd part: q[1] attends to key blocks 0, 1, 2, last and its random blocks.
    auto second_key_mat =
        torch::cat({bk.select(2, 0), bk.select(2, 1), bk.select(2, 2), bk.select(2, -1), gathered_key.select(2, 0)}, 2);
    auto second_value_mat = torch::cat(
        {bv.select(2, 0), bv.select(2, 1), bv.select(2, 2), bv.select(2, -1), gathered_value.select(2, 0)}, 2);
    auto second_product = BmmNdTranspose(bq.select(2, 1), second_key_mat, 4);
    auto second_seq_pad =
        torch::cat({to_mask.slice(3, 0, 3 * bs), to_mask.slice(3, -bs), to_mask.new_ones({bsz, 1, 1, r * bs})}, 3);
    auto second_rand_pad = torch::cat({rand_mask.new_ones({bsz, h, bs, 4 * bs}), rand_mask.select(2, 0)}, 3);
    second_product = second_product * rsqrt_d;
    second_product += torch::rsub(torch::minimum(second_seq_pad, second_rand_pad), 1.0) * penalty;
    auto second_attn_weights = torch::softmax(second_product, -1);
    auto second_context_layer = BmmNd(second_attn_weights, second_value_mat, 4).unsqueeze(2);

    // 3rd part: q[2:-2]: sliding window of 3 blocks, random blocks, and the
    // first and last (global) blocks.
    auto exp_blocked_key_matrix = torch::cat({bk.slice(2, 1, -3), bk.slice(2, 2, -2), bk.slice(2, 3, -1)}, 3);
    auto exp_blocked_value_matrix = torch::cat({bv.slice(2, 1, -3), bv.slice(2, 2, -2), bv.slice(2, 3, -1)}, 3);
    auto middle_query_matrix = bq.slice(2, 2, -2);
    auto inner_band_product = BmmNdTranspose(middle_query_matrix, exp_blocked_key_matrix, 5);
    inner_band_product = inner_band_product * rsqrt_d;
    auto rand_band_product = BmmNdTranspose(middle_query_matrix, gathered_key.slice(2, 1, -1), 5);
    rand_band_product = rand_band_product * rsqrt_d;
    auto first_band_product = torch::einsum("bhlqd,bhkd->bhlqk", {middle_query_matrix, bk.select(2, 0)});
    first_band_product = first_band_product * rsqrt_d;
    auto last_band_product = torch::einsum("bhlqd,bhkd->bhlqk", {middle_query_matrix, bk.select(2, -1)});
    last_band_product = last_band_product * rsqrt_d;
    inner_band_product += torch::rsub(masks.band, 1.0) * penalty;
    first_band_product += torch::rsub(to_mask.slice(3, 0, bs).unsqueeze(3), 1.0) * penalty;
    last_band_product += torch::rsub(to_mask.slice(3, -bs).unsqueeze(3), 1.0) * penalty;
    rand_band_product += torch::rsub(rand_mask.slice(2, 1, -1), 1.0) * penalty;
    auto band_product = torch::cat({first_band_product, inner_band_product, rand_band_product, last_band_product}, -1);
    auto attn_weights = torch::softmax(band_product, -1);
    auto context_layer = BmmNd(attn_weights.slice(4, bs, 4 * bs), exp_blocked_value_matrix, 5);
    context_layer += BmmNd(attn_weights.slice(4, 4 * bs, -bs), gathered_value.slice(2, 1, -1), 5);
    context_layer += torch::einsum("bhlqk,bhkd->bhlqd", {attn_weights.slice(4, 0, bs), bv.select(2, 0)});
    context_layer += torch::einsum("bhlqk,bhkd->bhlqd", {attn_weights.slice(4, -bs), bv.select(2, -1)});

    // 4th part: q[-2], the mirror of q[1].
    auto second_last_key_mat = torch::cat(
        {bk.select(2, 0), bk.select(2, -3), bk.select(2, -2), bk.select(2, -1), gathered_key.select(2, -1)}, 2);
    auto second_last_value_mat = torch::cat(
        {bv.select(2, 0), bv.select(2, -3), bv.select(2, -2), bv.select(2, -1), gathered_value.select(2, -1)}, 2);
    auto second_last_product = BmmNdTranspose(bq.select(2, -2), second_last_key_mat, 4);
    auto second_last_seq_pad =
        torch::cat({to_mask.slice(3, 0, bs), to_mask.slice(3, -3 * bs), to_mask.new_ones({bsz, 1, 1, r * bs})}, 3);
    auto second_last_rand_pad = torch::cat({rand_mask.new_ones({bsz, h, bs, 4 * bs}), rand_mask.select(2, -1)}, 3);
    second_last_product = second_last_product * rsqrt_d;
    second_last_product += torch::rsub(torch::minimum(second_last_seq_pad, second_last_rand_pad), 1.0) * penalty;
    auto second_last_attn_weights = torch::softmax(second_last_product, -1);
    auto second_last_context_layer = BmmNd(second_last_attn_weights, second_last_value_mat, 4).unsqueeze(2);

    // 5th part: q[-1] attends to every key (global block).
    auto last_product = BmmNdTranspose(bq.select(2, -1), key_layer, 4);
    last_product = last_product * rsqrt_d;
    last_product += torch::rsub(to_mask, 1.0) * penalty;
    auto last_attn_weights = torch::softmax(last_product, -1);
    auto last_context_layer = BmmNd(last_attn_weights, value_layer, 4).unsqueeze(2);

    auto out = torch::cat(
        {first_context_layer, second_context_layer, context_layer, second_last_context_layer, last_context_layer}, 2);
    out = out.view({bsz, h, seq, -1}) * masks.from;
    out = torch::transpose(out, 1, 2);
    return out.contiguous().view({bsz, seq, -1});
  }

  torch::nn::Linear query, key, value;
  BigBirdConfig config;
  int64_t layer_idx, num_heads, head_size;
};
TORCH_MODULE(BigBirdSelfAttention);

// What one forward pass of the encoder attends with: the block-sparse masks,
// or (full attention) the additive extended mask.
struct AttentionInputs {
  bool block_sparse = true;
  BlockSparseMasks masks;
  torch::Tensor extended_mask;
};

struct BigBirdAttentionImpl : torch::nn::Module {
  BigBirdAttentionImpl(const BigBirdConfig& c, int64_t layer_idx)
      : self(register_module("self", BigBirdSelfAttention(c, layer_idx))),
        output(register_module("output", BertResidualOutput(c.hidden_size, Blocks(c)))) {}
  torch::Tensor forward(const torch::Tensor& hidden, const AttentionInputs& a) {
    auto context = a.block_sparse ? self->BlockSparse(hidden, a.masks) : self->Full(hidden, a.extended_mask);
    return output(context, hidden);
  }
  BigBirdSelfAttention self;
  BertResidualOutput output;
};
TORCH_MODULE(BigBirdAttention);

struct BigBirdLayerImpl : torch::nn::Module {
  BigBirdLayerImpl(const BigBirdConfig& c, int64_t layer_idx)
      : attention(register_module("attention", BigBirdAttention(c, layer_idx))),
        intermediate(register_module("intermediate", BertIntermediate(Blocks(c)))),
        output(register_module("output", BertResidualOutput(c.intermediate_size, Blocks(c)))) {}
  torch::Tensor forward(const torch::Tensor& hidden, const AttentionInputs& a) {
    auto attention_output = attention(hidden, a);
    return output(intermediate(attention_output), attention_output);
  }
  BigBirdAttention attention;
  BertIntermediate intermediate;
  BertResidualOutput output;
};
TORCH_MODULE(BigBirdLayer);

struct BigBirdEncoderImpl : torch::nn::Module {
  explicit BigBirdEncoderImpl(const BigBirdConfig& c) : layer(register_module("layer", torch::nn::ModuleList())) {
    // transformers seeds each layer's random plan with the layer index.
    for (int64_t i = 0; i < c.num_hidden_layers; ++i) layer->push_back(BigBirdLayer(c, i));
  }
  torch::Tensor forward(torch::Tensor hidden, const AttentionInputs& a) {
    for (const auto& l : *layer) hidden = l->as<BigBirdLayerImpl>()->forward(hidden, a);
    return hidden;
  }
  torch::nn::ModuleList layer;
};
TORCH_MODULE(BigBirdEncoder);

// BigBirdModel with its pooler (dense + tanh on the first token), which
// BigBirdForMaskedLM keeps and computes although the MLM loss ignores it.
struct BigBirdModelImpl : torch::nn::Module {
  explicit BigBirdModelImpl(const BigBirdConfig& c)
      : embeddings(register_module("embeddings", BigBirdEmbeddings(c))),
        encoder(register_module("encoder", BigBirdEncoder(c))),
        pooler(register_module("pooler", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        config(c) {}

  torch::Tensor forward(torch::Tensor input_ids) {
    const int64_t bsz = input_ids.size(0);
    const int64_t seq_length = input_ids.size(1);
    auto attention_mask = torch::ones({bsz, seq_length}, input_ids.options().dtype(torch::kFloat));
    auto token_type_ids = torch::zeros({1, seq_length}, input_ids.options()).expand({bsz, seq_length});
    AttentionInputs a;
    const int64_t max_tokens_to_attend = (5 + 2 * config.num_random_blocks) * config.block_size;
    a.block_sparse = seq_length > max_tokens_to_attend;
    int64_t padding_len = 0;
    if (a.block_sparse) {
      // _pad_to_block_size: pad tokens, unattended, token type 0.
      padding_len = (config.block_size - seq_length % config.block_size) % config.block_size;
      if (padding_len > 0) {
        namespace F = torch::nn::functional;
        input_ids = F::pad(input_ids, F::PadFuncOptions({0, padding_len}).value(config.pad_token_id));
        attention_mask = F::pad(attention_mask, F::PadFuncOptions({0, padding_len}).value(0));
        token_type_ids = F::pad(token_type_ids, F::PadFuncOptions({0, padding_len}).value(0));
      }
      a.masks = MakeBlockSparseMasks(attention_mask, config.block_size);
    } else {
      a.extended_mask =
          torch::rsub(attention_mask.unsqueeze(1).unsqueeze(2), 1.0) * std::numeric_limits<float>::lowest();
    }
    auto embedding_output = embeddings(input_ids, token_type_ids);
    auto sequence_output = encoder(embedding_output, a);
    // The pooler output, computed as the reference computes it; the MLM
    // head does not read it.
    auto pooled = torch::tanh(pooler(sequence_output.select(1, 0)));
    (void)pooled;
    if (padding_len > 0) sequence_output = sequence_output.slice(1, 0, -padding_len);
    return sequence_output;
  }

  BigBirdEmbeddings embeddings;
  BigBirdEncoder encoder;
  torch::nn::Linear pooler;
  BigBirdConfig config;
};
TORCH_MODULE(BigBirdModel);

// BigBirdForMaskedLM (BigBirdPreTrainedModel._init_weights, initializer_range 0.02).
struct BigBirdForMaskedLMImpl : MaskedLmImpl<BigBirdModel, BertOnlyMLMHead> {
  explicit BigBirdForMaskedLMImpl(const BigBirdConfig& c)
      : MaskedLmImpl(c, "bert", BigBirdModel(c), "cls", Blocks(c)) {}
};
TORCH_MODULE(BigBirdForMaskedLM);

}  // namespace

ModelInfo HfBigBirdInfoForTest(int64_t num_hidden_layers) {
  return LongDocumentMaskedLmWithLayers<BigBirdForMaskedLM, BigBirdConfig>(kNames, num_hidden_layers);
}

void AddBigBirdModels(std::vector<ModelInfo>& out) {
  out.push_back(LongDocumentMaskedLm<BigBirdForMaskedLM>(kNames, BigBirdConfig{}));
}

}  // namespace torchgauge::models
