#include "models/nlp/reformer.h"

#include <c10/core/GeneratorImpl.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>

#include "models/shared/hf_harness.h"

namespace torchgauge::models {
namespace {

enum class AttnType { kLocal, kLsh };

// transformers 4.57.1 ReformerConfig() defaults, plus TorchBench's
// num_buckets = 128.
struct ReformerConfig {
  int64_t vocab_size = 320;
  int64_t hidden_size = 256;
  int64_t num_attention_heads = 12;
  int64_t attention_head_size = 64;
  int64_t feed_forward_size = 512;
  std::vector<AttnType> attn_layers = {AttnType::kLocal, AttnType::kLsh,   AttnType::kLocal,
                                       AttnType::kLsh,   AttnType::kLocal, AttnType::kLsh};
  std::vector<int64_t> axial_pos_shape = {64, 64};
  std::vector<int64_t> axial_pos_embds_dim = {64, 192};
  double axial_norm_std = 1.0;
  double hidden_dropout_prob = 0.05;
  double local_attention_probs_dropout_prob = 0.05;
  double lsh_attention_probs_dropout_prob = 0.0;
  double layer_norm_eps = 1e-12;
  double initializer_range = 0.02;
  int64_t local_attn_chunk_length = 64, lsh_attn_chunk_length = 64;
  int64_t local_num_chunks_before = 1, local_num_chunks_after = 0;
  int64_t lsh_num_chunks_before = 1, lsh_num_chunks_after = 0;
  int64_t num_buckets = 128;
  int64_t num_hashes = 1;
  int64_t max_position_embeddings = 4096;
  std::function<uint64_t()> layer_seed;
};

torch::nn::Linear NoBias(int64_t in, int64_t out) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}

torch::nn::LayerNorm Norm(int64_t dim, double eps) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(eps));
}

// EfficientAttentionMixin._look_adjacent: each chunk (dim 2) concatenated
// (dim 3) with its neighbours, wrapping around.
torch::Tensor LookAdjacent(const torch::Tensor& v, int64_t before, int64_t after) {
  if (before == 0 && after == 0) return v;
  std::vector<torch::Tensor> slices;
  for (int64_t i = -before; i <= after; ++i) {
    slices.push_back(i == 0 ? v : torch::cat({v.slice(2, i), v.slice(2, 0, i)}, 2));
  }
  return torch::cat(slices, 3);
}

// [B, S, H * D] -> [B, H, S, D]
torch::Tensor SplitHeads(const torch::Tensor& x, int64_t heads, int64_t head_size) {
  return x.view({x.size(0), x.size(1), heads, head_size}).transpose(2, 1);
}

// [B, H, S, D] -> [B, S, H * D]
torch::Tensor MergeHeads(const torch::Tensor& x, int64_t heads, int64_t head_size) {
  auto permuted = x.permute({0, 2, 1, 3});
  return torch::reshape(permuted, {permuted.size(0), -1, heads * head_size});
}

// _split_seq_length_dim_to: the sequence dimension into (f1, f2); vectors
// keep their last dimension, index tensors have none.
torch::Tensor SplitSeq(const torch::Tensor& v, int64_t f1, int64_t f2, int64_t heads) {
  if (v.dim() == 4) return torch::reshape(v, {v.size(0), heads, f1, f2, v.size(-1)});
  return torch::reshape(v, {v.size(0), heads, f1, f2});
}

// The mask values transformers keeps as fp32 / fp16 buffers, as a 0-dim
// tensor of the scores' dtype and device (cached).
class MaskValue {
 public:
  MaskValue(double fp32, double fp16) : fp32_(fp32), fp16_(fp16) {}
  const torch::Tensor& For(const torch::Tensor& scores) {
    if (!value_.defined() || value_.device() != scores.device() || value_.scalar_type() != scores.scalar_type()) {
      const double v = scores.scalar_type() == torch::kHalf ? fp16_ : fp32_;
      value_ =
          torch::scalar_tensor(v, torch::TensorOptions(scores.device()).dtype(torch::kFloat)).to(scores.scalar_type());
    }
    return value_;
  }

 private:
  double fp32_, fp16_;
  torch::Tensor value_;
};

// Softmax over the last dimension as transformers writes it: scores minus
// their logsumexp, exponentiated. Returns (probabilities, logsumexp).
std::pair<torch::Tensor, torch::Tensor> LogsumexpSoftmax(const torch::Tensor& scores) {
  auto logits = torch::logsumexp(scores, -1, /*keepdim=*/true);
  return {torch::exp(scores - logits), logits};
}

