#include "models/nlp/t5.h"

#include <torch/torch.h>

#include <cmath>

#include "models/shared/hf_harness.h"

namespace torchgauge::models {
namespace {

struct T5Config {
  int64_t vocab_size = 32128;
  int64_t d_model = 512;
  int64_t d_kv = 64;
  int64_t d_ff = 2048;
  int64_t num_layers = 6;
  int64_t num_decoder_layers = 6;
  int64_t num_heads = 8;
  int64_t relative_attention_num_buckets = 32;
  int64_t relative_attention_max_distance = 128;
  double dropout_rate = 0.1;
  double layer_norm_epsilon = 1e-6;
  int64_t pad_token_id = 0;
  int64_t decoder_start_token_id = 0;
};

torch::nn::Linear NoBias(int64_t in, int64_t out) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}

// Root-mean-square norm: scale only, statistics in fp32.
struct T5LayerNormImpl : torch::nn::Module {
  T5LayerNormImpl(int64_t dim, double eps_arg)
      : weight(register_parameter("weight", torch::ones({dim}))), eps(eps_arg) {}
  torch::Tensor forward(const torch::Tensor& hidden) {
    auto variance = hidden.to(torch::kFloat).pow(2).mean(-1, /*keepdim=*/true);
    auto out = hidden * torch::rsqrt(variance + eps);
    if (weight.scalar_type() == torch::kHalf || weight.scalar_type() == torch::kBFloat16) {
      out = out.to(weight.scalar_type());
    }
    return weight * out;
  }
  torch::Tensor weight;
  double eps;
};
TORCH_MODULE(T5LayerNorm);

struct T5AttentionImpl : torch::nn::Module {
  T5AttentionImpl(const T5Config& c, bool is_decoder_arg, bool has_relative_attention_bias)
      : q(register_module("q", NoBias(c.d_model, c.num_heads * c.d_kv))),
        k(register_module("k", NoBias(c.d_model, c.num_heads * c.d_kv))),
        v(register_module("v", NoBias(c.d_model, c.num_heads * c.d_kv))),
        o(register_module("o", NoBias(c.num_heads * c.d_kv, c.d_model))),
        is_decoder(is_decoder_arg),
        n_heads(c.num_heads),
        d_kv(c.d_kv),
        num_buckets(c.relative_attention_num_buckets),
        max_distance(c.relative_attention_max_distance),
        dropout_p(c.dropout_rate) {
    if (has_relative_attention_bias) {
      relative_attention_bias = register_module("relative_attention_bias", torch::nn::Embedding(num_buckets, n_heads));
    }
  }

  // Maps key-minus-query offsets to buckets: exact for small offsets,
  // logarithmic up to max_distance; the encoder distinguishes direction.
  torch::Tensor RelativePositionBucket(torch::Tensor relative_position) const {
    int64_t buckets = num_buckets;
    auto result = torch::zeros_like(relative_position);
    if (!is_decoder) {
      buckets /= 2;
      result = result + (relative_position > 0).to(torch::kLong) * buckets;
      relative_position = torch::abs(relative_position);
    } else {
      relative_position = -torch::min(relative_position, torch::zeros_like(relative_position));
    }
    const int64_t max_exact = buckets / 2;
    auto is_small = relative_position < max_exact;
    auto if_large = max_exact + (torch::log(relative_position.to(torch::kFloat) / max_exact) /
                                 std::log(static_cast<double>(max_distance) / max_exact) * (buckets - max_exact))
                                    .to(torch::kLong);
    if_large = torch::min(if_large, torch::full_like(if_large, buckets - 1));
    return result + torch::where(is_small, relative_position, if_large);
  }

  // [1, heads, q_len, k_len] learned bias shared by all blocks of the stack.
  torch::Tensor ComputeBias(int64_t q_len, int64_t k_len) {
    auto device = relative_attention_bias->weight.device();
    auto opts = torch::TensorOptions(device).dtype(torch::kLong);
    auto context = torch::arange(q_len, opts).unsqueeze(1);
    auto memory = torch::arange(k_len, opts).unsqueeze(0);
    auto values = relative_attention_bias(RelativePositionBucket(memory - context));
    return values.permute({2, 0, 1}).unsqueeze(0);
  }

