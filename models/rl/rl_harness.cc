#include "models/rl/rl_harness.h"

#include <torch/torch.h>

#include <random>

#include "models/rl/squashed_normal.h"

namespace torchgauge::models {

OffPolicyWorkload::OffPolicyWorkload(const WorkloadOptions& opt, OffPolicySettings settings)
    : settings_(std::move(settings)), mode_(opt.mode), device_(opt.device), batch_(opt.batch_size), seed_(opt.seed) {
  TORCH_CHECK(opt.batch_size >= 1, settings_.id, ": batch size must be >= 1");
}

void OffPolicyWorkload::Start(const std::vector<int64_t>& obs_shape, torch::ScalarType obs_dtype) {
  const int64_t num_envs = mode_ == Mode::kTrain ? 1 : batch_;
  for (int64_t i = 0; i < num_envs; ++i) {
    AddEnv(seed_ * 1000003 + settings_.env_seed + i);
    ResetEnv(i);
  }
  episode_steps_.assign(num_envs, 0);
  std::vector<int64_t> shape{num_envs};
  shape.insert(shape.end(), obs_shape.begin(), obs_shape.end());
  host_obs_ = torch::empty(shape, obs_dtype);
  ObserveAll();
  // agent.act: torch.FloatTensor(obs).to(device) -- converted on the host.
  inputs_[settings_.obs_input] = host_obs_.to(torch::kFloat).to(device_);
  samples_per_step_ = batch_;
  if (mode_ != Mode::kTrain) return;
  if (!settings_.replay) {
    // The parity hook's minibatch, replaced by the reference's.
    auto dev = torch::TensorOptions().device(device_);
    std::vector<int64_t> batch_obs_shape{batch_};
    batch_obs_shape.insert(batch_obs_shape.end(), obs_shape.begin(), obs_shape.end());
    auto random_obs = [&] {
      return obs_dtype == torch::kByte ? torch::randint(0, 256, batch_obs_shape, dev.dtype(torch::kByte))
                                       : torch::randn(batch_obs_shape, dev.dtype(obs_dtype));
    };
    inputs_["batch_obs"] = random_obs();
    inputs_["batch_next_obs"] = random_obs();
    inputs_["batch_action"] = torch::rand({batch_, settings_.act_dim}, dev.dtype(torch::kFloat)) * 2 - 1;
    inputs_["batch_reward"] = torch::rand({batch_, 1}, dev.dtype(torch::kFloat));
    inputs_["batch_not_done"] = torch::ones({batch_, 1}, dev.dtype(torch::kFloat));
    return;
  }
  buffer_ = std::make_unique<ReplayBuffer>(settings_.buffer_capacity, obs_shape, obs_dtype, settings_.act_dim, device_);
  std::mt19937_64 rng(seed_ + settings_.warmup_seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (int64_t i = 0; i < settings_.warmup_transitions; ++i) {
    EnvStepAndStore(torch::full({settings_.act_dim}, uniform(rng)));
  }
}

torch::Tensor OffPolicyWorkload::Forward() { return torch::tanh(Policy(inputs_[settings_.obs_input]).first); }

std::optional<std::string> OffPolicyWorkload::CompiledForwardUnsupported(Mode mode) const {
  if (mode == Mode::kTrain) return settings_.train_compiled_forward_unsupported;
  return std::nullopt;
}

ReplayBuffer::Batch OffPolicyWorkload::UpdateBatch() {
  if (settings_.replay) return buffer_->Sample(batch_, dtype_);
  auto obs = [&](const torch::Tensor& t) { return t.scalar_type() == torch::kByte ? t : t.to(dtype_); };
  return {obs(inputs_.at("batch_obs")), inputs_.at("batch_action").to(dtype_), inputs_.at("batch_reward").to(dtype_),
          obs(inputs_.at("batch_next_obs")), inputs_.at("batch_not_done").to(dtype_)};
}

torch::Tensor OffPolicyWorkload::TrainStep() {
  TORCH_CHECK(mode_ == Mode::kTrain, settings_.id, ": TrainStep needs a workload built in train mode");
  if (!settings_.replay) return Update(step_++);
  torch::Tensor action;
  {
    torch::NoGradGuard g;
    actor().eval();
    auto& obs = inputs_[settings_.obs_input];
    obs.copy_(host_obs_.to(torch::kFloat));
    auto [mu, sigma] = Policy(obs);
    action = SquashedRSample(mu, sigma).action.clamp(-1.0, 1.0).to(torch::kCPU, torch::kFloat).reshape({-1});
    actor().train();
  }
  torch::Tensor loss;
  if (settings_.update_before_env_step) {
    loss = Update(step_);
    EnvStepAndStore(action);
  } else {
    EnvStepAndStore(action);
    loss = Update(step_);
  }
  ++step_;
  return loss;
}

void OffPolicyWorkload::Step(Mode mode) {
  if (mode == Mode::kTrain) {
    TrainStep();
    return;
  }
  torch::Tensor actions;
  {
    c10::InferenceMode guard;
    inputs_[settings_.obs_input].copy_(host_obs_.to(torch::kFloat));
    actions = RunForward().clamp(-1.0, 1.0).to(torch::kCPU, torch::kFloat).contiguous();
  }
  const float* a = actions.data_ptr<float>();
  for (size_t i = 0; i < episode_steps_.size(); ++i) {
    StepEnv(i, a[i * settings_.act_dim]);
    if (++episode_steps_[i] >= settings_.max_episode_steps) {
      ResetEnv(i);
      episode_steps_[i] = 0;
    }
  }
  ObserveAll();
}

void OffPolicyWorkload::CastTo(torch::ScalarType dtype) {
  Workload::CastTo(dtype);
  dtype_ = dtype;
}

void OffPolicyWorkload::ObserveAll() {
  for (size_t i = 0; i < episode_steps_.size(); ++i) ObserveEnv(i, host_obs_[static_cast<int64_t>(i)]);
}

void OffPolicyWorkload::EnvStepAndStore(const torch::Tensor& action) {
  auto obs = host_obs_[0].clone();
  double reward = StepEnv(0, action.data_ptr<float>()[0]);
  ObserveAll();
  buffer_->Add(obs, action, reward, host_obs_[0], /*done=*/false);
  if (++episode_steps_[0] >= settings_.max_episode_steps) {
    ResetEnv(0);
    episode_steps_[0] = 0;
    ObserveAll();
  }
}

}  // namespace torchgauge::models
