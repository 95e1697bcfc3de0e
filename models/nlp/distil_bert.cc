#include "models/nlp/distil_bert.h"

#include <torch/torch.h>

#include "models/shared/hf_harness.h"

namespace torchgauge::models {
namespace {

struct DistilBertConfig {
  int64_t vocab_size = 30522;
  int64_t max_position_embeddings = 512;
  int64_t n_layers = 6;
  int64_t n_heads = 12;
  int64_t dim = 768;
  int64_t hidden_dim = 3072;
  double dropout = 0.1;
  double attention_dropout = 0.1;
  int64_t pad_token_id = 0;
  double initializer_range = 0.02;
  // DistilBERT hard-codes its LayerNorm eps.
  double layer_norm_eps = 1e-12;
};

// Word and learned position embeddings (no token types), LayerNorm, dropout.
struct EmbeddingsImpl : torch::nn::Module {
  explicit EmbeddingsImpl(const DistilBertConfig& c)
      : word_embeddings(register_module(
            "word_embeddings",
            torch::nn::Embedding(torch::nn::EmbeddingOptions(c.vocab_size, c.dim).padding_idx(c.pad_token_id)))),
        position_embeddings(
            register_module("position_embeddings", torch::nn::Embedding(c.max_position_embeddings, c.dim))),
        LayerNorm(register_module("LayerNorm", MakeLayerNorm(c.dim, c.layer_norm_eps))),
        dropout_p(c.dropout) {}

  torch::Tensor forward(const torch::Tensor& input_ids) {
    const auto seq_length = input_ids.size(1);
    TORCH_CHECK(seq_length <= position_embeddings->weight.size(0), "hf_distil_bert: sequence length ", seq_length,
                " exceeds max_position_embeddings");
    // The reference slices a non-persistent position_ids buffer (not in its
    // state dict); the ids are computed here instead.
    auto position_ids = torch::arange(seq_length, input_ids.options()).unsqueeze(0);
    auto embeddings = word_embeddings(input_ids);
    embeddings = embeddings + position_embeddings(position_ids);
    return torch::dropout(LayerNorm(embeddings), dropout_p, is_training());
  }

  torch::nn::Embedding word_embeddings, position_embeddings;
  torch::nn::LayerNorm LayerNorm;
  double dropout_p;
};
TORCH_MODULE(Embeddings);

// Multi-head self-attention (DistilBertSdpaAttention): q/k/v/out linear
// projections around scaled_dot_product_attention with the probability
// dropout folded in; no dropout on the output projection.
struct MultiHeadSelfAttentionImpl : torch::nn::Module {
  explicit MultiHeadSelfAttentionImpl(const DistilBertConfig& c)
      : q_lin(register_module("q_lin", torch::nn::Linear(c.dim, c.dim))),
        k_lin(register_module("k_lin", torch::nn::Linear(c.dim, c.dim))),
        v_lin(register_module("v_lin", torch::nn::Linear(c.dim, c.dim))),
        out_lin(register_module("out_lin", torch::nn::Linear(c.dim, c.dim))),
        n_heads(c.n_heads),
        dim_per_head(c.dim / c.n_heads),
        dropout_p(c.attention_dropout) {
    TORCH_CHECK(c.dim % c.n_heads == 0, "hf_distil_bert: n_heads ", c.n_heads, " must divide dim ", c.dim);
  }

  torch::Tensor forward(const torch::Tensor& x) {
    const auto bs = x.size(0);
    auto shape = [&](const torch::Tensor& t) { return t.view({bs, -1, n_heads, dim_per_head}).transpose(1, 2); };
    auto q = shape(q_lin(x));
    auto k = shape(k_lin(x));
    auto v = shape(v_lin(x));
    auto context = at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, is_training() ? dropout_p : 0.0,
                                                    /*is_causal=*/false);
    context = context.transpose(1, 2).contiguous().view({bs, -1, n_heads * dim_per_head});
    return out_lin(context);
  }

  torch::nn::Linear q_lin, k_lin, v_lin, out_lin;
  int64_t n_heads, dim_per_head;
  double dropout_p;
};
TORCH_MODULE(MultiHeadSelfAttention);

struct FFNImpl : torch::nn::Module {
  explicit FFNImpl(const DistilBertConfig& c)
      : lin1(register_module("lin1", torch::nn::Linear(c.dim, c.hidden_dim))),
        lin2(register_module("lin2", torch::nn::Linear(c.hidden_dim, c.dim))),
        dropout_p(c.dropout) {}
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::dropout(lin2(torch::gelu(lin1(x))), dropout_p, is_training());
  }
  torch::nn::Linear lin1, lin2;
  double dropout_p;
};
TORCH_MODULE(FFN);