  // position_bias: the stack's bias (plus causal mask) or undefined for
  // cross-attention, whose bias in the reference is all zeros.
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& kv, const torch::Tensor& position_bias) {
    const auto bsz = hidden.size(0);
    auto heads = [&](const torch::Tensor& t) { return t.view({bsz, -1, n_heads, d_kv}).transpose(1, 2); };
    auto qs = heads(q(hidden));
    auto ks = heads(k(kv));
    auto vs = heads(v(kv));
    // T5 does not scale scores by 1/sqrt(d_kv): the initialisation absorbs it.
    auto scores = torch::matmul(qs, ks.transpose(3, 2));
    if (position_bias.defined()) scores += position_bias;
    auto weights = torch::softmax(scores.to(torch::kFloat), -1).to(scores.scalar_type());
    weights = torch::dropout(weights, dropout_p, is_training());
    auto out = torch::matmul(weights, vs).transpose(1, 2).contiguous().view({bsz, -1, n_heads * d_kv});
    return o(out);
  }

  torch::nn::Linear q, k, v, o;
  torch::nn::Embedding relative_attention_bias{nullptr};
  bool is_decoder;
  int64_t n_heads, d_kv, num_buckets, max_distance;
  double dropout_p;
};
TORCH_MODULE(T5Attention);

// T5LayerSelfAttention / T5LayerCrossAttention: pre-norm, attention,
// dropout, residual. The attribute name differs between the two.
struct T5LayerAttentionImpl : torch::nn::Module {
  T5LayerAttentionImpl(const T5Config& c, bool is_decoder, bool cross, bool has_relative_attention_bias)
      : attention(register_module(cross ? "EncDecAttention" : "SelfAttention",
                                  T5Attention(c, is_decoder, has_relative_attention_bias))),
        layer_norm(register_module("layer_norm", T5LayerNorm(c.d_model, c.layer_norm_epsilon))),
        dropout_p(c.dropout_rate) {}
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& kv, const torch::Tensor& position_bias) {
    auto normed = layer_norm(hidden);
    auto out = attention(normed, kv.defined() ? kv : normed, position_bias);
    return hidden + torch::dropout(out, dropout_p, is_training());
  }
  T5Attention attention;
  T5LayerNorm layer_norm;
  double dropout_p;
};
TORCH_MODULE(T5LayerAttention);

struct T5DenseReluDenseImpl : torch::nn::Module {
  explicit T5DenseReluDenseImpl(const T5Config& c)
      : wi(register_module("wi", NoBias(c.d_model, c.d_ff))),
        wo(register_module("wo", NoBias(c.d_ff, c.d_model))),
        dropout_p(c.dropout_rate) {}
  torch::Tensor forward(const torch::Tensor& hidden) {
    return wo(torch::dropout(torch::relu(wi(hidden)), dropout_p, is_training()));
  }
  torch::nn::Linear wi, wo;
  double dropout_p;
};
TORCH_MODULE(T5DenseReluDense);

struct T5LayerFFImpl : torch::nn::Module {
  explicit T5LayerFFImpl(const T5Config& c)
      : DenseReluDense(register_module("DenseReluDense", T5DenseReluDense(c))),
        layer_norm(register_module("layer_norm", T5LayerNorm(c.d_model, c.layer_norm_epsilon))),
        dropout_p(c.dropout_rate) {}
  torch::Tensor forward(const torch::Tensor& hidden) {
    return hidden + torch::dropout(DenseReluDense(layer_norm(hidden)), dropout_p, is_training());
  }
  T5DenseReluDense DenseReluDense;
  T5LayerNorm layer_norm;
  double dropout_p;
};
TORCH_MODULE(T5LayerFF);

struct T5BlockImpl : torch::nn::Module {
  T5BlockImpl(const T5Config& c, bool is_decoder, bool has_relative_attention_bias)
      : layer(register_module("layer", torch::nn::ModuleList())) {
    self_attention = T5LayerAttention(c, is_decoder, /*cross=*/false, has_relative_attention_bias);
    layer->push_back(self_attention);
    if (is_decoder) {
      cross_attention = T5LayerAttention(c, is_decoder, /*cross=*/true, false);
      layer->push_back(cross_attention);
    }
    ff = T5LayerFF(c);
    layer->push_back(ff);
  }
  torch::Tensor forward(torch::Tensor hidden, const torch::Tensor& position_bias, const torch::Tensor& encoder_hidden) {
    hidden = self_attention(hidden, torch::Tensor(), position_bias);
    if (cross_attention) hidden = cross_attention(hidden, encoder_hidden, torch::Tensor());
    return ff(hidden);
  }
  torch::nn::ModuleList layer;
  T5LayerAttention self_attention{nullptr}, cross_attention{nullptr};
  T5LayerFF ff{nullptr};
};
TORCH_MODULE(T5Block);

