// dqn: the deep Q-network of Mnih et al. 2015, "Human-level control through
// deep reinforcement learning" (Nature 518:529), learning from 84x84x4
// pixel frames. This model is NOT one of the TorchBench paper's 84 models
// (its paper_name is empty); it joins the RL domain as a value-based,
// discrete-action learner beside the actor-critic ones.
//
// Network (the paper's Methods, "Model architecture"): input 4 x 84 x 84
// (the last four preprocessed frames, scaled by 1/255); Conv2d(4, 32, 8,
// stride 4) ReLU, Conv2d(32, 64, 4, stride 2) ReLU, Conv2d(64, 64, 3,
// stride 1) ReLU, Linear(64 * 7 * 7, 512) ReLU, Linear(512, |A|): one
// Q-value per action. State-dict names: online.features.{0,2,4}.*,
// online.head.{0,2}.*, and the same under target.* for the target network
// (a frozen copy, synchronised every C = 10000 updates). PyTorch's default
// initialisation.
// Training (Methods, "Training details" and Extended Data Table 1):
// minibatch 32 sampled uniformly from the replay memory, discount 0.99,
// target y = r + 0.99 * not_done * max_a' Q_target(s', a'), the error
// clipped to [-1, 1] (= the Huber loss, smooth_l1 with beta 1, mean over
// the minibatch), RMSProp with lr 0.00025, squared-gradient momentum 0.95
// and min squared gradient 0.01, one update every 4 actions, epsilon-greedy
// acting (final exploration 0.1 in train, 0.05 in evaluation).
// One train Step(): 4 actions (each a Q forward on the device and one
// environment step on the CPU, stored in the host replay buffer), then one
// update on a sampled minibatch. One eval Step(): Q-values for a batch of
// environments, epsilon-greedy actions on the host, each environment steps.
//
// Environment (the paper's Atari emulator is not available to us):
// dm_control's cartpole swing-up of models/rl/rl_env.h, rendered 84x84 RGB,
// converted to 8-bit luminance (ITU-R BT.601 weights, as DQN's preprocessing
// of Atari frames) and stacked 4 deep; the environment step is
// CartpoleSwingupEnv's action repeat of 4 (the paper's frame skip k = 4);
// three discrete actions push the cart with force -1, 0 or +1 (normalised).
// Episodes are truncated after 250 steps.
//
// Deviations:
//  - RMSProp is PyTorch's centered RMSprop (alpha 0.95, eps 0.01): it adds
//    eps outside the square root of (E[g^2] - E[g]^2), where the paper's
//    variant adds the 0.01 inside.
//  - Exploration runs at the annealed epsilon (0.1), the steady state after
//    the paper's first million frames; the Q forward runs every action, so
//    each step synchronises the device with the host as a greedy step does.
//  - Replay memory holds 10000 transitions (the paper 1M, 28 GB of frames at
//    84x84x4 uint8); sampling cost does not depend on capacity. The replay
//    start (50000 random transitions) is cut to one minibatch of random
//    transitions stored before the first update (setup, not timed).
#pragma once

#include <memory>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddDqnModels(std::vector<ModelInfo>& out);

// With replay = false, TrainStep() skips acting and sampling and runs the
// update on the minibatch in inputs() (batch_obs, batch_action,
// batch_reward, batch_next_obs, batch_not_done): the parity test's hook.
std::unique_ptr<Workload> MakeDqnWorkload(const WorkloadOptions& opt, bool replay);

}  // namespace torchgauge::models
