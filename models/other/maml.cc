#include "models/other/maml.h"

#include <torch/torch.h>

namespace torchgauge::models {

namespace {

// TorchBench's maml config: (out, in, k, stride) per conv; pad 0 throughout.
struct ConvSpec {
  int64_t out, in, k, stride;
};
constexpr ConvSpec kLearnerConvs[] = {{64, 1, 3, 2}, {64, 64, 3, 2}, {64, 64, 3, 2}, {64, 64, 2, 1}};
constexpr int64_t kNWay = 5;
constexpr double kBnMomentum = 0.1, kBnEps = 1e-5;  // F.batch_norm's defaults

torch::Tensor KaimingNormal(std::vector<int64_t> shape) {
  auto w = torch::ones(shape);
  torch::nn::init::kaiming_normal_(w);  // fan_in, gain sqrt(2), as torch.nn.init.kaiming_normal_'s defaults
  return w;
}

}  // namespace

MamlLearnerImpl::MamlLearnerImpl() {
  vars = register_module("vars", torch::nn::ParameterList());
  vars_bn = register_module("vars_bn", torch::nn::ParameterList());
  // Created in the config's order: conv2d, relu, bn (x4), flatten, linear.
  for (const auto& c : kLearnerConvs) {
    vars->append(KaimingNormal({c.out, c.in, c.k, c.k}).requires_grad_(true));
    vars->append(torch::zeros({c.out}).requires_grad_(true));
    vars->append(torch::ones({c.out}).requires_grad_(true));
    vars->append(torch::zeros({c.out}).requires_grad_(true));
    vars_bn->append(torch::zeros({c.out}));  // running_mean, requires_grad=False
    vars_bn->append(torch::ones({c.out}));   // running_var
  }
  vars->append(KaimingNormal({kNWay, 64}).requires_grad_(true));
  vars->append(torch::zeros({kNWay}).requires_grad_(true));
}

std::vector<torch::Tensor> MamlLearnerImpl::weights() const {
  std::vector<torch::Tensor> out;
  for (const auto& p : vars->named_parameters(false)) out.push_back(p.value());
  return out;
}

torch::Tensor MamlLearnerImpl::forward(const torch::Tensor& x, const std::vector<torch::Tensor>& weights,
                                       bool bn_training) {
  std::vector<torch::Tensor> stats;
  for (const auto& p : vars_bn->named_parameters(false)) stats.push_back(p.value());
  return forward_with_stats(x, weights, stats, bn_training);
}

torch::Tensor MamlLearnerImpl::forward_with_stats(const torch::Tensor& x_in, const std::vector<torch::Tensor>& w,
                                                  const std::vector<torch::Tensor>& stats, bool bn_training) {
  TORCH_CHECK(w.size() == 18 && stats.size() == 8, "maml Learner: expected 18 weights and 8 BN statistics, got ",
              w.size(), " and ", stats.size());
  TORCH_CHECK(x_in.dim() == 4 && x_in.size(1) == 1 && x_in.size(2) == 28 && x_in.size(3) == 28,
              "maml expects [b, 1, 28, 28] images, got ", x_in.sizes());
  auto x = x_in;
  size_t idx = 0, bn = 0;
  for (const auto& c : kLearnerConvs) {
    x = torch::conv2d(x, w[idx], w[idx + 1], torch::IntArrayRef{c.stride}, torch::IntArrayRef{0});
    x = torch::relu_(x);
    x = torch::batch_norm(x, w[idx + 2], w[idx + 3], stats[bn], stats[bn + 1], bn_training, kBnMomentum, kBnEps,
                          at::globalContext().userEnabledCuDNN());
    idx += 4;
    bn += 2;
  }
  x = x.view({x.size(0), -1});
  return torch::linear(x, w[idx], w[idx + 1]);
}

torch::nn::Sequential MakeMamlOmniglotNet(int64_t n_way) {
  using namespace torch::nn;
  auto bn = [] { return BatchNorm2d(BatchNorm2dOptions(64).momentum(1.0).affine(true)); };
  auto pool = [] { return MaxPool2d(MaxPool2dOptions(2).stride(2)); };
  return Sequential(Conv2d(Conv2dOptions(1, 64, 3)), bn(), ReLU(ReLUOptions(true)), pool(),
                    Conv2d(Conv2dOptions(64, 64, 3)), bn(), ReLU(ReLUOptions(true)), pool(),
                    Conv2d(Conv2dOptions(64, 64, 3)), bn(), ReLU(ReLUOptions(true)), pool(), Flatten(),
                    Linear(64, n_way));
}

torch::Tensor MamlOmniglotFunctional(torch::nn::Sequential& net, const std::vector<torch::Tensor>& w,
                                     const torch::Tensor& x_in) {
  TORCH_CHECK(w.size() == 14, "maml_omniglot: expected 14 weights, got ", w.size());
  const bool training = net->is_training();
  auto x = x_in;
  size_t idx = 0;
  for (int64_t block = 0; block < 3; ++block) {
    auto bn = net[block * 4 + 1]->as<torch::nn::BatchNorm2d>();
    x = torch::conv2d(x, w[idx], w[idx + 1]);
    if (training) bn->num_batches_tracked.add_(1);  // as BatchNorm2d.forward does
    x = torch::batch_norm(x, w[idx + 2], w[idx + 3], bn->running_mean, bn->running_var, training,
                          bn->options.momentum().value(), bn->options.eps(), at::globalContext().userEnabledCuDNN());
    x = torch::relu_(x);
    x = torch::max_pool2d(x, 2, 2);
    idx += 4;
  }
  x = x.flatten(1);
  return torch::linear(x, w[idx], w[idx + 1]);
}

std::map<std::string, torch::Tensor> MakeMetaBatch(int64_t tasks, int64_t n_way, int64_t k_spt, int64_t k_qry,
                                                   torch::Device device) {
  TORCH_CHECK(tasks >= 1, "maml: the meta-batch needs at least one task, got ", tasks);
  auto f = torch::TensorOptions(device).dtype(torch::kFloat);
  auto l = torch::TensorOptions(device).dtype(torch::kLong);
  std::map<std::string, torch::Tensor> in;
  // TorchBench maml's synthesis order: x_spt, y_spt, x_qry, y_qry.
  in["x_spt"] = torch::randn({tasks, n_way * k_spt, 1, 28, 28}, f);
  in["y_spt"] = torch::randint(0, n_way, {tasks, n_way * k_spt}, l);
  in["x_qry"] = torch::randn({tasks, n_way * k_qry, 1, 28, 28}, f);
  in["y_qry"] = torch::randint(0, n_way, {tasks, n_way * k_qry}, l);
  return in;
}

namespace {

std::vector<torch::Tensor> SgdStep(const std::vector<torch::Tensor>& w, const std::vector<torch::Tensor>& g,
                                   double lr) {
  std::vector<torch::Tensor> out;
  out.reserve(w.size());
  for (size_t i = 0; i < w.size(); ++i) out.push_back(w[i] - lr * g[i]);
  return out;
}

torch::Tensor CorrectCount(const torch::Tensor& logits, const torch::Tensor& y) {
  auto pred = torch::softmax(logits, 1).argmax(1);
  return torch::eq(pred, y).sum();
}

class MamlWorkload : public Workload {
 public:
  static constexpr int64_t kKSpt = 1, kKQry = 15, kUpdateStep = 5, kUpdateStepTest = 10;
  static constexpr double kUpdateLr = 0.4, kMetaLr = 1e-3;

