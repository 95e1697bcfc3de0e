"""Parity reference for sam and sam_fast (models/vision/segmentation/sam.h):
transformers' SamModel (eager, fp32) at the reduced configuration of
SamSmokeConfig(): a 256 x 256 input, 2 encoder blocks of width 96 (3 heads,
MLP 384), window 6, global attention at block 1; prompt encoder and mask
decoder at their real widths, the two-way blocks' LayerNorm eps set to 1e-5
(segment-anything's nn.LayerNorm default, which TorchBench's sam builds;
transformers' SamMaskDecoderConfig defaults to 1e-6).

transformers initialises the relative and absolute position embeddings to
zero and every Linear at std 0.02, which would leave the relative positions
untested and the attention nearly uniform; the script redraws every weight
(fan-in scaled normals, LayerNorms near 1, position tables at std 0.5) so that
each part shows in the outputs.

TorchBench's eval (SamPredictor) on two images of the truck's aspect (450 x
300 original, resized to 256 x 171) with one point each: the image normalised
with SAM's pixel mean and std and zero-padded (Sam.preprocess, written here
as the C++ does it), SamModel(pixel_values, input_points, input_labels,
multimask_output=True), and SamImageProcessor.post_process_masks without the
threshold. Saves params (the state dict, both names of the tied Gaussian
matrix), inputs, and eval: image_embeddings, pred_masks, iou_scores,
mask_logits ([images, 3, 300, 450]). SAM does not train in TorchBench, so
there is no train step.

The id sam.meta builds TorchBench's configuration (ViT-H: width 1280, 32
blocks, 16 heads, global attention at 7/15/23/31) on torch.device("meta") and
saves only its parameter count (an int64 tensor).
"""
import argparse
import math

import torch
from transformers import SamConfig, SamMaskDecoderConfig, SamModel, SamPromptEncoderConfig, SamVisionConfig
from transformers.models.sam.image_processing_sam import SamImageProcessor

from parity_common import save_meta_count

PIXEL_MEAN = [123.675, 116.28, 103.53]
PIXEL_STD = [58.395, 57.12, 57.375]
IMAGES = 2
ORIGINAL = (300, 450)
IMAGE_SIZE = 256


def config(full):
    if full:
        vision = SamVisionConfig(hidden_size=1280, num_hidden_layers=32, num_attention_heads=16,
                                 global_attn_indexes=[7, 15, 23, 31])
        prompt = SamPromptEncoderConfig()
    else:
        vision = SamVisionConfig(hidden_size=96, num_hidden_layers=2, num_attention_heads=3, global_attn_indexes=[1],
                                 window_size=6, image_size=IMAGE_SIZE, mlp_dim=384)
        prompt = SamPromptEncoderConfig(image_size=IMAGE_SIZE)
    decoder = SamMaskDecoderConfig(layer_norm_eps=1e-5)
    return SamConfig(vision_config=vision.to_dict(), prompt_encoder_config=prompt.to_dict(),
                     mask_decoder_config=decoder.to_dict(), attn_implementation="eager")


@torch.no_grad()
def redraw(model):
    tables = {f"{n}.weight" for n, m in model.named_modules() if isinstance(m, torch.nn.Embedding)}
    for name, p in model.named_parameters():
        if name.endswith(("rel_pos_h", "rel_pos_w", "pos_embed")):
            p.copy_(torch.randn_like(p) * 0.5)
        elif name in tables:  # N(0, 1), PyTorch's default for nn.Embedding
            p.copy_(torch.randn_like(p))
        elif p.dim() == 1:
            is_norm_weight = "norm" in name and name.endswith("weight")
            p.copy_(1 + 0.1 * torch.randn_like(p) if is_norm_weight else 0.1 * torch.randn_like(p))
        else:
            fan_in = math.prod(p.shape[1:])
            p.copy_(torch.randn_like(p) / math.sqrt(fan_in))
    gauss = torch.randn_like(model.shared_image_embedding.positional_embedding)
    model.shared_image_embedding.positional_embedding.copy_(gauss)
    model.prompt_encoder.shared_embedding.positional_embedding.copy_(gauss)


def meta_modules(model_id):
    return [SamModel(config(full=True))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.model.endswith(".meta"):
        save_meta_count(meta_modules, args.model[: -len(".meta")], args.out)
        return

    torch.manual_seed(0)
    model = SamModel(config(full=False)).eval()
    redraw(model)
    scale = IMAGE_SIZE / max(ORIGINAL)
    resized = (int(ORIGINAL[0] * scale + 0.5), int(ORIGINAL[1] * scale + 0.5))
    image = torch.randint(0, 256, (IMAGES, 3) + resized).float()
    # TorchBench's point (500, 375) on the 1800 x 1200 truck, in the resized
    # frame, and a second point elsewhere.
    points = torch.tensor([[[[500 * resized[1] / 1800, 375 * resized[0] / 1200]]], [[[170.3, 40.6]]]])
    labels = torch.ones(IMAGES, 1, 1, dtype=torch.long)

    mean = torch.tensor(PIXEL_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(PIXEL_STD).view(1, 3, 1, 1)
    pixel_values = torch.nn.functional.pad((image - mean) / std,
                                           (0, IMAGE_SIZE - resized[1], 0, IMAGE_SIZE - resized[0]))
    with torch.no_grad():
        embeddings = model.get_image_embeddings(pixel_values)
        out = model(pixel_values=pixel_values, input_points=points, input_labels=labels, multimask_output=True)
        logits = SamImageProcessor().post_process_masks(
            out.pred_masks, [list(ORIGINAL)] * IMAGES, [list(resized)] * IMAGES, binarize=False,
            pad_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    torch.save({
        "params": {k: v.detach().clone() for k, v in model.state_dict().items()},
        "param_count": sum(p.numel() for p in model.parameters()),
        "inputs": {"image": image, "input_points": points, "input_labels": labels},
        "eval": {
            "image_embeddings": embeddings,
            "pred_masks": out.pred_masks,
            "iou_scores": out.iou_scores,
            "mask_logits": torch.cat([m for m in logits], 0),
        },
    }, args.out)


if __name__ == "__main__":
    main()
