"""Plain-torch reference for dlrm (models/recommendation/dlrm.cc): DLRM_Net of
facebookresearch/dlrm's dlrm_s_pytorch.py as TorchBench configures it, with
the module structure of that source so that the state-dict names are its own:

  emb_l   8 EmbeddingBag tables (mode "sum", sparse gradients), dimension 64;
  bot_l   the bottom MLP 512-512-64, a ReLU after every Linear
          (sigmoid_bot = -1);
  top_l   the top MLP over the dot interaction (the strictly lower triangle
          of the 9 x 9 Gram matrix of the dense vector and the 8 pooled
          embeddings, then the dense vector), 100-1024-1024-1024-1, a ReLU
          after every Linear (sigmoid_top = -1);
  loss    MSE against a target in [0, 1); SGD(lr 0.01) over every parameter.

Tables have the smoke suite's 10,000 rows each (TorchBench's random data has
1,000,000 ids per feature; the architecture is the same), 100 indices per
lookup, as the C++ workload builds them with WorkloadOptions::smoke. The
driver is parity_common.main.
"""
import math

import torch
from torch import nn

from parity_common import main

TABLES, ROWS, DIM, DENSE_IN, LOOKUPS, BATCH = 8, 10_000, 64, 512, 100, 8
BOTTOM = [DENSE_IN, 512, DIM]
TOP = [(TABLES + 1) * TABLES // 2 + DIM, 1024, 1024, 1024, 1]


def create_mlp(sizes):
    layers = []
    for n, m in zip(sizes[:-1], sizes[1:]):
        linear = nn.Linear(n, m, bias=True)
        nn.init.normal_(linear.weight, 0.0, math.sqrt(2 / (m + n)))
        nn.init.normal_(linear.bias, 0.0, math.sqrt(1 / m))
        layers += [linear, nn.ReLU()]
    return nn.Sequential(*layers)


class DlrmNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb_l = nn.ModuleList()
        for _ in range(TABLES):
            bag = nn.EmbeddingBag(ROWS, DIM, mode="sum", sparse=True)
            bound = math.sqrt(1 / ROWS)
            nn.init.uniform_(bag.weight, -bound, bound)
            self.emb_l.append(bag)
        self.bot_l = create_mlp(BOTTOM)
        self.top_l = create_mlp(TOP)

    def interact_features(self, x, ly):
        batch, d = x.shape
        t = torch.cat([x] + ly, dim=1).view((batch, -1, d))
        z = torch.bmm(t, torch.transpose(t, 1, 2))
        _, ni, nj = z.shape
        li = torch.tensor([i for i in range(ni) for j in range(i)])
        lj = torch.tensor([j for i in range(nj) for j in range(i)])
        return torch.cat([x, z[:, li, lj]], dim=1)

    def forward(self, dense_x, offsets, indices):
        x = self.bot_l(dense_x)
        ly = [self.emb_l[k](indices[k], offsets[k]) for k in range(TABLES)]
        return self.top_l(self.interact_features(x, ly))


def build(model_id):
    if model_id != "dlrm":
        raise SystemExit(f"unknown model {model_id}")
    inputs = {
        "dense_x": torch.rand(BATCH, DENSE_IN),
        "lS_o": (torch.arange(BATCH) * LOOKUPS).repeat(TABLES, 1),
        "lS_i": torch.randint(0, ROWS, (TABLES, BATCH * LOOKUPS)),
        "target": torch.rand(BATCH, 1),
    }

    def forward(m, i):
        return m(i["dense_x"], i["lS_o"], i["lS_i"])

    return {
        "module": DlrmNet(),
        "inputs": inputs,
        "forward": forward,
        "loss": lambda m, i: nn.functional.mse_loss(forward(m, i), i["target"]),
        "optimizer": lambda m: torch.optim.SGD(m.parameters(), lr=0.01),
    }


if __name__ == "__main__":
    main(build)
