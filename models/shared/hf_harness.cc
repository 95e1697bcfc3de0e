#include "models/shared/hf_harness.h"

#include <torch/nn/functional/loss.h>
#include <torch/optim/adam.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace torchgauge::models {

TiedWeightsImpl::TiedWeightsImpl(const torch::Tensor& weight_arg, const torch::Tensor& bias_arg)
    : weight(register_buffer("weight", weight_arg)) {
  if (bias_arg.defined()) this->bias = register_buffer("bias", bias_arg);
}

torch::Tensor TiedWeightsImpl::forward(const torch::Tensor& hidden) {
  return bias.defined() ? torch::linear(hidden, weight, bias) : torch::linear(hidden, weight);
}

torch::Tensor TiedWeightsImpl::Embed(const torch::Tensor& ids) { return torch::embedding(weight, ids); }

torch::nn::LayerNorm MakeLayerNorm(int64_t dim, double eps) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(eps));
}

torch::Scalar FinfoMin(torch::ScalarType dtype) {
  switch (dtype) {
    case torch::kHalf:
      return std::numeric_limits<c10::Half>::lowest();
    case torch::kBFloat16:
      return std::numeric_limits<c10::BFloat16>::lowest();
    case torch::kDouble:
      return std::numeric_limits<double>::lowest();
    default:
      return std::numeric_limits<float>::lowest();
  }
}

torch::Tensor GeluNew(const torch::Tensor& x) {
  auto half_x = 0.5 * x;
  auto cube = torch::pow(x, 3.0);
  auto inner = x + 0.044715 * cube;
  auto t = torch::tanh(std::sqrt(2.0 / M_PI) * inner);
  return half_x * (1.0 + t);
}

void InitHfWeights(torch::nn::Module& model, double stddev) {
  torch::NoGradGuard no_grad;
  for (auto& m : model.modules(/*include_self=*/false)) {
    if (auto* linear = m->as<torch::nn::LinearImpl>()) {
      linear->weight.normal_(0.0, stddev);
      if (linear->bias.defined()) linear->bias.zero_();
    } else if (auto* emb = m->as<torch::nn::EmbeddingImpl>()) {
      emb->weight.normal_(0.0, stddev);
      if (emb->options.padding_idx()) emb->weight[*emb->options.padding_idx()].zero_();
    } else if (auto* ln = m->as<torch::nn::LayerNormImpl>()) {
      ln->weight.fill_(1.0);
      ln->bias.zero_();
    }
  }
}

torch::Tensor ShiftTokensRight(const torch::Tensor& labels, int64_t pad_token_id, int64_t decoder_start_token_id) {
  auto shifted = torch::zeros_like(labels);
  shifted.slice(-1, 1).copy_(labels.slice(-1, 0, -1));
  shifted.select(-1, 0).fill_(decoder_start_token_id);
  return shifted.masked_fill(shifted == -100, pad_token_id);
}

namespace {

// Smoke runs (WorkloadOptions::smoke) use a short sequence so that the smoke
// suite fits 2 CPU cores; the sequence length is an input size, not part of
// the architecture.
constexpr int64_t kSmokeSeqLen = 32;

// transformers' ignore index for labels (also torch's default).
constexpr int64_t kIgnoreIndex = -100;

class LanguageModelWorkload : public LossWorkload, public GenerativeWorkload {
 public:
  LanguageModelWorkload(const WorkloadOptions& opt, std::shared_ptr<const LanguageModelSpec> spec, LanguageModel model)
      : spec_(std::move(spec)),
        net_(std::move(model.net)),
        forward_(std::move(model.forward)),
        generator_(std::move(model.generator)) {
    TORCH_CHECK(opt.batch_size > 0, spec_->id, ": batch size must be positive");
    net_->to(opt.device);
    net_->train(opt.mode == Mode::kTrain);
    const bool train = opt.mode == Mode::kTrain;
    const int64_t seq = opt.smoke ? SmokeSeqLen(train) : (train ? spec_->train_seq_len : spec_->eval_seq_len);
    auto ids = torch::TensorOptions(opt.device).dtype(torch::kLong);
    const int64_t vocab = opt.smoke && spec_->smoke_vocab_size > 0 ? spec_->smoke_vocab_size : spec_->vocab_size;
    inputs_["input_ids"] = torch::randint(0, vocab, {opt.batch_size, seq}, ids);
    if (train) {
      // TorchBench's labels are independent random token ids; a seq2seq
      // decoder sees them shifted right.
      inputs_["labels"] = torch::randint(0, vocab, {opt.batch_size, seq}, ids);
      optimizer_ = std::make_unique<torch::optim::Adam>(net_->parameters(), torch::optim::AdamOptions(1e-3));
    } else if (spec_->objective == LmObjective::kSeq2Seq) {
      // TorchBench's seq2seq eval feeds the same ids to encoder and decoder.
      inputs_["decoder_input_ids"] = inputs_["input_ids"];
    }
    samples_per_step_ = opt.batch_size;
  }

