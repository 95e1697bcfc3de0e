"""Reference for moco (models/other/moco.cc): a Python re-statement, written for
this test, of TorchBench's torchbenchmark/models/moco (MoCo from
facebookresearch/moco moco/builder.py over torchvision 0.26 resnet50
encoders with num_classes = dim, mlp False) at world size 1, where
concat_all_gather is a copy and the shuffle-BN a local randperm / argsort;
and of one TorchBench train() iteration: for each of two (im_q, im_k) pairs a
forward, cross-entropy against label 0, zero_grad, backward and
SGD(lr 0.03, momentum 0.9, weight_decay 1e-4) over all parameters.

Test-only sizes: images 2 x 3 x 64 x 64 and a queue of K = 16 keys
(TorchBench: 32 x 3 x 224 x 224 and K = 32000); dim 128, m 0.999, T 0.07 as
in TorchBench. Nothing downloaded.

The reference runs in float64 (the C++ test too): at random initialisation
the encoders map every image to nearly the same feature, so the InfoNCE
gradient is a difference of nearly equal terms, amplified by train-mode
BatchNorm over two images. In float32 the BatchNorm biases' gradients are
then mostly rounding noise (this script's own float32 and float64 runs
disagree by up to 100% on them); in float64 the noise is far below the
1e-4 tolerance, so the check sees the computation, not the rounding.

Saved (parity_common.py's layout): params, the MoCo state dict before the
iteration (both encoders, queue, queue_ptr); inputs im_q0, im_k0, im_q1,
im_k1; output, the two forwards' logits stacked [2, N, 1 + K]; loss, the two
losses [2]; updated, every parameter of both encoders after the iteration
(the key encoder's moved by the momentum update only) plus queue and
queue_ptr.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

TRAIN_SEED = 1234
BATCH, SIDE, DIM, K, M, T = 2, 64, 128, 16, 0.999, 0.07


class MoCo(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder_q = torchvision.models.resnet50(num_classes=DIM)
        self.encoder_k = torchvision.models.resnet50(num_classes=DIM)
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.data.copy_(pq.data)
            pk.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(DIM, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def momentum_update(self):
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.mul_(M).add_(pq.mul(1.0 - M))

    @torch.no_grad()
    def enqueue(self, keys):
        n = keys.shape[0]
        ptr = int(self.queue_ptr)
        assert K % n == 0
        self.queue[:, ptr:ptr + n] = keys.T
        self.queue_ptr[0] = (ptr + n) % K

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self.momentum_update()
            # one process: the gathered batch is the local batch, rank 0 takes
            # the whole permutation
            idx_shuffle = torch.randperm(im_k.shape[0])
            idx_unshuffle = torch.argsort(idx_shuffle)
            k = F.normalize(self.encoder_k(im_k[idx_shuffle]), dim=1)
            k = k[idx_unshuffle]
        l_pos = (q * k).sum(dim=1, keepdim=True)  # an independent spelling of einsum("nc,nc->n")
        l_neg = q @ self.queue.clone().detach()
        logits = torch.cat([l_pos, l_neg], dim=1) / T
        labels = torch.zeros(logits.shape[0], dtype=torch.long)
        self.enqueue(k)
        return logits, labels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.model != "moco":
        raise SystemExit(f"unknown model {args.model}")
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True, warn_only=True)
    model = MoCo().double()
    names = ("im_q0", "im_k0", "im_q1", "im_k1")
    inputs = {name: torch.randn(BATCH, 3, SIDE, SIDE, dtype=torch.float64) for name in names}
    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    optimizer = torch.optim.SGD(model.parameters(), 0.03, momentum=0.9, weight_decay=1e-4)

    model.train()
    torch.manual_seed(TRAIN_SEED)
    outputs, losses = [], []
    for i in range(2):
        logits, labels = model(inputs[f"im_q{i}"], inputs[f"im_k{i}"])
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        outputs.append(logits.detach().clone())
        losses.append(loss.detach().clone())
    updated = {k: v.detach().clone() for k, v in model.named_parameters()}
    updated["queue"] = model.queue.clone()
    updated["queue_ptr"] = model.queue_ptr.clone()
    torch.save(
        {
            "params": params,
            "param_count": sum(p.numel() for p in model.parameters()),
            "inputs": inputs,
            "output": torch.stack(outputs),
            "loss": torch.stack(losses),
            "updated": updated,
        },
        args.out,
    )


if __name__ == "__main__":
    main()
