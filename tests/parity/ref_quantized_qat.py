"""Reference for resnet50_quantized_qat and mobilenet_v2_quantized_qat
(models/vision/classification/quantized_qat.cc), eval only: TorchBench's
torchbenchmark/models/<id> preparation of a randomly initialised torchvision
0.26 resnet50 / mobilenet_v2 (the float models): prepare_qat_fx with
get_default_qat_qconfig("fbgemm") in train mode, then convert_fx straight
away (no calibrating forward), eval mode. Nothing downloaded.

The file has the layout parity_common.py writes, filled for an eval-only
model: params is the float model's state dict before preparation (the C++
side converts the same weights itself), output the converted model's logits
on inputs["images"], param_count the converted model's trainable parameters
(none), loss a zero placeholder (no train step), and updated carries the
converted weights by the C++ buffer names ('.' written '_'):
<name>_weight_int (the qint8 values), <name>_weight_scale (per-channel
scales; zero points are all 0, asserted here) and <name>_bias.

--lively (a test-only weight choice, used for mobilenet_v2): with
TorchBench's initialisation and the never-run observers' scale 1.0,
MobileNetV2's integer activations are all zero after a few blocks (ReLU6
caps them at 6 and the kaiming fan-out weights shrink them below one half),
so its logits are all zero and a forward check would be vacuous. --lively
sets every BatchNorm's statistics and affine parameters to random values
(weight 3 * U(0.5, 1.5), bias N(0, 1), running mean N(0, 0.1), running var
U(0.5, 1.5)) and scales the classifier weight by 20, so that activations
survive to the logits (about half of them non-zero, none saturated). The
conversion and the network are unchanged.
"""
import argparse
import warnings

import torch
import torchvision
from torch.ao.quantization import get_default_qat_qconfig, quantize_fx
from torch.ao.nn.quantized import Conv2d as QConv2d, Linear as QLinear

BATCH = 2
FLOAT_MODELS = {"resnet50_quantized_qat": "resnet50", "mobilenet_v2_quantized_qat": "mobilenet_v2"}


def make_lively(model):
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(1.5, 4.5)
                m.bias.normal_(0, 1)
                m.running_mean.normal_(0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
        model.classifier[1].weight.mul_(20)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--lively", action="store_true")
    args = parser.parse_args()
    if args.model not in FLOAT_MODELS:
        raise SystemExit(f"unknown model {args.model}")
    warnings.filterwarnings("ignore")  # the uncalibrated observers warn, as in TorchBench
    torch.manual_seed(0)
    model = getattr(torchvision.models, FLOAT_MODELS[args.model])()
    if args.lively:
        make_lively(model)
    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    images = torch.randn(BATCH, 3, 224, 224)
    model.train()
    model = quantize_fx.prepare_qat_fx(model, {"": get_default_qat_qconfig("fbgemm")}, (images,))
    model = quantize_fx.convert_fx(model)
    model.eval()
    with torch.no_grad():
        output = model(images).detach().clone()

    converted = {}
    for name, m in model.named_modules():
        if not isinstance(m, (QConv2d, QLinear)):  # ConvReLU2d is a QConv2d
            continue
        w = m.weight()
        assert w.qscheme() == torch.per_channel_affine and bool((w.q_per_channel_zero_points() == 0).all())
        assert m.scale == 1.0 and m.zero_point == 0
        key = name.replace(".", "_")
        converted[key + "_weight_int"] = w.int_repr().clone()
        converted[key + "_weight_scale"] = w.q_per_channel_scales().clone()
        converted[key + "_bias"] = m.bias().detach().clone()
    torch.save(
        {
            "params": params,
            "param_count": sum(p.numel() for p in model.parameters()),
            "inputs": {"images": images},
            "output": output,
            "loss": torch.zeros(()),
            "updated": converted,
        },
        args.out,
    )


if __name__ == "__main__":
    main()
