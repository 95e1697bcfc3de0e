#include "models/other/moco.h"

#include <torch/nn/functional/loss.h>
#include <torch/nn/functional/normalization.h>
#include <torch/optim/sgd.h>
#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace torchgauge::models {
namespace {

namespace F = torch::nn::functional;

torch::Tensor NormalizeRows(const torch::Tensor& x, int64_t dim) {
  return F::normalize(x, F::NormalizeFuncOptions().dim(dim));
}

// builder.py's concat_all_gather with a process group of one: all_gather
// copies the tensor into the single ones_like buffer, cat joins the one part.
torch::Tensor ConcatAllGather(const torch::Tensor& t) {
  torch::NoGradGuard no_grad;
  auto part = torch::ones_like(t);
  part.copy_(t);
  return torch::cat({part}, 0);
}

ResNetConfig EncoderConfig(int64_t dim) {
  ResNetConfig c = ResNet50Config();  // __init__.py: 'arch': 'resnet50'
  c.num_classes = dim;                // builder.py: base_encoder(num_classes=dim)
  return c;
}

}  // namespace

MoCoImpl::MoCoImpl(const MoCoOptions& o) : options(o) {
  TORCH_CHECK(o.dim > 0 && o.K > 0, "moco: dim and K must be positive");
  encoder_q = register_module("encoder_q", ResNet(EncoderConfig(o.dim)));
  encoder_k = register_module("encoder_k", ResNet(EncoderConfig(o.dim)));
  {
    torch::NoGradGuard no_grad;
    auto pq = encoder_q->parameters();
    auto pk = encoder_k->parameters();
    for (size_t i = 0; i < pq.size(); ++i) {
      pk[i].copy_(pq[i]);              // initialise the key encoder as the query encoder
      pk[i].set_requires_grad(false);  // updated by momentum, not by gradient
    }
  }
  queue = register_buffer("queue", NormalizeRows(torch::randn({o.dim, o.K}), 0));
  queue_ptr = register_buffer("queue_ptr", torch::zeros({1}, torch::kLong));
}

void MoCoImpl::MomentumUpdateKeyEncoder() {
  torch::NoGradGuard no_grad;
  auto pq = encoder_q->parameters();
  auto pk = encoder_k->parameters();
  for (size_t i = 0; i < pq.size(); ++i) pk[i].mul_(options.m).add_(pq[i].mul(1.0 - options.m));
}

void MoCoImpl::DequeueAndEnqueue(const torch::Tensor& k) {
  torch::NoGradGuard no_grad;
  const auto keys = ConcatAllGather(k);
  const int64_t batch = keys.size(0);
  const int64_t ptr = queue_ptr.item<int64_t>();  // int(self.queue_ptr): a host read, as in Python
  TORCH_CHECK(options.K % batch == 0, "moco: the queue size ", options.K, " must be a multiple of the batch ", batch);
  queue.slice(1, ptr, ptr + batch).copy_(keys.t());  // replace the oldest keys
  queue_ptr.select(0, 0).fill_((ptr + batch) % options.K);
}

std::pair<torch::Tensor, torch::Tensor> MoCoImpl::BatchShuffle(const torch::Tensor& x) {
  torch::NoGradGuard no_grad;
  const int64_t batch_this = x.size(0);
  auto x_gather = ConcatAllGather(x);
  const int64_t batch_all = x_gather.size(0);
  const int64_t num_gpus = batch_all / batch_this;  // 1
  auto idx_shuffle = torch::randperm(batch_all, torch::TensorOptions().dtype(torch::kLong).device(x.device()));
  // torch.distributed.broadcast(idx_shuffle, src=0): nothing to send with one process.
  auto idx_unshuffle = torch::argsort(idx_shuffle);
  auto idx_this = idx_shuffle.view({num_gpus, -1})[0];  // rank 0
  return {x_gather.index({idx_this}), idx_unshuffle};
}

torch::Tensor MoCoImpl::BatchUnshuffle(const torch::Tensor& x, const torch::Tensor& idx_unshuffle) {
  torch::NoGradGuard no_grad;
  const int64_t batch_this = x.size(0);
  auto x_gather = ConcatAllGather(x);
  const int64_t num_gpus = x_gather.size(0) / batch_this;
  auto idx_this = idx_unshuffle.view({num_gpus, -1})[0];
  return x_gather.index({idx_this});
}

std::pair<torch::Tensor, torch::Tensor> MoCoImpl::forward(const torch::Tensor& im_q, const torch::Tensor& im_k) {
  auto q = NormalizeRows(encoder_q->forward(im_q), 1);  // queries: N x C
  torch::Tensor k;
  {
    torch::NoGradGuard no_grad;  // no gradient to keys
    MomentumUpdateKeyEncoder();
    auto [shuffled, idx_unshuffle] = BatchShuffle(im_k);
    k = NormalizeRows(encoder_k->forward(shuffled), 1);  // keys: N x C
    k = BatchUnshuffle(k, idx_unshuffle);
  }
  auto l_pos = torch::einsum("nc,nc->n", {q, k}).unsqueeze(-1);          // N x 1
  auto l_neg = torch::einsum("nc,ck->nk", {q, queue.clone().detach()});  // N x K
  auto logits = torch::cat({l_pos, l_neg}, 1);
  logits.div_(options.T);  // logits /= self.T
  auto labels = torch::zeros({logits.size(0)}, torch::TensorOptions().dtype(torch::kLong).device(logits.device()));
  DequeueAndEnqueue(k);
  return {logits, labels};
}

