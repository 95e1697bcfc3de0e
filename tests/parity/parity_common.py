"""Shared driver for parity reference scripts (test-only).

A family script defines build(model_id) -> (module, inputs, forward, loss_fn,
make_optimizer) and calls main(build). The driver seeds, records the eval
output, then one training step from the same weights, and saves everything
with torch.save as plain dicts that torch::pickle_load reads in C++.

With --count-flops it also counts, with PyTorch's own FlopCounterMode, the
FLOPs of the eval forward (no grad) and of the train step's forward and
backward (flops_eval, flops_train, and per operator flops_eval_by_op,
flops_train_by_op), for tests/parity/flops_parity_test.cc, corrected for the
counter's known gaps (count_flops).
"""
import argparse

import torch
from torch import nn
from torch.utils import flop_counter

TRAIN_SEED = 1234


def hf_adam(model):
    # TorchBench's Hugging Face models: optim.Adam(model.parameters(), lr=0.001).
    return torch.optim.Adam(model.parameters(), lr=0.001)


def hf_token_lm(model, vocab_size, batch, seq):
    """The spec of a Hugging Face model fed random token ids and scored
    against random labels (masked or causal LM): its logits and its loss."""
    inputs = {
        "input_ids": torch.randint(0, vocab_size, (batch, seq)),
        "labels": torch.randint(0, vocab_size, (batch, seq)),
    }
    return {
        "module": model,
        "inputs": inputs,
        "forward": lambda m, i: m(input_ids=i["input_ids"]).logits,
        "loss": lambda m, i: m(input_ids=i["input_ids"], labels=i["labels"]).loss,
        "optimizer": hf_adam,
    }


def save_meta_count(modules_of, model_id, out):
    """What parity::MetaParameterCount reads for <model_id>.meta: the parameter
    count of modules_of(model_id), the published configuration built on the
    meta device, as an int64 tensor (pickle writes a Python int over 2^31 in
    5 bytes, which LibTorch's unpickler does not read)."""
    with torch.device("meta"):
        modules = modules_of(model_id)
    count = sum(p.numel() for m in modules for p in m.parameters())
    torch.save({"param_count": torch.tensor(count, dtype=torch.int64)}, out)


