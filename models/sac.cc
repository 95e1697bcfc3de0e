#include "models/sac.h"

#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <random>

#include "models/rl_env.h"
#include "models/squashed_normal.h"

namespace torchgauge::models {
namespace {

namespace F = torch::nn::functional;

constexpr int64_t kHidden = 1024;
constexpr double kLogStdLow = -10.0, kLogStdHigh = 2.0;
constexpr double kGamma = 0.99, kTau = 0.005, kInitAlpha = 0.1, kLr = 1e-4;
constexpr int kTargetDelay = 2, kActorDelay = 1, kMaxEpisodeSteps = 10;

void OrthogonalInit(torch::nn::Linear& l) {
  torch::NoGradGuard g;
  torch::nn::init::orthogonal_(l->weight);
  l->bias.zero_();
}

struct StochasticActorImpl : torch::nn::Module {
  StochasticActorImpl(int64_t state_dim, int64_t act_dim)
      : fc1(register_module("fc1", torch::nn::Linear(state_dim, kHidden))),
        fc2(register_module("fc2", torch::nn::Linear(kHidden, kHidden))),
        fc3(register_module("fc3", torch::nn::Linear(kHidden, 2 * act_dim))) {
    OrthogonalInit(fc1), OrthogonalInit(fc2), OrthogonalInit(fc3);
  }
  // Mean and standard deviation of the pre-tanh Gaussian.
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& state) {
    auto out = fc3(torch::relu(fc2(torch::relu(fc1(state)))));
    auto parts = out.chunk(2, 1);
    auto log_std = torch::tanh(parts[1]);
    log_std = kLogStdLow + 0.5 * (kLogStdHigh - kLogStdLow) * (log_std + 1);
    return {parts[0], log_std.exp()};
  }
  torch::nn::Linear fc1, fc2, fc3;
};
TORCH_MODULE(StochasticActor);

struct BigCriticImpl : torch::nn::Module {
  BigCriticImpl(int64_t state_dim, int64_t act_dim)
      : fc1(register_module("fc1", torch::nn::Linear(state_dim + act_dim, kHidden))),
        fc2(register_module("fc2", torch::nn::Linear(kHidden, kHidden))),
        fc3(register_module("fc3", torch::nn::Linear(kHidden, 1))) {
    OrthogonalInit(fc1), OrthogonalInit(fc2), OrthogonalInit(fc3);
  }
  torch::Tensor forward(const torch::Tensor& state, const torch::Tensor& action) {
    return fc3(torch::relu(fc2(torch::relu(fc1(torch::cat({state, action}, 1))))));
  }
  torch::nn::Linear fc1, fc2, fc3;
};
TORCH_MODULE(BigCritic);

struct SacNetImpl : torch::nn::Module {
  SacNetImpl(int64_t state_dim, int64_t act_dim)
      : actor(register_module("actor", StochasticActor(state_dim, act_dim))),
        critic1(register_module("critic1", BigCritic(state_dim, act_dim))),
        critic2(register_module("critic2", BigCritic(state_dim, act_dim))),
        target_critic1(register_module("target_critic1", BigCritic(state_dim, act_dim))),
        target_critic2(register_module("target_critic2", BigCritic(state_dim, act_dim))) {
    log_alpha = register_parameter("log_alpha", torch::full({1}, std::log(kInitAlpha)));
    torch::NoGradGuard g;
    // hard_update: the targets start as exact copies and are never trained.
    for (auto [src, dst] : {std::pair{critic1, target_critic1}, std::pair{critic2, target_critic2}}) {
      auto s = src->parameters(), d = dst->parameters();
      for (size_t i = 0; i < s.size(); ++i) {
        d[i].copy_(s[i]);
        d[i].set_requires_grad(false);
      }
    }
  }
  StochasticActor actor;
  BigCritic critic1, critic2, target_critic1, target_critic2;
  torch::Tensor log_alpha;
};
TORCH_MODULE(SacNet);

void SoftUpdate(BigCritic& target, BigCritic& source, double tau) {
  torch::NoGradGuard g;
  auto t = target->parameters(), s = source->parameters();
  for (size_t i = 0; i < t.size(); ++i) t[i].mul_(1.0 - tau).add_(s[i], tau);
}

class SacWorkload : public Workload {
 public:
  static constexpr int64_t kStateDim = PendulumEnv::kObsDim, kActDim = PendulumEnv::kActDim;
  // TorchBench keeps buffer_size = 1_000_000 transitions; a run adds only a
  // few, so capacity is allocated lazily by the OS and costs nothing here.
  static constexpr int64_t kBufferCapacity = 1'000'000;

