#include "models/rl/sac.h"

#include <torch/torch.h>

#include <cmath>
#include <memory>

#include "models/rl/rl_env.h"
#include "models/rl/rl_harness.h"
#include "models/rl/squashed_normal.h"

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

constexpr int64_t kStateDim = PendulumEnv::kObsDim, kActDim = PendulumEnv::kActDim;

class SacWorkload final : public OffPolicyWorkload {
 public:
  SacWorkload(const WorkloadOptions& opt, bool replay)
      : OffPolicyWorkload(opt,
                          {
                              .id = "soft_actor_critic",
                              .obs_input = "state",
                              .act_dim = kActDim,
                              .max_episode_steps = kMaxEpisodeSteps,
                              .env_seed = 17,
                              .warmup_seed = 99,
                              .warmup_transitions = std::max<int64_t>(opt.batch_size, 1000),
                              // TorchBench keeps buffer_size = 1_000_000 transitions; a run
                              // adds only a few, so capacity is allocated lazily by the OS
                              // and costs nothing here.
                              .buffer_capacity = 1'000'000,
                              .update_before_env_step = false,
                              .train_compiled_forward_unsupported =
                                  "the SAC update trains the actor and both critics outside the policy's "
                                  "forward pass",
                              .replay = replay,
                          }),
        net_(kStateDim, kActDim) {
    net_->to(opt.device);
    if (opt.mode == Mode::kTrain) {
      std::vector<torch::Tensor> critic_params = net_->critic1->parameters();
      for (auto& p : net_->critic2->parameters()) critic_params.push_back(p);
      critic_opt_ = std::make_unique<torch::optim::Adam>(critic_params, torch::optim::AdamOptions(kLr));
      actor_opt_ = std::make_unique<torch::optim::Adam>(net_->actor->parameters(), torch::optim::AdamOptions(kLr));
      alpha_opt_ = std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{net_->log_alpha},
                                                        torch::optim::AdamOptions(kLr).betas({0.5, 0.999}));
    }
    Start({kStateDim}, torch::kFloat);
  }

  torch::nn::Module& net() override { return *net_; }

  std::optional<double> AnalyticFlops(Mode mode) const override {
    // Eval is one actor MLP pass per environment (2 FLOPs per multiply-add).
    // A train step mixes acting, target, critic and actor passes with
    // backward; it is left to the profiler.
    if (mode == Mode::kTrain) return std::nullopt;
    const double actor = kStateDim * kHidden + kHidden * kHidden + kHidden * 2 * kActDim;
    return 2.0 * static_cast<double>(batch_size()) * actor;
  }

 private:
  void AddEnv(uint64_t seed) override { envs_.emplace_back(seed); }
  void ResetEnv(size_t i) override { envs_[i].Reset(); }
  double StepEnv(size_t i, double action) override { return envs_[i].Step(action); }
  void ObserveEnv(size_t i, torch::Tensor out) const override { envs_[i].Observe(out.data_ptr<float>()); }
  torch::nn::Module& actor() override { return *net_->actor; }
  std::pair<torch::Tensor, torch::Tensor> Policy(const torch::Tensor& obs) override {
    return net_->actor->forward(obs);
  }

  // One SAC gradient update (the actor every kActorDelay updates), then the
  // Polyak update of the target critics every kTargetDelay.
  torch::Tensor Update(int64_t step) override {
    auto loss = Learn(step % kActorDelay == 0);
    if (step % kTargetDelay == 0) {
      SoftUpdate(net_->target_critic1, net_->critic1, kTau);
      SoftUpdate(net_->target_critic2, net_->critic2, kTau);
    }
    return loss;
  }

  torch::Tensor Learn(bool update_policy) {
    auto batch = UpdateBatch();
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

  SacNet net_;
  std::vector<PendulumEnv> envs_;
  std::unique_ptr<torch::optim::Adam> critic_opt_, actor_opt_, alpha_opt_;
};

}  // namespace

std::unique_ptr<Workload> MakeSacWorkload(const WorkloadOptions& opt, bool replay) {
  return std::make_unique<SacWorkload>(opt, replay);
}

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
  info.create = [](const WorkloadOptions& opt) { return MakeSacWorkload(opt, /*replay=*/true); };
  out.push_back(std::move(info));
}

}  // namespace torchgauge::models
