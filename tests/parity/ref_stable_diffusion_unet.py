"""Reference for Stable Diffusion's conditional UNet
(models/vision/generation/stable_diffusion_unet.cc): diffusers' own
UNet2DConditionModel (diffusers 0.39.0, tools/requirements.txt), randomly
initialised (PyTorch's default init, as diffusers leaves it) with seed 0, fp32,
on the CPU.

stable_diffusion_unet: stabilityai/stable-diffusion-2's unet/config.json
(SD2 below); its parity runs the reduced configuration of the smoke runs
(SD2_SMOKE: block_out_channels (32, 64), CrossAttnDownBlock2D + DownBlock2D,
layers_per_block 1, heads (2, 4), cross_attention_dim 64, 8 norm groups).
stable_diffusion_xl: stabilityai/stable-diffusion-xl-base-1.0's
unet/config.json (SDXL) and its reduced configuration (SDXL_SMOKE), with the
"text_time" added embedding called as TorchBench's canary does (text_embeds
and one time id per sample).

Both models are eval only in TorchBench (train() raises NotImplementedError).
Saved: params (the state dict), param_count, inputs (named as the workload's:
sample 2 x 4 x 32 x 32, timestep [2] (1 and 981: a late and an early step),
encoder_hidden_states 2 x 8 x 64, and for SDXL text_embeds 2 x 64 and time_ids
[2]), output (the eval forward's .sample, no grad), and, beyond the eval
protocol, the backward pass of the same forward: cotangent (randn like the
output) and grads, every parameter's gradient of sum(output * cotangent).

The id <model>.meta builds the published configuration on torch.device("meta")
and saves only its parameter count (an int64 tensor).
"""
import argparse

import torch
from diffusers import UNet2DConditionModel

from parity_common import save_meta_count

SD2 = dict(
    sample_size=96,
    in_channels=4,
    out_channels=4,
    center_input_sample=False,
    flip_sin_to_cos=True,
    freq_shift=0,
    down_block_types=("CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"),
    up_block_types=("UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"),
    block_out_channels=(320, 640, 1280, 1280),
    layers_per_block=2,
    downsample_padding=1,
    mid_block_scale_factor=1,
    act_fn="silu",
    norm_num_groups=32,
    norm_eps=1e-5,
    cross_attention_dim=1024,
    attention_head_dim=(5, 10, 20, 20),
    use_linear_projection=True,
    dual_cross_attention=False,
)
SD2_SMOKE = dict(
    SD2,
    sample_size=32,
    down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
    up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
    block_out_channels=(32, 64),
    layers_per_block=1,
    attention_head_dim=(2, 4),
    cross_attention_dim=64,
    norm_num_groups=8,
)
SDXL = dict(
    SD2,
    sample_size=128,
    down_block_types=("DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
    up_block_types=("CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"),
    block_out_channels=(320, 640, 1280),
    attention_head_dim=(5, 10, 20),
    transformer_layers_per_block=(1, 2, 10),
    cross_attention_dim=2048,
    addition_embed_type="text_time",
    addition_embed_type_num_heads=64,
    addition_time_embed_dim=256,
    projection_class_embeddings_input_dim=2816,
)
SDXL_SMOKE = dict(
    SDXL,
    sample_size=32,
    down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
    up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
    block_out_channels=(32, 64),
    layers_per_block=1,
    attention_head_dim=(2, 4),
    transformer_layers_per_block=(1, 2),
    cross_attention_dim=64,
    norm_num_groups=8,
    addition_time_embed_dim=8,
    projection_class_embeddings_input_dim=72,
)
CONFIGS = {"stable_diffusion_unet": (SD2, SD2_SMOKE), "stable_diffusion_xl": (SDXL, SDXL_SMOKE)}

BATCH, SIDE, TOKENS, TEXT_EMBEDS = 2, 32, 8, 64


def meta_modules(model_id):
    return [UNet2DConditionModel(**CONFIGS[model_id][0])]


def main(model_id, out):
    torch.manual_seed(0)
    config = CONFIGS[model_id][1]
    model = UNet2DConditionModel(**config).eval()
    inputs = {
        "sample": torch.randn(BATCH, 4, SIDE, SIDE),
        "timestep": torch.tensor([1.0, 981.0]),
        "encoder_hidden_states": torch.randn(BATCH, TOKENS, config["cross_attention_dim"]),
    }
    added = None
    if config.get("addition_embed_type") == "text_time":
        inputs["text_embeds"] = torch.randn(BATCH, TEXT_EMBEDS)
        inputs["time_ids"] = torch.tensor([1, 7])
        added = {"text_embeds": inputs["text_embeds"], "time_ids": inputs["time_ids"]}

    def forward():
        return model(
            inputs["sample"], inputs["timestep"], inputs["encoder_hidden_states"], added_cond_kwargs=added
        ).sample

    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    with torch.no_grad():
        output = forward().detach().clone()
    cotangent = torch.randn_like(output)
    (forward() * cotangent).sum().backward()
    grads = {k: p.grad.detach().clone() for k, p in model.named_parameters() if p.grad is not None}
    torch.save(
        {
            "params": params,
            "param_count": sum(p.numel() for p in model.parameters()),
            "inputs": inputs,
            "output": output,
            "cotangent": cotangent,
            "grads": grads,
        },
        out,
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    args, _ = parser.parse_known_args()
    if args.model.endswith(".meta"):
        save_meta_count(meta_modules, args.model[: -len(".meta")], args.out)
    else:
        main(args.model, args.out)
