// maml and maml_omniglot: TorchBench's two MAML workloads (Finn et al. 2017,
// "Model-Agnostic Meta-Learning for Fast Adaptation of Deep Networks") on
// Omniglot-shaped tasks: 5-way classification of 1x28x28 images, a meta-batch
// of tasks, each with a support set (inner-loop adaptation) and a query set
// (the meta-loss). One family: both train a small four-block conv net by
// gradient steps inside the training step; they differ in the network, the
// inner loop and what eval runs.
//
// maml (torchbenchmark/models/maml, from dragen1860/MAML-Pytorch, Learner +
// Meta): the Learner holds its weights in a ParameterList `vars` (conv
// 3x3/s2 x3 and 2x2/s1, each followed by ReLU and functional batch norm whose
// running statistics are requires_grad=False Parameters in `vars_bn`, then a
// linear 64 -> 5; Kaiming-normal weights, zero biases) and runs forward with
// an explicit weight list. Meta (n_way 5, k_spt 1, k_qry 15, update_lr 0.4,
// update_step 5, update_step_test 10, Adam meta_lr 1e-3 created once):
//   train: per task, 5 inner SGD steps on the support set with
//     torch.autograd.grad WITHOUT create_graph (so the meta-gradient is
//     first-order MAML, as in the reference: the brief's "second-order" does
//     not hold for this model), the query loss after each step (the first two
//     under no_grad) and the accuracies; meta-loss = last query loss summed
//     over tasks / task_num; Adam step.
//   eval: Meta in eval mode fine-tunes a copy on task 0 (10 steps) and
//     returns the 11 query accuracies; its batch-norm statistics go to the
//     copy (we clone vars_bn for the step), the weights stay untouched.
// maml_omniglot (torchbenchmark/models/maml_omniglot, from facebookresearch/
// higher's examples/maml-omniglot.py): nn.Sequential(Conv2d(1,64,3), BN(64,
// momentum=1), ReLU, MaxPool2d(2) x3 (64 -> 64), Flatten, Linear(64, 5));
//   train: per task, higher.innerloop_ctx with SGD lr 0.1, 5 differentiable
//     inner steps (second-order: the inner gradients are taken with
//     create_graph=True, as higher's differentiable optimizer does), the query
//     loss's backward accumulates into the weights; then Adam lr 1e-3, which
//     TorchBench creates anew at every train() call (so every step is an
//     Adam first step), and so do we.
//   eval: net.eval()(x_spt[0]), the 5-way logits of task 0's support images.
//
// Deviations: TorchBench's maml_omniglot loads a recorded Omniglot meta-batch
// (batch.pt); we draw seeded synthetic data of the same shapes (support
// n_way*k_spt = 25 images, query n_way*k_qry = 75, as higher's example:
// k_spt 5, k_qry 15), standard-normal images and uniform labels, like
// TorchBench's maml does. Batch size here means the number of tasks in the
// meta-batch (TorchBench declares a nominal, non-customisable batch size for
// both: DEFAULT_TRAIN_BSIZE 5 / 1, ALLOW_CUSTOMIZE_BSIZE = False; the work
// is set by task_num = 32), and eval runs task 0 only.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/parameterlist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// dragen1860's Learner for TorchBench's config (imgc 1, imgsz 28, 5-way).
struct MamlLearnerImpl : torch::nn::Module {
  MamlLearnerImpl();
  // Runs the network with `weights` (the layout of `vars`) and the Learner's
  // own running statistics, updating them when bn_training.
  torch::Tensor forward(const torch::Tensor& x, const std::vector<torch::Tensor>& weights, bool bn_training = true);
  // The same with explicit running statistics (a fine-tuning copy's).
  torch::Tensor forward_with_stats(const torch::Tensor& x, const std::vector<torch::Tensor>& weights,
                                   const std::vector<torch::Tensor>& stats, bool bn_training);
  std::vector<torch::Tensor> weights() const;  // vars, in order

  torch::nn::ParameterList vars{nullptr};
  torch::nn::ParameterList vars_bn{nullptr};
};
TORCH_MODULE(MamlLearner);

// The Meta module: its state dict is net.vars.* and net.vars_bn.*.
struct MamlMetaImpl : torch::nn::Module {
  MamlMetaImpl() : net(register_module("net", MamlLearner())) {}
  MamlLearner net;
};
TORCH_MODULE(MamlMeta);

// higher's maml-omniglot network (names 0.weight ... 13.bias).
torch::nn::Sequential MakeMamlOmniglotNet(int64_t n_way = 5);
// The same network run functionally with `weights` in named_parameters()
// order, using (and updating, in train mode) the module's BN buffers.
torch::Tensor MamlOmniglotFunctional(torch::nn::Sequential& net, const std::vector<torch::Tensor>& weights,
                                     const torch::Tensor& x);

// Seeded Omniglot-shaped meta-batch: x_spt (tasks, n_way*k_spt, 1, 28, 28),
// y_spt, x_qry (tasks, n_way*k_qry, 1, 28, 28), y_qry.
std::map<std::string, torch::Tensor> MakeMetaBatch(int64_t tasks, int64_t n_way, int64_t k_spt, int64_t k_qry,
                                                   torch::Device device);

void AddMamlModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