struct T5StackImpl : torch::nn::Module {
  T5StackImpl(const T5Config& c, bool is_decoder_arg, const torch::Tensor& shared)
      : embed_tokens(register_module("embed_tokens", TiedWeights(shared))),
        block(register_module("block", torch::nn::ModuleList())),
        final_layer_norm(register_module("final_layer_norm", T5LayerNorm(c.d_model, c.layer_norm_epsilon))),
        is_decoder(is_decoder_arg),
        dropout_p(c.dropout_rate) {
    const int64_t n = is_decoder_arg ? c.num_decoder_layers : c.num_layers;
    for (int64_t i = 0; i < n; ++i)
      block->push_back(T5Block(c, is_decoder_arg, /*has_relative_attention_bias=*/i == 0));
  }

  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& encoder_hidden) {
    auto hidden = embed_tokens->Embed(input_ids);
    const auto seq = input_ids.size(1);
    auto first = block[0]->as<T5BlockImpl>();
    auto position_bias = first->self_attention->attention->ComputeBias(seq, seq);
    if (is_decoder) {
      // Causal mask added to the bias: the dtype's lowest value above the
      // diagonal, as transformers' eager mask does (fp32's lowest does not
      // fit in fp16 and is refused by bf16's overflow check).
      auto opts = hidden.options();
      auto masked = torch::triu(torch::ones({seq, seq}, opts.dtype(torch::kBool)), 1);
      auto mask = torch::zeros({seq, seq}, opts).masked_fill(masked, FinfoMin(hidden.scalar_type()));
      position_bias = position_bias + mask.unsqueeze(0).unsqueeze(0).expand({input_ids.size(0), 1, seq, seq});
    }
    hidden = torch::dropout(hidden, dropout_p, is_training());
    for (const auto& b : *block) hidden = b->as<T5BlockImpl>()->forward(hidden, position_bias, encoder_hidden);
    return torch::dropout(final_layer_norm(hidden), dropout_p, is_training());
  }

  TiedWeights embed_tokens;
  torch::nn::ModuleList block;
  T5LayerNorm final_layer_norm;
  bool is_decoder;
  double dropout_p;
};
TORCH_MODULE(T5Stack);

// The input embeddings of both stacks and the LM head are tied to `shared`.
struct T5ForConditionalGenerationImpl : torch::nn::Module {
  explicit T5ForConditionalGenerationImpl(const T5Config& c)
      : config(c),
        shared(register_module("shared", torch::nn::Embedding(c.vocab_size, c.d_model))),
        encoder(register_module("encoder", T5Stack(c, false, shared->weight))),
        decoder(register_module("decoder", T5Stack(c, true, shared->weight))),
        lm_head(register_module("lm_head", TiedWeights(shared->weight))) {
    InitWeights();
  }

  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& decoder_input_ids) {
    auto encoder_hidden = encoder(input_ids, torch::Tensor());
    auto sequence_output = decoder(decoder_input_ids, encoder_hidden);
    // Tied LM head: rescale before projecting on the vocabulary (Mesh TF T5).
    sequence_output = sequence_output * std::pow(static_cast<double>(config.d_model), -0.5);
    return lm_head(sequence_output);
  }

  // T5PreTrainedModel._init_weights (factor 1.0).
  void InitWeights() {
    torch::NoGradGuard no_grad;
    const double d_model = config.d_model, d_ff = config.d_ff, kv = config.d_kv, heads = config.num_heads;
    shared->weight.normal_(0.0, 1.0);
    for (auto& m : modules(/*include_self=*/false)) {
      if (auto* att = m->as<T5AttentionImpl>()) {
        att->q->weight.normal_(0.0, 1.0 / std::sqrt(d_model * kv));
        att->k->weight.normal_(0.0, 1.0 / std::sqrt(d_model));
        att->v->weight.normal_(0.0, 1.0 / std::sqrt(d_model));
        att->o->weight.normal_(0.0, 1.0 / std::sqrt(heads * kv));
        if (att->relative_attention_bias) att->relative_attention_bias->weight.normal_(0.0, 1.0 / std::sqrt(d_model));
      } else if (auto* ff = m->as<T5DenseReluDenseImpl>()) {
        ff->wi->weight.normal_(0.0, 1.0 / std::sqrt(d_model));
        ff->wo->weight.normal_(0.0, 1.0 / std::sqrt(d_ff));
      }
    }
  }

  T5Config config;
  torch::nn::Embedding shared;
  T5Stack encoder, decoder;
  TiedWeights lm_head;
};
TORCH_MODULE(T5ForConditionalGeneration);

}  // namespace

