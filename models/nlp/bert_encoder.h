// BERT's building blocks (transformers' modeling_bert), written once for the
// families whose networks are made of them: bert and xlmr (RoBERTa is BERT's
// encoder with other positions) use the whole encoder; albert the embeddings;
// bigbird and longformer, whose self-attention is their own, the residual
// outputs, the feed-forward block and the masked-LM heads. Submodules carry
// transformers' attribute names, so that every family's state dict matches
// its reference's key for key.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <utility>

#include "models/shared/hf_harness.h"

namespace torchgauge::models {

// config.hidden_act of the families that use these blocks.
enum class HiddenAct {
  kGelu,     // "gelu": torch's exact gelu
  kGeluNew,  // "gelu_new": the tanh approximation, spelled out (GeluNew)
};

// The encoder's hyperparameters, named as transformers' BertConfig names
// them. BertBlocksOf reads them from a family's own config.
struct BertBlocksConfig {
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  double layer_norm_eps = 1e-12;
  HiddenAct hidden_act = HiddenAct::kGelu;
};

template <typename FamilyConfig>
BertBlocksConfig BertBlocksOf(const FamilyConfig& c, HiddenAct act = HiddenAct::kGelu) {
  return {c.hidden_size,         c.num_hidden_layers,
          c.num_attention_heads, c.intermediate_size,
          c.hidden_dropout_prob, c.attention_probs_dropout_prob,
          c.layer_norm_eps,      act};
}

// RoBERTa's positions: non-padding tokens count from padding_idx + 1,
// padding tokens keep padding_idx (fairseq's utils.make_positions).
torch::Tensor RobertaPositionIds(const torch::Tensor& input_ids, int64_t padding_idx);

struct BertEmbeddingsOptions {
  int64_t vocab_size = 0;
  int64_t width = 0;  // hidden_size (ALBERT: embedding_size)
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  int64_t pad_token_id = 0;
  // RoBERTa's (XLM-R's) positions: RobertaPositionIds, and a padding row in
  // the position table too.
  bool roberta_positions = false;
  double layer_norm_eps = 1e-12;
  double hidden_dropout_prob = 0.1;
};

// The embeddings' options from a family's config: hidden_size wide, BERT's
// positions (RoBERTa's set pad_token_id and roberta_positions on top).
template <typename FamilyConfig>
BertEmbeddingsOptions BertEmbeddingsOf(const FamilyConfig& c) {
  BertEmbeddingsOptions o;
  o.vocab_size = c.vocab_size;
  o.width = c.hidden_size;
  o.max_position_embeddings = c.max_position_embeddings;
  o.type_vocab_size = c.type_vocab_size;
  o.layer_norm_eps = c.layer_norm_eps;
  o.hidden_dropout_prob = c.hidden_dropout_prob;
  return o;
}

// BertEmbeddings (also RobertaEmbeddings, AlbertEmbeddings): word, position
// and token-type tables, LayerNorm, dropout. Token types are all 0.
struct BertEmbeddingsImpl : torch::nn::Module {
  explicit BertEmbeddingsImpl(const BertEmbeddingsOptions& o);
  torch::Tensor forward(const torch::Tensor& input_ids);
  torch::nn::Embedding word_embeddings, position_embeddings, token_type_embeddings;
  torch::nn::LayerNorm LayerNorm;
  BertEmbeddingsOptions options;
};
TORCH_MODULE(BertEmbeddings);

// BertSdpaSelfAttention without a mask: query/key/value projections around
// scaled_dot_product_attention with the probability dropout folded in.
struct BertSelfAttentionImpl : torch::nn::Module {
  explicit BertSelfAttentionImpl(const BertBlocksConfig& c);
  torch::Tensor forward(const torch::Tensor& hidden);
  torch::nn::Linear query, key, value;
  int64_t num_heads, head_size;
  double dropout_p;
};
TORCH_MODULE(BertSelfAttention);

// BertSelfOutput and BertOutput: projection from `in` features, dropout,
// residual post-LayerNorm.
struct BertResidualOutputImpl : torch::nn::Module {
  BertResidualOutputImpl(int64_t in, const BertBlocksConfig& c);
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& input);
  torch::nn::Linear dense;
  torch::nn::LayerNorm LayerNorm;
  double dropout_p;
};
TORCH_MODULE(BertResidualOutput);

struct BertAttentionImpl : torch::nn::Module {
  explicit BertAttentionImpl(const BertBlocksConfig& c);
  torch::Tensor forward(const torch::Tensor& hidden);
  BertSelfAttention self;
  BertResidualOutput output;
};
TORCH_MODULE(BertAttention);

