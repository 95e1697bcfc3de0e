#include "models/nlp/xlmr.h"

#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>
#include <torch/torch.h>

#include "models/nlp/bert_encoder.h"
#include "models/shared/hf_harness.h"

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
  double initializer_range = 0.02;
};

// FAMBench's benchmark inputs: sequences of 64 tokens drawn from the first
// 250000 ids; the regression target has the hidden width.
constexpr int64_t kSeqLen = 64;
constexpr int64_t kInputVocab = 250000;
constexpr int64_t kSmokeSeqLen = 32;
constexpr double kLearningRate = 0.01;  // FAMBench's torch.optim.SGD(lr=0.01)

// RobertaEmbeddings: BERT's, with RoBERTa's positions and padding row.
BertEmbeddingsOptions XlmrEmbeddings(const XlmrConfig& c) {
  BertEmbeddingsOptions o = BertEmbeddingsOf(c);
  o.pad_token_id = c.pad_token_id;
  o.roberta_positions = true;
  return o;
}

struct XlmrForMaskedLMImpl : torch::nn::Module {
  explicit XlmrForMaskedLMImpl(const XlmrConfig& c)
      // XLMRobertaModel without the pooler (XLMRobertaForMaskedLM builds it
      // with add_pooling_layer=False; fairseq's RoBERTa has none either).
      : roberta(register_module("roberta", BertModel(XlmrEmbeddings(c), BertBlocksOf(c)))),
        // XLMRobertaLMHead. FAMBench's step never calls it (extract_features
        // stops before the head), but its parameters are part of the model
        // and of the optimizer's parameter list.
        lm_head(register_module(
            "lm_head", RobertaLMHead(BertBlocksOf(c), c.vocab_size, roberta->embeddings->word_embeddings->weight))) {
    // XLMRobertaPreTrainedModel._init_weights (initializer_range 0.02).
    InitHfWeights(*this, c.initializer_range);
  }

  // fairseq's extract_features: the last encoder layer's output.
  torch::Tensor ExtractFeatures(const torch::Tensor& input_ids) { return roberta(input_ids); }
  // The masked-LM logits (not part of FAMBench's step).
  torch::Tensor forward(const torch::Tensor& input_ids) { return lm_head(roberta(input_ids)); }

  BertModel roberta;
  RobertaLMHead lm_head;
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

// xlm-roberta-base's config.json: XLM-R large's vocabulary and positions at
// BERT-base's widths.
XlmrConfig XlmrBaseConfig() {
  XlmrConfig c;
  c.hidden_size = 768;
  c.num_hidden_layers = 12;
  c.num_attention_heads = 12;
  c.intermediate_size = 3072;
  return c;
}

constexpr int64_t kRobertaSmokeVocab = 8192;

XlmrConfig WithVocab(XlmrConfig c, int64_t vocab_size) {
  c.vocab_size = vocab_size;
  return c;
}

ModelInfo RobertaBaseInfo(const XlmrConfig& config) {
  auto info = LanguageModelInfo({
      .id = "hf_roberta_base",
      .paper_name = "(not in the paper's list)",
      .reference = "transformers.XLMRobertaForMaskedLM(xlm-roberta-base config) (TorchBench hf_Roberta_base, added "
                   "since the paper: AutoModelForMaskedLM of AutoConfig.from_pretrained(\"xlm-roberta-base\")); smoke "
                   "runs: an 8192-row token table",
      // hf_Roberta_base/__init__.py: DEFAULT_TRAIN_BSIZE = 4, DEFAULT_EVAL_BSIZE = 1.
      .default_batch = {4, 1},
      .objective = LmObjective::kMaskedLm,
      .vocab_size = config.vocab_size,
      // TorchBench's Hugging Face table: 512 tokens in train and eval.
      .train_seq_len = 512,
      .eval_seq_len = 512,
      .build = BuildFromIds<XlmrForMaskedLM>(config),
      // Smoke runs: an 8192-row token table (every layer and width as
      // published): the 250002-row table's Adam step and LM head alone made a
      // smoke train step about 10 s on one core.
      .smoke_vocab_size = kRobertaSmokeVocab,
      .build_smoke = BuildFromIds<XlmrForMaskedLM>(WithVocab(config, kRobertaSmokeVocab)),
  });
  // The 250002-wide LM head over 4 x 512 tokens is ~0.8 TFLOP a forward
  // pass: batch 1 on the CPU, as hf_bert_large.
  info.cpu_batch = BatchSizes{1, 1};
  return info;
}

}  // namespace

ModelInfo HfRobertaBaseInfoForTest(int64_t num_hidden_layers, int64_t vocab_size) {
  TORCH_CHECK(num_hidden_layers > 0 && vocab_size > 2, "hf_roberta_base: bad test configuration");
  XlmrConfig config = XlmrBaseConfig();
  config.num_hidden_layers = num_hidden_layers;
  config.vocab_size = vocab_size;
  return RobertaBaseInfo(config);
}

ModelInfo FambenchXlmrInfoForTest(int64_t num_hidden_layers, int64_t vocab_size) {
  TORCH_CHECK(num_hidden_layers > 0 && vocab_size > 2, "fambench_xlmr: bad test configuration");
  XlmrConfig config;
  config.num_hidden_layers = num_hidden_layers;
  config.vocab_size = vocab_size;
  return MakeInfo(config);
}

void AddXlmrModels(std::vector<ModelInfo>& out) {
  out.push_back(MakeInfo(XlmrConfig{}));
  out.push_back(RobertaBaseInfo(XlmrBaseConfig()));
}

}  // namespace torchgauge::models
