"""Plain-torch reference for nvidia_deeprecommender
(models/recommendation/deeprecommender.cc): the AutoEncoder of NVIDIA's
DeepRecommender (reco_encoder/model/model.py, Kuchaiev & Ginsburg 2017) as
TorchBench's nvtrain.py builds it, with that source's parameter names:

  encode_w/encode_b  items-512-512-1024, SELU after every layer;
  dropout            0.8 on the code layer only (dp_drop_prob);
  decode_w/decode_b  an unconstrained decoder (is_constrained=False) mirroring
                     the encoder, SELU after every layer including the last
                     (last_layer_activations);
  loss               MSEloss over the rated items (targets != 0), summed and
                     divided by the number of ratings; SGD(lr 0.005,
                     momentum 0.9), gradients cleared first.

The catalogue is the smoke suite's 8,192 items (Netflix has 197,951; the
hidden layers are the same), 2 % of them rated, as the C++ workload builds it
with WorkloadOptions::smoke. The driver is parity_common.main.
"""
import torch
from torch import nn

from parity_common import main

ITEMS, HIDDEN, DROP, DENSITY, BATCH = 8192, [512, 512, 1024], 0.8, 0.02, 4


class AutoEncoder(nn.Module):
    def __init__(self, layer_sizes):
        super().__init__()
        self.encode_w = nn.ParameterList(
            [nn.Parameter(torch.rand(layer_sizes[i + 1], layer_sizes[i])) for i in range(len(layer_sizes) - 1)]
        )
        for w in self.encode_w:
            nn.init.xavier_uniform_(w)
        self.encode_b = nn.ParameterList(
            [nn.Parameter(torch.zeros(layer_sizes[i + 1])) for i in range(len(layer_sizes) - 1)]
        )
        rev = list(reversed(layer_sizes))
        self.decode_w = nn.ParameterList(
            [nn.Parameter(torch.rand(rev[i + 1], rev[i])) for i in range(len(rev) - 1)]
        )
        for w in self.decode_w:
            nn.init.xavier_uniform_(w)
        self.decode_b = nn.ParameterList([nn.Parameter(torch.zeros(rev[i + 1])) for i in range(len(rev) - 1)])
        self.drop = nn.Dropout(DROP)

    def forward(self, x):
        for w, b in zip(self.encode_w, self.encode_b):
            x = nn.functional.selu(nn.functional.linear(x, w, b))
        x = self.drop(x)
        for w, b in zip(self.decode_w, self.decode_b):
            x = nn.functional.selu(nn.functional.linear(x, w, b))
        return x


def mse_loss(outputs, targets):
    mask = (targets != 0).float()
    return nn.functional.mse_loss(outputs * mask, targets, reduction="sum") / mask.sum()


def build(model_id):
    if model_id != "nvidia_deeprecommender":
        raise SystemExit(f"unknown model {model_id}")
    ratings = torch.randint(1, 6, (BATCH, ITEMS)).float() * (torch.rand(BATCH, ITEMS) < DENSITY)
    return {
        "module": AutoEncoder([ITEMS] + HIDDEN),
        "inputs": {"ratings": ratings},
        "forward": lambda m, i: m(i["ratings"]),
        "loss": lambda m, i: mse_loss(m(i["ratings"]), i["ratings"]),
        "optimizer": lambda m: torch.optim.SGD(m.parameters(), lr=0.005, momentum=0.9),
        "save_grads": True,
    }


if __name__ == "__main__":
    main(build)
