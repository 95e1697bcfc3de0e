#include "models/recommendation/deepfm.h"

#include <torch/torch.h>

#include <algorithm>
#include <memory>
#include <string>

namespace torchgauge::models {
namespace {

// Criteo Kaggle categorical cardinalities (facebookresearch/dlrm
// --data-set=kaggle; TorchRec's KAGGLE_NUM_EMBEDDINGS_PER_FEATURE).
const std::vector<int64_t> kVocab = {1460,  583,  10131227, 2202608, 305, 24,     12517,   633,   3,
                                     93145, 5683, 8351593,  3194,    27,  14992,  5461306, 10,    5652,
                                     2173,  4,    7046547,  18,      15,  286181, 105,     142572};
constexpr int64_t kSmokeVocabCap = 1'000;
constexpr int64_t kDense = 13, kEmbDim = 10;
const std::vector<int64_t> kHidden = {400, 400, 400};
constexpr double kDropout = 0.5, kLr = 0.001, kInitStd = 0.01;

int64_t Fields() { return kDense + static_cast<int64_t>(kVocab.size()); }

struct DeepFmImpl : torch::nn::Module {
  explicit DeepFmImpl(const std::vector<int64_t>& vocab) {
    embeddings = register_module("embeddings", torch::nn::ModuleList());
    first_order = register_module("first_order", torch::nn::ModuleList());
    {
      torch::NoGradGuard g;
      // Passing the initialised weight skips Embedding's own N(0, 1) fill.
      for (int64_t n : vocab) {
        embeddings->push_back(torch::nn::Embedding(
            torch::nn::EmbeddingOptions(n, kEmbDim)._weight(torch::empty({n, kEmbDim}).normal_(0.0, kInitStd))));
      }
      for (int64_t n : vocab) {
        first_order->push_back(torch::nn::Embedding(
            torch::nn::EmbeddingOptions(n, 1)._weight(torch::empty({n, 1}).normal_(0.0, kInitStd))));
      }
    }
    for (const auto& m : *embeddings) tables.push_back(m->as<torch::nn::Embedding>());
    for (const auto& m : *first_order) weights.push_back(m->as<torch::nn::Embedding>());
    dense_embedding = register_parameter("dense_embedding", torch::empty({kDense, kEmbDim}).normal_(0.0, kInitStd));
    dense_first_order = register_module("dense_first_order", torch::nn::Linear(kDense, 1));
    dnn = register_module("dnn", torch::nn::Sequential());
    int64_t in = Fields() * kEmbDim;
    for (int64_t h : kHidden) {
      dnn->push_back(torch::nn::Linear(in, h));
      dnn->push_back(torch::nn::ReLU());
      dnn->push_back(torch::nn::Dropout(kDropout));
      in = h;
    }
    dnn->push_back(torch::nn::Linear(in, 1));
  }

  // dense [B, 13], sparse [26, B] -> click probability [B, 1].
  torch::Tensor forward(const torch::Tensor& dense, const torch::Tensor& sparse) {
    const int64_t fields = static_cast<int64_t>(tables.size());
    std::vector<torch::Tensor> vectors, firsts;
    vectors.reserve(fields);
    firsts.reserve(fields);
    for (int64_t k = 0; k < fields; ++k) {
      vectors.push_back(tables[k]->forward(sparse[k]));
      firsts.push_back(weights[k]->forward(sparse[k]));
    }
    // Continuous fields: the value scales its field vector.
    auto dense_vectors = dense.unsqueeze(2) * dense_embedding.unsqueeze(0);  // [B, 13, 10]
    auto e = torch::cat({dense_vectors, torch::stack(vectors, 1)}, 1);       // [B, 39, 10]
    // FM: first order (bias included in the Linear) and the pairwise term.
    auto y_first = dense_first_order->forward(dense) + torch::cat(firsts, 1).sum(1, /*keepdim=*/true);
    auto square_of_sum = e.sum(1).pow(2);
    auto sum_of_squares = e.pow(2).sum(1);
    auto y_pair = 0.5 * (square_of_sum - sum_of_squares).sum(1, /*keepdim=*/true);
    auto y_dnn = dnn->forward(e.flatten(1));
    return torch::sigmoid(y_first + y_pair + y_dnn);
  }

