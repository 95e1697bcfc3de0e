#include "models/nlp/bert.h"

#include <torch/torch.h>

#include "models/nlp/hf_harness.h"

namespace torchgauge::models {
namespace {

struct BertConfig {
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  double layer_norm_eps = 1e-12;
};

torch::nn::LayerNorm MakeLayerNorm(int64_t dim, double eps) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(eps));
}

struct BertEmbeddingsImpl : torch::nn::Module {
  explicit BertEmbeddingsImpl(const BertConfig& c)
      : word_embeddings(register_module(
            "word_embeddings",
            torch::nn::Embedding(torch::nn::EmbeddingOptions(c.vocab_size, c.hidden_size).padding_idx(0)))),
        position_embeddings(
            register_module("position_embeddings", torch::nn::Embedding(c.max_position_embeddings, c.hidden_size))),
        token_type_embeddings(
            register_module("token_type_embeddings", torch::nn::Embedding(c.type_vocab_size, c.hidden_size))),
        LayerNorm(register_module("LayerNorm", MakeLayerNorm(c.hidden_size, c.layer_norm_eps))),
        dropout_p(c.hidden_dropout_prob) {}

  torch::Tensor forward(const torch::Tensor& input_ids) {
    const auto seq_length = input_ids.size(1);
    TORCH_CHECK(seq_length <= position_embeddings->weight.size(0), "BERT: sequence length ", seq_length,
                " exceeds max_position_embeddings");
    // Position and token-type ids are computed here rather than kept as
    // buffers: the reference keeps them as non-persistent buffers, which are
    // not part of its state dict.
    auto position_ids = torch::arange(seq_length, input_ids.options()).unsqueeze(0);
    auto token_type_ids = torch::zeros({1, seq_length}, input_ids.options()).expand({input_ids.size(0), seq_length});
    // One op per statement: operand evaluation order is unspecified in C++,
    // and op creation order decides autograd's accumulation order.
    auto inputs_embeds = word_embeddings(input_ids);
    auto type_embeds = token_type_embeddings(token_type_ids);
    auto embeddings = inputs_embeds + type_embeds;
    embeddings += position_embeddings(position_ids);
    embeddings = LayerNorm(embeddings);
    return torch::dropout(embeddings, dropout_p, is_training());
  }

  torch::nn::Embedding word_embeddings, position_embeddings, token_type_embeddings;
  torch::nn::LayerNorm LayerNorm;
  double dropout_p;
};
TORCH_MODULE(BertEmbeddings);

