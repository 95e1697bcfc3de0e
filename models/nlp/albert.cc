#include "models/nlp/albert.h"

#include <torch/torch.h>

#include <cmath>

#include "models/nlp/bert_encoder.h"
#include "models/shared/hf_harness.h"

namespace torchgauge::models {
namespace {

struct AlbertConfig {
  int64_t vocab_size = 30000;
  int64_t embedding_size = 128;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_hidden_groups = 1;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  int64_t inner_group_num = 1;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double hidden_dropout_prob = 0.0;
  double attention_probs_dropout_prob = 0.0;
  double layer_norm_eps = 1e-12;
  double initializer_range = 0.02;
  int64_t pad_token_id = 0;
};

// AlbertSdpaAttention: projections, scaled_dot_product_attention, output
// projection with dropout, and the residual LayerNorm inside the module.
struct AlbertAttentionImpl : torch::nn::Module {
  explicit AlbertAttentionImpl(const AlbertConfig& c)
      : query(register_module("query", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        key(register_module("key", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        value(register_module("value", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        dense(register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size))),
        LayerNorm(register_module("LayerNorm", MakeLayerNorm(c.hidden_size, c.layer_norm_eps))),
        num_heads(c.num_attention_heads),
        head_size(c.hidden_size / c.num_attention_heads),
        attention_dropout_p(c.attention_probs_dropout_prob),
        output_dropout_p(c.hidden_dropout_prob) {
    TORCH_CHECK(c.hidden_size % c.num_attention_heads == 0, "hf_albert: hidden size ", c.hidden_size,
                " not divisible by ", c.num_attention_heads, " heads");
  }

  torch::Tensor forward(const torch::Tensor& hidden) {
    const auto bsz = hidden.size(0), len = hidden.size(1);
    auto split = [&](const torch::Tensor& t) { return t.view({bsz, -1, num_heads, head_size}).transpose(1, 2); };
    auto q = split(query(hidden));
    auto k = split(key(hidden));
    auto v = split(value(hidden));
    auto context = at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{},
                                                    is_training() ? attention_dropout_p : 0.0, /*is_causal=*/false);
    context = context.transpose(1, 2).reshape({bsz, len, num_heads * head_size});
    auto projected = torch::dropout(dense(context), output_dropout_p, is_training());
    return LayerNorm(hidden + projected);
  }

  torch::nn::Linear query, key, value, dense;
  torch::nn::LayerNorm LayerNorm;
  int64_t num_heads, head_size;
  double attention_dropout_p, output_dropout_p;
};
TORCH_MODULE(AlbertAttention);

// Attention, then the feed-forward (no dropout on its output in ALBERT) and
// the residual LayerNorm.
struct AlbertLayerImpl : torch::nn::Module {
  explicit AlbertLayerImpl(const AlbertConfig& c)
      : full_layer_layer_norm(register_module("full_layer_layer_norm", MakeLayerNorm(c.hidden_size, c.layer_norm_eps))),
        attention(register_module("attention", AlbertAttention(c))),
        ffn(register_module("ffn", torch::nn::Linear(c.hidden_size, c.intermediate_size))),
        ffn_output(register_module("ffn_output", torch::nn::Linear(c.intermediate_size, c.hidden_size))) {}
  torch::Tensor forward(const torch::Tensor& hidden) {
    auto attention_output = attention(hidden);
    auto ffn_out = ffn_output(GeluNew(ffn(attention_output)));
    return full_layer_layer_norm(ffn_out + attention_output);
  }
  torch::nn::LayerNorm full_layer_layer_norm;
  AlbertAttention attention;
  torch::nn::Linear ffn, ffn_output;
};
TORCH_MODULE(AlbertLayer);

struct AlbertLayerGroupImpl : torch::nn::Module {
  explicit AlbertLayerGroupImpl(const AlbertConfig& c)
      : albert_layers(register_module("albert_layers", torch::nn::ModuleList())) {
    for (int64_t i = 0; i < c.inner_group_num; ++i) albert_layers->push_back(AlbertLayer(c));
  }
  torch::Tensor forward(torch::Tensor hidden) {
    for (const auto& l : *albert_layers) hidden = l->as<AlbertLayerImpl>()->forward(hidden);
    return hidden;
  }
  torch::nn::ModuleList albert_layers;
};
TORCH_MODULE(AlbertLayerGroup);

// The 128 -> 768 mapping, then num_hidden_layers applications of the shared
// layer groups (layer i uses group i * groups / layers).
struct AlbertTransformerImpl : torch::nn::Module {
  explicit AlbertTransformerImpl(const AlbertConfig& c)
      : embedding_hidden_mapping_in(
            register_module("embedding_hidden_mapping_in", torch::nn::Linear(c.embedding_size, c.hidden_size))),
        albert_layer_groups(register_module("albert_layer_groups", torch::nn::ModuleList())),
        num_hidden_layers(c.num_hidden_layers),
        num_hidden_groups(c.num_hidden_groups) {
    TORCH_CHECK(c.num_hidden_groups >= 1 && c.num_hidden_layers % c.num_hidden_groups == 0,
                "hf_albert: num_hidden_layers must be a multiple of num_hidden_groups");
    for (int64_t i = 0; i < c.num_hidden_groups; ++i) albert_layer_groups->push_back(AlbertLayerGroup(c));
  }
  torch::Tensor forward(const torch::Tensor& embeddings) {
    auto hidden = embedding_hidden_mapping_in(embeddings);
    for (int64_t i = 0; i < num_hidden_layers; ++i) {
      const int64_t group = i * num_hidden_groups / num_hidden_layers;
      hidden = albert_layer_groups[group]->as<AlbertLayerGroupImpl>()->forward(hidden);
    }
    return hidden;
  }
  torch::nn::Linear embedding_hidden_mapping_in;
  torch::nn::ModuleList albert_layer_groups;
  int64_t num_hidden_layers, num_hidden_groups;
};
TORCH_MODULE(AlbertTransformer);

// AlbertModel without the pooler (AlbertForMaskedLM: add_pooling_layer=False).
struct AlbertModelImpl : torch::nn::Module {
  explicit AlbertModelImpl(const AlbertConfig& c)
      // The factorised embedding: BERT's tables, LayerNorm and dropout at
      // embedding_size (128).
      : embeddings(register_module("embeddings", BertEmbeddings(BertEmbeddingsOptions{
                                                     .vocab_size = c.vocab_size,
                                                     .width = c.embedding_size,
                                                     .max_position_embeddings = c.max_position_embeddings,
                                                     .type_vocab_size = c.type_vocab_size,
                                                     .pad_token_id = c.pad_token_id,
                                                     .layer_norm_eps = c.layer_norm_eps,
                                                     .hidden_dropout_prob = c.hidden_dropout_prob,
                                                 }))),
        encoder(register_module("encoder", AlbertTransformer(c))) {}
  torch::Tensor forward(const torch::Tensor& input_ids) { return encoder(embeddings(input_ids)); }
  BertEmbeddings embeddings;
  AlbertTransformer encoder;
};
TORCH_MODULE(AlbertModel);

// hidden -> embedding width, gelu_new, LayerNorm, then the decoder tied to the
// word embeddings (weight) and to `bias`.
struct AlbertMLMHeadImpl : torch::nn::Module {
  AlbertMLMHeadImpl(const AlbertConfig& c, const torch::Tensor& word_embeddings)
      : LayerNorm(register_module("LayerNorm", MakeLayerNorm(c.embedding_size, c.layer_norm_eps))),
        bias(register_parameter("bias", torch::zeros({c.vocab_size}))),
        dense(register_module("dense", torch::nn::Linear(c.hidden_size, c.embedding_size))),
        decoder(register_module("decoder", TiedWeights(word_embeddings, bias))) {}
  torch::Tensor forward(const torch::Tensor& hidden) { return decoder(LayerNorm(GeluNew(dense(hidden)))); }
  torch::nn::LayerNorm LayerNorm;
  torch::Tensor bias;
  torch::nn::Linear dense;
  TiedWeights decoder;
};
TORCH_MODULE(AlbertMLMHead);

struct AlbertForMaskedLMImpl : torch::nn::Module {
  explicit AlbertForMaskedLMImpl(const AlbertConfig& c)
      : albert(register_module("albert", AlbertModel(c))),
        predictions(register_module("predictions", AlbertMLMHead(c, albert->embeddings->word_embeddings->weight))) {
    // AlbertPreTrainedModel._init_weights, and a zero MLM bias.
    InitHfWeights(*this, c.initializer_range);
    torch::NoGradGuard no_grad;
    predictions->bias.zero_();
  }

  torch::Tensor forward(const torch::Tensor& input_ids) { return predictions(albert(input_ids)); }

  AlbertModel albert;
  AlbertMLMHead predictions;
};
TORCH_MODULE(AlbertForMaskedLM);

}  // namespace

void AddAlbertModels(std::vector<ModelInfo>& out) {
  auto info = LanguageModelInfo({
      .id = "hf_albert",
      .paper_name = "hf_Albert",
      .reference =
          "transformers.AlbertForMaskedLM(\"albert-base-v2\" config) (TorchBench hf_Albert: AutoModelForMaskedLM)",
      // torchbenchmark/models/hf_Albert/__init__.py: DEFAULT_TRAIN_BSIZE = 8, DEFAULT_EVAL_BSIZE = 1.
      .default_batch = {8, 1},
      .objective = LmObjective::kMaskedLm,
      .vocab_size = AlbertConfig{}.vocab_size,
      // TorchBench's Hugging Face model table (basic_configs.py, "hf_Albert"): 512 and 512.
      .train_seq_len = 512,
      .eval_seq_len = 512,
      .build = BuildFromIds<AlbertForMaskedLM>(AlbertConfig{}),
  });
  // Few parameters but BERT-base compute (12 layer applications at width
  // 768): one train step at 8 x 512 tokens is ~5 TFLOP, far over 2 s on 2 CPU
  // cores.
  info.cpu_batch = BatchSizes{1, 1};
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