// transformers' ReverseSort: gathers the chunk-ordered outputs back into
// sequence order; its backward gathers the gradients by the sort order.
struct ReverseSort : torch::autograd::Function<ReverseSort> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& out,
                                                const torch::Tensor& logits, const torch::Tensor& sorted_idx,
                                                const torch::Tensor& undo_sorted_idx) {
    ctx->saved_data["sorted"] = sorted_idx;
    auto expanded = undo_sorted_idx.unsqueeze(-1).expand(out.sizes());
    return {torch::gather(out, 2, expanded), torch::gather(logits, 2, undo_sorted_idx)};
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto sorted_idx = ctx->saved_data["sorted"].toTensor();
    auto expanded = sorted_idx.unsqueeze(-1).expand(grads[0].sizes());
    return {torch::gather(grads[0], 2, expanded), torch::gather(grads[1], 2, sorted_idx), torch::Tensor(),
            torch::Tensor()};
  }
};

// The self-attention of one layer: [B, S, hidden] -> [B, S, H * D].
// `buckets`: LSH layers hash when it is undefined and return their buckets
// in it; given, they reuse them (the reversible backward's recomputation).
struct SelfAttentionImpl : torch::nn::Module {
  virtual torch::Tensor forward(const torch::Tensor& hidden, torch::Tensor& buckets) = 0;
};

// LSHSelfAttention: shared query/key projection, hashed into buckets,
// sorted, chunked attention over the previous chunk.
struct LshSelfAttentionImpl : SelfAttentionImpl {
  explicit LshSelfAttentionImpl(const ReformerConfig& c_arg)
      : c(c_arg),
        query_key(register_module("query_key",
                                  NoBias(c_arg.hidden_size, c_arg.num_attention_heads * c_arg.attention_head_size))),
        value(register_module("value",
                              NoBias(c_arg.hidden_size, c_arg.num_attention_heads * c_arg.attention_head_size))) {}

  torch::Tensor forward(const torch::Tensor& hidden, torch::Tensor& buckets) override {
    const int64_t seq = hidden.size(1), heads = c.num_attention_heads, d = c.attention_head_size;
    TORCH_CHECK(seq > c.lsh_attn_chunk_length, "hf_reformer: LSH attention needs more tokens than its chunk length");
    auto qk = SplitHeads(query_key(hidden), heads, d);
    auto v = SplitHeads(value(hidden), heads, d);
    if (!buckets.defined()) buckets = HashVectors(qk);
    auto [sorted_idx, undo_sorted_idx] = SortedBucketIdx(buckets);
    // Positions in the sequence of each sorted slot (one block per hash round).
    auto sorted_per_hash = sorted_idx.remainder(seq);
    qk = SplitSeq(GatherByExpansion(qk, sorted_per_hash), -1, c.lsh_attn_chunk_length, heads);
    v = SplitSeq(GatherByExpansion(v, sorted_per_hash), -1, c.lsh_attn_chunk_length, heads);
    auto key = LenAndDimNorm(qk);
    auto [out, logits] = Attend(qk, key, v, sorted_per_hash);
    auto unsorted = ReverseSort::apply(out, logits, sorted_idx, undo_sorted_idx);
    out = unsorted[0];
    if (c.num_hashes > 1) {
      // Hash rounds weighted by their share of the total attention mass.
      out = SplitSeq(out, c.num_hashes, seq, heads);
      auto round_logits = SplitSeq(unsorted[1], c.num_hashes, seq, heads).unsqueeze(-1);
      auto probs = torch::exp(round_logits - torch::logsumexp(round_logits, 2, /*keepdim=*/true));
      out = torch::sum(out * probs, 2);
    }
    return MergeHeads(out, heads, d);
  }

  // _hash_vectors: a fresh random rotation per forward; bucket = argmax over
  // [xR, -xR]; hash rounds offset by num_buckets. [B, H, rounds * S].
  torch::Tensor HashVectors(const torch::Tensor& qk) {
    TORCH_CHECK(c.num_buckets % 2 == 0, "hf_reformer: the number of buckets must be even");
    auto vectors = qk.detach();
    auto rotations =
        torch::randn({c.num_attention_heads, vectors.size(-1), c.num_hashes, c.num_buckets / 2}, vectors.options());
    auto rotated = torch::einsum("bmtd,mdhr->bmhtr", {vectors, rotations});
    rotated = torch::cat({rotated, -rotated}, -1);
    auto buckets = torch::argmax(rotated, -1);
    auto offsets = torch::arange(c.num_hashes, torch::TensorOptions(vectors.device()).dtype(torch::kLong));
    offsets = (offsets * c.num_buckets).view({1, 1, -1, 1});
    offsets = offsets.expand({vectors.size(0), c.num_attention_heads, offsets.size(-2), offsets.size(-1)});
    return (buckets + offsets).flatten(2, 3);
  }

