"""Reference for lennard_jones: TorchBench's model rebuilt with PyPI torch.

The network is a plain torch.nn.Sequential and the forces come from
torch.func.vmap(torch.func.jacrev(model)), as in
torchbenchmark/models/lennard_jones/__init__.py (sigma 0.5, epsilon 4.0,
r = linspace(0.5, 2 sigma), loss mse(E) + 0.01 mse(F) / 3, Adam lr 1e-3).
The output compared is [energies | forces] of shape (batch, 4).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import jacrev, vmap

from parity_common import main

SIGMA = 0.5
EPSILON = 4.0
BATCH = 64


def lj_energy(r):
    return EPSILON * ((SIGMA / r) ** 12 - (SIGMA / r) ** 6)


def lj_force(r):
    return -EPSILON * ((-12 * SIGMA**12 / r**13) + (6 * SIGMA**6 / r**7))


def predict(model, drs):
    norms = torch.linalg.norm(drs, dim=1).reshape(-1, 1)
    energies = model(norms)
    derivs = vmap(jacrev(model))(norms).squeeze(-1)
    return energies, -derivs * drs / norms


def build(model_id):
    assert model_id == "lennard_jones", model_id
    model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                          nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
    r = torch.linspace(0.5, 2 * SIGMA, steps=BATCH)
    drs = torch.outer(r, torch.tensor([1.0, 0, 0]))
    norms = torch.linalg.norm(drs, dim=1).reshape(-1, 1)
    inputs = {
        "drs": drs,
        "training_energies": torch.stack(list(map(lj_energy, norms))).reshape(-1, 1),
        "training_forces": torch.stack([f * dr for f, dr in zip(map(lj_force, norms), drs)]),
    }

    def loss(m, i):
        e, f = predict(m, i["drs"])
        return F.mse_loss(i["training_energies"], e) + 0.01 * F.mse_loss(i["training_forces"], f) / 3

    return {
        "module": model,
        "inputs": inputs,
        "forward": lambda m, i: torch.cat(predict(m, i["drs"]), dim=1),
        "loss": loss,
        "optimizer": lambda m: torch.optim.Adam(m.parameters(), lr=1e-3),
    }


if __name__ == "__main__":
    main(build)
