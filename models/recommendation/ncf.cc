#include "models/recommendation/ncf.h"

#include <torch/torch.h>

#include <cmath>
#include <memory>

namespace torchgauge::models {
namespace {

constexpr int64_t kUsers = 138'493, kItems = 26'744, kSmokeUsers = 2'000, kSmokeItems = 1'000;
constexpr int64_t kMfDim = 64, kNegatives = 4;
const std::vector<int64_t> kMlpLayers = {256, 256, 128, 64};
constexpr double kLr = 0.0005, kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;

struct NeuMfImpl : torch::nn::Module {
  NeuMfImpl(int64_t users, int64_t items) {
    mf_user_embed = register_module("mf_user_embed", torch::nn::Embedding(users, kMfDim));
    mf_item_embed = register_module("mf_item_embed", torch::nn::Embedding(items, kMfDim));
    mlp_user_embed = register_module("mlp_user_embed", torch::nn::Embedding(users, kMlpLayers[0] / 2));
    mlp_item_embed = register_module("mlp_item_embed", torch::nn::Embedding(items, kMlpLayers[0] / 2));
    mlp = register_module("mlp", torch::nn::ModuleList());
    for (size_t i = 1; i < kMlpLayers.size(); ++i) mlp->push_back(torch::nn::Linear(kMlpLayers[i - 1], kMlpLayers[i]));
    final = register_module("final", torch::nn::Linear(kMlpLayers.back() + kMfDim, 1));

    torch::NoGradGuard g;
    for (auto* e : {&mf_user_embed, &mf_item_embed, &mlp_user_embed, &mlp_item_embed}) (*e)->weight.normal_(0.0, 0.01);
    for (const auto& m : *mlp) {
      auto& w = m->as<torch::nn::Linear>()->weight;                                      // [out, in]
      const double limit = std::sqrt(6.0 / static_cast<double>(w.size(1) + w.size(0)));  // Glorot uniform
      w.uniform_(-limit, limit);
    }
    const double limit = std::sqrt(3.0 / static_cast<double>(final->weight.size(1)));  // LeCun uniform
    final->weight.uniform_(-limit, limit);
  }

  // Logits [B, 1]; sigmoid probabilities when `sigmoid` (evaluation).
  torch::Tensor forward(const torch::Tensor& user, const torch::Tensor& item, bool sigmoid) {
    auto xmf = mf_user_embed->forward(user) * mf_item_embed->forward(item);
    auto xmlp = torch::cat({mlp_user_embed->forward(user), mlp_item_embed->forward(item)}, 1);
    for (const auto& layer : *mlp) xmlp = torch::relu(layer->as<torch::nn::Linear>()->forward(xmlp));
    auto x = final->forward(torch::cat({xmf, xmlp}, 1));
    return sigmoid ? torch::sigmoid(x) : x;
  }

  torch::nn::Embedding mf_user_embed{nullptr}, mf_item_embed{nullptr}, mlp_user_embed{nullptr}, mlp_item_embed{nullptr};
  torch::nn::ModuleList mlp{nullptr};
  torch::nn::Linear final{nullptr};
};
TORCH_MODULE(NeuMf);

class NcfWorkload : public LossWorkload {
 public:
  explicit NcfWorkload(const WorkloadOptions& opt)
      : batch_(opt.batch_size),
        users_(opt.smoke ? kSmokeUsers : kUsers),
        items_(opt.smoke ? kSmokeItems : kItems),
        net_(nullptr) {
    TORCH_CHECK(opt.batch_size >= 1, "ncf: batch size must be >= 1, got ", opt.batch_size);
    net_ = NeuMf(users_, items_);
    net_->to(opt.device);
    auto dev = torch::TensorOptions().device(opt.device);
    const int64_t b = opt.batch_size;
    // dataset.py's order: per positive, the positive then kNegatives samples
    // of the same user with random items.
    const int64_t groups = (b + kNegatives) / (kNegatives + 1);
    auto group_users = torch::randint(0, users_, {groups}, dev.dtype(torch::kLong));
    auto sample = torch::arange(b, dev.dtype(torch::kLong));
    inputs_["user"] = group_users.index_select(0, torch::div(sample, kNegatives + 1, "floor"));
    inputs_["item"] = torch::randint(0, items_, {b}, dev.dtype(torch::kLong));
    inputs_["label"] = (torch::remainder(sample, kNegatives + 1) == 0).to(torch::kFloat).unsqueeze(1);
    samples_per_step_ = b;
    if (opt.mode == Mode::kTrain) {
      optimizer_ = std::make_unique<torch::optim::Adam>(
          net_->parameters(), torch::optim::AdamOptions(kLr).betas({kBeta1, kBeta2}).eps(kEps));
    }
  }

  torch::nn::Module& net() override { return *net_; }

  // Training computes logits; evaluation scores with the sigmoid, as ncf.py's
  // predict() does.
  torch::Tensor Forward() override {
    return net_->forward(inputs_["user"], inputs_["item"], /*sigmoid=*/!net_->is_training());
  }

  torch::Tensor Loss(const torch::Tensor& logits) override {
    return torch::binary_cross_entropy_with_logits(logits, inputs_["label"].to(logits.scalar_type()));
  }

  std::optional<double> AnalyticFlops(Mode mode) const override {
    // MLP and final multiply-adds plus the GMF product (64 per sample).
    double macs = static_cast<double>(kMlpLayers.back() + kMfDim) + kMfDim;
    for (size_t i = 1; i < kMlpLayers.size(); ++i) macs += static_cast<double>(kMlpLayers[i - 1]) * kMlpLayers[i];
    const double fwd = 2.0 * macs * static_cast<double>(batch_);
    return mode == Mode::kEval ? fwd : 3.0 * fwd;
  }

 private:
  int64_t batch_;
  int64_t users_, items_;
  NeuMf net_;
};

}  // namespace

void AddNcfModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "ncf";
  // Not one of the paper's 84 models: the reporter's wording for models
  // outside the paper's list (reporter/paper/tables.cc).
  info.paper_name = "(not in the paper's list)";
  info.domain = Domain::kRecommendation;
  info.task = "recommendation";
  info.reference =
      "NeuMF (He et al. 2017), MLPerf training v0.5 recommendation reference (mlcommons/training "
      "recommendation/pytorch neumf.py, ML-20m); beyond the paper's 84 models";
  // MLPerf v0.5 run_and_time.sh: -b 2048 for training; ncf.py's evaluation
  // scores 1 + 999 items per user in one predict() batch.
  info.default_batch = {2048, 1000};
  info.smoke_batch = {10, 10};
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<NcfWorkload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