  // _get_sorted_bucket_idx_and_undo_sorted_bucket_idx with _stable_argsort:
  // ties broken by position, then the inverse permutation.
  static std::pair<torch::Tensor, torch::Tensor> SortedBucketIdx(const torch::Tensor& buckets) {
    torch::NoGradGuard no_grad;
    const int64_t n = buckets.size(-1);
    auto long_opts = torch::TensorOptions(buckets.device()).dtype(torch::kLong);
    auto scale_offset = torch::arange(n, long_opts).view({1, 1, -1}).expand(buckets.sizes());
    auto sorted_idx = torch::argsort(buckets * n + scale_offset.remainder(n), /*dim=*/-1, /*descending=*/false);
    auto indices = torch::arange(n, long_opts).view({1, 1, -1}).expand(sorted_idx.sizes());
    auto undo_sorted_idx = torch::empty_like(sorted_idx).scatter_(-1, sorted_idx, indices);
    return {sorted_idx, undo_sorted_idx};
  }

  torch::Tensor GatherByExpansion(const torch::Tensor& vectors, const torch::Tensor& idx) const {
    auto expanded = idx.unsqueeze(-1).expand({-1, -1, -1, c.attention_head_size});
    return torch::gather(vectors.repeat({1, 1, c.num_hashes, 1}), 2, expanded);
  }

  // _len_and_dim_norm: unit RMS length, then 1 / sqrt(head size).
  torch::Tensor LenAndDimNorm(const torch::Tensor& x) const {
    auto variance = torch::mean(torch::pow(x, 2), -1, /*keepdim=*/true);
    auto normed = x * torch::rsqrt(variance + 1e-6);
    return normed / std::sqrt(static_cast<double>(c.attention_head_size));
  }

  // _attend on chunks: scores against the chunk and the one before, the
  // self mask, logsumexp softmax, dropout. Returns outputs and logsumexps
  // flattened back to [B, H, rounds * S, ...] in sorted order.
  std::pair<torch::Tensor, torch::Tensor> Attend(const torch::Tensor& query, torch::Tensor key, torch::Tensor value_arg,
                                                 const torch::Tensor& sorted_per_hash) {
    key = LookAdjacent(key, c.lsh_num_chunks_before, c.lsh_num_chunks_after);
    value_arg = LookAdjacent(value_arg, c.lsh_num_chunks_before, c.lsh_num_chunks_after);
    auto dots = torch::matmul(query, key.transpose(-1, -2));
    auto query_idx = SplitSeq(sorted_per_hash, -1, c.lsh_attn_chunk_length, c.num_attention_heads);
    auto key_idx = LookAdjacent(query_idx, c.lsh_num_chunks_before, c.lsh_num_chunks_after);
    // No causal or padding mask in the encoder. The self mask is always
    // applied: a shared query/key scores highest against itself.
    auto self_mask = torch::ne(query_idx.unsqueeze(-1), key_idx.unsqueeze(-2));
    dots = torch::where(self_mask, dots, self_mask_value.For(dots));
    auto [probs, logits] = LogsumexpSoftmax(dots);
    probs = torch::dropout(probs, c.lsh_attention_probs_dropout_prob, is_training());
    auto out = torch::matmul(probs, value_arg);
    return {out.flatten(2, 3), logits.flatten(2, 3).squeeze(-1)};
  }

  ReformerConfig c;
  torch::nn::Linear query_key, value;
  MaskValue self_mask_value{-1e5, -1e3};
};

// LocalSelfAttention: separate projections, keys scaled by 1/sqrt(head
// size), chunked attention over the previous chunk, no mask in the encoder.
struct LocalSelfAttentionImpl : SelfAttentionImpl {
  explicit LocalSelfAttentionImpl(const ReformerConfig& c_arg)
      : c(c_arg),
        query(
            register_module("query", NoBias(c_arg.hidden_size, c_arg.num_attention_heads * c_arg.attention_head_size))),
        key(register_module("key", NoBias(c_arg.hidden_size, c_arg.num_attention_heads * c_arg.attention_head_size))),
        value(register_module("value",
                              NoBias(c_arg.hidden_size, c_arg.num_attention_heads * c_arg.attention_head_size))) {}

