#include "models/nlp/xlmr.h"

#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>
#include <torch/torch.h>

#include "models/nlp/hf_harness.h"

namespace torchgauge::models {
namespace {

// fairseq's xlmr.large hyperparameters, as transformers' XLMRobertaConfig
// states them for "xlm-roberta-large".
struct XlmrConfig {
  int64_t vocab_size = 250002;
  int64_t hidden_size = 1024;
  int64_t num_hidden_layers = 24;
  int64_t num_attention_heads = 16;
  int64_t intermediate_size = 4096;
  int64_t max_position_embeddings = 514;
  int64_t type_vocab_size = 1;
  int64_t pad_token_id = 1;
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  double layer_norm_eps = 1e-5;
};

// FAMBench's benchmark inputs: sequences of 64 tokens drawn from the first
// 250000 ids; the regression target has the hidden width.
constexpr int64_t kSeqLen = 64;
constexpr int64_t kInputVocab = 250000;
constexpr int64_t kSmokeSeqLen = 32;
constexpr double kLearningRate = 0.01;  // FAMBench's torch.optim.SGD(lr=0.01)

torch::nn::LayerNorm MakeLayerNorm(int64_t dim, double eps) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(eps));
}

// RoBERTa's positions: non-padding tokens count from padding_idx + 1,
// padding tokens keep padding_idx (fairseq's utils.make_positions).
torch::Tensor PositionIds(const torch::Tensor& input_ids, int64_t padding_idx) {
  auto mask = input_ids.ne(padding_idx).to(torch::kInt);
  auto incremental = torch::cumsum(mask, 1).to(torch::kInt) * mask;
  return incremental.to(torch::kLong) + padding_idx;
}

struct XlmrEmbeddingsImpl : torch::nn::Module {
  explicit XlmrEmbeddingsImpl(const XlmrConfig& c)
      : word_embeddings(
            register_module("word_embeddings",
                            torch::nn::Embedding(
                                torch::nn::EmbeddingOptions(c.vocab_size, c.hidden_size).padding_idx(c.pad_token_id)))),
        position_embeddings(register_module(
            "position_embeddings",
            torch::nn::Embedding(
                torch::nn::EmbeddingOptions(c.max_position_embeddings, c.hidden_size).padding_idx(c.pad_token_id)))),
        token_type_embeddings(
            register_module("token_type_embeddings", torch::nn::Embedding(c.type_vocab_size, c.hidden_size))),
        LayerNorm(register_module("LayerNorm", MakeLayerNorm(c.hidden_size, c.layer_norm_eps))),
        padding_idx(c.pad_token_id),
        dropout_p(c.hidden_dropout_prob) {}

  torch::Tensor forward(const torch::Tensor& input_ids) {
    const auto seq_length = input_ids.size(1);
    TORCH_CHECK(seq_length + padding_idx < position_embeddings->weight.size(0), "fambench_xlmr: sequence length ",
                seq_length, " exceeds the ", position_embeddings->weight.size(0) - padding_idx - 1, " positions");
    // Position and token-type ids are computed here: the reference keeps
    // them as non-persistent buffers, outside its state dict.
    auto position_ids = PositionIds(input_ids, padding_idx);
    auto token_type_ids =
        torch::zeros({1, seq_length}, input_ids.options().dtype(torch::kLong)).expand({input_ids.size(0), seq_length});
    // One op per statement: op creation order fixes autograd's accumulation order.
    auto inputs_embeds = word_embeddings(input_ids);
    auto type_embeds = token_type_embeddings(token_type_ids);
    auto embeddings = inputs_embeds + type_embeds;
    embeddings += position_embeddings(position_ids);
    embeddings = LayerNorm(embeddings);
    return torch::dropout(embeddings, dropout_p, is_training());
  }

  torch::nn::Embedding word_embeddings, position_embeddings, token_type_embeddings;
  torch::nn::LayerNorm LayerNorm;
  int64_t padding_idx;
  double dropout_p;
};
TORCH_MODULE(XlmrEmbeddings);

