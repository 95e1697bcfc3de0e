#include "models/recommendation/dlrm.h"

#include <torch/torch.h>

#include "models/unsupported_error.h"

#include <cmath>
#include <memory>

namespace torchgauge::models {
namespace {

constexpr int64_t kNumTables = 8, kTableRows = 1'000'000, kEmbDim = 64, kDenseIn = 512;
// The row count of each table is the cardinality of its categorical feature in
// the dataset (TorchBench's random data: 1e6 ids per feature), not an
// architectural choice: the embedding dimension and both MLPs are unchanged by
// it. Smoke runs use 10,000 ids per table so that two small CPU cores do not
// spend the run initialising and SGD-updating 8 x 1e6 x 64 floats.
constexpr int64_t kSmokeTableRows = 10'000;
constexpr int64_t kIndicesPerLookup = 100;
constexpr double kLr = 0.01;
const std::vector<int64_t> kBottom = {kDenseIn, 512, kEmbDim};
const std::vector<int64_t> kTopHidden = {1024, 1024, 1024, 1};

int64_t InteractionWidth() {
  const int64_t features = kNumTables + 1;
  return features * (features - 1) / 2 + kEmbDim;
}

struct DlrmNetImpl : torch::nn::Module {
  explicit DlrmNetImpl(int64_t table_rows = kTableRows) {
    emb_l = register_module("emb_l", torch::nn::ModuleList());
    {
      torch::NoGradGuard g;
      for (int64_t k = 0; k < kNumTables; ++k) {
        // Passing the initialised table as _weight skips EmbeddingBag's own
        // N(0, 1) fill, which would double the set-up cost of 512M floats.
        const double bound = std::sqrt(1.0 / static_cast<double>(table_rows));
        auto weight = torch::empty({table_rows, kEmbDim}).uniform_(-bound, bound);
        emb_l->push_back(torch::nn::EmbeddingBag(
            torch::nn::EmbeddingBagOptions(table_rows, kEmbDim).mode(torch::kSum).sparse(true)._weight(weight)));
      }
    }
    bot_l = register_module("bot_l", CreateMlp(kBottom));
    std::vector<int64_t> top{InteractionWidth()};
    top.insert(top.end(), kTopHidden.begin(), kTopHidden.end());
    top_l = register_module("top_l", CreateMlp(top));
  }

  static torch::nn::Sequential CreateMlp(const std::vector<int64_t>& sizes) {
    torch::nn::Sequential seq;
    torch::NoGradGuard g;
    for (size_t i = 0; i + 1 < sizes.size(); ++i) {
      const int64_t n = sizes[i], m = sizes[i + 1];
      torch::nn::Linear l(n, m);
      l->weight.normal_(0.0, std::sqrt(2.0 / static_cast<double>(m + n)));
      l->bias.normal_(0.0, std::sqrt(1.0 / static_cast<double>(m)));
      seq->push_back(l);
      seq->push_back(torch::nn::ReLU());  // sigmoid_bot = sigmoid_top = -1
    }
    return seq;
  }

  // dense_x [B, 512]; offsets [tables, B]; indices [tables, B * 100].
  torch::Tensor forward(const torch::Tensor& dense_x, const torch::Tensor& offsets, const torch::Tensor& indices) {
    auto x = bot_l->forward(dense_x);
    std::vector<torch::Tensor> features{x};
    for (int64_t k = 0; k < kNumTables; ++k) {
      features.push_back(emb_l[k]->as<torch::nn::EmbeddingBag>()->forward(indices[k], offsets[k]));
    }
    // Dot interaction: all pairwise products of the 9 vectors via bmm, keep
    // the strictly lower triangle (i > j) in row-major order like DLRM's li/lj.
    const int64_t batch = x.size(0), d = x.size(1);
    auto t = torch::cat(features, 1).view({batch, -1, d});
    auto z = torch::bmm(t, t.transpose(1, 2));
    const int64_t n = z.size(1);
    if (!tril_i_.defined() || tril_i_.device() != z.device()) {
      std::vector<int64_t> li, lj;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < i; ++j) li.push_back(i), lj.push_back(j);
      tril_i_ = torch::tensor(li, torch::kLong).to(z.device());
      tril_j_ = torch::tensor(lj, torch::kLong).to(z.device());
    }
    using torch::indexing::Slice;
    auto zflat = z.index({Slice(), tril_i_, tril_j_});
    return top_l->forward(torch::cat({x, zflat}, 1));
  }

