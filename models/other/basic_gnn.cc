#include "models/other/basic_gnn.h"

#include <torch/torch.h>

#include <memory>
#include <utility>

namespace torchgauge::models {
namespace {

// TorchBench's BasicGNNModel: Model(64, 64, num_layers=3) on 10,000 nodes and
// 200,000 random edges.
constexpr int64_t kChannels = 64, kLayers = 3;
constexpr int64_t kNodes = 10'000, kEdges = 200'000;
constexpr int64_t kSmokeNodes = 1'000, kSmokeEdges = 20'000;
constexpr double kLr = 1e-3;

// Sums rows of `messages` [edges, c] into their target nodes: [nodes, c].
torch::Tensor SumAt(const torch::Tensor& messages, const torch::Tensor& target, int64_t nodes) {
  return torch::zeros({nodes, messages.size(1)}, messages.options()).index_add_(0, target, messages);
}

// torch_geometric's MLP([in, hidden, out]) with norm=None: Linear, ReLU,
// Linear (plain_last).
struct GnnMlpImpl : torch::nn::Module {
  GnnMlpImpl(int64_t in, int64_t hidden, int64_t out) : lins(register_module("lins", torch::nn::ModuleList())) {
    lins->push_back(torch::nn::Linear(in, hidden));
    lins->push_back(torch::nn::Linear(hidden, out));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = torch::relu(lins[0]->as<torch::nn::LinearImpl>()->forward(x));
    return lins[1]->as<torch::nn::LinearImpl>()->forward(h);
  }
  torch::nn::ModuleList lins;
};
TORCH_MODULE(GnnMlp);

struct GcnConvImpl : GnnConvImpl {
  GcnConvImpl(int64_t in, int64_t out)
      : lin(register_module("lin", torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false)))),
        bias(register_parameter("bias", torch::zeros({out}))) {
    torch::NoGradGuard no_grad;
    torch::nn::init::xavier_uniform_(lin->weight);  // PyG's glorot
  }
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& edge_index) override {
    const int64_t nodes = x.size(0);
    // add_remaining_self_loops: the graph's self loops out, one per node in.
    auto source = edge_index[0], target = edge_index[1];
    auto keep = source != target;
    auto loops = torch::arange(nodes, source.options());
    source = torch::cat({source.masked_select(keep), loops});
    target = torch::cat({target.masked_select(keep), loops});
    auto weight = torch::ones({source.size(0)}, x.options());
    auto degree = torch::zeros({nodes}, x.options()).index_add_(0, target, weight);
    auto inv_sqrt = degree.pow(-0.5);
    inv_sqrt = inv_sqrt.masked_fill(torch::isinf(inv_sqrt), 0.0);
    auto norm = inv_sqrt.index_select(0, source) * weight * inv_sqrt.index_select(0, target);
    auto h = lin(x);
    auto messages = norm.view({-1, 1}) * h.index_select(0, source);
    return SumAt(messages, target, nodes) + bias;
  }
  torch::nn::Linear lin{nullptr};
  torch::Tensor bias;
};

struct GinConvImpl : GnnConvImpl {
  GinConvImpl(int64_t in, int64_t out)
      : nn(register_module("nn", GnnMlp(in, out, out))), eps(register_buffer("eps", torch::zeros({1}))) {}
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& edge_index) override {
    auto summed = SumAt(x.index_select(0, edge_index[0]), edge_index[1], x.size(0));
    return nn(summed + (1 + eps) * x);
  }
  GnnMlp nn{nullptr};
  torch::Tensor eps;
};

struct SageConvImpl : GnnConvImpl {
  SageConvImpl(int64_t in, int64_t out)
      : lin_l(register_module("lin_l", torch::nn::Linear(in, out))),
        lin_r(register_module("lin_r", torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false)))) {}
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& edge_index) override {
    const int64_t nodes = x.size(0);
    auto target = edge_index[1];
    auto summed = SumAt(x.index_select(0, edge_index[0]), target, nodes);
    auto count = torch::zeros({nodes}, x.options()).index_add_(0, target, torch::ones({target.size(0)}, x.options()));
    auto mean = summed / count.clamp_min(1).view({-1, 1});
    return lin_l(mean) + lin_r(x);
  }
  torch::nn::Linear lin_l{nullptr}, lin_r{nullptr};
};

struct EdgeConvImpl : GnnConvImpl {
  EdgeConvImpl(int64_t in, int64_t out) : nn(register_module("nn", GnnMlp(2 * in, out, out))) {}
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& edge_index) override {
    auto x_src = x.index_select(0, edge_index[0]);
    auto x_dst = x.index_select(0, edge_index[1]);
    auto messages = nn(torch::cat({x_dst, x_src - x_dst}, -1));
    auto index = edge_index[1].view({-1, 1}).expand_as(messages);
    return torch::zeros({x.size(0), messages.size(1)}, messages.options())
        .scatter_reduce_(0, index, messages, "amax", /*include_self=*/false);
  }
  GnnMlp nn{nullptr};
};