  torch::Tensor forward(const torch::Tensor& hidden, torch::Tensor& /*buckets: none*/) override {
    const int64_t batch = hidden.size(0), seq = hidden.size(1), heads = c.num_attention_heads;
    const int64_t d = c.attention_head_size, chunk = c.local_attn_chunk_length;
    TORCH_CHECK(seq > chunk, "hf_reformer: local attention needs more tokens than its chunk length");
    auto q = SplitHeads(query(hidden), heads, d);
    auto k = SplitHeads(key(hidden), heads, d);
    auto v = SplitHeads(value(hidden), heads, d);
    k = k / std::sqrt(static_cast<double>(d));
    // transformers chunks the positions too, for its causal mask; the encoder
    // applies none, but the same operators run.
    auto indices = torch::arange(seq, torch::TensorOptions(q.device()).dtype(torch::kLong)).repeat({batch, heads, 1});
    q = SplitSeq(q, -1, chunk, heads);
    k = LookAdjacent(SplitSeq(k, -1, chunk, heads), c.local_num_chunks_before, c.local_num_chunks_after);
    v = LookAdjacent(SplitSeq(v, -1, chunk, heads), c.local_num_chunks_before, c.local_num_chunks_after);
    (void)LookAdjacent(SplitSeq(indices, -1, chunk, heads), c.local_num_chunks_before, c.local_num_chunks_after);
    auto dots = torch::matmul(q, k.transpose(-1, -2));
    auto probs = LogsumexpSoftmax(dots).first;
    probs = torch::dropout(probs, c.local_attention_probs_dropout_prob, is_training());
    auto out = torch::matmul(probs, v).flatten(2, 3);
    return MergeHeads(out, heads, d);
  }

  ReformerConfig c;
  torch::nn::Linear query, key, value;
};

// ReformerSelfOutput: projection back to the hidden size, dropout.
struct ReformerSelfOutputImpl : torch::nn::Module {
  explicit ReformerSelfOutputImpl(const ReformerConfig& c)
      : dense(register_module("dense", NoBias(c.num_attention_heads * c.attention_head_size, c.hidden_size))),
        dropout_p(c.hidden_dropout_prob) {}
  torch::Tensor forward(const torch::Tensor& x) { return torch::dropout(dense(x), dropout_p, is_training()); }
  torch::nn::Linear dense;
  double dropout_p;
};
TORCH_MODULE(ReformerSelfOutput);

// ReformerAttention: pre-norm, the layer's attention type, output.
struct ReformerAttentionImpl : torch::nn::Module {
  ReformerAttentionImpl(const ReformerConfig& c, AttnType type)
      : layer_norm(register_module("layer_norm", Norm(c.hidden_size, c.layer_norm_eps))),
        output(register_module("output", ReformerSelfOutput(c))) {
    std::shared_ptr<SelfAttentionImpl> attention;
    if (type == AttnType::kLsh) {
      attention = std::make_shared<LshSelfAttentionImpl>(c);
    } else {
      attention = std::make_shared<LocalSelfAttentionImpl>(c);
    }
    self_attention = register_module("self_attention", attention);
  }
  torch::Tensor forward(const torch::Tensor& hidden, torch::Tensor& buckets) {
    return output(self_attention->forward(layer_norm(hidden), buckets));
  }
  torch::nn::LayerNorm layer_norm;
  ReformerSelfOutput output;
  std::shared_ptr<SelfAttentionImpl> self_attention;
};
TORCH_MODULE(ReformerAttention);

// ReformerFeedForwardDense / ReformerFeedForwardOutput: one Linear named
// `dense` each; dropout comes before the activation.
struct ReformerDenseImpl : torch::nn::Module {
  ReformerDenseImpl(int64_t in, int64_t out, double dropout_p_arg, bool relu_arg)
      : dense(register_module("dense", torch::nn::Linear(in, out))), dropout_p(dropout_p_arg), relu(relu_arg) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto y = torch::dropout(dense(x), dropout_p, is_training());
    return relu ? torch::relu(y) : y;
  }
  torch::nn::Linear dense;
  double dropout_p;
  bool relu;
};
TORCH_MODULE(ReformerDense);