  torch::nn::ModuleList emb_l;
  torch::nn::Sequential bot_l, top_l;
  torch::Tensor tril_i_, tril_j_;
};
TORCH_MODULE(DlrmNet);

class DlrmWorkload : public LossWorkload {
 public:
  explicit DlrmWorkload(const WorkloadOptions& opt)
      : batch_(opt.batch_size), table_rows_(opt.smoke ? kSmokeTableRows : kTableRows), net_(table_rows_) {
    TORCH_CHECK(opt.batch_size >= 1, "dlrm: batch size must be >= 1");
    net_->to(opt.device);
    auto dev = torch::TensorOptions().device(opt.device);
    const int64_t b = opt.batch_size;
    inputs_["dense_x"] = torch::rand({b, kDenseIn}, dev);
    inputs_["lS_o"] = (torch::arange(b, dev.dtype(torch::kLong)) * kIndicesPerLookup).repeat({kNumTables, 1});
    inputs_["lS_i"] = torch::randint(0, table_rows_, {kNumTables, b * kIndicesPerLookup}, dev.dtype(torch::kLong));
    inputs_["target"] = torch::rand({b, 1}, dev);
    samples_per_step_ = b;
    if (opt.mode == Mode::kTrain) {
      optimizer_ = std::make_unique<torch::optim::SGD>(net_->parameters(), torch::optim::SGDOptions(kLr));
    }
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override { return net_->forward(inputs_["dense_x"], inputs_["lS_o"], inputs_["lS_i"]); }

  torch::Tensor Loss(const torch::Tensor& out) override { return torch::mse_loss(out, inputs_["target"]); }

  std::optional<TrainParts> SplitTrainStep() override { throw UnsupportedError(kSparseGradientsUnsupported); }

  std::optional<double> AnalyticFlops(Mode mode) const override {
    // Dense work only: MLP multiply-adds, the 9x9x64 interaction bmm and the
    // embedding-bag sums (one add per looked-up element).
    double mlp = 0;
    for (size_t i = 0; i + 1 < kBottom.size(); ++i) mlp += static_cast<double>(kBottom[i]) * kBottom[i + 1];
    std::vector<int64_t> top{InteractionWidth()};
    top.insert(top.end(), kTopHidden.begin(), kTopHidden.end());
    for (size_t i = 0; i + 1 < top.size(); ++i) mlp += static_cast<double>(top[i]) * top[i + 1];
    const double features = kNumTables + 1;
    const double per_sample =
        2.0 * mlp + 2.0 * features * features * kEmbDim + static_cast<double>(kNumTables) * kIndicesPerLookup * kEmbDim;
    const double fwd = per_sample * static_cast<double>(batch_);
    return mode == Mode::kEval ? fwd : 3.0 * fwd;
  }

 private:
  int64_t batch_;
  int64_t table_rows_;
  DlrmNet net_;
};

}  // namespace

void AddDlrmModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "dlrm";
  info.paper_name = "dlrm";
  info.domain = Domain::kRecommendation;
  info.task = "recommendation";
  info.reference = "DLRM, facebookresearch/dlrm (Naumov et al. 2019), TorchBench dlrm configuration";
  // TorchBench dlrm/__init__.py sets DEFAULT_TRAIN/EVAL_BSIZE = 1000, but that
  // value is num_batches of the random loader; every step runs one
  // mini_batch_size = 2048 batch, which is the batch used here.
  info.default_batch = {2048, 2048};
  info.smoke_batch = {16, 16};
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<DlrmWorkload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