std::shared_ptr<GnnConvImpl> MakeConv(GnnKind kind, int64_t in, int64_t out) {
  switch (kind) {
    case GnnKind::kGcn:
      return std::make_shared<GcnConvImpl>(in, out);
    case GnnKind::kGin:
      return std::make_shared<GinConvImpl>(in, out);
    case GnnKind::kSage:
      return std::make_shared<SageConvImpl>(in, out);
    case GnnKind::kEdgeCnn:
      return std::make_shared<EdgeConvImpl>(in, out);
  }
  TORCH_CHECK(false, "basic_gnn: unknown kind");
}

class BasicGnnWorkload : public LossWorkload {
 public:
  BasicGnnWorkload(const WorkloadOptions& opt, GnnKind kind) : net_(kind, kChannels, kChannels, kLayers) {
    TORCH_CHECK(opt.batch_size >= 1, "basic_gnn: batch size must be >= 1, got ", opt.batch_size);
    net_->to(opt.device);
    const int64_t nodes = opt.smoke ? kSmokeNodes : kNodes, edges = opt.smoke ? kSmokeEdges : kEdges;
    const auto dev = torch::TensorOptions().device(opt.device);
    // b graphs as one disjoint union: graph g's edges join its own nodes.
    inputs_["x"] = torch::randn({opt.batch_size * nodes, kChannels}, dev);
    auto edge_index = torch::randint(nodes, {2, opt.batch_size * edges}, dev.dtype(torch::kLong));
    auto offsets = torch::arange(opt.batch_size, dev.dtype(torch::kLong)).repeat_interleave(edges) * nodes;
    inputs_["edge_index"] = edge_index + offsets;
    samples_per_step_ = opt.batch_size;
    if (opt.mode == Mode::kTrain) {
      optimizer_ = std::make_unique<torch::optim::Adam>(net_->parameters(), torch::optim::AdamOptions(kLr));
    }
  }

  torch::nn::Module& net() override { return *net_; }

  torch::Tensor Forward() override { return net_->forward(inputs_.at("x"), inputs_.at("edge_index")); }

 protected:
  // out.backward(randn_like(out)) as a loss: its gradient is the random one.
  torch::Tensor Loss(const torch::Tensor& out) override { return (out * torch::randn_like(out)).sum(); }

 private:
  BasicGnn net_;
};

ModelInfo GnnInfo(const std::string& name, GnnKind kind, const std::string& reference) {
  ModelInfo info;
  info.id = "basic_gnn_" + name;
  info.paper_name = "(not in the paper's list)";
  info.domain = Domain::kOther;
  info.task = "graph neural network (node classification)";
  info.reference = "torch_geometric 2.8.1 torch_geometric.nn.models." + reference +
                   "(64, 64, num_layers=3) on a random graph of 10,000 nodes and 200,000 edges, as "
                   "torchbenchmark/models/basic_gnn_" +
                   name + " (added since the paper)";
  // BasicGNNModel: DEFAULT_TRAIN_BSIZE = DEFAULT_EVAL_BSIZE = 1.
  info.default_batch = {1, 1};
  info.smoke_batch = {1, 1};
  info.create = [kind](const WorkloadOptions& opt) { return std::make_unique<BasicGnnWorkload>(opt, kind); };
  return info;
}

}  // namespace

BasicGnnImpl::BasicGnnImpl(GnnKind kind, int64_t in_channels, int64_t hidden_channels, int64_t num_layers)
    : convs(register_module("convs", torch::nn::ModuleList())) {
  TORCH_CHECK(num_layers >= 1, "basic_gnn: num_layers must be >= 1");
  for (int64_t i = 0; i < num_layers; ++i)
    convs->push_back(MakeConv(kind, i == 0 ? in_channels : hidden_channels, hidden_channels));
}

torch::Tensor BasicGnnImpl::forward(const torch::Tensor& x, const torch::Tensor& edge_index) {
  auto h = x;
  const size_t layers = convs->size();
  for (size_t i = 0; i < layers; ++i) {
    h = convs[i]->as<GnnConvImpl>()->forward(h, edge_index);
    if (i + 1 < layers) h = torch::relu(h);
  }
  return h;
}

void AddBasicGnnModels(std::vector<ModelInfo>& out) {
  out.push_back(GnnInfo("edgecnn", GnnKind::kEdgeCnn, "EdgeCNN"));
  out.push_back(GnnInfo("gcn", GnnKind::kGcn, "GCN"));
  out.push_back(GnnInfo("gin", GnnKind::kGin, "GIN"));
  out.push_back(GnnInfo("sage", GnnKind::kSage, "GraphSAGE"));
}

}  // namespace torchgauge::models
