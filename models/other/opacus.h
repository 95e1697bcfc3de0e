// opacus_cifar10: TorchBench's differentially private training workload
// (torchbenchmark/models/opacus_cifar10/__init__.py; task OTHER.OTHER_TASKS,
// the paper's Table 1 lists it under Other): DP-SGD (Abadi et al. 2016,
// "Deep Learning with Differential Privacy") as Opacus implements it, on a
// CIFAR-10-shaped batch.
//
// Network: torchvision.models.resnet18(num_classes=10), then opacus'
// ModuleValidator.fix, which replaces every BatchNorm2d by
// GroupNorm(min(32, C), C) (opacus/validators/batch_norm.py,
// _batchnorm_to_groupnorm), keeping the module names (bn1, downsample.1, ...).
// 11,181,642 parameters; GroupNorm has no buffers.
//
// Workload (TorchBench, opacus >= 1.1.2, < 1.5.4 per its requirements.txt:
// 1.5.3): PrivacyEngine().make_private(noise_multiplier=1.0,
// max_grad_norm=1.0, poisson_sampling=False) over Adam(lr=1e-3) and a
// one-batch DataLoader, so expected_batch_size = batch size. One train step
// is model(images), CrossEntropyLoss (mean), loss.backward(),
// optimizer.step(), optimizer.zero_grad(), where
//  - GradSampleModule (grad_sample_mode "hooks") saves each Conv2d /
//    GroupNorm / Linear input in a forward hook and, in the backward hook on
//    the module output, computes per-sample gradients from that activation
//    and the output gradient scaled by the batch size (loss_reduction
//    "mean"): Conv2d through unfold2d (F.pad + as_strided + reshape, opacus
//    1.5.3's im2col) and einsum("noq,npq->nop") with the groups diagonal
//    einsum("ngrg...->ngr..."); GroupNorm as group_norm(x) without affine
//    times the output gradient, summed by einsum("ni...->ni"); Linear as
//    einsum("n...i,n...j->nij"), bias einsum("n...k->nk"); each stored into a
//    zero-initialised (N, *param) buffer (create_or_accumulate_grad_sample);
//  - DPOptimizer.pre_step: flat clipping, per-sample norm over all
//    parameters (per-parameter norms stacked, then their norm), clip factor
//    (max_grad_norm / (norm + 1e-6)).clamp(max=1), einsum("i,i...") into the
//    summed gradient; add_noise: torch.normal(0, noise_multiplier *
//    max_grad_norm, shape) from the global generator, parameter by parameter
//    in model.parameters() order; scale_grad: p.grad /= expected_batch_size;
//    then Adam's step.
// The ordinary autograd weight gradients are computed too (opacus leaves
// requires_grad on) and then overwritten by the noisy ones, as in opacus.
// Eval (TorchBench's eval()): model.eval(), logits of the batch; the hooks
// capture nothing outside training with grad enabled.
//
// Deviations: opacus' backward hooks are module full-backward hooks (an
// identity autograd node around each module's inputs and outputs); here the
// same computation hangs on a tensor hook registered on the module output,
// which autograd calls with the same gradient. TorchBench's DataLoader and
// privacy accountant (bookkeeping outside the timed step) are left out.
#pragma once

#include <torch/types.h>

#include <map>
#include <string>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddOpacusModels(std::vector<ModelInfo>& out);

// What the last DP train step computed, for parity tests.
struct DpStepRecord {
  torch::Tensor per_sample_norms;                       // (N): the flat per-sample gradient norms
  std::map<std::string, torch::Tensor> grad_samples;    // per-sample gradients by parameter name
  std::map<std::string, torch::Tensor> summed_clipped;  // clipped sum over the batch, before noise
};

// Makes an opacus_cifar10 train workload keep its DpStepRecord (it holds the
// per-sample gradients, so only tests ask for it) and returns it; each
// TrainStep() refills it.
const DpStepRecord& KeepDpStepRecord(Workload& workload);

}  // namespace torchgauge::models
