#include "models/other/lennard_jones.h"

#include <torch/torch.h>

namespace torchgauge::models {

torch::Tensor LennardJonesEnergy(const torch::Tensor& r) {
  auto s = kLennardJonesSigma / r;
  return kLennardJonesEpsilon * (s.pow(12) - s.pow(6));
}

torch::Tensor LennardJonesForce(const torch::Tensor& r) {
  const double s6 = std::pow(kLennardJonesSigma, 6), s12 = std::pow(kLennardJonesSigma, 12);
  return -kLennardJonesEpsilon * ((-12.0 * s12 / r.pow(13)) + (6.0 * s6 / r.pow(7)));
}

torch::nn::Sequential MakeLennardJonesNet() {
  return torch::nn::Sequential(torch::nn::Linear(1, 16), torch::nn::Tanh(), torch::nn::Linear(16, 16),
                               torch::nn::Tanh(), torch::nn::Linear(16, 16), torch::nn::Tanh(),
                               torch::nn::Linear(16, 16), torch::nn::Tanh(), torch::nn::Linear(16, 1));
}

namespace {

class LennardJonesWorkload : public Workload {
 public:
  explicit LennardJonesWorkload(const WorkloadOptions& opt) : net_(MakeLennardJonesNet()) {
    TORCH_CHECK(opt.batch_size >= 1, "lennard_jones needs a positive batch size");
    net_->to(opt.device);
    auto fopt = torch::TensorOptions(opt.device).dtype(torch::kFloat);
    // TorchBench's inputs are deterministic, not random: distances from
    // sigma to 2 sigma along +x.
    auto r = torch::linspace(0.5, 2 * kLennardJonesSigma, opt.batch_size, fopt);
    auto drs = torch::outer(r, torch::tensor({1.0f, 0.0f, 0.0f}, fopt));
    auto norms = torch::linalg_vector_norm(drs, 2, {1}, false, std::nullopt).reshape({-1, 1});
    inputs_["drs"] = drs;
    inputs_["training_energies"] = LennardJonesEnergy(norms).reshape({-1, 1});
    inputs_["training_forces"] = LennardJonesForce(norms) * drs;
    samples_per_step_ = opt.batch_size;
    optimizer_ = std::make_unique<torch::optim::Adam>(net_->parameters(), torch::optim::AdamOptions(1e-3));
  }

  torch::nn::Module& net() override { return *net_; }

  // Energies and forces side by side, shape (batch, 1 + 3).
  torch::Tensor Forward() override {
    auto [energies, forces] = Predict(/*create_graph=*/false);
    return torch::cat({energies, forces}, 1).detach();
  }

  std::optional<std::string> CompiledForwardUnsupported(Mode) const override {
    return std::string(
        "the forces are the energy's gradient (torch::autograd::grad inside the forward pass), which a traced graph "
        "cannot record");
  }

  torch::Tensor TrainStep() override {
    optimizer_->zero_grad();
    auto [energies, forces] = Predict(/*create_graph=*/true);
    auto loss = torch::mse_loss(inputs_["training_energies"], energies) +
                0.01 * torch::mse_loss(inputs_["training_forces"], forces) / 3;
    loss.backward();
    optimizer_->step();
    return loss.detach();
  }

  // The forces need autograd even in eval, so eval cannot run under
  // inference mode (TorchBench's eval does not disable grad either).
  void Step(Mode mode) override {
    if (mode == Mode::kTrain) {
      TrainStep();
    } else {
      RunForward();
    }
  }

 private:
  std::pair<torch::Tensor, torch::Tensor> Predict(bool create_graph) {
    torch::AutoGradMode grad_on(true);
    const auto& drs = inputs_["drs"];
    auto norms = torch::linalg_vector_norm(drs, 2, {1}, false, std::nullopt).reshape({-1, 1});
    auto energies = net_->forward(norms);
    // TorchBench differentiates with vmap(jacrev(model))(norms), which runs
    // the network a second time on its own input; we do the same second
    // pass so the step's work matches, then take dE/dr per sample. With
    // create_graph the derivative stays differentiable for the force loss.
    auto r = norms.detach().requires_grad_(true);
    auto e = net_->forward(r);
    auto derivs = torch::autograd::grad({e}, {r}, {torch::ones_like(e)}, /*retain_graph=*/create_graph,
                                        /*create_graph=*/create_graph)[0];
    auto forces = -derivs * drs / norms;
    return {energies, forces};
  }

  torch::nn::Sequential net_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
};

}  // namespace

void AddLennardJonesModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "lennard_jones";
  info.paper_name = "lennard_jones";
  info.domain = Domain::kOther;
  info.task = "neural network potential (Lennard-Jones energy and force fitting)";
  info.reference = "TorchBench lennard_jones (pytorch/benchmark), adapted from muhrin/milad";
  // torchbenchmark/models/lennard_jones/__init__.py: DEFAULT_TRAIN_BSIZE =
  // DEFAULT_EVAL_BSIZE = 1000. The network is 16 wide, so 1000 samples are
  // cheap enough for the smoke suite too.
  info.default_batch = {1000, 1000};
  info.smoke_batch = {1000, 1000};
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<LennardJonesWorkload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
