#include "models/nlp/bert_encoder.h"

#include <torch/torch.h>

namespace torchgauge::models {
namespace {

torch::Tensor Activate(HiddenAct act, const torch::Tensor& x) {
  return act == HiddenAct::kGeluNew ? GeluNew(x) : torch::gelu(x);
}

torch::nn::EmbeddingOptions PositionTable(const BertEmbeddingsOptions& o) {
  auto options = torch::nn::EmbeddingOptions(o.max_position_embeddings, o.width);
  if (o.roberta_positions) options.padding_idx(o.pad_token_id);
  return options;
}

}  // namespace

torch::Tensor RobertaPositionIds(const torch::Tensor& input_ids, int64_t padding_idx) {
  auto mask = input_ids.ne(padding_idx).to(torch::kInt);
  auto incremental = torch::cumsum(mask, 1).to(torch::kInt) * mask;
  return incremental.to(torch::kLong) + padding_idx;
}

BertEmbeddingsImpl::BertEmbeddingsImpl(const BertEmbeddingsOptions& o)
    : word_embeddings(register_module(
          "word_embeddings",
          torch::nn::Embedding(torch::nn::EmbeddingOptions(o.vocab_size, o.width).padding_idx(o.pad_token_id)))),
      position_embeddings(register_module("position_embeddings", torch::nn::Embedding(PositionTable(o)))),
      token_type_embeddings(register_module("token_type_embeddings", torch::nn::Embedding(o.type_vocab_size, o.width))),
      LayerNorm(register_module("LayerNorm", MakeLayerNorm(o.width, o.layer_norm_eps))),
      options(o) {}

torch::Tensor BertEmbeddingsImpl::forward(const torch::Tensor& input_ids) {
  const auto seq_length = input_ids.size(1);
  const int64_t positions = position_embeddings->weight.size(0);
  // RoBERTa's positions start after the padding index.
  const int64_t last_position = options.roberta_positions ? seq_length + options.pad_token_id : seq_length - 1;
  TORCH_CHECK(last_position < positions, "sequence length ", seq_length, " exceeds the ", positions,
              " position embeddings");
  // Position and token-type ids are computed here rather than kept as
  // buffers: the reference keeps them as non-persistent buffers, which are
  // not part of its state dict.
  auto position_ids = options.roberta_positions ? RobertaPositionIds(input_ids, options.pad_token_id)
                                                : torch::arange(seq_length, input_ids.options()).unsqueeze(0);
  auto token_type_ids = torch::zeros({1, seq_length}, input_ids.options()).expand({input_ids.size(0), seq_length});
  // One op per statement: operand evaluation order is unspecified in C++,
  // and op creation order decides autograd's accumulation order.
  auto inputs_embeds = word_embeddings(input_ids);
  auto type_embeds = token_type_embeddings(token_type_ids);
  auto embeddings = inputs_embeds + type_embeds;
  embeddings += position_embeddings(position_ids);
  embeddings = LayerNorm(embeddings);
  return torch::dropout(embeddings, options.hidden_dropout_prob, is_training());
}

BertSelfAttentionImpl::BertSelfAttentionImpl(const BertBlocksConfig& c)
    : query(register_module("query", torch::nn::Linear(c.hidden_size, c.hidden_size))),
      key(register_module("key", torch::nn::Linear(c.hidden_size, c.hidden_size))),
      value(register_module("value", torch::nn::Linear(c.hidden_size, c.hidden_size))),
      num_heads(c.num_attention_heads),
      head_size(c.hidden_size / c.num_attention_heads),
      dropout_p(c.attention_probs_dropout_prob) {
  TORCH_CHECK(c.hidden_size % c.num_attention_heads == 0, "BERT self-attention: hidden size ", c.hidden_size,
              " not divisible by ", c.num_attention_heads, " heads");
}

torch::Tensor BertSelfAttentionImpl::forward(const torch::Tensor& hidden) {
  const auto bsz = hidden.size(0), len = hidden.size(1);
  auto split = [&](const torch::Tensor& t) { return t.view({bsz, -1, num_heads, head_size}).transpose(1, 2); };
  auto q = split(query(hidden));
  auto k = split(key(hidden));
  auto v = split(value(hidden));
  // The reference's default attention implementation is SDPA with the
  // attention-probability dropout folded in; calling the same ATen op keeps
  // the dropout RNG stream identical. No mask: the reference drops an
  // all-ones attention mask before calling SDPA.
  auto out = at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, is_training() ? dropout_p : 0.0,
                                              /*is_causal=*/false);
  return out.transpose(1, 2).reshape({bsz, len, num_heads * head_size});
}