def main(build, meta=None):
    """build's parity file for --model <id>; with meta, save_meta_count(meta)
    for --model <id>.meta."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--count-flops", action="store_true")
    args = parser.parse_args()
    if meta is not None and args.model.endswith(".meta"):
        save_meta_count(meta, args.model[: -len(".meta")], args.out)
        return

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
        # More than the eval output, from the same weights (a generated
        # sequence, say): spec["extra"](model, inputs) -> dict of fields.
        extra = spec["extra"](model, inputs) if spec.get("extra") else {}

    model.train()
    torch.manual_seed(TRAIN_SEED)
    loss = loss_fn(model, inputs)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    updated = {k: v.detach().clone() for k, v in model.named_parameters()}

    # count_tied_by_name: a parameter shared by two modules counts under each
    # name, as a C++ module that registers it twice counts it (drq's
    # convolutions); by default it counts once.
    tied_by_name = spec.get("count_tied_by_name", False)
    saved = {
        "params": params,
        "param_count": sum(p.numel() for _, p in model.named_parameters(remove_duplicate=not tied_by_name)),
        "inputs": {k: v.detach().clone() for k, v in inputs.items()},
        "output": output,
        "loss": loss.detach().clone(),
        "updated": updated,
    }
    saved.update(extra)
    if spec.get("save_grads"):
        # The train step's gradients, for models whose update alone says
        # little (a tiny scheduled learning rate, say).
        saved["grads"] = {k: v.grad.detach().clone() for k, v in model.named_parameters() if v.grad is not None}
    if args.count_flops:
        saved.update(count_flops(model, inputs, forward, loss_fn))
    torch.save(saved, args.out)


def conv_backward_groups_aware(grad_out, x, w, bias, stride, padding, dilation, transposed, output_padding, groups,
                               output_mask, out_shape=None, **kwargs):
    """FlopCounterMode's conv_backward_flop with the weight gradient divided
    by `groups`. Torch's formula counts the weight gradient as a convolution
    of every input channel with every output channel; with groups g each
    output channel sees only C_in / g of them, so a grouped convolution's
    weight gradient is counted g times too high (a depthwise one C times).
    The collector counts it groups-aware (collector/platform/flop_formulas.cc),
    so that each gradient of a convolution costs one forward, as with g = 1;
    the reference is corrected the same way here."""
    # The registered formula is wrapped to take tensors; its raw form takes shapes.
    raw = getattr(flop_counter.conv_backward_flop, "__wrapped__", flop_counter.conv_backward_flop)

    def term(mask):
        return raw(grad_out, x, w, bias, stride, padding, dilation, transposed, output_padding, groups, mask, out_shape)
    grad_input = term([output_mask[0], False, False])
    grad_weight = term([False, output_mask[1], False])
    return grad_input + grad_weight // groups


class LstmFlops:
    """The matrix products of every nn.LSTM the model runs, from
    the module's own weights and its input, counted by forward hooks:
    per time step and batch row, each layer and direction multiplies its
    input by weight_ih and its hidden state by weight_hh, 2 FLOPs per
    multiply-add, so 2 x rows x the weights' element count. FlopCounterMode
    counts none of it where ATen runs oneDNN's recurrent kernel
    (aten::mkldnn_rnn_layer, the CPU LSTM), which the collector counts; the
    backward is twice the forward (gradients of the inputs and of the
    weights). Counted from the modules, not from the operators, so that the
    collector's operator-level formula is checked against the architecture.
    Added only where oneDNN's kernel ran (`ran`, set through the counter's
    mapping): elsewhere ATen's LSTM runs matrix products that the counter
    counts itself."""

    def __init__(self, model):
        self.total = 0
        self.handles = [m.register_forward_hook(self.hook) for m in model.modules()
                        if isinstance(m, nn.LSTM) and not m.proj_size]
        self.ran = False

    def seen(self, *args, **kwargs):
        """The counter's mapping for oneDNN's recurrent kernel: notes that it ran, counts 0 there."""
        self.ran = True
        return 0

    def hook(self, module, args, output):
        x = args[0]
        if isinstance(x, nn.utils.rnn.PackedSequence):
            rows = x.data.shape[0]
        else:
            rows = x.numel() // x.shape[-1]
        weights = sum(p.numel() for name, p in module.named_parameters() if name.startswith("weight_"))
        self.total += 2 * rows * weights

    def remove(self):
        for h in self.handles:
            h.remove()


def count_flops(model, inputs, forward, loss_fn):
    """FlopCounterMode over the eval forward and over the train step's
    forward and backward, corrected for its known gaps so that it counts
    what the collector counts: the CPU flash attention kernel, which the
    counter's table leaves out, is mapped to the counter's own attention
    formulas; convolution backward's weight gradient is divided by the
    convolution's groups, which the counter ignores
    (conv_backward_groups_aware); the recurrent layers' products, which it
    does not count on CPU, are added from the modules (LstmFlops)."""
    aten = torch.ops.aten
    # custom_mapping passes shapes (the counter's shape_wrapper).
    mapping = {
        aten._scaled_dot_product_flash_attention_for_cpu: lambda q, k, v, *args, **kwargs: flop_counter.sdpa_flop_count(
            q, k, v
        ),
        aten._scaled_dot_product_flash_attention_for_cpu_backward: (
            lambda grad_out, q, k, v, *args, **kwargs: flop_counter.sdpa_backward_flop_count(grad_out, q, k, v)
        ),
        aten.convolution_backward: conv_backward_groups_aware,
    }

    def by_op(counter):
        return {str(op): int(n) for op, n in counter.get_flop_counts().get("Global", {}).items()}

    rnn = LstmFlops(model)
    mapping[aten.mkldnn_rnn_layer] = rnn.seen
    mapping[aten.mkldnn_rnn_layer_backward] = rnn.seen
    model.eval()
    with torch.no_grad(), flop_counter.FlopCounterMode(display=False, custom_mapping=mapping) as ev:
        forward(model, inputs)
    rnn_eval, rnn.total = (rnn.total if rnn.ran else 0), 0
    rnn.ran = False
    model.train()
    model.zero_grad()
    torch.manual_seed(TRAIN_SEED)
    with flop_counter.FlopCounterMode(display=False, custom_mapping=mapping) as tr:
        loss_fn(model, inputs).backward()
    rnn_train = 3 * rnn.total if rnn.ran else 0
    rnn.remove()
    ev_by_op, tr_by_op = by_op(ev), by_op(tr)
    if rnn_eval:
        ev_by_op["recurrent layers (modules)"] = rnn_eval
    if rnn_train:
        tr_by_op["recurrent layers (modules)"] = rnn_train
    return {
        "flops_eval": float(ev.get_total_flops() + rnn_eval),
        "flops_train": float(tr.get_total_flops() + rnn_train),
        "flops_eval_by_op": {k: float(v) for k, v in ev_by_op.items()},
        "flops_train_by_op": {k: float(v) for k, v in tr_by_op.items()},
    }