// ChunkReformerFeedForward. Its chunking (config.chunk_size_feed_forward)
// is 0 in ReformerConfig(), i.e. one chunk: the whole sequence at once.
struct ChunkReformerFeedForwardImpl : torch::nn::Module {
  explicit ChunkReformerFeedForwardImpl(const ReformerConfig& c)
      : layer_norm(register_module("layer_norm", Norm(c.hidden_size, c.layer_norm_eps))),
        dense(register_module("dense", ReformerDense(c.hidden_size, c.feed_forward_size, c.hidden_dropout_prob, true))),
        output(register_module("output",
                               ReformerDense(c.feed_forward_size, c.hidden_size, c.hidden_dropout_prob, false))) {}
  torch::Tensor forward(const torch::Tensor& x) { return output(dense(layer_norm(x))); }
  torch::nn::LayerNorm layer_norm;
  ReformerDense dense, output;
};
TORCH_MODULE(ChunkReformerFeedForward);

// transformers' ReformerLayer._init_*_seed on the CPU: torch.seed() (a seed
// from the OS's entropy, set on every device) modulo sys.maxsize, then
// torch.manual_seed of it. Returns the seed, which the backward replays.
uint64_t ReseedGenerators(const std::function<uint64_t()>& layer_seed) {
  const uint64_t seed = layer_seed ? layer_seed()
                                   : c10::detail::getNonDeterministicRandom() %
                                         static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  torch::manual_seed(seed);
  return seed;
}

// ReformerLayer: one reversible block on the two streams,
// (X1, X2) -> (Y1, Y2) = (X1 + Attention(X2), X2 + FeedForward(Y1)).
struct ReformerLayerImpl : torch::nn::Module {
  ReformerLayerImpl(const ReformerConfig& c, AttnType type)
      : attention(register_module("attention", ReformerAttention(c, type))),
        feed_forward(register_module("feed_forward", ChunkReformerFeedForward(c))),
        layer_seed(c.layer_seed) {}

  // What the forward leaves for the backward's recomputation: the seeds set
  // before the attention and the feed-forward (training only) and the LSH
  // buckets.
  struct Record {
    uint64_t attention_seed = 0, feed_forward_seed = 0;
    torch::Tensor buckets;
  };

  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& prev_attn_output, const torch::Tensor& hidden,
                                                  Record& record) {
    if (is_training()) record.attention_seed = ReseedGenerators(layer_seed);
    auto attn_output = prev_attn_output + attention(hidden, record.buckets);
    if (is_training()) record.feed_forward_seed = ReseedGenerators(layer_seed);
    return {attn_output, hidden + feed_forward(attn_output)};
  }

  // ReformerLayer.backward_pass: from the outputs (Y1, Y2) and their
  // gradients, recomputes G(Y1) and F(X2) under the forward's seeds (and LSH
  // buckets), backpropagates through each into the parameters, and returns
  // the inputs (X1, X2) and their gradients.
  struct Streams {
    torch::Tensor attn_output, hidden, grad_attn_output, grad_hidden;
  };
  Streams BackwardPass(const Streams& next, Record& record) {
    Streams prev;
    torch::Tensor y1 = next.attn_output.detach().requires_grad_(true), feed_forward_out;
    {
      torch::AutoGradMode enable(true);
      torch::manual_seed(record.feed_forward_seed);
      feed_forward_out = feed_forward(y1);
      feed_forward_out.backward(next.grad_hidden, /*retain_graph=*/true);
    }
    torch::Tensor x2, attention_out;
    {
      torch::NoGradGuard no_grad;
      x2 = (next.hidden - feed_forward_out).requires_grad_(true);  // X2 = Y2 - G(Y1)
      prev.grad_attn_output = next.grad_attn_output + y1.grad();
    }
    {
      torch::AutoGradMode enable(true);
      torch::manual_seed(record.attention_seed);
      attention_out = attention(x2, record.buckets);
      attention_out.backward(prev.grad_attn_output, /*retain_graph=*/true);
    }
    torch::NoGradGuard no_grad;
    prev.attn_output = y1.detach() - attention_out;  // X1 = Y1 - F(X2)
    prev.grad_hidden = next.grad_hidden + x2.grad();
    prev.hidden = x2.detach();
    return prev;
  }

  ReformerAttention attention;
  ChunkReformerFeedForward feed_forward;
  std::function<uint64_t()> layer_seed;
};
TORCH_MODULE(ReformerLayer);

// What _ReversibleFunction's forward leaves for its backward.
struct ReversibleState : torch::CustomClassHolder {
  std::vector<ReformerLayerImpl*> layers;
  std::vector<ReformerLayerImpl::Record> records;
  torch::Tensor attn_output, hidden;  // the last layer's (Y1, Y2)
};

