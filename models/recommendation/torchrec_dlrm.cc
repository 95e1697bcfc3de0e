#include "models/recommendation/torchrec_dlrm.h"

#include <torch/torch.h>

#include "models/unsupported_error.h"

#include <cmath>
#include <memory>
#include <string>

namespace torchgauge::models {
namespace {

constexpr int64_t kNumTables = 26, kTableRows = 100'000, kSmokeTableRows = 1'000, kEmbDim = 64, kDenseIn = 13;
constexpr int64_t kDcnLayers = 3, kDcnLowRank = 512;
constexpr double kLr = 0.005;  // MLPerf DLRMv2 (TorchBench: 15.0, diverges; see the header)
const std::vector<int64_t> kDenseArch = {512, 256, kEmbDim};
const std::vector<int64_t> kOverArch = {512, 512, 256, 1};
constexpr int64_t kCrossWidth = (kNumTables + 1) * kEmbDim;  // 1728

// torchrec.modules.mlp.Perceptron: Linear followed by ReLU.
struct PerceptronImpl : torch::nn::Module {
  PerceptronImpl(int64_t in, int64_t out) { _linear = register_module("_linear", torch::nn::Linear(in, out)); }
  torch::Tensor forward(const torch::Tensor& x) { return torch::relu(_linear->forward(x)); }
  torch::nn::Linear _linear{nullptr};
};
TORCH_MODULE(Perceptron);

// torchrec.modules.mlp.MLP with activation "relu" (on every layer).
struct MlpImpl : torch::nn::Module {
  MlpImpl(int64_t in, const std::vector<int64_t>& sizes) {
    _mlp = register_module("_mlp", torch::nn::ModuleList());
    for (int64_t out : sizes) {
      _mlp->push_back(Perceptron(in, out));
      in = out;
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    for (const auto& layer : *_mlp) x = layer->as<Perceptron>()->forward(x);
    return x;
  }
  torch::nn::ModuleList _mlp{nullptr};
};
TORCH_MODULE(Mlp);

// torchrec.modules.embedding_modules.EmbeddingBagCollection: one sum-pooled
// EmbeddingBag per table, offsets with the trailing total (include_last_offset).
struct EmbeddingBagCollectionImpl : torch::nn::Module {
  explicit EmbeddingBagCollectionImpl(int64_t rows) {
    embedding_bags = register_module("embedding_bags", torch::nn::ModuleDict());
    torch::NoGradGuard g;
    const double bound = std::sqrt(1.0 / static_cast<double>(rows));
    for (int64_t k = 0; k < kNumTables; ++k) {
      // EmbeddingBagConfig's init_fn, U(-sqrt(1/n), sqrt(1/n)); passing it as
      // _weight skips EmbeddingBag's own N(0, 1) fill.
      auto weight = torch::empty({rows, kEmbDim}).uniform_(-bound, bound);
      torch::nn::EmbeddingBag bag(torch::nn::EmbeddingBagOptions(rows, kEmbDim)
                                      .mode(torch::kSum)
                                      .include_last_offset(true)
                                      .sparse(true)
                                      ._weight(weight));
      // ModuleDict keeps insertion order: t_cat_0 .. t_cat_25.
      embedding_bags->update(std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>>{
          {"t_cat_" + std::to_string(k), bag.ptr()}});
      bags.push_back(bag.get());
    }
  }
  torch::nn::ModuleDict embedding_bags{nullptr};
  std::vector<torch::nn::EmbeddingBagImpl*> bags;
};
TORCH_MODULE(EmbeddingBagCollection);

struct SparseArchImpl : torch::nn::Module {
  explicit SparseArchImpl(int64_t rows) {
    embedding_bag_collection = register_module("embedding_bag_collection", EmbeddingBagCollection(rows));
  }
  // values [26, B] ids, offsets [26, B + 1] -> [B, 26, 64].
  torch::Tensor forward(const torch::Tensor& values, const torch::Tensor& offsets) {
    std::vector<torch::Tensor> pooled;
    pooled.reserve(kNumTables);
    for (int64_t k = 0; k < kNumTables; ++k) {
      pooled.push_back(embedding_bag_collection->bags[k]->forward(values[k], offsets[k]));
    }
    return torch::cat(pooled, 1).reshape({-1, kNumTables, kEmbDim});
  }
  EmbeddingBagCollection embedding_bag_collection{nullptr};
};
TORCH_MODULE(SparseArch);

struct DenseArchImpl : torch::nn::Module {
  DenseArchImpl() { model = register_module("model", Mlp(kDenseIn, kDenseArch)); }
  torch::Tensor forward(const torch::Tensor& x) { return model->forward(x); }
  Mlp model{nullptr};
};
TORCH_MODULE(DenseArch);

// torchrec.modules.crossnet.LowRankCrossNet.
struct LowRankCrossNetImpl : torch::nn::Module {
  LowRankCrossNetImpl(int64_t in, int64_t layers, int64_t rank) {
    W_kernels = register_module("W_kernels", torch::nn::ParameterList());
    V_kernels = register_module("V_kernels", torch::nn::ParameterList());
    bias = register_module("bias", torch::nn::ParameterList());
    torch::NoGradGuard g;
    for (int64_t l = 0; l < layers; ++l) {
      W_kernels->append(torch::nn::init::xavier_normal_(torch::empty({in, rank})).requires_grad_());
    }
    for (int64_t l = 0; l < layers; ++l) {
      V_kernels->append(torch::nn::init::xavier_normal_(torch::empty({rank, in})).requires_grad_());
    }
    for (int64_t l = 0; l < layers; ++l) bias->append(torch::zeros({in}).requires_grad_());
  }
  torch::Tensor forward(const torch::Tensor& x0) {
    torch::Tensor xl = x0;
    for (size_t l = 0; l < W_kernels->size(); ++l) {
      auto xv = torch::linear(xl, V_kernels[l]);
      auto xw = torch::linear(xv, W_kernels[l]);
      xl = x0 * (xw + bias[l]) + xl;
    }
    return xl;
  }
  torch::nn::ParameterList W_kernels{nullptr}, V_kernels{nullptr}, bias{nullptr};
};
TORCH_MODULE(LowRankCrossNet);

// torchrec.models.dlrm.InteractionDCNArch.
struct InteractionDcnArchImpl : torch::nn::Module {
  InteractionDcnArchImpl() {
    crossnet = register_module("crossnet", LowRankCrossNet(kCrossWidth, kDcnLayers, kDcnLowRank));
  }
  torch::Tensor forward(const torch::Tensor& dense, const torch::Tensor& sparse) {
    auto combined = torch::cat({dense.unsqueeze(1), sparse}, 1);
    return crossnet->forward(combined.reshape({dense.size(0), -1}));
  }
  LowRankCrossNet crossnet{nullptr};
};
TORCH_MODULE(InteractionDcnArch);

// torchrec.models.dlrm.OverArch: Sequential(MLP(all but the last size), Linear).
struct OverArchImpl : torch::nn::Module {
  OverArchImpl() {
    model = register_module("model", torch::nn::ModuleList());
    const std::vector<int64_t> hidden(kOverArch.begin(), kOverArch.end() - 1);
    model->push_back(Mlp(kCrossWidth, hidden));
    model->push_back(torch::nn::Linear(hidden.back(), kOverArch.back()));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return model[1]->as<torch::nn::Linear>()->forward(model[0]->as<Mlp>()->forward(x));
  }
  torch::nn::ModuleList model{nullptr};
};
TORCH_MODULE(OverArch);

// torchrec.models.dlrm.DLRM_DCN. (TorchRec's constructor first builds the
// plain DLRM's dot InteractionArch and OverArch and then replaces both; the
// replaced OverArch's weights are drawn and discarded, so the random stream
// differs from this constructor's, not the distributions.)
struct DlrmDcnImpl : torch::nn::Module {
  explicit DlrmDcnImpl(int64_t rows) {
    sparse_arch = register_module("sparse_arch", SparseArch(rows));
    dense_arch = register_module("dense_arch", DenseArch());
    inter_arch = register_module("inter_arch", InteractionDcnArch());
    over_arch = register_module("over_arch", OverArch());
  }
  // Logits [B] (DLRMTrain squeezes the last dimension).
  torch::Tensor forward(const torch::Tensor& dense, const torch::Tensor& values, const torch::Tensor& offsets) {
    auto embedded_dense = dense_arch->forward(dense);
    auto embedded_sparse = sparse_arch->forward(values, offsets);
    auto interaction = inter_arch->forward(embedded_dense, embedded_sparse);
    return over_arch->forward(interaction).squeeze(-1);
  }
  SparseArch sparse_arch{nullptr};
  DenseArch dense_arch{nullptr};
  InteractionDcnArch inter_arch{nullptr};
  OverArch over_arch{nullptr};
};
TORCH_MODULE(DlrmDcn);

class TorchrecDlrmWorkload : public LossWorkload {
 public:
  explicit TorchrecDlrmWorkload(const WorkloadOptions& opt)
      : batch_(opt.batch_size), rows_(opt.smoke ? kSmokeTableRows : kTableRows), net_(nullptr) {
    TORCH_CHECK(opt.batch_size >= 1, "torchrec_dlrm: batch size must be >= 1, got ", opt.batch_size);
    net_ = DlrmDcn(rows_);
    net_->to(opt.device);
    auto dev = torch::TensorOptions().device(opt.device);
    const int64_t b = opt.batch_size;
    inputs_["dense_features"] = torch::randn({b, kDenseIn}, dev);
    // One id per feature and sample: offsets 0, 1, ..., B for every table.
    inputs_["sparse_values"] = torch::randint(0, rows_, {kNumTables, b}, dev.dtype(torch::kLong));
    inputs_["sparse_offsets"] = torch::arange(b + 1, dev.dtype(torch::kLong)).repeat({kNumTables, 1});
    inputs_["labels"] = torch::randint(0, 2, {b}, dev).to(torch::kFloat);
    samples_per_step_ = b;
    if (opt.mode == Mode::kTrain) {
      optimizer_ = std::make_unique<torch::optim::Adagrad>(net_->parameters(), torch::optim::AdagradOptions(kLr));
    }
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override {
    return net_->forward(inputs_["dense_features"], inputs_["sparse_values"], inputs_["sparse_offsets"]);
  }

  torch::Tensor Loss(const torch::Tensor& logits) override {
    return torch::binary_cross_entropy_with_logits(logits, inputs_["labels"].to(logits.scalar_type()));
  }

  std::optional<TrainParts> SplitTrainStep() override { throw UnsupportedError(kSparseGradientsUnsupported); }

  std::optional<double> AnalyticFlops(Mode mode) const override {
    // Multiply-adds of the dense arch, the cross network (two low-rank
    // products per layer plus its elementwise x0 * (.) + x) and the over
    // arch, and one add per pooled element (one id per table and sample).
    double macs = 0;
    int64_t in = kDenseIn;
    for (int64_t out : kDenseArch) macs += static_cast<double>(in) * out, in = out;
    macs += kDcnLayers * (2.0 * kCrossWidth * kDcnLowRank + 2.0 * kCrossWidth);
    in = kCrossWidth;
    for (int64_t out : kOverArch) macs += static_cast<double>(in) * out, in = out;
    const double per_sample = 2.0 * macs + static_cast<double>(kNumTables) * kEmbDim;
    const double fwd = per_sample * static_cast<double>(batch_);
    return mode == Mode::kEval ? fwd : 3.0 * fwd;
  }

 private:
  int64_t batch_;
  int64_t rows_;
  DlrmDcn net_;
};

}  // namespace

void AddTorchrecDlrmModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "torchrec_dlrm";
  // Not one of the paper's 84 models: the marker is the reporter's wording for
  // models outside the paper's list (reporter/paper/tables.cc).
  info.paper_name = "(not in the paper's list)";
  info.domain = Domain::kRecommendation;
  info.task = "recommendation";
  info.reference =
      "TorchRec DLRM_DCN (DLRM with a DCN-v2 low-rank cross interaction, MLPerf DLRMv2 architecture) as "
      "TorchBench's torchrec_dlrm configures it, with MLPerf DLRMv2's Adagrad rate; beyond the paper's 84 models";
  // TorchBench torchrec_dlrm/__init__.py: DEFAULT_TRAIN_BSIZE = 1024,
  // DEFAULT_EVAL_BSIZE = 1024.
  info.default_batch = {1024, 1024};
  info.smoke_batch = {4, 4};
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<TorchrecDlrmWorkload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