BertResidualOutputImpl::BertResidualOutputImpl(int64_t in, const BertBlocksConfig& c)
    : dense(register_module("dense", torch::nn::Linear(in, c.hidden_size))),
      LayerNorm(register_module("LayerNorm", MakeLayerNorm(c.hidden_size, c.layer_norm_eps))),
      dropout_p(c.hidden_dropout_prob) {}

torch::Tensor BertResidualOutputImpl::forward(const torch::Tensor& hidden, const torch::Tensor& input) {
  return LayerNorm(torch::dropout(dense(hidden), dropout_p, is_training()) + input);
}

BertAttentionImpl::BertAttentionImpl(const BertBlocksConfig& c)
    : self(register_module("self", BertSelfAttention(c))),
      output(register_module("output", BertResidualOutput(c.hidden_size, c))) {}

torch::Tensor BertAttentionImpl::forward(const torch::Tensor& hidden) { return output(self(hidden), hidden); }

BertIntermediateImpl::BertIntermediateImpl(const BertBlocksConfig& c)
    : dense(register_module("dense", torch::nn::Linear(c.hidden_size, c.intermediate_size))), act(c.hidden_act) {}

torch::Tensor BertIntermediateImpl::forward(const torch::Tensor& hidden) { return Activate(act, dense(hidden)); }

BertLayerImpl::BertLayerImpl(const BertBlocksConfig& c)
    : attention(register_module("attention", BertAttention(c))),
      intermediate(register_module("intermediate", BertIntermediate(c))),
      output(register_module("output", BertResidualOutput(c.intermediate_size, c))) {}

torch::Tensor BertLayerImpl::forward(const torch::Tensor& hidden) {
  auto attention_output = attention(hidden);
  return output(intermediate(attention_output), attention_output);
}

BertEncoderImpl::BertEncoderImpl(const BertBlocksConfig& c) : layer(register_module("layer", torch::nn::ModuleList())) {
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layer->push_back(BertLayer(c));
}

torch::Tensor BertEncoderImpl::forward(torch::Tensor hidden) {
  for (const auto& l : *layer) hidden = l->as<BertLayerImpl>()->forward(hidden);
  return hidden;
}

BertModelImpl::BertModelImpl(const BertEmbeddingsOptions& embeddings_options, const BertBlocksConfig& blocks)
    : embeddings(register_module("embeddings", BertEmbeddings(embeddings_options))),
      encoder(register_module("encoder", BertEncoder(blocks))) {}

torch::Tensor BertModelImpl::forward(const torch::Tensor& input_ids) { return encoder(embeddings(input_ids)); }

BertPredictionHeadTransformImpl::BertPredictionHeadTransformImpl(const BertBlocksConfig& c)
    : dense(register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size))),
      LayerNorm(register_module("LayerNorm", MakeLayerNorm(c.hidden_size, c.layer_norm_eps))),
      act(c.hidden_act) {}

torch::Tensor BertPredictionHeadTransformImpl::forward(const torch::Tensor& hidden) {
  return LayerNorm(Activate(act, dense(hidden)));
}

BertLMPredictionHeadImpl::BertLMPredictionHeadImpl(const BertBlocksConfig& c, int64_t vocab_size,
                                                   const torch::Tensor& word_embeddings)
    : transform(register_module("transform", BertPredictionHeadTransform(c))),
      bias(register_parameter("bias", torch::zeros({vocab_size}))),
      decoder(register_module("decoder", TiedWeights(word_embeddings, bias))) {}

torch::Tensor BertLMPredictionHeadImpl::forward(const torch::Tensor& hidden) { return decoder(transform(hidden)); }

BertOnlyMLMHeadImpl::BertOnlyMLMHeadImpl(const BertBlocksConfig& c, int64_t vocab_size,
                                         const torch::Tensor& word_embeddings)
    : predictions(register_module("predictions", BertLMPredictionHead(c, vocab_size, word_embeddings))) {}

torch::Tensor BertOnlyMLMHeadImpl::forward(const torch::Tensor& hidden) { return predictions(hidden); }

RobertaLMHeadImpl::RobertaLMHeadImpl(const BertBlocksConfig& c, int64_t vocab_size,
                                     const torch::Tensor& word_embeddings)
    : dense(register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size))),
      layer_norm(register_module("layer_norm", MakeLayerNorm(c.hidden_size, c.layer_norm_eps))),
      bias(register_parameter("bias", torch::zeros({vocab_size}))),
      decoder(register_module("decoder", TiedWeights(word_embeddings, bias))) {}

torch::Tensor RobertaLMHeadImpl::forward(const torch::Tensor& features) {
  return decoder(layer_norm(torch::gelu(dense(features))));
}

}  // namespace torchgauge::models