// Post-norm block: LN(x + attention(x)), then LN(h + ffn(h)).
struct TransformerBlockImpl : torch::nn::Module {
  explicit TransformerBlockImpl(const DistilBertConfig& c)
      : attention(register_module("attention", MultiHeadSelfAttention(c))),
        sa_layer_norm(register_module("sa_layer_norm", MakeLayerNorm(c.dim, c.layer_norm_eps))),
        ffn(register_module("ffn", FFN(c))),
        output_layer_norm(register_module("output_layer_norm", MakeLayerNorm(c.dim, c.layer_norm_eps))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto sa_output = sa_layer_norm(attention(x) + x);
    return output_layer_norm(ffn(sa_output) + sa_output);
  }
  MultiHeadSelfAttention attention;
  torch::nn::LayerNorm sa_layer_norm;
  FFN ffn;
  torch::nn::LayerNorm output_layer_norm;
};
TORCH_MODULE(TransformerBlock);

struct TransformerImpl : torch::nn::Module {
  explicit TransformerImpl(const DistilBertConfig& c) : layer(register_module("layer", torch::nn::ModuleList())) {
    for (int64_t i = 0; i < c.n_layers; ++i) layer->push_back(TransformerBlock(c));
  }
  torch::Tensor forward(torch::Tensor hidden) {
    for (const auto& l : *layer) hidden = l->as<TransformerBlockImpl>()->forward(hidden);
    return hidden;
  }
  torch::nn::ModuleList layer;
};
TORCH_MODULE(Transformer);

struct DistilBertModelImpl : torch::nn::Module {
  explicit DistilBertModelImpl(const DistilBertConfig& c)
      : embeddings(register_module("embeddings", Embeddings(c))),
        transformer(register_module("transformer", Transformer(c))) {}
  torch::Tensor forward(const torch::Tensor& input_ids) { return transformer(embeddings(input_ids)); }
  Embeddings embeddings;
  Transformer transformer;
};
TORCH_MODULE(DistilBertModel);

// The vocabulary projector: a linear layer whose weight is the word
// embeddings' (an alias buffer, as TiedWeights keeps it) and whose bias is
// its own parameter.
struct VocabProjectorImpl : torch::nn::Module {
  VocabProjectorImpl(const torch::Tensor& tied_weight, int64_t vocab_size)
      : weight(register_buffer("weight", tied_weight)), bias(register_parameter("bias", torch::zeros({vocab_size}))) {}
  torch::Tensor forward(const torch::Tensor& hidden) { return torch::linear(hidden, weight, bias); }
  torch::Tensor weight, bias;
};
TORCH_MODULE(VocabProjector);

struct DistilBertForMaskedLMImpl : torch::nn::Module {
  explicit DistilBertForMaskedLMImpl(const DistilBertConfig& c)
      : distilbert(register_module("distilbert", DistilBertModel(c))),
        vocab_transform(register_module("vocab_transform", torch::nn::Linear(c.dim, c.dim))),
        vocab_layer_norm(register_module("vocab_layer_norm", MakeLayerNorm(c.dim, c.layer_norm_eps))),
        vocab_projector(register_module(
            "vocab_projector", VocabProjector(distilbert->embeddings->word_embeddings->weight, c.vocab_size))) {
    // DistilBertPreTrainedModel._init_weights; the tied projector keeps the
    // embedding's values and a zero bias.
    InitHfWeights(*this, c.initializer_range);
    torch::NoGradGuard no_grad;
    vocab_projector->bias.zero_();
  }

  torch::Tensor forward(const torch::Tensor& input_ids) {
    auto hidden = distilbert(input_ids);
    return vocab_projector(vocab_layer_norm(torch::gelu(vocab_transform(hidden))));
  }

  DistilBertModel distilbert;
  torch::nn::Linear vocab_transform;
  torch::nn::LayerNorm vocab_layer_norm;
  VocabProjector vocab_projector;
};
TORCH_MODULE(DistilBertForMaskedLM);

}  // namespace

void AddDistilBertModels(std::vector<ModelInfo>& out) {
  auto info = LanguageModelInfo({
      .id = "hf_distil_bert",
      .paper_name = "hf_DistilBert",
      .reference = "transformers.DistilBertForMaskedLM(\"distilbert-base-uncased\" config) (TorchBench "
                   "hf_DistilBert: AutoModelForMaskedLM)",
      // torchbenchmark/models/hf_DistilBert/__init__.py: DEFAULT_TRAIN_BSIZE = 8, DEFAULT_EVAL_BSIZE = 1.
      .default_batch = {8, 1},
      .objective = LmObjective::kMaskedLm,
      .vocab_size = DistilBertConfig{}.vocab_size,
      // TorchBench's Hugging Face model table (basic_configs.py, "hf_DistilBert"): 512 and 512.
      .train_seq_len = 512,
      .eval_seq_len = 512,
      .build = BuildFromIds<DistilBertForMaskedLM>(DistilBertConfig{}),
  });
  // One train step at 8 x 512 tokens is ~3.3 TFLOP, far over 2 s on 2 CPU cores.
  info.cpu_batch = BatchSizes{1, 1};
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