  explicit SacWorkload(const WorkloadOptions& opt)
      : mode_(opt.mode), device_(opt.device), batch_(opt.batch_size), net_(kStateDim, kActDim) {
    TORCH_CHECK(opt.batch_size >= 1, "soft_actor_critic: batch size must be >= 1");
    net_->to(opt.device);
    // Train: one environment and an update batch of `batch_size`. Eval: one
    // environment per batch element, stepped together.
    const int64_t num_envs = mode_ == Mode::kTrain ? 1 : opt.batch_size;
    for (int64_t i = 0; i < num_envs; ++i) {
      envs_.emplace_back(opt.seed * 1000003 + 17 + i);
      envs_.back().Reset();
    }
    episode_steps_.assign(num_envs, 0);
    host_obs_ = torch::empty({num_envs, kStateDim});
    ObserveAll();
    inputs_["state"] = host_obs_.to(device_);
    samples_per_step_ = opt.batch_size;
    if (mode_ == Mode::kTrain) {
      buffer_ = std::make_unique<ReplayBuffer>(kBufferCapacity, std::vector<int64_t>{kStateDim}, torch::kFloat,
                                               kActDim, device_);
      std::vector<torch::Tensor> critic_params = net_->critic1->parameters();
      for (auto& p : net_->critic2->parameters()) critic_params.push_back(p);
      critic_opt_ = std::make_unique<torch::optim::Adam>(critic_params, torch::optim::AdamOptions(kLr));
      actor_opt_ = std::make_unique<torch::optim::Adam>(net_->actor->parameters(), torch::optim::AdamOptions(kLr));
      alpha_opt_ = std::make_unique<torch::optim::Adam>(
          std::vector<torch::Tensor>{net_->log_alpha}, torch::optim::AdamOptions(kLr).betas({0.5, 0.999}));
      // Warm-up transitions from uniform random actions, so the first update
      // samples a real batch (setup, not timed).
      std::mt19937_64 rng(opt.seed + 99);
      std::uniform_real_distribution<double> uniform(-1.0, 1.0);
      for (int64_t i = 0; i < std::max<int64_t>(opt.batch_size, 1000); ++i) {
        auto a = torch::full({kActDim}, uniform(rng));
        EnvStepAndStore(a);
      }
    }
  }

  torch::nn::Module& net() override { return *net_; }

  // Deterministic policy (tanh of the Gaussian mean) on inputs()["state"], as
  // SACAgent.forward acts in evaluation.
  torch::Tensor Forward() override {
    auto [mu, sigma] = net_->actor->forward(inputs_["state"]);
    return torch::tanh(mu);
  }

  // One TorchBench _train iteration: act with a sampled action on the device,
  // bring it to the host, step Pendulum on the CPU, store the transition,
  // then one SAC update from a sampled batch. Returns the critic loss.
  std::optional<std::string> CompiledForwardUnsupported(Mode mode) const override {
    if (mode == Mode::kTrain) return "the SAC update trains the actor and both critics outside the policy's forward pass";
    return std::nullopt;
  }

  torch::Tensor TrainStep() override {
    TORCH_CHECK(buffer_, "soft_actor_critic: TrainStep needs a workload built in train mode");
    torch::Tensor action;
    {
      torch::NoGradGuard g;
      net_->actor->eval();
      inputs_["state"].copy_(host_obs_, /*non_blocking=*/false);
      auto [mu, sigma] = net_->actor->forward(inputs_["state"]);
      action = SquashedRSample(mu, sigma).action.clamp(-1.0, 1.0).to(torch::kCPU, torch::kFloat).reshape({-1});
      net_->actor->train();
    }
    EnvStepAndStore(action);
    auto loss = Learn(update_step_ % kActorDelay == 0);
    if (update_step_ % kTargetDelay == 0) {
      SoftUpdate(net_->target_critic1, net_->critic1, kTau);
      SoftUpdate(net_->target_critic2, net_->critic2, kTau);
    }
    ++update_step_;
    return loss;
  }

  void Step(Mode mode) override {
    if (mode == Mode::kTrain) {
      TrainStep();
      return;
    }
    // Evaluation: deterministic actions for every environment, copied to the
    // host, then every environment advances one step on the CPU.
    torch::Tensor actions;
    {
      c10::InferenceMode guard;
      inputs_["state"].copy_(host_obs_);
      actions = RunForward().clamp(-1.0, 1.0).to(torch::kCPU, torch::kFloat).contiguous();
    }
    const float* a = actions.data_ptr<float>();
    for (size_t i = 0; i < envs_.size(); ++i) {
      envs_[i].Step(a[i * kActDim]);
      if (++episode_steps_[i] >= kMaxEpisodeSteps) {
        envs_[i].Reset();
        episode_steps_[i] = 0;
      }
    }
    ObserveAll();
  }