struct XlmrSelfAttentionImpl : torch::nn::Module {
  explicit XlmrSelfAttentionImpl(const XlmrConfig& c)
      : query(register_module("query", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        key(register_module("key", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        value(register_module("value", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        num_heads(c.num_attention_heads),
        head_size(c.hidden_size / c.num_attention_heads),
        dropout_p(c.attention_probs_dropout_prob) {
    TORCH_CHECK(c.hidden_size % c.num_attention_heads == 0, "fambench_xlmr: hidden size not divisible by heads");
  }

  torch::Tensor forward(const torch::Tensor& hidden) {
    const auto bsz = hidden.size(0), len = hidden.size(1);
    auto split = [&](const torch::Tensor& t) { return t.view({bsz, -1, num_heads, head_size}).transpose(1, 2); };
    auto q = split(query(hidden));
    auto k = split(key(hidden));
    auto v = split(value(hidden));
    // transformers' default (SDPA) attention, dropout folded into the same
    // ATen op so that the train step draws the same mask. No mask: the
    // reference drops an all-ones attention mask before calling SDPA.
    auto out = at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, is_training() ? dropout_p : 0.0,
                                                /*is_causal=*/false);
    return out.transpose(1, 2).reshape({bsz, len, num_heads * head_size});
  }

  torch::nn::Linear query, key, value;
  int64_t num_heads, head_size;
  double dropout_p;
};
TORCH_MODULE(XlmrSelfAttention);

// XLMRobertaSelfOutput and XLMRobertaOutput: projection, dropout, residual
// post-LayerNorm.
struct XlmrResidualOutputImpl : torch::nn::Module {
  XlmrResidualOutputImpl(int64_t in, const XlmrConfig& c)
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
TORCH_MODULE(XlmrResidualOutput);

struct XlmrAttentionImpl : torch::nn::Module {
  explicit XlmrAttentionImpl(const XlmrConfig& c)
      : self(register_module("self", XlmrSelfAttention(c))),
        output(register_module("output", XlmrResidualOutput(c.hidden_size, c))) {}
  torch::Tensor forward(const torch::Tensor& hidden) { return output(self(hidden), hidden); }
  XlmrSelfAttention self;
  XlmrResidualOutput output;
};
TORCH_MODULE(XlmrAttention);

struct XlmrIntermediateImpl : torch::nn::Module {
  explicit XlmrIntermediateImpl(const XlmrConfig& c)
      : dense(register_module("dense", torch::nn::Linear(c.hidden_size, c.intermediate_size))) {}
  torch::Tensor forward(const torch::Tensor& hidden) { return torch::gelu(dense(hidden)); }
  torch::nn::Linear dense;
};
TORCH_MODULE(XlmrIntermediate);

struct XlmrLayerImpl : torch::nn::Module {
  explicit XlmrLayerImpl(const XlmrConfig& c)
      : attention(register_module("attention", XlmrAttention(c))),
        intermediate(register_module("intermediate", XlmrIntermediate(c))),
        output(register_module("output", XlmrResidualOutput(c.intermediate_size, c))) {}
  torch::Tensor forward(const torch::Tensor& hidden) {
    auto attention_output = attention(hidden);
    return output(intermediate(attention_output), attention_output);
  }
  XlmrAttention attention;
  XlmrIntermediate intermediate;
  XlmrResidualOutput output;
};
TORCH_MODULE(XlmrLayer);

struct XlmrEncoderImpl : torch::nn::Module {
  explicit XlmrEncoderImpl(const XlmrConfig& c) : layer(register_module("layer", torch::nn::ModuleList())) {
    for (int64_t i = 0; i < c.num_hidden_layers; ++i) layer->push_back(XlmrLayer(c));
  }
  torch::Tensor forward(torch::Tensor hidden) {
    for (const auto& l : *layer) hidden = l->as<XlmrLayerImpl>()->forward(hidden);
    return hidden;
  }
  torch::nn::ModuleList layer;
};
TORCH_MODULE(XlmrEncoder);

// XLMRobertaModel without the pooler (XLMRobertaForMaskedLM builds it with
// add_pooling_layer=False; fairseq's RoBERTa has none either).
struct XlmrModelImpl : torch::nn::Module {
  explicit XlmrModelImpl(const XlmrConfig& c)
      : embeddings(register_module("embeddings", XlmrEmbeddings(c))),
        encoder(register_module("encoder", XlmrEncoder(c))) {}
  torch::Tensor forward(const torch::Tensor& input_ids) { return encoder(embeddings(input_ids)); }
  XlmrEmbeddings embeddings;
  XlmrEncoder encoder;
};
TORCH_MODULE(XlmrModel);

// XLMRobertaLMHead: dense, GELU, LayerNorm, decoder tied to the token
// embedding with lm_head.bias as its bias. FAMBench's step never calls it
// (extract_features stops before the head), but its parameters are part of
// the model and of the optimizer's parameter list.
struct XlmrLMHeadImpl : torch::nn::Module {
  XlmrLMHeadImpl(const XlmrConfig& c, const torch::Tensor& word_embeddings)
      : dense(register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        layer_norm(register_module("layer_norm", MakeLayerNorm(c.hidden_size, c.layer_norm_eps))),
        bias(register_parameter("bias", torch::zeros({c.vocab_size}))),
        decoder(register_module("decoder", TiedWeights(word_embeddings, bias))) {}
  torch::Tensor forward(const torch::Tensor& features) { return decoder(layer_norm(torch::gelu(dense(features)))); }
  torch::nn::Linear dense;
  torch::nn::LayerNorm layer_norm;
  torch::Tensor bias;
  TiedWeights decoder;
};
TORCH_MODULE(XlmrLMHead);

struct XlmrForMaskedLMImpl : torch::nn::Module {
  explicit XlmrForMaskedLMImpl(const XlmrConfig& c)
      : roberta(register_module("roberta", XlmrModel(c))),
        lm_head(register_module("lm_head", XlmrLMHead(c, roberta->embeddings->word_embeddings->weight))) {
    InitWeights();
  }

  // fairseq's extract_features: the last encoder layer's output.
  torch::Tensor ExtractFeatures(const torch::Tensor& input_ids) { return roberta(input_ids); }
  // The masked-LM logits (not part of FAMBench's step).
  torch::Tensor forward(const torch::Tensor& input_ids) { return lm_head(roberta(input_ids)); }

  // XLMRobertaPreTrainedModel._init_weights: N(0, 0.02) for linear and
  // embedding weights, zero biases, LayerNorm (1, 0), padding rows zeroed.
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

  XlmrModel roberta;
  XlmrLMHead lm_head;
};
TORCH_MODULE(XlmrForMaskedLM);

class FambenchXlmrWorkload : public LossWorkload {
 public:
  // FAMBench's loop: forward, loss, backward, step, then zero_grad.
  FambenchXlmrWorkload(const WorkloadOptions& opt, const XlmrConfig& config)
      : LossWorkload(ZeroGradAt::kAfterStep), net_(config) {
    TORCH_CHECK(opt.batch_size > 0, "fambench_xlmr: batch size must be positive");
    net_->to(opt.device);
    const bool train = opt.mode == Mode::kTrain;
    net_->train(train);
    const int64_t seq = opt.smoke ? kSmokeSeqLen : kSeqLen;
    const int64_t id_range = std::min(kInputVocab, config.vocab_size);
    inputs_["input_ids"] =
        torch::randint(0, id_range, {opt.batch_size, seq}, torch::TensorOptions(opt.device).dtype(torch::kLong));
    if (train) {
      // FAMBench's y_true: torch.rand(batch, seq, 1024), read as soft labels.
      inputs_["y_true"] = torch::rand({opt.batch_size, seq, config.hidden_size}, torch::TensorOptions(opt.device));
      optimizer_ = std::make_unique<torch::optim::SGD>(net_->parameters(), torch::optim::SGDOptions(kLearningRate));
    }
    samples_per_step_ = opt.batch_size;
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override { return net_->ExtractFeatures(inputs_.at("input_ids")); }

  // F.cross_entropy(y_pred, y_true): class dimension 1 (the sequence), the
  // float target taken as probabilities, mean over batch and features.
  torch::Tensor Loss(const torch::Tensor& y_pred) override {
    return torch::nn::functional::cross_entropy(y_pred, inputs_.at("y_true"));
  }

 private:
  XlmrForMaskedLM net_;
};

ModelInfo MakeInfo(XlmrConfig config) {
  ModelInfo info;
  info.id = "fambench_xlmr";
  info.paper_name = "fambench_xlmr";
  info.domain = Domain::kNlp;
  info.task = "language modeling";
  info.reference =
      "fairseq XLMRModel xlmr.large as FAMBench benchmarks/xlmr/ootb runs it (extract_features, SGD lr 0.01); "
      "modules and parity: transformers.XLMRobertaForMaskedLM(XLMRobertaConfig of xlm-roberta-large)";
  // torchbenchmark/models/fambench_xlmr/__init__.py: DEFAULT_TRAIN_BSIZE = 96, DEFAULT_EVAL_BSIZE = 96.
  info.default_batch = {96, 96};
  // 560M parameters: one SGD step at batch 1 (64 tokens) already takes about
  // 2 s on 2 CPU cores; eval at batch 4 about as long.
  info.cpu_batch = BatchSizes{1, 4};
  info.smoke_batch = {1, 1};
  info.create = [config](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    return std::make_unique<FambenchXlmrWorkload>(opt, config);
  };
  return info;
}

}  // namespace

ModelInfo FambenchXlmrInfoForTest(int64_t num_hidden_layers, int64_t vocab_size) {
  TORCH_CHECK(num_hidden_layers > 0 && vocab_size > 2, "fambench_xlmr: bad test configuration");
  XlmrConfig config;
  config.num_hidden_layers = num_hidden_layers;
  config.vocab_size = vocab_size;
  return MakeInfo(config);
}

void AddXlmrModels(std::vector<ModelInfo>& out) { out.push_back(MakeInfo(XlmrConfig{})); }

}  // namespace torchgauge::models
