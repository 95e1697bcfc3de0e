// learning_to_paint: "Learning to Paint With Model-based Deep Reinforcement
// Learning" (Huang, Heng & Zhou, ICCV 2019, arXiv:1903.04411), as TorchBench
// runs it (torchbenchmark/models/LearningToPaint: __init__.py and
// baseline/{env.py, DRL/ddpg.py, DRL/actor.py, DRL/critic.py, DRL/wgan.py,
// DRL/multi.py, Renderer/model.py, utils/util.py}; from
// megvii-research/ICCV2019-LearningToPaint).
//
// Networks (state-dict names as in the reference modules, under the DDPG
// agent's attribute names):
//   actor, actor_target  ResNet(9, 18, 65): ResNet-18 BasicBlocks with
//        BatchNorm, conv1 3x3 stride 2 and every stage stride 2 (128 -> 4),
//        avg_pool 4, Linear(512, 65), sigmoid: 5 strokes x (10 stroke
//        parameters + 3 colours). Input: canvas and target (6 x 128 x 128
//        / 255), the step number / 40 and two CoordConv channels (i / 127,
//        j / 127): 9 channels.
//   critic, critic_target  ResNet_wobn(12, 18, 1): the same ResNet-18 layout
//        without BatchNorm, every conv weight-normalised (weight_g, weight_v,
//        bias) and TReLU activations (relu(x - alpha) + alpha, alpha a
//        learned scalar). Input: canvas before and after the action, target,
//        (step + 1) / 40 and the coordinates: 12 channels.
//   netD, target_netD  the WGAN-GP discriminator of the reward: five
//        weight-normalised 5x5 stride-2 convs (6-16-32-64-128-1) with TReLU,
//        avg_pool 4.
//   decoder  the neural stroke renderer FCN: Linear 10-512-1024-2048-4096,
//        then convs and three PixelShuffle(2) up to 128 x 128, sigmoid.
//        TorchBench builds it randomly initialised and never trains it (its
//        pretrained renderer.pkl is not loaded); so do we.
//   Targets are hard copies at construction that share the source's
//   buffers (hard_update copies the _buffers dicts: the actor target's
//   BatchNorm running statistics are the actor's tensors).
//
// Environment (env.py Paint, on the device): a batch of 128 x 128 canvases
// painted towards target images, 40 steps per episode; one step decodes the
// 5 strokes of each action with the renderer and composites them,
// canvas = (decode(action, canvas / 255) * 255).byte(), and the reward is
// the drop in L2 distance to the target over the initial distance.
// Observation: canvas, target, step number as 7 uint8 channels.
//
// One train Step(): select_action (actor forward in eval mode, the actions
// copied to the host and back, as TorchBench's to_numpy / torch.tensor),
// env.step, the transition stored in the device replay memory (rpm), and
// one update_policy on a batch sampled from it: the WGAN-GP discriminator
// step (Adam lr 3e-4, betas (0.5, 0.999), gradient penalty 10, target
// soft-updated by 0.001), the critic's MSE step towards
// discount * (1 - terminal) * (Q_target + gan_reward) of the target actor's
// next action plus the step's gan_reward (discount 0.95^5, Adam lr 3e-4),
// the actor step maximising Q + gan_reward of its own action (Adam lr
// 1e-3), and the targets soft-updated by tau = 0.001. Returns the critic's
// value loss. One eval Step(): select_action + env.step (one step of the
// Evaluator's loop).
//
// Deviations:
//  - TorchBench's _train(niter=1) resets its episode counter on every call,
//    so it only ever acts and stores (update_policy runs after 40 steps of
//    one call); the paper's train.py runs 10 updates per 40-step episode. We
//    run one update per environment step, so that the train step trains.
//  - TorchBench fills its targets with torch.rand images copied into uint8
//    tensors, which truncates them all to black; we draw a pool of 64 random
//    uint8 images. The replay memory holds the last 4 environment steps of
//    transitions (TorchBench's rpm holds 32000, filled only by the steps it
//    takes) and stores the real next state (TorchBench's observe stores the
//    current state twice).
//  - Eval runs one step of the Evaluator's 5 x 40-step loop per Step().
#pragma once

#include <memory>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddLearningToPaintModels(std::vector<ModelInfo>& out);

// With replay = false, TrainStep() skips acting and sampling and runs
// update_policy on the batch in inputs() (batch_state, batch_action,
// batch_next_state, batch_terminal): the parity test's hook.
std::unique_ptr<Workload> MakeLearningToPaintWorkload(const WorkloadOptions& opt, bool replay);

}  // namespace torchgauge::models
