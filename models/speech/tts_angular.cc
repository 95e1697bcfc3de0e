#include "models/speech/tts_angular.h"

#include <torch/torch.h>

#include <cmath>

namespace torchgauge::models {
namespace {

constexpr int64_t kMelBands = 40;
constexpr int64_t kFrames = 50;
constexpr int64_t kLstmDim = 768;
constexpr int64_t kProjDim = 256;
constexpr int64_t kLstmLayers = 3;
// TorchBench reshapes its batch to (64 speakers, batch / 64 utterances); at
// its default batch of 64 that leaves one utterance per speaker, an empty
// anchor set and a NaN loss. Two utterances per speaker (positive + anchor)
// is the smallest grouping for which the loss is defined.
constexpr int64_t kUtterancesPerSpeaker = 2;

struct LSTMWithProjectionImpl : torch::nn::Module {
  LSTMWithProjectionImpl(int64_t input_size, int64_t hidden_size, int64_t proj_size)
      : lstm(register_module("lstm",
                             torch::nn::LSTM(torch::nn::LSTMOptions(input_size, hidden_size).batch_first(true)))),
        linear(register_module("linear",
                               torch::nn::Linear(torch::nn::LinearOptions(hidden_size, proj_size).bias(false)))) {}

  torch::Tensor forward(const torch::Tensor& x) { return linear(std::get<0>(lstm(x))); }

  torch::nn::LSTM lstm;
  torch::nn::Linear linear;
};
TORCH_MODULE(LSTMWithProjection);

struct SpeakerEncoderImpl : torch::nn::Module {
  SpeakerEncoderImpl() {
    layers = register_module("layers", torch::nn::Sequential());
    layers->push_back(LSTMWithProjection(kMelBands, kLstmDim, kProjDim));
    for (int64_t i = 1; i < kLstmLayers; ++i) layers->push_back(LSTMWithProjection(kProjDim, kLstmDim, kProjDim));
    // The reference's _init_layers: Xavier-normal weights, zero biases.
    for (auto& p : layers->named_parameters()) {
      if (p.key().find("bias") != std::string::npos) {
        torch::nn::init::zeros_(p.value());
      } else {
        torch::nn::init::xavier_normal_(p.value());
      }
    }
  }

  torch::Tensor forward(const torch::Tensor& mels) {
    auto d = layers->forward(mels);
    return torch::nn::functional::normalize(d.select(1, -1), torch::nn::functional::NormalizeFuncOptions().p(2).dim(1));
  }

  torch::nn::Sequential layers{nullptr};
};
TORCH_MODULE(SpeakerEncoder);

torch::Tensor AngleProtoLoss(const torch::Tensor& embeddings /* speakers x utterances x dim */) {
  constexpr double kW = 10.0, kB = -5.0;
  auto anchor = embeddings.slice(1, 1).mean(1);
  auto positive = embeddings.select(1, 0);
  const int64_t speakers = anchor.size(0);
  // The reference broadcasts both to dim x speakers grids and takes the
  // cosine along the embedding dimension: cos[i][j] = cos(positive_i, anchor_j).
  auto cos =
      torch::nn::functional::cosine_similarity(positive.unsqueeze(-1).expand({-1, -1, speakers}),
                                               anchor.unsqueeze(-1).expand({-1, -1, speakers}).transpose(0, 2),
                                               torch::nn::functional::CosineSimilarityFuncOptions().dim(1).eps(1e-8));
  auto logits = cos * kW + kB;
  auto labels = torch::arange(speakers, torch::TensorOptions(logits.device()).dtype(torch::kLong));
  return torch::nn::functional::cross_entropy(logits, labels);
}

// RAdam as in TorchBench's copy (degenerated_to_sgd=True, weight decay 0);
// LibTorch ships no RAdam. A torch::optim::Optimizer (zero_grad sets the
// gradients to none, as before), so that the inductor backend's compiled
// train step can step it.
class RAdam : public torch::optim::Optimizer {
 public:
  RAdam(std::vector<torch::Tensor> params, double lr)
      : torch::optim::Optimizer({torch::optim::OptimizerParamGroup(std::move(params))},
                                std::make_unique<torch::optim::AdamOptions>(lr)),
        lr_(lr) {}

