#include "models/recommendation/deeprecommender.h"

#include <torch/torch.h>

#include <memory>

namespace torchgauge::models {
namespace {

// The item count is the Netflix Prize catalogue (197,951 movies): the width of
// the rating vectors, a dataset dimension rather than an architectural choice.
// Smoke runs use an 8,192-item catalogue with the same hidden layers
// (512-512-1024), activations and dropout, so that two small CPU cores are not
// dominated by the 197,951-wide first and last layers.
constexpr int64_t kItems = 197951, kSmokeItems = 8192;
const std::vector<int64_t> kHiddenSizes = {512, 512, 1024};

std::vector<int64_t> LayerSizes(int64_t items) {
  std::vector<int64_t> sizes{items};
  sizes.insert(sizes.end(), kHiddenSizes.begin(), kHiddenSizes.end());
  return sizes;
}
constexpr double kDropProb = 0.8, kLr = 0.005, kMomentum = 0.9, kRatingDensity = 0.02;

struct AutoEncoderImpl : torch::nn::Module {
  explicit AutoEncoderImpl(int64_t items = kItems) {
    const std::vector<int64_t> layer_sizes = LayerSizes(items);
    encode_w = register_module("encode_w", torch::nn::ParameterList());
    encode_b = register_module("encode_b", torch::nn::ParameterList());
    decode_w = register_module("decode_w", torch::nn::ParameterList());
    decode_b = register_module("decode_b", torch::nn::ParameterList());
    const size_t n = layer_sizes.size();
    for (size_t i = 0; i + 1 < n; ++i) {
      auto w = torch::empty({layer_sizes[i + 1], layer_sizes[i]});
      torch::nn::init::xavier_uniform_(w);
      encode_w->append(w.requires_grad_());
      encode_b->append(torch::zeros({layer_sizes[i + 1]}).requires_grad_());
    }
    // The decoder mirrors the encoder's sizes with its own weights.
    for (size_t i = n - 1; i > 0; --i) {
      auto w = torch::empty({layer_sizes[i - 1], layer_sizes[i]});
      torch::nn::init::xavier_uniform_(w);
      decode_w->append(w.requires_grad_());
      decode_b->append(torch::zeros({layer_sizes[i - 1]}).requires_grad_());
    }
  }

  torch::Tensor forward(torch::Tensor x) {
    for (size_t i = 0; i < encode_w->size(); ++i) x = torch::selu(torch::linear(x, encode_w[i], encode_b[i]));
    // Dropout on the code layer only; active in train mode.
    x = torch::dropout(x, kDropProb, is_training());
    for (size_t i = 0; i < decode_w->size(); ++i) x = torch::selu(torch::linear(x, decode_w[i], decode_b[i]));
    return x;
  }

  torch::nn::ParameterList encode_w, encode_b, decode_w, decode_b;
};
TORCH_MODULE(AutoEncoder);

class DeepRecommenderWorkload : public LossWorkload {
 public:
  explicit DeepRecommenderWorkload(const WorkloadOptions& opt)
      : LossWorkload(ZeroGradAt::kBeforeForward),
        batch_(opt.batch_size),
        items_(opt.smoke ? kSmokeItems : kItems),
        net_(items_) {
    TORCH_CHECK(opt.batch_size >= 1, "nvidia_deeprecommender: batch size must be >= 1");
    net_->to(opt.device);
    auto dev = torch::TensorOptions().device(opt.device);
    auto ratings = torch::randint(1, 6, {opt.batch_size, items_}, dev);
    auto rated = torch::rand({opt.batch_size, items_}, dev) < kRatingDensity;
    inputs_["ratings"] = ratings * rated;
    samples_per_step_ = opt.batch_size;
    if (opt.mode == Mode::kTrain) {
      optimizer_ =
          std::make_unique<torch::optim::SGD>(net_->parameters(), torch::optim::SGDOptions(kLr).momentum(kMomentum));
    }
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override { return net_->forward(inputs_["ratings"]); }

  // nvtrain.py's toy-mode train() (zero_grad first): the autoencoder
  // reconstructs its input; the loss, DeepRecommender's MSEloss, is the MSE
  // over the rated items only.
  torch::Tensor Loss(const torch::Tensor& outputs) override {
    const auto& targets = inputs_["ratings"];
    auto mask = (targets != 0).to(outputs.scalar_type());
    return torch::mse_loss(outputs * mask, targets, at::Reduction::Sum) / mask.sum();
  }

  std::optional<double> AnalyticFlops(Mode mode) const override {
    const std::vector<int64_t> layer_sizes = LayerSizes(items_);
    double macs = 0;
    for (size_t i = 0; i + 1 < layer_sizes.size(); ++i) macs += 2.0 * layer_sizes[i] * layer_sizes[i + 1];
    const double fwd = 2.0 * macs * static_cast<double>(batch_);
    return mode == Mode::kEval ? fwd : 3.0 * fwd;
  }

 private:
  int64_t batch_;
  int64_t items_;
  AutoEncoder net_;
};

}  // namespace

void AddDeepRecommenderModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "nvidia_deeprecommender";
  info.paper_name = "nvidia_deeprecommender";
  info.domain = Domain::kRecommendation;
  info.task = "recommendation";
  info.reference = "NVIDIA DeepRecommender (Kuchaiev & Ginsburg 2017), TorchBench nvidia_deeprecommender";
  // TorchBench nvidia_deeprecommender/__init__.py: DEFAULT_TRAIN_BSIZE = 256,
  // DEFAULT_EVAL_BSIZE = 256.
  info.default_batch = {256, 256};
  // The CPU suite's sizes (the full suite on a CPU device): a train step at 256 took 6.8 s
  // and an eval step 2.3 s on 2 cores (torchgauge full suite, 2026-11-24): 64/128.
  info.cpu_batch = BatchSizes{64, 128};
  info.smoke_batch = {2, 2};
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<DeepRecommenderWorkload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
