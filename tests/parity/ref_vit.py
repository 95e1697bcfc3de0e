"""Reference for timm_vision_transformer: torchvision's VisionTransformer.

TorchBench builds timm's vit_small_patch16_224; torchvision's class with the
ViT-S/16 hyperparameters is the same network (timm is not installed here).
"--model vit_b_16" checks the ViT-B/16 configuration with torchvision's own
builder. The optimizer mirrors timm's create_optimizer(opt="sgd"): Nesterov
SGD, lr 1e-4, momentum 0.9, weight decay 1e-4 except for biases, 1-d
parameters, the class token and the position embedding.
"""
import torch
from torch import nn
from torchvision.models import vit_b_16
from torchvision.models.vision_transformer import VisionTransformer

from parity_common import main

BATCH = 2


def timm_sgd(model):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        exempt = p.ndim <= 1 or name.endswith(".bias") or name in ("class_token", "encoder.pos_embedding")
        (no_decay if exempt else decay).append(p)
    groups = [{"params": no_decay, "weight_decay": 0.0}, {"params": decay, "weight_decay": 1e-4}]
    return torch.optim.SGD(groups, lr=1e-4, momentum=0.9, nesterov=True)


def build(model_id):
    if model_id == "timm_vision_transformer":
        model = VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=6, hidden_dim=384,
                                  mlp_dim=1536)
    elif model_id == "vit_b_16":
        model = vit_b_16(weights=None)
    else:
        raise ValueError(model_id)
    # torchvision zero-initialises the head; random values make the output
    # comparison meaningful.
    with torch.no_grad():
        nn.init.normal_(model.heads.head.weight, std=0.02)
        nn.init.normal_(model.heads.head.bias, std=0.02)
    inputs = {"images": torch.randn(BATCH, 3, 224, 224), "target": torch.randint(0, 1000, (BATCH,))}
    return {
        "module": model,
        "inputs": inputs,
        "forward": lambda m, i: m(i["images"]),
        "loss": lambda m, i: nn.functional.cross_entropy(m(i["images"]), i["target"]),
        "optimizer": timm_sgd,
    }


if __name__ == "__main__":
    main(build)