// transformers' _ReversibleFunction: the layers run without keeping
// activations; the backward recomputes them layer by layer from the outputs.
struct ReversibleFunction : torch::autograd::Function<ReversibleFunction> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const torch::Tensor& hidden_states,
                                                std::vector<ReformerLayerImpl*> layers) {
    auto state = c10::make_intrusive<ReversibleState>();
    state->layers = std::move(layers);
    state->records.resize(state->layers.size());
    auto streams = hidden_states.chunk(2, -1);
    torch::Tensor hidden = streams[0], attn_output = streams[1];
    for (size_t i = 0; i < state->layers.size(); ++i) {
      std::tie(attn_output, hidden) = state->layers[i]->forward(attn_output, hidden, state->records[i]);
    }
    state->attn_output = attn_output.detach();
    state->hidden = hidden.detach();
    ctx->saved_data["state"] = c10::IValue::make_capsule(state);
    return {torch::cat({attn_output, hidden}, -1)};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto state = c10::static_intrusive_pointer_cast<ReversibleState>(ctx->saved_data["state"].toCapsule());
    auto grad_chunks = grads[0].chunk(2, -1);
    ReformerLayerImpl::Streams streams{state->attn_output, state->hidden, grad_chunks[0], grad_chunks[1]};
    for (size_t i = state->layers.size(); i-- > 0;) {
      streams = state->layers[i]->BackwardPass(streams, state->records[i]);
    }
    return {torch::cat({streams.grad_attn_output, streams.grad_hidden}, -1), torch::Tensor()};
  }
};

struct ReformerEncoderImpl : torch::nn::Module {
  explicit ReformerEncoderImpl(const ReformerConfig& c)
      : layers(register_module("layers", torch::nn::ModuleList())),
        layer_norm(register_module("layer_norm", Norm(2 * c.hidden_size, c.layer_norm_eps))),
        dropout_p(c.hidden_dropout_prob) {
    for (auto type : c.attn_layers) layers->push_back(ReformerLayer(c, type));
  }
  torch::Tensor forward(const torch::Tensor& embeddings) {
    // Both streams start as the embeddings.
    std::vector<ReformerLayerImpl*> layer_ptrs;
    for (const auto& layer : *layers) layer_ptrs.push_back(layer->as<ReformerLayerImpl>());
    auto out = ReversibleFunction::apply(torch::cat({embeddings, embeddings}, -1), std::move(layer_ptrs))[0];
    return torch::dropout(layer_norm(out), dropout_p, is_training());
  }
  torch::nn::ModuleList layers;
  torch::nn::LayerNorm layer_norm;
  double dropout_p;
};
TORCH_MODULE(ReformerEncoder);