  explicit MamlWorkload(const WorkloadOptions& opt) {
    net_->to(opt.device);
    inputs_ = MakeMetaBatch(opt.batch_size, kNWay, kKSpt, kKQry, opt.device);
    samples_per_step_ = opt.batch_size;
    // Meta creates its Adam once, over Learner.parameters() (vars only).
    meta_optim_ = std::make_unique<torch::optim::Adam>(net_->net->weights(), torch::optim::AdamOptions(kMetaLr));
  }
  torch::nn::Module& net() override { return *net_; }

  // Meta.finetunning on task 0: the 11 query accuracies.
  torch::Tensor Forward() override {
    torch::AutoGradMode grad_on(true);
    auto& learner = net_->net;
    auto x_spt = inputs_["x_spt"][0], y_spt = inputs_["y_spt"][0];
    auto x_qry = inputs_["x_qry"][0], y_qry = inputs_["y_qry"][0];
    // The fine-tuning copy: the same weights (gradients are taken with
    // autograd.grad, never accumulated) and its own running statistics.
    std::vector<torch::Tensor> stats;
    for (const auto& p : learner->vars_bn->named_parameters(false)) stats.push_back(p.value().detach().clone());
    auto params = learner->weights();
    std::vector<torch::Tensor> corrects(kUpdateStepTest + 1);
    auto loss = torch::cross_entropy_loss(learner->forward_with_stats(x_spt, params, stats, true), y_spt);
    auto grad = torch::autograd::grad({loss}, params);
    auto fast = SgdStep(params, grad, kUpdateLr);
    {
      torch::NoGradGuard no_grad;
      corrects[0] = CorrectCount(learner->forward_with_stats(x_qry, params, stats, true), y_qry);
      corrects[1] = CorrectCount(learner->forward_with_stats(x_qry, fast, stats, true), y_qry);
    }
    for (int64_t k = 1; k < kUpdateStepTest; ++k) {
      loss = torch::cross_entropy_loss(learner->forward_with_stats(x_spt, fast, stats, true), y_spt);
      grad = torch::autograd::grad({loss}, fast);
      fast = SgdStep(fast, grad, kUpdateLr);
      auto logits_q = learner->forward_with_stats(x_qry, fast, stats, true);
      torch::NoGradGuard no_grad;
      corrects[k + 1] = CorrectCount(logits_q, y_qry);
    }
    return torch::stack(corrects).to(torch::kFloat) / static_cast<double>(x_qry.size(0));
  }

