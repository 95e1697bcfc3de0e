"""Reference for the timm_* models: timm 1.0.31 itself, built as TorchBench
builds it (timm.create_model(name, pretrained=False)), randomly initialised.

The workload is TorchBench's TimmConfig: cross-entropy on class indices and
timm's create_optimizer(opt="sgd", lr=1e-4, momentum=0.9, weight_decay=1e-4),
i.e. Nesterov SGD with biases, 1-d parameters and no_weight_decay() names
exempt from weight decay. Images are smaller than TorchBench's where global
pooling makes the size an input dimension (it keeps the parity test fast).

timm zero-initialises some scales (each residual block's last BatchNorm
weight in RegNet and ResNeSt, NFNet's skipinit gains), which would leave the
branch before them without gradient in the one compared train step; every
BatchNorm (affine parameters and running statistics) and every skipinit gain
is therefore re-drawn at random before the weights are handed over.

Model ids other than registered ones are test configurations:
  timm_efficientnet_drop_path: efficientnet_b0 with drop_path_rate=0.2 (the
    stochastic-depth masks are drawn after the train seed, as in C++).
  timm_vision_transformer_large: vit_giant_patch14_224 with 2 of its 40
    blocks (same widths and heads). The C++ model names its parameters like
    torchvision's VisionTransformer (as timm_vision_transformer does), so the
    protocol runs on torchvision's class holding timm's weights, after this
    script has asserted that timm's model and torchvision's compute the same
    output and the same train step from those weights.
"""
import copy

import timm
import torch
from torch import nn
from timm.optim import create_optimizer_v2
from torchvision.models.vision_transformer import VisionTransformer

from parity_common import main

# model id -> (timm name, create_model kwargs, image side, batch)
MODELS = {
    "timm_efficientnet": ("efficientnet_b0", {}, 128, 2),
    "timm_efficientnet_drop_path": ("efficientnet_b0", {"drop_path_rate": 0.2}, 128, 4),
    "timm_regnet": ("regnety_120", {}, 64, 2),
    "timm_resnest": ("resnest14d", {}, 96, 2),
    "timm_vovnet": ("vovnet39a", {}, 96, 2),
    "timm_nfnet": ("dm_nfnet_f0", {}, 67, 2),  # odd size: exercises the asymmetric dynamic SAME padding
    "timm_vision_transformer_large": ("vit_giant_patch14_224", {"depth": 2}, 224, 1),
}


def timm_sgd(model):
    return create_optimizer_v2(model, opt="sgd", lr=1e-4, momentum=0.9, weight_decay=1e-4)


def randomise_scales(model):
    with torch.no_grad():
        for name, m in model.named_modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
        for name, p in model.named_parameters():
            if name.endswith("skipinit_gain"):
                p.uniform_(0.5, 1.5)


def timm_vit_to_torchvision(tm):
    """torchvision VisionTransformer with timm's weights (same architecture)."""
    depth = len(tm.blocks)
    dim = tm.embed_dim
    tv = VisionTransformer(image_size=224, patch_size=tm.patch_embed.patch_size[0], num_layers=depth,
                           num_heads=tm.blocks[0].attn.num_heads, hidden_dim=dim,
                           mlp_dim=tm.blocks[0].mlp.fc1.out_features)
    src = tm.state_dict()
    dst = {
        "conv_proj.weight": src["patch_embed.proj.weight"],
        "conv_proj.bias": src["patch_embed.proj.bias"],
        "class_token": src["cls_token"],
        "encoder.pos_embedding": src["pos_embed"],
        "encoder.ln.weight": src["norm.weight"],
        "encoder.ln.bias": src["norm.bias"],
        "heads.head.weight": src["head.weight"],
        "heads.head.bias": src["head.bias"],
    }
    names = {"norm1": "ln_1", "attn.qkv.weight": "self_attention.in_proj_weight",
             "attn.qkv.bias": "self_attention.in_proj_bias", "attn.proj": "self_attention.out_proj",
             "norm2": "ln_2", "mlp.fc1": "mlp.0", "mlp.fc2": "mlp.3"}
    for i in range(depth):
        for k, v in src.items():
            prefix = f"blocks.{i}."
            if not k.startswith(prefix):
                continue
            rest = k[len(prefix):]
            for a, b in names.items():
                if rest.startswith(a):
                    rest = b + rest[len(a):]
                    break
            dst[f"encoder.layers.encoder_layer_{i}.{rest}"] = v
    tv.load_state_dict(dst, strict=True)
    # timm's no_weight_decay() set under torchvision's names, for create_optimizer.
    tv.no_weight_decay = lambda: {"class_token", "encoder.pos_embedding"}
    return tv, {f"blocks.{i}.{a}": f"encoder.layers.encoder_layer_{i}.{b}" for i in range(depth)
                for a, b in names.items()}


def check_vit_equivalence(tm, tv, inputs):
    """Asserts that timm's ViT and its torchvision twin agree on output and one step."""
    tm, tv = copy.deepcopy(tm), copy.deepcopy(tv)
    tv.no_weight_decay = lambda: {"class_token", "encoder.pos_embedding"}
    outs = []
    for m in (tm, tv):
        m.eval()
        with torch.no_grad():
            outs.append(m(inputs["images"]))
        m.train()
        opt = timm_sgd(m)
        loss = nn.functional.cross_entropy(m(inputs["images"]), inputs["target"])
        opt.zero_grad()
        loss.backward()
        opt.step()
        outs.append(loss.detach())
    rel = lambda a, b: ((a - b).abs().max() / b.abs().max().clamp_min(1e-12)).item()
    assert rel(outs[0], outs[2]) < 1e-5, f"timm vs torchvision output: {rel(outs[0], outs[2])}"
    assert rel(outs[1], outs[3]) < 1e-5, f"timm vs torchvision loss: {rel(outs[1], outs[3])}"
    tv_params = dict(tv.named_parameters())
    tv_same, _ = timm_vit_to_torchvision(tm)
    worst = max(rel(tv_params[k], v) for k, v in tv_same.named_parameters())
    assert worst < 1e-5, f"timm vs torchvision updated parameters: {worst}"
    print(f"timm vs torchvision ViT: output, loss and updated parameters agree (worst {worst:.2e})")


def build(model_id):
    name, kwargs, side, batch = MODELS[model_id]
    model = timm.create_model(name, pretrained=False, **kwargs)
    randomise_scales(model)
    inputs = {"images": torch.randn(batch, 3, side, side), "target": torch.randint(0, model.num_classes, (batch,))}
    if model_id == "timm_vision_transformer_large":
        tv, _ = timm_vit_to_torchvision(model)
        check_vit_equivalence(model, tv, inputs)
        model = tv
    return {
        "module": model,
        "inputs": inputs,
        "forward": lambda m, i: m(i["images"]),
        "loss": lambda m, i: nn.functional.cross_entropy(m(i["images"]), i["target"]),
        "optimizer": timm_sgd,
    }


if __name__ == "__main__":
    main(build)
