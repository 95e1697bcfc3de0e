#include "models/nlp/bert.h"

#include <torch/torch.h>

#include "models/nlp/bert_encoder.h"
#include "models/shared/hf_harness.h"

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
  double initializer_range = 0.02;
};

// BertForMaskedLM: BertModel without the pooler (add_pooling_layer=False)
// and BertOnlyMLMHead (BertPreTrainedModel._init_weights, initializer_range 0.02).
struct BertForMaskedLMImpl : MaskedLmImpl<BertModel, BertOnlyMLMHead> {
  explicit BertForMaskedLMImpl(const BertConfig& c)
      : MaskedLmImpl(c, "bert", BertModel(BertEmbeddingsOf(c), BertBlocksOf(c)), "cls", BertBlocksOf(c)) {}
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
  spec.build = BuildFromIds<BertForMaskedLM>(config);
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
