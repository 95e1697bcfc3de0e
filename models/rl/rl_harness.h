// The workload around an off-policy actor-critic agent that learns from
// environments simulated on the host (soft_actor_critic, drq): TorchBench's
// loop of acting on the device with a sampled action, stepping the
// environment on the CPU, storing the transition in the host replay buffer
// and one gradient update; in eval, deterministic actions (tanh of the policy
// mean) for a batch of environments stepped together. The family file owns
// the networks, its environment and its update (losses, optimizers, target
// networks); this file owns the loop, so the two agents differ only where
// their references do.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/rl/rl_env.h"
#include "models/workload.h"

namespace torchgauge::models {

struct OffPolicySettings {
  std::string id;         // the model id, for error messages
  std::string obs_input;  // the observation's name in inputs()
  int64_t act_dim = 1;
  // Episode limit; reaching it is a truncation, stored as not done.
  int max_episode_steps = 1;
  // Environment i of a run seeded s is seeded s * 1000003 + env_seed + i; the
  // warm-up actions come from mt19937_64(s + warmup_seed).
  uint64_t env_seed = 0, warmup_seed = 0;
  // Uniform random transitions stored before the first update (setup, not
  // timed), so that the first update samples a real batch.
  int64_t warmup_transitions = 0;
  int64_t buffer_capacity = 1;
  // drq's loop updates before the environment step, SAC's after it.
  bool update_before_env_step = false;
  // Why a compiled forward cannot stand for the train step.
  std::string train_compiled_forward_unsupported;
  // false: the parity hook. TrainStep() is one Update() on the minibatch
  // held in inputs() (batch_obs, batch_action, batch_reward, batch_next_obs,
  // batch_not_done; a parity test replaces them by its reference's), with no
  // acting, environment step or replay buffer, so that the update draws the
  // same random numbers as a reference that runs the update alone.
  bool replay = true;
};

class OffPolicyWorkload : public Workload {
 public:
  // Deterministic policy: tanh of the Gaussian mean on the observation.
  torch::Tensor Forward() final;
  // One training iteration: act on the device with a sampled action, step
  // the environment on the CPU, store the transition, one update (in the
  // order of settings.update_before_env_step). Returns the critic loss.
  // Without replay (the parity hook), only the update.
  torch::Tensor TrainStep() final;
  // Eval: deterministic actions for every environment, copied to the host,
  // then every environment advances one step on the CPU.
  void Step(Mode mode) final;
  void CastTo(torch::ScalarType dtype) override;
  std::optional<std::string> CompiledForwardUnsupported(Mode mode) const override;

 protected:
  OffPolicyWorkload(const WorkloadOptions& opt, OffPolicySettings settings);

  // Called at the end of the family's constructor, its networks on the
  // device: creates and resets the environments (one in train, one per batch
  // element in eval), puts the first observation into inputs() and, in train,
  // stores the warm-up transitions.
  void Start(const std::vector<int64_t>& obs_shape, torch::ScalarType obs_dtype);

  // The family's environments.
  virtual void AddEnv(uint64_t seed) = 0;
  virtual void ResetEnv(size_t i) = 0;
  virtual double StepEnv(size_t i, double action) = 0;
  virtual void ObserveEnv(size_t i, torch::Tensor out) const = 0;  // out: the host row of environment i

  // The policy network (switched to eval while acting) and its output: mean
  // and standard deviation of the pre-tanh Gaussian.
  virtual torch::nn::Module& actor() = 0;
  virtual std::pair<torch::Tensor, torch::Tensor> Policy(const torch::Tensor& obs) = 0;
  // One gradient update from replay_buffer(); `step` counts train steps from
  // 0. Returns the (detached) critic loss.
  virtual torch::Tensor Update(int64_t step) = 0;

  // The minibatch of an update: sampled from the replay buffer, or without
  // replay the batch_* inputs. Observations keep their dtype when they are
  // pixels (uint8); the rest is in dtype().
  ReplayBuffer::Batch UpdateBatch();
  int64_t batch_size() const { return batch_; }
  torch::ScalarType dtype() const { return dtype_; }

 private:
  void ObserveAll();
  void EnvStepAndStore(const torch::Tensor& action);

  OffPolicySettings settings_;
  Mode mode_;
  torch::Device device_;
  int64_t batch_;
  uint64_t seed_;
  std::vector<int> episode_steps_;
  torch::Tensor host_obs_;
  std::unique_ptr<ReplayBuffer> buffer_;
  torch::ScalarType dtype_ = torch::kFloat;
  int64_t step_ = 0;
};

}  // namespace torchgauge::models
