// drq: DrQ, "Image Augmentation Is All You Need: Regularizing Deep
// Reinforcement Learning from Pixels" (Kostrikov, Yarats & Fergus 2020,
// arXiv:2004.13649), as configured in TorchBench's torchbenchmark/models/drq
// (config.py, drq.py, utils.py, replay_buffer.py; from denisyarats/drq),
// learning cartpole_swingup from 84x84 pixels.
//
// Where each hyperparameter comes from (TorchBench drq):
//   observation 3 stacked RGB frames -> 9 x 84 x 84 uint8 (frame_stack 3,
//          image_size 84), action dim 1, action_repeat 4          (config.py)
//   Encoder convs: Conv2d(9, 32, 3, stride 2), then 3 x Conv2d(32, 32, 3,
//          stride 1), ReLU (num_filters 32, num_layers 4) -> 32 x 35 x 35;
//          head: Linear(32 * 35 * 35, 50) + LayerNorm(50), tanh
//          (feature_dim 50)                                       (drq.py)
//   Actor  own Encoder (convs tied to the critic's) + trunk MLP
//          50 -> 1024 -> 1024 -> 2 (hidden_dim 1024, hidden_depth 2), tanh-
//          squashed Gaussian, log_std bounds [-10, 2]             (drq.py, config.py)
//   Critic Encoder + double Q: Q1, Q2 each (50 + 1) -> 1024 -> 1024 -> 1
//   critic_target: copy of the critic, Polyak critic_tau 0.01 every
//          critic_target_update_frequency = 2 steps
//   alpha  init_temperature 0.1, target entropy -|A| = -1
//   optim  Adam lr 1e-3 for actor, critic and log_alpha
//   update batch_size 128; discount 0.99; actor and alpha updated every
//          actor_update_frequency = 2 steps with the encoder detached
//   augmentation: ReplicationPad2d(image_pad = 4) then a random 84 x 84 crop
//          per sample (random shift), applied independently to obs, next_obs
//          and a second augmented copy of each (replay_buffer.py); the Q target
//          is averaged over the two next_obs views and the critic loss summed
//          over the two obs views (DrQ's K = M = 2)
//   init   orthogonal weights (conv gain sqrt(2)), zero biases (utils.weight_init)
//
// Parameter names follow drq.py: actor.encoder.convs.N.*, actor.encoder.head.{0,1}.*,
// actor.trunk.{0,2,4}.*, critic.encoder.*, critic.Q1/Q2.{0,2,4}.*,
// critic_target.*, log_alpha. actor.encoder.convs.* are the same tensors as
// critic.encoder.convs.* (tie_weights), so they appear under both names.
#pragma once

#include <memory>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddDrqModels(std::vector<ModelInfo>& out);

// replay = false: the parity hook (OffPolicySettings::replay), a train step
// that is one update on the batch_* inputs.
std::unique_ptr<Workload> MakeDrqWorkload(const WorkloadOptions& opt, bool replay);

}  // namespace torchgauge::models