// The feed-forward block's first half: dense to intermediate_size, then the
// config's activation.
struct BertIntermediateImpl : torch::nn::Module {
  explicit BertIntermediateImpl(const BertBlocksConfig& c);
  torch::Tensor forward(const torch::Tensor& hidden);
  torch::nn::Linear dense;
  HiddenAct act;
};
TORCH_MODULE(BertIntermediate);

struct BertLayerImpl : torch::nn::Module {
  explicit BertLayerImpl(const BertBlocksConfig& c);
  torch::Tensor forward(const torch::Tensor& hidden);
  BertAttention attention;
  BertIntermediate intermediate;
  BertResidualOutput output;
};
TORCH_MODULE(BertLayer);

struct BertEncoderImpl : torch::nn::Module {
  explicit BertEncoderImpl(const BertBlocksConfig& c);
  torch::Tensor forward(torch::Tensor hidden);
  torch::nn::ModuleList layer;
};
TORCH_MODULE(BertEncoder);

// BertModel (and XLMRobertaModel) without the pooler, as the masked-LM heads
// build it (add_pooling_layer=False): the embeddings, then the encoder.
struct BertModelImpl : torch::nn::Module {
  BertModelImpl(const BertEmbeddingsOptions& embeddings_options, const BertBlocksConfig& blocks);
  torch::Tensor forward(const torch::Tensor& input_ids);
  BertEmbeddings embeddings;
  BertEncoder encoder;
};
TORCH_MODULE(BertModel);

// BertLMPredictionHead's transform: dense, the config's activation,
// LayerNorm.
struct BertPredictionHeadTransformImpl : torch::nn::Module {
  explicit BertPredictionHeadTransformImpl(const BertBlocksConfig& c);
  torch::Tensor forward(const torch::Tensor& hidden);
  torch::nn::Linear dense;
  torch::nn::LayerNorm LayerNorm;
  HiddenAct act;
};
TORCH_MODULE(BertPredictionHeadTransform);

// The MLM decoder is tied to the word embeddings (weight) and to
// cls.predictions.bias (bias).
struct BertLMPredictionHeadImpl : torch::nn::Module {
  BertLMPredictionHeadImpl(const BertBlocksConfig& c, int64_t vocab_size, const torch::Tensor& word_embeddings);
  torch::Tensor forward(const torch::Tensor& hidden);
  BertPredictionHeadTransform transform;
  torch::Tensor bias;
  TiedWeights decoder;
};
TORCH_MODULE(BertLMPredictionHead);

// BertOnlyMLMHead: the `cls` module of BertForMaskedLM (and BigBird's).
struct BertOnlyMLMHeadImpl : torch::nn::Module {
  BertOnlyMLMHeadImpl(const BertBlocksConfig& c, int64_t vocab_size, const torch::Tensor& word_embeddings);
  torch::Tensor forward(const torch::Tensor& hidden);
  BertLMPredictionHead predictions;
};
TORCH_MODULE(BertOnlyMLMHead);

// RobertaLMHead (XLM-R's and Longformer's lm_head): dense, gelu, layer_norm,
// decoder tied to the token embedding with lm_head.bias as its bias.
struct RobertaLMHeadImpl : torch::nn::Module {
  RobertaLMHeadImpl(const BertBlocksConfig& c, int64_t vocab_size, const torch::Tensor& word_embeddings);
  torch::Tensor forward(const torch::Tensor& features);
  torch::nn::Linear dense;
  torch::nn::LayerNorm layer_norm;
  torch::Tensor bias;
  TiedWeights decoder;
};
TORCH_MODULE(RobertaLMHead);

// transformers' *ForMaskedLM: the body, registered under the family's name
// for it ("bert", "longformer"), then the LM head ("cls", "lm_head") whose
// decoder is tied to the body's word embeddings; every weight initialised as
// the family's _init_weights does (InitHfWeights). A family derives its
// module from it, naming the two parts as its checkpoints do.
template <typename Body, typename Head>
struct MaskedLmImpl : torch::nn::Module {
  template <typename FamilyConfig>
  MaskedLmImpl(const FamilyConfig& c, const char* body_name, Body b, const char* head_name,
               const BertBlocksConfig& blocks)
      : body(register_module(body_name, std::move(b))),
        head(register_module(head_name, Head(blocks, c.vocab_size, body->embeddings->word_embeddings->weight))) {
    InitHfWeights(*this, c.initializer_range);
  }
  torch::Tensor forward(const torch::Tensor& input_ids) { return head(body(input_ids)); }
  Body body;
  Head head;
};

}  // namespace torchgauge::models