  // Meta.forward_train: returns the meta-loss (TorchBench returns the
  // accuracies, which we compute too).
  torch::Tensor TrainStep() override {
    torch::AutoGradMode grad_on(true);
    auto& learner = net_->net;
    const auto& x_spt = inputs_["x_spt"];
    const auto& y_spt = inputs_["y_spt"];
    const auto& x_qry = inputs_["x_qry"];
    const auto& y_qry = inputs_["y_qry"];
    const int64_t tasks = x_spt.size(0), querysz = x_qry.size(1);
    std::vector<torch::Tensor> losses_q(kUpdateStep + 1), corrects(kUpdateStep + 1);
    auto add = [](torch::Tensor& acc, const torch::Tensor& v) { acc = acc.defined() ? acc + v : v; };
    auto params = learner->weights();
    for (int64_t i = 0; i < tasks; ++i) {
      auto loss = torch::cross_entropy_loss(learner->forward(x_spt[i], params, true), y_spt[i]);
      auto grad = torch::autograd::grad({loss}, params);
      auto fast = SgdStep(params, grad, kUpdateLr);
      {
        torch::NoGradGuard no_grad;
        auto logits_q = learner->forward(x_qry[i], params, true);
        add(losses_q[0], torch::cross_entropy_loss(logits_q, y_qry[i]));
        add(corrects[0], CorrectCount(logits_q, y_qry[i]));
      }
      {
        torch::NoGradGuard no_grad;
        auto logits_q = learner->forward(x_qry[i], fast, true);
        add(losses_q[1], torch::cross_entropy_loss(logits_q, y_qry[i]));
        add(corrects[1], CorrectCount(logits_q, y_qry[i]));
      }
      for (int64_t k = 1; k < kUpdateStep; ++k) {
        loss = torch::cross_entropy_loss(learner->forward(x_spt[i], fast, true), y_spt[i]);
        grad = torch::autograd::grad({loss}, fast);
        fast = SgdStep(fast, grad, kUpdateLr);
        auto logits_q = learner->forward(x_qry[i], fast, true);
        add(losses_q[k + 1], torch::cross_entropy_loss(logits_q, y_qry[i]));
        torch::NoGradGuard no_grad;
        add(corrects[k + 1], CorrectCount(logits_q, y_qry[i]));
      }
    }
    auto loss_q = losses_q.back() / static_cast<double>(tasks);
    meta_optim_->zero_grad();
    loss_q.backward();
    meta_optim_->step();
    last_accs_ = torch::stack(corrects).to(torch::kFloat) / static_cast<double>(querysz * tasks);
    return loss_q.detach();
  }

  std::optional<std::string> CompiledForwardUnsupported(Mode) const override {
    return std::string("MAML differentiates inside its forward pass (inner-loop adaptation with autograd.grad)");
  }
  // Both modes need autograd (TorchBench: eval_in_nograd() is False).
  void Step(Mode mode) override {
    if (mode == Mode::kTrain) {
      TrainStep();
    } else {
      RunForward();
    }
  }

 private:
  MamlMeta net_;
  std::unique_ptr<torch::optim::Adam> meta_optim_;
  torch::Tensor last_accs_;
};

class MamlOmniglotWorkload : public Workload {
 public:
  static constexpr int64_t kKSpt = 5, kKQry = 15, kInnerIter = 5;
  static constexpr double kInnerLr = 1e-1, kMetaLr = 1e-3;

  explicit MamlOmniglotWorkload(const WorkloadOptions& opt) : net_(MakeMamlOmniglotNet(kNWay)) {
    net_->to(opt.device);
    inputs_ = MakeMetaBatch(opt.batch_size, kNWay, kKSpt, kKQry, opt.device);
    samples_per_step_ = opt.batch_size;
  }
  torch::nn::Module& net() override { return *net_; }