namespace {

ModelInfo T5Info(LanguageModelSpec spec, const T5Config& config) {
  spec.objective = LmObjective::kSeq2Seq;
  spec.vocab_size = config.vocab_size;
  spec.pad_token_id = config.pad_token_id;
  spec.decoder_start_token_id = config.decoder_start_token_id;
  spec.build = [config] {
    T5ForConditionalGeneration net(config);
    auto forward = [net](const torch::Tensor& ids, const torch::Tensor& decoder_ids) mutable {
      return net->forward(ids, decoder_ids);
    };
    return LanguageModel{net.ptr(), forward};
  };
  return LanguageModelInfo(std::move(spec));
}

// t5-base and t5-large differ from t5-small only in widths and depth.
T5Config WithSize(int64_t d_model, int64_t d_ff, int64_t num_heads, int64_t num_layers, const char* id) {
  TORCH_CHECK(num_layers > 0, id, ": the number of layers must be positive");
  T5Config config;
  config.d_model = d_model;
  config.d_ff = d_ff;
  config.num_heads = num_heads;
  config.num_layers = num_layers;
  config.num_decoder_layers = num_layers;
  return config;
}

}  // namespace

ModelInfo T5BaseInfo(int64_t num_layers) {
  auto info = T5Info(
      {
          .id = "hf_t5_base",
          .paper_name = "hf_T5_base",
          .reference = "transformers.T5ForConditionalGeneration(\"t5-base\" config) (TorchBench hf_T5_base: "
                       "AutoModelForSeq2SeqLM)",
          // torchbenchmark/models/hf_T5_base/__init__.py: DEFAULT_TRAIN_BSIZE = 8, DEFAULT_EVAL_BSIZE = 1.
          .default_batch = {8, 1},
          // TorchBench's Hugging Face model table (basic_configs.py, "hf_T5_base").
          .train_seq_len = 1024,
          .eval_seq_len = 2048,
      },
      WithSize(768, 3072, 12, num_layers, "hf_t5_base"));
  // 223M parameters at 8 x 1024 tokens per stack: far over 2 s per train step
  // on 2 CPU cores; batch 1 is the smallest the suite can run.
  info.cpu_batch = BatchSizes{1, 1};
  return info;
}

ModelInfo T5LargeInfo(int64_t num_layers) {
  auto info = T5Info(
      {
          .id = "hf_t5_large",
          .paper_name = "hf_T5_large",
          .reference = "transformers.T5ForConditionalGeneration(\"t5-large\" config) (TorchBench hf_T5_large: "
                       "AutoModelForSeq2SeqLM)",
          // torchbenchmark/models/hf_T5_large/__init__.py: DEFAULT_TRAIN_BSIZE = 2, DEFAULT_EVAL_BSIZE = 1.
          .default_batch = {2, 1},
          // TorchBench's Hugging Face model table (basic_configs.py, "hf_T5_large").
          .train_seq_len = 512,
          .eval_seq_len = 512,
      },
      WithSize(1024, 4096, 16, num_layers, "hf_t5_large"));
  // 738M parameters at 2 x 512 tokens per stack: far over a few seconds per
  // train step on 2 CPU cores, and about 12 GB with Adam's state; batch 1 is
  // the smallest the suite can run.
  info.cpu_batch = BatchSizes{1, 1};
  return info;
}

void AddT5Models(std::vector<ModelInfo>& out) {
  auto small = T5Info(
      {
          .id = "hf_t5",
          .paper_name = "hf_T5",
          .reference =
              "transformers.T5ForConditionalGeneration(\"t5-small\" config) (TorchBench hf_T5: AutoModelForSeq2SeqLM)",
          // torchbenchmark/models/hf_T5/__init__.py: DEFAULT_TRAIN_BSIZE = 8, DEFAULT_EVAL_BSIZE = 1.
          .default_batch = {8, 1},
          // TorchBench's Hugging Face model table (basic_configs.py, "hf_T5").
          .train_seq_len = 1024,
          .eval_seq_len = 2048,
      },
      T5Config{});
  // At batch 8 x 1024 tokens per stack a train step keeps 18 attention maps
  // of 8 x 8 x 1024 x 1024 floats (with their softmax and dropout) and the
  // 32k-word logits for the backward pass: more than a 24 GB CPU machine has.
  // The full cpu suite's eager train run was killed by the OOM killer there,
  // alone as well as beside another collection (2026-11-25). At batch 2 its
  // peak RSS was 6.7 GB.
  small.cpu_batch = BatchSizes{2, 1};
  out.push_back(std::move(small));
  out.push_back(T5BaseInfo());
  out.push_back(T5LargeInfo());
}

}  // namespace torchgauge::models