  torch::nn::ModuleList embeddings{nullptr}, first_order{nullptr};
  torch::Tensor dense_embedding;
  torch::nn::Linear dense_first_order{nullptr};
  torch::nn::Sequential dnn{nullptr};
  std::vector<torch::nn::EmbeddingImpl*> tables, weights;
};
TORCH_MODULE(DeepFm);

std::vector<int64_t> VocabFor(bool smoke) {
  std::vector<int64_t> v = kVocab;
  if (smoke) {
    for (auto& n : v) n = std::min(n, kSmokeVocabCap);
  }
  return v;
}

class DeepFmWorkload : public LossWorkload {
 public:
  explicit DeepFmWorkload(const WorkloadOptions& opt)
      : batch_(opt.batch_size), vocab_(VocabFor(opt.smoke)), net_(nullptr) {
    TORCH_CHECK(opt.batch_size >= 1, "deepfm: batch size must be >= 1, got ", opt.batch_size);
    net_ = DeepFm(vocab_);
    net_->to(opt.device);
    auto dev = torch::TensorOptions().device(opt.device);
    const int64_t b = opt.batch_size;
    inputs_["dense"] = torch::rand({b, kDense}, dev);
    std::vector<torch::Tensor> ids;
    for (int64_t n : vocab_) ids.push_back(torch::randint(0, n, {b}, dev.dtype(torch::kLong)));
    inputs_["sparse"] = torch::stack(ids, 0);
    inputs_["label"] = torch::randint(0, 2, {b, 1}, dev).to(torch::kFloat);
    samples_per_step_ = b;
    if (opt.mode == Mode::kTrain) {
      optimizer_ = std::make_unique<torch::optim::Adam>(net_->parameters(), torch::optim::AdamOptions(kLr));
    }
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override { return net_->forward(inputs_["dense"], inputs_["sparse"]); }

  torch::Tensor Loss(const torch::Tensor& prob) override {
    return torch::binary_cross_entropy(prob, inputs_["label"].to(prob.scalar_type()));
  }

  std::optional<double> AnalyticFlops(Mode mode) const override {
    // DNN multiply-adds, plus the FM: one multiply-add per continuous field
    // element, sum / square / sum-of-squares over the 39 x 10 field vectors.
    double macs = 0;
    int64_t in = Fields() * kEmbDim;
    for (int64_t h : kHidden) macs += static_cast<double>(in) * h, in = h;
    macs += in;
    const double fm = 3.0 * static_cast<double>(Fields()) * kEmbDim + 2.0 * kDense * kEmbDim;
    const double fwd = (2.0 * macs + fm) * static_cast<double>(batch_);
    return mode == Mode::kEval ? fwd : 3.0 * fwd;
  }

 private:
  int64_t batch_;
  std::vector<int64_t> vocab_;
  DeepFm net_;
};

}  // namespace

void AddDeepFmModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "deepfm";
  // Not one of the paper's 84 models: the reporter's wording for models
  // outside the paper's list (reporter/paper/tables.cc).
  info.paper_name = "(not in the paper's list)";
  info.domain = Domain::kRecommendation;
  info.task = "recommendation";
  info.reference =
      "DeepFM (Guo et al. 2017, arXiv:1703.04247), the paper's Criteo settings on Criteo Kaggle-shaped "
      "inputs, re-stated in plain torch; beyond the paper's 84 models";
  // The DeepFM paper states no batch size; 1024 as TorchBench's Criteo-shaped
  // torchrec_dlrm (DEFAULT_TRAIN_BSIZE = DEFAULT_EVAL_BSIZE = 1024).
  info.default_batch = {1024, 1024};
  // No cpu_batch: a CPU train step is dominated by the dense Adam update of
  // the 371M weights (and the dense embedding gradients), which no batch size
  // shrinks.
  info.smoke_batch = {4, 4};
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<DeepFmWorkload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