// AxialPositionEmbeddings: position (i, j) of the rows x cols grid gets
// weights.0[i] ++ weights.1[j].
struct AxialPositionEmbeddingsImpl : torch::nn::Module {
  explicit AxialPositionEmbeddingsImpl(const ReformerConfig& c)
      : weights(register_module("weights", torch::nn::ParameterList())),
        shape(c.axial_pos_shape),
        dropout_p(c.hidden_dropout_prob) {
    TORCH_CHECK(
        c.axial_pos_embds_dim.size() == shape.size() &&
            std::accumulate(c.axial_pos_embds_dim.begin(), c.axial_pos_embds_dim.end(), int64_t{0}) == c.hidden_size,
        "hf_reformer: axial embedding widths must sum to the hidden size");
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      std::vector<int64_t> ax_shape(shape.size(), 1);
      ax_shape[axis] = shape[axis];
      ax_shape.push_back(c.axial_pos_embds_dim[axis]);
      // ParameterList keeps the tensor's requires_grad.
      weights->append(torch::ones(ax_shape, torch::requires_grad()));
    }
  }

  torch::Tensor forward(const torch::Tensor& position_ids) {
    const int64_t batch = position_ids.size(0), seq = position_ids.size(1);
    std::vector<torch::Tensor> broadcast;
    for (const auto& w : weights->named_parameters()) {
      std::vector<int64_t> sizes{batch};
      sizes.insert(sizes.end(), shape.begin(), shape.end());
      sizes.push_back(w.value().size(-1));
      broadcast.push_back(w.value().expand(sizes));
    }
    return is_training() ? Train(broadcast, batch, seq) : Eval(broadcast, position_ids);
  }

  // Training covers the whole grid; dropout2d on the grid transposed to
  // [B, cols, rows, width] zeroes whole [rows x width] slabs per (sample, column).
  torch::Tensor Train(const std::vector<torch::Tensor>& broadcast, int64_t batch, int64_t seq) const {
    TORCH_CHECK(shape[0] * shape[1] == seq, "hf_reformer: in training, the sequence length must be ", shape[0], " x ",
                shape[1], " (the axial position shape), not ", seq);
    if (dropout_p > 0) {
      auto transposed = torch::cat(broadcast, -1).transpose(2, 1);
      auto dropped = torch::feature_dropout(transposed, dropout_p, true).transpose(2, 1);
      return torch::reshape(dropped, {batch, seq, -1});
    }
    std::vector<torch::Tensor> parts;
    for (const auto& w : broadcast) parts.push_back(torch::reshape(w, {batch, seq, -1}));
    return torch::cat(parts, -1);
  }

  // Eval: the rows the positions need, then each sample's positions.
  torch::Tensor Eval(const std::vector<torch::Tensor>& broadcast, const torch::Tensor& position_ids) const {
    const int64_t batch = position_ids.size(0);
    TORCH_CHECK(shape[0] * shape[1] >= position_ids.size(1), "hf_reformer: sequence longer than the axial shape");
    const int64_t max_position = position_ids.max().item<int64_t>();
    const int64_t rows = (max_position + shape[1]) / shape[1];
    std::vector<torch::Tensor> parts;
    for (const auto& w : broadcast) parts.push_back(w.slice(1, 0, rows));
    auto encodings = torch::cat(parts, -1);
    encodings = torch::reshape(encodings, {batch, -1, encodings.size(-1)});
    std::vector<torch::Tensor> selected;
    for (int64_t i = 0; i < batch; ++i) {
      selected.push_back(torch::index_select(encodings[i], 0, position_ids[i]).unsqueeze(0));
    }
    return torch::cat(selected, 0);
  }

  torch::nn::ParameterList weights;
  std::vector<int64_t> shape;
  double dropout_p;
};
TORCH_MODULE(AxialPositionEmbeddings);

struct ReformerEmbeddingsImpl : torch::nn::Module {
  explicit ReformerEmbeddingsImpl(const ReformerConfig& c)
      : word_embeddings(register_module("word_embeddings", torch::nn::Embedding(c.vocab_size, c.hidden_size))),
        position_embeddings(register_module("position_embeddings", AxialPositionEmbeddings(c))),
        max_position_embeddings(c.max_position_embeddings),
        dropout_p(c.hidden_dropout_prob) {}
  torch::Tensor forward(const torch::Tensor& input_ids) {
    const int64_t seq = input_ids.size(1);
    auto position_ids = torch::arange(seq, torch::TensorOptions(input_ids.device()).dtype(torch::kLong))
                            .unsqueeze(0)
                            .expand(input_ids.sizes());
    auto embeds = word_embeddings(input_ids);
    TORCH_CHECK(seq <= max_position_embeddings, "hf_reformer: sequence longer than max_position_embeddings");
    embeds = torch::dropout(embeds, dropout_p, is_training());
    return embeds + position_embeddings(position_ids);
  }
  torch::nn::Embedding word_embeddings;
  AxialPositionEmbeddings position_embeddings;
  int64_t max_position_embeddings;
  double dropout_p;
};
TORCH_MODULE(ReformerEmbeddings);

struct ReformerModelImpl : torch::nn::Module {
  explicit ReformerModelImpl(const ReformerConfig& c)
      : embeddings(register_module("embeddings", ReformerEmbeddings(c))),
        encoder(register_module("encoder", ReformerEncoder(c))) {}
  torch::Tensor forward(const torch::Tensor& input_ids) { return encoder(embeddings(input_ids)); }
  ReformerEmbeddings embeddings;
  ReformerEncoder encoder;
};
TORCH_MODULE(ReformerModel);

// ReformerOnlyLMHead's decoder: its bias is the head's `bias` parameter
// (transformers ties decoder.bias = bias), listed under both names in the
// state dict and once among the parameters.
struct LmDecoderImpl : torch::nn::Module {
  LmDecoderImpl(int64_t in, int64_t vocab, const torch::Tensor& bias_arg)
      : weight(register_parameter("weight", torch::empty({vocab, in}))), bias(register_buffer("bias", bias_arg)) {}
  torch::Tensor forward(const torch::Tensor& x) { return torch::linear(x, weight, bias); }
  torch::Tensor weight, bias;
};
TORCH_MODULE(LmDecoder);