  torch::nn::Module& net() override { return *net_; }
  Generator* generator() override { return generator_.get(); }

  std::optional<std::string> CompiledForwardUnsupported(Mode) const override {
    if (spec_->compiled_forward_unsupported.empty()) return std::nullopt;
    return spec_->compiled_forward_unsupported;
  }

  torch::Tensor Forward() override {
    torch::Tensor decoder_ids;
    if (spec_->objective == LmObjective::kSeq2Seq) {
      // As transformers does when given labels; a parity test may replace
      // the labels, so the decoder inputs are derived on every call.
      auto it = inputs_.find("labels");
      decoder_ids = it == inputs_.end()
                        ? inputs_.at("decoder_input_ids")
                        : ShiftTokensRight(it->second, spec_->pad_token_id, spec_->decoder_start_token_id);
    }
    return forward_(inputs_.at("input_ids"), decoder_ids);
  }

 private:
  int64_t SmokeSeqLen(bool train) const {
    const int64_t stated = train ? spec_->smoke_train_seq_len : spec_->smoke_eval_seq_len;
    return stated > 0 ? stated : kSmokeSeqLen;
  }

  // transformers' loss for the model's head: mean cross-entropy over the
  // label positions.
  torch::Tensor Loss(const torch::Tensor& logits) override {
    namespace F = torch::nn::functional;
    const torch::Tensor& labels = inputs_.at("labels");
    const auto options = F::CrossEntropyFuncOptions().ignore_index(kIgnoreIndex);
    if (spec_->objective != LmObjective::kCausalLm) {
      return F::cross_entropy(logits.view({-1, logits.size(-1)}), labels.view(-1), options);
    }
    // Token t predicts label t+1. As transformers does, the labels are
    // shifted by padding with the ignore index, so the mean runs over the
    // same (batch * (seq - 1)) terms; the logits are upcast to fp32 first.
    auto shifted = torch::constant_pad_nd(labels, {0, 1}, kIgnoreIndex).slice(-1, 1).contiguous();
    return F::cross_entropy(logits.to(torch::kFloat).view({-1, logits.size(-1)}), shifted.view(-1), options);
  }

  std::shared_ptr<const LanguageModelSpec> spec_;
  std::shared_ptr<torch::nn::Module> net_;
  LmForward forward_;
  std::shared_ptr<Generator> generator_;
};

}  // namespace

ModelInfo LanguageModelInfo(LanguageModelSpec spec) {
  ModelInfo info;
  info.id = spec.id;
  info.paper_name = spec.paper_name;
  info.domain = Domain::kNlp;
  info.task = "language modeling";
  info.reference = spec.reference;
  info.default_batch = spec.default_batch;
  info.smoke_batch = {1, 1};
  auto shared = std::make_shared<const LanguageModelSpec>(std::move(spec));
  info.create = [shared](const WorkloadOptions& opt) -> std::unique_ptr<Workload> {
    const auto& build = opt.smoke && shared->build_smoke ? shared->build_smoke : shared->build;
    return std::make_unique<LanguageModelWorkload>(opt, shared, build());
  };
  return info;
}

ModelInfo LongDocumentMaskedLmInfo(LanguageModelSpec spec) {
  spec.default_batch = {2, 1};
  spec.objective = LmObjective::kMaskedLm;
  spec.train_seq_len = 1024;
  spec.eval_seq_len = 4096;
  ModelInfo info = LanguageModelInfo(std::move(spec));
  info.cpu_batch = BatchSizes{1, 1};
  return info;
}

}  // namespace torchgauge::models