struct BertSelfAttentionImpl : torch::nn::Module {
  explicit BertSelfAttentionImpl(const BertConfig& c)
      : query(register_module("query", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        key(register_module("key", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        value(register_module("value", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        num_heads(c.num_attention_heads),
        head_size(c.hidden_size / c.num_attention_heads),
        dropout_p(c.attention_probs_dropout_prob) {
    TORCH_CHECK(c.hidden_size % c.num_attention_heads == 0, "BERT: hidden size not divisible by heads");
  }

  torch::Tensor forward(const torch::Tensor& hidden) {
    const auto bsz = hidden.size(0), len = hidden.size(1);
    auto split = [&](const torch::Tensor& t) { return t.view({bsz, -1, num_heads, head_size}).transpose(1, 2); };
    auto q = split(query(hidden)), k = split(key(hidden)), v = split(value(hidden));
    // The reference's default attention implementation is SDPA with the
    // attention-probability dropout folded in; calling the same ATen op keeps
    // the dropout RNG stream identical.
    auto out = at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, is_training() ? dropout_p : 0.0,
                                                /*is_causal=*/false);
    return out.transpose(1, 2).reshape({bsz, len, num_heads * head_size});
  }

  torch::nn::Linear query, key, value;
  int64_t num_heads, head_size;
  double dropout_p;
};
TORCH_MODULE(BertSelfAttention);

// BertSelfOutput and BertOutput: projection, dropout, residual LayerNorm.
struct BertResidualOutputImpl : torch::nn::Module {
  BertResidualOutputImpl(int64_t in, const BertConfig& c)
      : dense(register_module("dense", torch::nn::Linear(in, c.hidden_size))),
        LayerNorm(register_module("LayerNorm", MakeLayerNorm(c.hidden_size, c.layer_norm_eps))),
        dropout_p(c.hidden_dropout_prob) {}
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& input) {
    return LayerNorm(torch::dropout(dense(hidden), dropout_p, is_training()) + input);
  }
  torch::nn::Linear dense;
  torch::nn::LayerNorm LayerNorm;
  double dropout_p;
};
TORCH_MODULE(BertResidualOutput);

struct BertAttentionImpl : torch::nn::Module {
  explicit BertAttentionImpl(const BertConfig& c)
      : self(register_module("self", BertSelfAttention(c))),
        output(register_module("output", BertResidualOutput(c.hidden_size, c))) {}
  torch::Tensor forward(const torch::Tensor& hidden) { return output(self(hidden), hidden); }
  BertSelfAttention self;
  BertResidualOutput output;
};
TORCH_MODULE(BertAttention);

struct BertIntermediateImpl : torch::nn::Module {
  explicit BertIntermediateImpl(const BertConfig& c)
      : dense(register_module("dense", torch::nn::Linear(c.hidden_size, c.intermediate_size))) {}
  torch::Tensor forward(const torch::Tensor& hidden) { return torch::gelu(dense(hidden)); }
  torch::nn::Linear dense;
};
TORCH_MODULE(BertIntermediate);

struct BertLayerImpl : torch::nn::Module {
  explicit BertLayerImpl(const BertConfig& c)
      : attention(register_module("attention", BertAttention(c))),
        intermediate(register_module("intermediate", BertIntermediate(c))),
        output(register_module("output", BertResidualOutput(c.intermediate_size, c))) {}
  torch::Tensor forward(const torch::Tensor& hidden) {
    auto attention_output = attention(hidden);
    return output(intermediate(attention_output), attention_output);
  }
  BertAttention attention;
  BertIntermediate intermediate;
  BertResidualOutput output;
};
TORCH_MODULE(BertLayer);

struct BertEncoderImpl : torch::nn::Module {
  explicit BertEncoderImpl(const BertConfig& c) : layer(register_module("layer", torch::nn::ModuleList())) {
    for (int64_t i = 0; i < c.num_hidden_layers; ++i) layer->push_back(BertLayer(c));
  }
  torch::Tensor forward(torch::Tensor hidden) {
    for (const auto& l : *layer) hidden = l->as<BertLayerImpl>()->forward(hidden);
    return hidden;
  }
  torch::nn::ModuleList layer;
};
TORCH_MODULE(BertEncoder);

// BertModel without the pooler: BertForMaskedLM builds it with
// add_pooling_layer=False.
struct BertModelImpl : torch::nn::Module {
  explicit BertModelImpl(const BertConfig& c)
      : embeddings(register_module("embeddings", BertEmbeddings(c))),
        encoder(register_module("encoder", BertEncoder(c))) {}
  torch::Tensor forward(const torch::Tensor& input_ids) { return encoder(embeddings(input_ids)); }
  BertEmbeddings embeddings;
  BertEncoder encoder;
};
TORCH_MODULE(BertModel);

struct BertPredictionHeadTransformImpl : torch::nn::Module {
  explicit BertPredictionHeadTransformImpl(const BertConfig& c)
      : dense(register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        LayerNorm(register_module("LayerNorm", MakeLayerNorm(c.hidden_size, c.layer_norm_eps))) {}
  torch::Tensor forward(const torch::Tensor& hidden) { return LayerNorm(torch::gelu(dense(hidden))); }
  torch::nn::Linear dense;
  torch::nn::LayerNorm LayerNorm;
};
TORCH_MODULE(BertPredictionHeadTransform);

// The MLM decoder is tied to the word embeddings (weight) and to
// cls.predictions.bias (bias).
struct BertLMPredictionHeadImpl : torch::nn::Module {
  BertLMPredictionHeadImpl(const BertConfig& c, const torch::Tensor& word_embeddings)
      : transform(register_module("transform", BertPredictionHeadTransform(c))),
        bias(register_parameter("bias", torch::zeros({c.vocab_size}))),
        decoder(register_module("decoder", TiedWeights(word_embeddings, bias))) {}
  torch::Tensor forward(const torch::Tensor& hidden) { return decoder(transform(hidden)); }
  BertPredictionHeadTransform transform;
  torch::Tensor bias;
  TiedWeights decoder;
};
TORCH_MODULE(BertLMPredictionHead);

struct BertOnlyMLMHeadImpl : torch::nn::Module {
  BertOnlyMLMHeadImpl(const BertConfig& c, const torch::Tensor& word_embeddings)
      : predictions(register_module("predictions", BertLMPredictionHead(c, word_embeddings))) {}
  torch::Tensor forward(const torch::Tensor& hidden) { return predictions(hidden); }
  BertLMPredictionHead predictions;
};
TORCH_MODULE(BertOnlyMLMHead);

struct BertForMaskedLMImpl : torch::nn::Module {
  explicit BertForMaskedLMImpl(const BertConfig& c)
      : bert(register_module("bert", BertModel(c))),
        cls(register_module("cls", BertOnlyMLMHead(c, bert->embeddings->word_embeddings->weight))) {
    InitWeights();
  }

  torch::Tensor forward(const torch::Tensor& input_ids) { return cls(bert(input_ids)); }

  // BertPreTrainedModel._init_weights: N(0, 0.02) for linear and embedding
  // weights, zero biases, LayerNorm (1, 0); the padding row is zeroed.
  void InitWeights() {
    torch::NoGradGuard no_grad;
    for (auto& m : modules(/*include_self=*/false)) {
      if (auto* linear = m->as<torch::nn::LinearImpl>()) {
        linear->weight.normal_(0.0, 0.02);
        if (linear->bias.defined()) linear->bias.zero_();
      } else if (auto* emb = m->as<torch::nn::EmbeddingImpl>()) {
        emb->weight.normal_(0.0, 0.02);
        if (emb->options.padding_idx()) emb->weight[*emb->options.padding_idx()].zero_();
      } else if (auto* ln = m->as<torch::nn::LayerNormImpl>()) {
        ln->weight.fill_(1.0);
        ln->bias.zero_();
      }
    }
  }

  BertModel bert;
  BertOnlyMLMHead cls;
};
TORCH_MODULE(BertForMaskedLM);

}  // namespace

namespace {

ModelInfo BertInfo(LanguageModelSpec spec, const BertConfig& config) {
  spec.objective = LmObjective::kMaskedLm;
  spec.vocab_size = config.vocab_size;
  // TorchBench's Hugging Face model table (basic_configs.py): 512 tokens for
  // train and eval for both hf_Bert and hf_Bert_large.
  spec.train_seq_len = 512;
  spec.eval_seq_len = 512;
  spec.build = [config] {
    BertForMaskedLM net(config);
    auto forward = [net](const torch::Tensor& ids, const torch::Tensor&) mutable { return net->forward(ids); };
    return LanguageModel{net.ptr(), forward};
  };
  return LanguageModelInfo(std::move(spec));
}

}  // namespace

ModelInfo BertLargeInfo(int64_t num_hidden_layers) {
  TORCH_CHECK(num_hidden_layers > 0, "hf_bert_large: num_hidden_layers must be positive");
  // TorchBench's hf_Bert_large config, verbatim (basic_configs.py):
  // BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16).
  // Its other fields stay BertConfig's defaults, so intermediate_size is 3072
  // and the vocabulary 30522, not bert-large-cased's 4096 and 28996:
  // TorchBench's comment points at bert-large-cased, but this is what it runs.
  BertConfig config;
  config.hidden_size = 1024;
  config.num_hidden_layers = num_hidden_layers;
  config.num_attention_heads = 16;
  auto info = BertInfo(
      {
          .id = "hf_bert_large",
          .paper_name = "hf_Bert_large",
          .reference = "transformers.BertForMaskedLM(BertConfig(hidden_size=1024, num_hidden_layers=24, "
                       "num_attention_heads=16)) (TorchBench hf_Bert_large: AutoModelForMaskedLM)",
          // torchbenchmark/models/hf_Bert_large/__init__.py: DEFAULT_TRAIN_BSIZE = 4, DEFAULT_EVAL_BSIZE = 1.
          .default_batch = {4, 1},
      },
      config);
  // 285M parameters: one train step at 4 x 512 tokens is ~3.5 TFLOP, far over
  // 2 s on 2 CPU cores; batch 1 is the smallest the suite can run.
  info.cpu_batch = BatchSizes{1, 1};
  return info;
}

void AddBertModels(std::vector<ModelInfo>& out) {
  out.push_back(BertInfo(
      {
          .id = "hf_bert",
          .paper_name = "hf_Bert",
          .reference = "transformers.BertForMaskedLM(BertConfig()) (TorchBench hf_Bert: AutoModelForMaskedLM)",
          // torchbenchmark/models/hf_Bert/__init__.py: DEFAULT_TRAIN_BSIZE = 4, DEFAULT_EVAL_BSIZE = 1.
          .default_batch = {4, 1},
      },
      BertConfig{}));
  out.push_back(BertLargeInfo());
}

}  // namespace torchgauge::models