// ReformerOnlyLMHead over the two concatenated streams (chunk_size_lm_head 0:
// one chunk).
struct ReformerOnlyLmHeadImpl : torch::nn::Module {
  explicit ReformerOnlyLmHeadImpl(const ReformerConfig& c)
      : bias(register_parameter("bias", torch::zeros({c.vocab_size}))),
        decoder(register_module("decoder", LmDecoder(2 * c.hidden_size, c.vocab_size, bias))) {}
  torch::Tensor forward(const torch::Tensor& x) { return decoder(x); }
  torch::Tensor bias;
  LmDecoder decoder;
};
TORCH_MODULE(ReformerOnlyLmHead);

struct ReformerForMaskedLmImpl : torch::nn::Module {
  explicit ReformerForMaskedLmImpl(const ReformerConfig& c)
      : reformer(register_module("reformer", ReformerModel(c))),
        lm_head(register_module("lm_head", ReformerOnlyLmHead(c))) {
    InitWeights(c);
  }
  torch::Tensor forward(const torch::Tensor& input_ids) { return lm_head(reformer(input_ids)); }

  // ReformerPreTrainedModel._init_weights.
  void InitWeights(const ReformerConfig& c) {
    torch::NoGradGuard no_grad;
    for (auto& w : reformer->embeddings->position_embeddings->weights->parameters()) w.normal_(0.0, c.axial_norm_std);
    reformer->embeddings->word_embeddings->weight.normal_(0.0, c.initializer_range);
    for (auto& m : modules(/*include_self=*/false)) {
      if (auto* linear = m->as<torch::nn::LinearImpl>()) {
        linear->weight.normal_(0.0, c.initializer_range);
        if (linear->bias.defined()) linear->bias.zero_();
      }
    }
    lm_head->decoder->weight.normal_(0.0, c.initializer_range);
    lm_head->bias.zero_();
  }

  ReformerModel reformer;
  ReformerOnlyLmHead lm_head;
};
TORCH_MODULE(ReformerForMaskedLm);

ReformerConfig ConfigFor(const ReformerSizes& sizes) {
  ReformerConfig c;
  c.axial_pos_shape = {sizes.axial_pos_rows, sizes.axial_pos_cols};
  c.lsh_attn_chunk_length = sizes.lsh_attn_chunk_length;
  c.local_attn_chunk_length = sizes.local_attn_chunk_length;
  c.num_buckets = sizes.num_buckets;
  c.layer_seed = sizes.layer_seed;
  return c;
}

}  // namespace

ModelInfo ReformerInfo(const ReformerSizes& sizes) {
  const auto config = ConfigFor(sizes);
  const int64_t seq = sizes.axial_pos_rows * sizes.axial_pos_cols;
  LanguageModelSpec spec{
      .id = "hf_reformer",
      .paper_name = "hf_Reformer",
      .reference =
          "transformers.ReformerForMaskedLM(ReformerConfig(num_buckets=128)) (TorchBench hf_Reformer: "
          "AutoModelForMaskedLM)",
      // torchbenchmark/models/hf_Reformer/__init__.py: DEFAULT_TRAIN_BSIZE = 8, DEFAULT_EVAL_BSIZE = 1.
      .default_batch = {8, 1},
      .objective = LmObjective::kMaskedLm,
      .vocab_size = config.vocab_size,
      // basic_configs.py 'hf_Reformer': 4096 tokens in train and eval, the
      // product of axial_pos_shape (64 x 64).
      .train_seq_len = seq,
      .eval_seq_len = seq,
      // Training needs exactly the axial grid's length; eval takes any
      // multiple of the chunk length up to it: two chunks, so that each
      // chunk attends to a neighbour.
      .smoke_train_seq_len = seq,
      .smoke_eval_seq_len = 2 * std::lcm(config.lsh_attn_chunk_length, config.local_attn_chunk_length),
      .compiled_forward_unsupported =
          "the LSH layers draw a fresh random rotation (torch.randn) in every forward, eval included, so the "
          "forward is random and a compiled forward cannot be checked against eager's; in training, transformers "
          "also reseeds the generators before every layer",
  };
  spec.build = BuildFromIds<ReformerForMaskedLm>(config);
  auto info = LanguageModelInfo(std::move(spec));
  // 6M parameters, but 8 x 4096 tokens per train step: several seconds per
  // step on 2 CPU cores; batch 1 keeps the suite's step short.
  info.cpu_batch = BatchSizes{1, 1};
  return info;
}

void AddReformerModels(std::vector<ModelInfo>& out) { out.push_back(ReformerInfo()); }

}  // namespace torchgauge::models