  // TorchBench's eval: the network in eval mode on task 0's support images.
  torch::Tensor Forward() override {
    net_->eval();
    return net_->forward(inputs_["x_spt"][0]);
  }

  // Returns the query losses summed over tasks (what backward() sums).
  torch::Tensor TrainStep() override {
    torch::AutoGradMode grad_on(true);
    net_->train();
    const auto& x_spt = inputs_["x_spt"];
    const auto& y_spt = inputs_["y_spt"];
    const auto& x_qry = inputs_["x_qry"];
    const auto& y_qry = inputs_["y_qry"];
    auto params = net_->parameters();
    // TorchBench builds the meta-optimizer inside train().
    torch::optim::Adam meta_opt(params, torch::optim::AdamOptions(kMetaLr));
    meta_opt.zero_grad();
    torch::Tensor total = torch::zeros({}, x_spt.options());
    for (int64_t i = 0; i < x_spt.size(0); ++i) {
      // higher.innerloop_ctx(copy_initial_weights=False): the fast weights
      // start as the model's own parameters; each differentiable SGD step
      // keeps the graph of its gradient (create_graph=True).
      std::vector<torch::Tensor> fast = params;
      for (int64_t step = 0; step < kInnerIter; ++step) {
        auto spt_loss = torch::cross_entropy_loss(MamlOmniglotFunctional(net_, fast, x_spt[i]), y_spt[i]);
        auto grads = torch::autograd::grad({spt_loss}, fast, {}, /*retain_graph=*/true, /*create_graph=*/true);
        fast = SgdStep(fast, grads, kInnerLr);
      }
      auto qry_loss = torch::cross_entropy_loss(MamlOmniglotFunctional(net_, fast, x_qry[i]), y_qry[i]);
      qry_loss.backward();
      total += qry_loss.detach();
    }
    meta_opt.step();
    return total;
  }

  std::optional<std::string> CompiledForwardUnsupported(Mode mode) const override {
    if (mode == Mode::kEval) return std::nullopt;
    return std::string("the train step differentiates through the inner loop; Forward() is only the eval pass");
  }

 private:
  torch::nn::Sequential net_;
};

}  // namespace

void AddMamlModels(std::vector<ModelInfo>& out) {
  {
    ModelInfo info;
    info.id = "maml";
    info.paper_name = "maml";
    info.domain = Domain::kOther;
    info.task = "meta-learning (few-shot classification, first-order MAML)";
    info.reference = "TorchBench maml (dragen1860/MAML-Pytorch Learner + Meta), re-stated in plain torch";
    // torchbenchmark/models/maml/__init__.py declares DEFAULT_TRAIN_BSIZE =
    // DEFAULT_EVAL_BSIZE = 1 with ALLOW_CUSTOMIZE_BSIZE = False; the work is
    // set by task_num = 32 (train) and one task (eval: finetunning on task 0).
    // Our batch size is the task count, so its defaults are 32 / 1.
    info.default_batch = {32, 1};
    // Measured on the shared 2-core machine: 2 tasks took 3.5-6 s of CPU per
    // train step, so the CPU suite runs one task.
    info.cpu_batch = BatchSizes{1, 1};
    info.smoke_batch = {1, 1};
    info.create = [](const WorkloadOptions& opt) { return std::make_unique<MamlWorkload>(opt); };
    out.push_back(std::move(info));
  }
  {
    ModelInfo info;
    info.id = "maml_omniglot";
    info.paper_name = "maml_omniglot";
    info.domain = Domain::kOther;
    info.task = "meta-learning (few-shot Omniglot classification, second-order MAML)";
    info.reference =
        "TorchBench maml_omniglot (facebookresearch/higher examples/maml-omniglot.py), re-stated without higher";
    // torchbenchmark/models/maml_omniglot/__init__.py declares
    // DEFAULT_TRAIN_BSIZE = DEFAULT_EVAL_BSIZE = 5 (not customisable); the
    // work is set by the recorded meta-batch (its comment: 32 tasks, 5-shot).
    // Our batch size is the task count: 32 train, 1 (task 0) eval.
    info.default_batch = {32, 1};
    // Measured on the shared 2-core machine: 2 tasks took 7-11 s of CPU per
    // train step (second-order inner loop), so the CPU suite runs one task.
    info.cpu_batch = BatchSizes{1, 1};
    info.smoke_batch = {1, 1};
    info.create = [](const WorkloadOptions& opt) { return std::make_unique<MamlOmniglotWorkload>(opt); };
    out.push_back(std::move(info));
  }
}

}  // namespace torchgauge::models