  void CastTo(torch::ScalarType dtype) override {
    Workload::CastTo(dtype);
    dtype_ = dtype;
  }

  std::optional<double> AnalyticFlops(Mode mode) const override {
    // Eval is one actor MLP pass per environment (2 FLOPs per multiply-add).
    // A train step mixes acting, target, critic and actor passes with
    // backward; it is left to the profiler.
    if (mode == Mode::kTrain) return std::nullopt;
    const double actor = kStateDim * kHidden + kHidden * kHidden + kHidden * 2 * kActDim;
    return 2.0 * static_cast<double>(batch_) * actor;
  }

 private:
  void ObserveAll() {
    float* p = host_obs_.data_ptr<float>();
    for (size_t i = 0; i < envs_.size(); ++i) envs_[i].Observe(p + i * kStateDim);
  }

  void EnvStepAndStore(const torch::Tensor& action) {
    auto state = host_obs_[0].clone();
    double reward = envs_[0].Step(action.data_ptr<float>()[0]);
    ObserveAll();
    // Pendulum never terminates; the 10-step limit is a truncation, stored as
    // not-done (TorchBench pushes the environment's own done flag).
    buffer_->Add(state, action, reward, host_obs_[0], /*done=*/false);
    if (++episode_steps_[0] >= kMaxEpisodeSteps) {
      envs_[0].Reset();
      episode_steps_[0] = 0;
      ObserveAll();
    }
  }

  torch::Tensor Learn(bool update_policy) {
    auto batch = buffer_->Sample(batch_, dtype_);
    auto alpha = net_->log_alpha.exp();
    torch::Tensor td_target;
    {
      torch::NoGradGuard g;
      auto [mu1, std1] = net_->actor->forward(batch.next_obs);
      auto s1 = SquashedRSample(mu1, std1);
      auto logp_a1 = SquashedLogProb(s1, mu1, std1).sum(-1, true);
      auto target_q = torch::min(net_->target_critic1->forward(batch.next_obs, s1.action),
                                 net_->target_critic2->forward(batch.next_obs, s1.action));
      td_target = batch.reward + kGamma * batch.not_done * (target_q - alpha * logp_a1);
    }
    auto td1 = td_target - net_->critic1->forward(batch.obs, batch.action);
    auto td2 = td_target - net_->critic2->forward(batch.obs, batch.action);
    auto critic_loss = (0.5 * (td1.pow(2) + td2.pow(2))).mean();
    critic_opt_->zero_grad();
    critic_loss.backward();
    critic_opt_->step();
    if (update_policy) {
      auto [mu, sigma] = net_->actor->forward(batch.obs);
      auto s = SquashedRSample(mu, sigma);
      auto logp_a = SquashedLogProb(s, mu, sigma).sum(-1, true);
      auto q = torch::min(net_->critic1->forward(batch.obs, s.action), net_->critic2->forward(batch.obs, s.action));
      auto actor_loss = -(q - alpha.detach() * logp_a).mean();
      actor_opt_->zero_grad();
      actor_loss.backward();
      actor_opt_->step();
      const double target_entropy = -static_cast<double>(kActDim);
      auto alpha_loss = (-alpha * (logp_a + target_entropy).detach()).mean();
      alpha_opt_->zero_grad();
      alpha_loss.backward();
      alpha_opt_->step();
    }
    return critic_loss.detach();
  }

  Mode mode_;
  torch::Device device_;
  int64_t batch_;
  SacNet net_;
  std::vector<PendulumEnv> envs_;
  std::vector<int> episode_steps_;
  torch::Tensor host_obs_;
  std::unique_ptr<ReplayBuffer> buffer_;
  std::unique_ptr<torch::optim::Adam> critic_opt_, actor_opt_, alpha_opt_;
  torch::ScalarType dtype_ = torch::kFloat;
  int64_t update_step_ = 0;
};

}  // namespace

void AddSacModels(std::vector<ModelInfo>& out) {
  ModelInfo info;
  info.id = "soft_actor_critic";
  info.paper_name = "soft_actor_critic";
  info.domain = Domain::kReinforcementLearning;
  info.task = "reinforcement learning";
  info.reference = "TorchBench soft_actor_critic (SAC, Haarnoja et al. 2018) on Pendulum-v1";
  // TorchBench soft_actor_critic/__init__.py: DEFAULT_TRAIN_BSIZE = 256,
  // DEFAULT_EVAL_BSIZE = 256. Train: the update batch. Eval: TorchBench acts
  // in one environment whatever the batch; here the eval batch is the number
  // of environments stepped together (1 reproduces TorchBench exactly).
  info.default_batch = {256, 256};
  info.smoke_batch = {16, 4};
  info.create = [](const WorkloadOptions& opt) { return std::make_unique<SacWorkload>(opt); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
