"""Reference for opacus_cifar10 (test-only): DP-SGD's step re-stated with torch.func.

Opacus is not installed; the reference per-sample gradients come from an
independent method, torch.func's vmap(grad(...)) over functional_call of
torchvision's resnet18 with GroupNorm(min(32, C), C) norm layers (what opacus'
ModuleValidator.fix makes of resnet18(num_classes=10)), each sample's loss the
cross entropy of that sample alone. The rest is written out here: the flat
per-sample norm sqrt(sum over parameters of |g_i|^2), the clip factor
min(1, C / (norm + 1e-6)), the clipped sum over the batch, Gaussian noise
torch.normal(0, noise_multiplier * C, shape) from the global generator in
model.parameters() order (opacus _generate_noise), division by the batch size
(expected_batch_size) and one Adam(lr=1e-3) step.

Saves what parity_common's scripts save (params, param_count, inputs, output,
loss, updated) plus per_sample_norms, grad_samples (a few layers) and
summed_clipped (every parameter, before the noise).
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.func import functional_call, grad, vmap

TRAIN_SEED = 1234  # parity_common.TRAIN_SEED
NOISE_MULTIPLIER = 1.0
MAX_GRAD_NORM = 1.0
LR = 1e-3
BATCH = 3
# Layers whose per-sample gradients are saved whole (the norms cover all).
SAMPLED = ["conv1.weight", "bn1.weight", "layer2.0.downsample.0.weight", "layer3.1.bn2.bias",
           "layer4.1.conv2.weight", "fc.weight", "fc.bias"]


def build_model():
    return torchvision.models.resnet18(num_classes=10, norm_layer=lambda c: nn.GroupNorm(min(32, c), c))


def per_sample_grads(model, images, target):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def sample_loss(p, x, y):
        out = functional_call(model, p, (x.unsqueeze(0),))
        return F.cross_entropy(out, y.unsqueeze(0))

    return vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, images, target)


def dp_step(model, images, target):
    """The loss of the batch, then one DP-Adam step; returns the step's figures."""
    loss = F.cross_entropy(model(images), target)
    samples = per_sample_grads(model, images, target)
    names = [k for k, _ in model.named_parameters()]
    sq = torch.zeros(images.shape[0], dtype=torch.float64)
    for k in names:
        sq += samples[k].double().flatten(1).pow(2).sum(1)
    norms = sq.sqrt()
    clip = torch.clamp(MAX_GRAD_NORM / (norms + 1e-6), max=1.0)
    summed = {}
    for k in names:
        g = samples[k].double()
        summed[k] = (clip.view(-1, *([1] * (g.dim() - 1))) * g).sum(0).float()
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    for k, p in model.named_parameters():
        noise = torch.normal(0, NOISE_MULTIPLIER * MAX_GRAD_NORM, size=p.shape)
        p.grad = (summed[k] + noise) / images.shape[0]
    optimizer.step()
    return loss, norms.float(), {k: samples[k] for k in SAMPLED}, summed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    assert args.model == "opacus_cifar10", args.model

    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True, warn_only=True)
    model = build_model()
    images = torch.randn(BATCH, 3, 32, 32)
    target = torch.randint(0, 10, (BATCH,))
    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.eval()
    with torch.no_grad():
        output = model(images).clone()
    model.train()
    torch.manual_seed(TRAIN_SEED)
    loss, norms, grad_samples, summed = dp_step(model, images, target)
    torch.save(
        {
            "params": params,
            "param_count": sum(p.numel() for p in model.parameters()),
            "inputs": {"images": images, "target": target},
            "output": output,
            "loss": loss.detach().clone(),
            "updated": {k: v.detach().clone() for k, v in model.named_parameters()},
            "per_sample_norms": norms,
            "grad_samples": {k: v.detach().clone() for k, v in grad_samples.items()},
            "summed_clipped": summed,
        },
        args.out,
    )


if __name__ == "__main__":
    main()
