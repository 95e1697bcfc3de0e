// soft_actor_critic: Soft Actor-Critic (Haarnoja et al. 2018, "Soft
// Actor-Critic Algorithms and Applications", arXiv:1812.05905) as configured
// in TorchBench's torchbenchmark/models/soft_actor_critic (config.py,
// nets.py, sac.py, __init__.py), learning Pendulum-v1 from its 3-d state.
//
// Where each hyperparameter comes from (TorchBench soft_actor_critic):
//   actor  StochasticActor: fc1 3->1024, fc2 1024->1024, fc3 1024->2 (mean and
//          log-std of a tanh-squashed Gaussian), ReLU; log_std squashed into
//          [log_std_low, log_std_high] = [-10, 2]                 (nets.py, config.py)
//   critics BigCritic x2 (critic1, critic2): fc1 (3+1)->1024, fc2 1024->1024,
//          fc3 1024->1, ReLU; hidden_size 1024                    (nets.py, sac.py)
//   target critics: copies of critic1/critic2, Polyak tau = 0.005 every
//          target_delay = 2 updates                               (config.py, utils.py)
//   init   orthogonal weights, zero biases (nets.weight_init)
//   alpha  log_alpha, init_alpha = 0.1, target entropy = -|A| = -1
//   optim  Adam lr 1e-4 for actor and for both critics (betas 0.9/0.999, no
//          weight decay); Adam lr 1e-4 betas (0.5, 0.999) for log_alpha
//   loss   critic 0.5 * (td1^2 + td2^2) mean, gamma = 0.99; actor
//          -(min Q - alpha * log pi); alpha -(alpha * (log pi + target_entropy))
//   batch  256 (TorchBench DEFAULT_TRAIN_BSIZE, after pranz24's SAC main.py)
//   env    Pendulum-v1, max_episode_steps = 10, one transition and one
//          gradient update per step (transitions_per_step, gradient_updates_per_step)
//
// Parameter names: the top-level net holds actor, critic1, critic2 (SACAgent's
// attributes), target_critic1/target_critic2 (target_agent.critic1/2; the
// target agent's unused actor copy is not kept) and log_alpha.
#pragma once

#include <memory>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddSacModels(std::vector<ModelInfo>& out);

// replay = false: the parity hook (OffPolicySettings::replay), a train step
// that is one update on the batch_* inputs.
std::unique_ptr<Workload> MakeSacWorkload(const WorkloadOptions& opt, bool replay);

}  // namespace torchgauge::models
