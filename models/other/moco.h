// moco: TorchBench's torchbenchmark/models/moco, Momentum Contrast (He et al.
// 2020, "Momentum Contrast for Unsupervised Visual Representation
// Learning"; the facebookresearch/moco code, moco/builder.py), laid out like
// its MoCo module so that state-dict keys ("encoder_q.layer1.0.conv1.weight",
// "encoder_k.fc.bias", "queue", "queue_ptr") match one for one:
//   * a query encoder and a momentum key encoder, each a torchvision
//     resnet50 with num_classes = dim (a 2048 -> 128 fc head; TorchBench sets
//     mlp = False, so no MLP head), the key encoder a copy of the query
//     encoder that takes no gradient and follows it by
//     k = m * k + (1 - m) * q before every key forward (m = 0.999);
//   * a queue of K normalised keys (a [dim, K] buffer, randn then
//     normalised per column) and its pointer; each forward's keys replace the
//     oldest K/B-th of it;
//   * InfoNCE: logits [l_pos | l_neg] = [q.k, q.queue] / T (einsum), label 0,
//     cross-entropy.
// TorchBench's settings (__init__.py): dim 128, K 32000, m 0.999, T 0.07,
// mlp False, SGD(lr 0.03, momentum 0.9, weight_decay 1e-4); its
// adjust_learning_rate (stepwise schedule [120, 160], epoch 0) keeps lr 0.03.
//
// TorchBench runs MoCo under DistributedDataParallel in a process group of
// one (world_size=1, rank 0). With one process, DDP's gradient all-reduce and
// buffer broadcast change nothing, concat_all_gather is a copy of the tensor
// (all_gather into one buffer, then cat), the broadcast of the shuffle index
// is a no-op and the shuffle-BN reduces to a local permutation of the key
// batch: randperm, argsort to undo it, indexing before and after the key
// encoder. That world-size-1 computation is what this file implements (no
// process group, no DDP wrapper).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "models/shared/resnet_network.h"
#include "models/workload.h"

namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace torchgauge::models {

struct MoCoOptions {
  int64_t dim = 128;  // moco_dim: feature dimension, the encoders' num_classes
  int64_t K = 32000;  // moco_k: queue size (builder.py's default is 65536)
  double m = 0.999;   // moco_m: key-encoder momentum
  double T = 0.07;    // moco_t: softmax temperature
};

struct MoCoImpl : torch::nn::Module {
  explicit MoCoImpl(const MoCoOptions& options = {});
  // Logits [N, 1 + K] (already divided by T) and labels (zeros): builder.py's
  // forward, the momentum update and the enqueue included.
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& im_q, const torch::Tensor& im_k);

  void MomentumUpdateKeyEncoder();
  void DequeueAndEnqueue(const torch::Tensor& keys);
  // Shuffle-BN with one process: the shuffled batch and the index that
  // restores its order.
  std::pair<torch::Tensor, torch::Tensor> BatchShuffle(const torch::Tensor& x);
  torch::Tensor BatchUnshuffle(const torch::Tensor& x, const torch::Tensor& idx_unshuffle);

  MoCoOptions options;
  ResNet encoder_q{nullptr}, encoder_k{nullptr};
  torch::Tensor queue, queue_ptr;
};
TORCH_MODULE(MoCo);

// TorchBench's train(): for each of its two (im_q, im_k) batch pairs, a MoCo
// forward, cross-entropy against the labels, zero_grad, backward and an SGD
// step. Returns the last pair's (detached) loss; `logits_out` and
// `losses_out`, when given, receive each pair's logits and loss (detached).
torch::Tensor MoCoTrainIteration(MoCoImpl& net, torch::optim::Optimizer& optimizer,
                                 const std::vector<std::pair<torch::Tensor, torch::Tensor>>& pairs,
                                 std::vector<torch::Tensor>* logits_out = nullptr,
                                 std::vector<torch::Tensor>* losses_out = nullptr);

// Registers moco.
void AddMocoModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
