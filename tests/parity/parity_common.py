"""Shared driver for parity reference scripts (test-only).

A family script defines build(model_id) -> (module, inputs, forward, loss_fn,
make_optimizer) and calls main(build). The driver seeds, records the eval
output, then one training step from the same weights, and saves everything
with torch.save as plain dicts that torch::pickle_load reads in C++.
"""
import argparse

import torch

TRAIN_SEED = 1234


def main(build):
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True, warn_only=True)
    spec = build(args.model)
    model, inputs = spec["module"], spec["inputs"]
    forward = spec["forward"]  # forward(model, inputs) -> tensor compared
    loss_fn = spec["loss"]  # loss_fn(model, inputs) -> scalar
    optimizer = spec["optimizer"](model)

    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.eval()
    with torch.no_grad():
        output = forward(model, inputs).detach().clone()

    model.train()
    torch.manual_seed(TRAIN_SEED)
    loss = loss_fn(model, inputs)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    updated = {k: v.detach().clone() for k, v in model.named_parameters()}

    saved = {
        "params": params,
        "param_count": sum(p.numel() for p in model.parameters()),
        "inputs": {k: v.detach().clone() for k, v in inputs.items()},
        "output": output,
        "loss": loss.detach().clone(),
        "updated": updated,
    }
    if spec.get("save_grads"):
        # The train step's gradients, for models whose update alone says
        # little (a tiny scheduled learning rate, say).
        saved["grads"] = {k: v.grad.detach().clone() for k, v in model.named_parameters() if v.grad is not None}
    torch.save(saved, args.out)