torch::Tensor MoCoTrainIteration(MoCoImpl& net, torch::optim::Optimizer& optimizer,
                                 const std::vector<std::pair<torch::Tensor, torch::Tensor>>& pairs,
                                 std::vector<torch::Tensor>* logits_out, std::vector<torch::Tensor>* losses_out) {
  torch::Tensor loss;
  for (const auto& [im_q, im_k] : pairs) {
    auto [output, target] = net.forward(im_q, im_k);
    loss = F::cross_entropy(output, target);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    if (logits_out != nullptr) logits_out->push_back(output.detach());
    if (losses_out != nullptr) losses_out->push_back(loss.detach());
  }
  return loss.detach();
}

namespace {

// TorchBench's workload: four random [B, 3, 224, 224] batches made once in
// __init__ (64x64 in smoke runs: behind the global pool an input dimension),
// served by its DataLoader as two (im_q, im_k) pairs. train() runs a step on
// each pair; eval() runs the forward on each pair with the model left in
// train mode (TorchBench never calls model.eval(): batch-statistics BN, the
// momentum update and the enqueue all run) under no_grad.
class MoCoWorkload : public Workload {
 public:
  explicit MoCoWorkload(const WorkloadOptions& opt) : net_(MoCoOptions{}) {
    TORCH_CHECK(opt.batch_size >= 1, "moco: batch size must be positive, got ", opt.batch_size);
    TORCH_CHECK(net_->options.K % opt.batch_size == 0, "moco: the batch size ", opt.batch_size,
                " must divide the queue size ", net_->options.K, " (builder.py asserts it)");
    net_->to(opt.device);
    const int64_t side = opt.smoke ? 64 : 224;
    for (int i = 0; i < 2; ++i) {
      inputs_["im_q" + std::to_string(i)] = torch::randn({opt.batch_size, 3, side, side}, opt.device);
      inputs_["im_k" + std::to_string(i)] = torch::randn({opt.batch_size, 3, side, side}, opt.device);
    }
    samples_per_step_ = 2 * opt.batch_size;  // two query/key batch pairs per iteration
    // torch.optim.SGD(model.parameters(), ...): the key encoder's parameters
    // never get a gradient, so the step leaves them alone.
    optimizer_ = std::make_unique<torch::optim::SGD>(net_->parameters(),
                                                     torch::optim::SGDOptions(0.03).momentum(0.9).weight_decay(1e-4));
  }

  torch::nn::Module& net() override { return *net_; }
  torch::Tensor Forward() override {
    net_->train();  // TorchBench's eval() runs the train-mode forward
    torch::Tensor logits;
    for (const auto& [im_q, im_k] : Pairs()) logits = net_->forward(im_q, im_k).first;
    return logits;
  }
  torch::Tensor TrainStep() override {
    net_->train();
    return MoCoTrainIteration(*net_, *optimizer_, Pairs());
  }
  // Module::to(dtype) casts every buffer, the queue pointer too: it is an
  // index (up to K = 32000, not exact in bf16), so it stays long (it is 0
  // when the collector casts, right after construction).
  void CastTo(torch::ScalarType dtype) override {
    Workload::CastTo(dtype);
    net_->queue_ptr.set_data(net_->queue_ptr.to(torch::kLong));
  }
  // The forward updates the key encoder and the queue in place and draws a
  // permutation: a traced graph would replay one permutation and lose the
  // in-place state updates.
  std::optional<std::string> CompiledForwardUnsupported(Mode) const override {
    return "MoCo's forward updates the key encoder and the key queue in place, reads the queue pointer on the "
           "host and draws a fresh shuffle permutation each call, which the collector's JIT trace of the forward "
           "cannot replay";
  }

 private:
  std::vector<std::pair<torch::Tensor, torch::Tensor>> Pairs() const {
    return {{inputs_.at("im_q0"), inputs_.at("im_k0")}, {inputs_.at("im_q1"), inputs_.at("im_k1")}};
  }

  MoCo net_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
};

}  // namespace

void AddMocoModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "moco";
  info.paper_name = "moco";
  info.domain = Domain::kOther;  // __init__.py: task = OTHER.OTHER_TASKS
  info.task = "self-supervised contrastive learning (MoCo, ResNet-50 encoders)";
  info.reference =
      "TorchBench moco (facebookresearch/moco moco/builder.py MoCo over torchvision.models.resnet50), "
      "re-stated at world size 1";
  // __init__.py: DEFAULT_TRAIN_BSIZE = DEFAULT_EVAL_BSIZE = 32.
  info.default_batch = {32, 32};
  // A MoCo iteration is two steps, each a ResNet-50 query train step plus a
  // ResNet-50 key forward: about 2.7x resnet50's train step at the same
  // batch, so the CPU suite runs 4 (resnet50's CPU suite runs 8). Batch sizes
  // must divide K = 32000.
  info.cpu_batch = BatchSizes{4, 4};
  info.smoke_batch = {2, 2};
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<MoCoWorkload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