  torch::Tensor step(LossClosure /*closure*/ = nullptr) override {
    torch::NoGradGuard no_grad;
    auto& params = param_groups()[0].params();
    ++step_;
    const double beta2_t = std::pow(kBeta2, static_cast<double>(step_));
    const double n_sma_max = 2 / (1 - kBeta2) - 1;
    const double n_sma = n_sma_max - 2 * step_ * beta2_t / (1 - beta2_t);
    const double bias1 = 1 - std::pow(kBeta1, static_cast<double>(step_));
    const bool rectified = n_sma >= 5;
    const double step_size = rectified ? std::sqrt((1 - beta2_t) * (n_sma - 4) / (n_sma_max - 4) * (n_sma - 2) / n_sma *
                                                   n_sma_max / (n_sma_max - 2)) /
                                             bias1
                                       : 1.0 / bias1;
    if (exp_avg_.empty()) {
      for (auto& p : params) {
        exp_avg_.push_back(torch::zeros_like(p));
        exp_avg_sq_.push_back(torch::zeros_like(p));
      }
    }
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& grad = params[i].grad();
      if (!grad.defined()) continue;
      exp_avg_sq_[i].mul_(kBeta2).addcmul_(grad, grad, 1 - kBeta2);
      exp_avg_[i].mul_(kBeta1).add_(grad, 1 - kBeta1);
      if (rectified) {
        params[i].addcdiv_(exp_avg_[i], exp_avg_sq_[i].sqrt().add_(kEps), -step_size * lr_);
      } else {
        params[i].add_(exp_avg_[i], -step_size * lr_);
      }
    }
    return {};
  }

 private:
  static constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;
  std::vector<torch::Tensor> exp_avg_, exp_avg_sq_;
  double lr_;
  int64_t step_ = 0;
};

class TtsAngularWorkload : public LossWorkload {
 public:
  // The reference's train step clears the gradients first.
  explicit TtsAngularWorkload(const WorkloadOptions& opt) : LossWorkload(ZeroGradAt::kBeforeForward) {
    TORCH_CHECK(opt.batch_size >= 2 && opt.batch_size % kUtterancesPerSpeaker == 0,
                "tts_angular: batch size must be a positive multiple of ", kUtterancesPerSpeaker,
                " (utterances per speaker), got ", opt.batch_size);
    net_->to(opt.device);
    inputs_["mels"] = torch::rand({opt.batch_size, kFrames, kMelBands}, torch::TensorOptions(opt.device));
    samples_per_step_ = opt.batch_size;
    // Mozilla TTS speaker_encoder config.json: "lr": 0.0001.
    optimizer_ = std::make_unique<RAdam>(net_->parameters(), 1e-4);
  }

  torch::nn::Module& net() override { return *net_; }
  torch::Tensor Forward() override { return net_->forward(inputs_["mels"]); }

 private:
  torch::Tensor Loss(const torch::Tensor& embeddings) override {
    return AngleProtoLoss(embeddings.view({-1, kUtterancesPerSpeaker, embeddings.size(1)}));
  }

  SpeakerEncoder net_;
};

}  // namespace

void AddTtsAngularModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "tts_angular";
  info.paper_name = "tts_angular";
  info.domain = Domain::kSpeech;
  info.task = "synthesis";
  info.reference =
      "Mozilla TTS speaker encoder (LSTM with projection) + angular prototypical loss, "
      "as in TorchBench tts_angular";
  // torchbenchmark/models/tts_angular/__init__.py: DEFAULT_TRAIN_BSIZE = 64,
  // DEFAULT_EVAL_BSIZE = 64 (mozilla/TTS speaker_encoder config.json).
  info.default_batch = {64, 64};
  info.smoke_batch = {4, 4};
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<TtsAngularWorkload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
