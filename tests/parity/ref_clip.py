"""Parity reference for the CLIP family (models/vision/multimodal/clip.h), against transformers 4.57.1.

Random weights (nothing is downloaded), fp32, eager attention, at the reduced
configurations that the smoke runs build.

hf_clip: transformers' CLIPModel with openai/clip-vit-base-patch32's
configuration reduced to both towers hidden 64, 2 layers, 4 heads, MLP 256
(quick_gelu, LayerNorm eps 1e-5), image 64 with patch 16, vocab 1000, 77
positions, projection 32, logit_scale 2.6592, eos_token_id 2 (the legacy
argmax pooling, as the published config). Inputs: 4 distinct random images
and 4 captions of different lengths (BOS 998, random words, EOS 999, padded
with EOS as CLIP's tokenizer pads, attention_mask 0 there), so that the
contrastive loss has a gradient (TorchBench repeats one image and one
caption, whose loss has none) and the padding mask and the pooling are
exercised. Output: [image_embeds | text_embeds | logits_per_image]; loss:
TorchBench hf_clip's ContrastiveLossWithTemperature(0.07) over the
embeddings; optimizer: its AdamW(lr 5e-4, weight_decay 1e-4, eps 1e-6).
Gradients are saved.

stable_diffusion_text_encoder (eval only, as TorchBench): transformers'
CLIPTextModel with stabilityai/stable-diffusion-2's text_encoder
configuration reduced to hidden 64, 2 layers, 4 heads, MLP 256, vocab 1000
(exact gelu, eos_token_id 2); input 2 x 10 random ids in [0, 1000); output
[last_hidden_state | pooler_output] along the sequence.

The ids <model>.meta build the published configurations on
torch.device("meta") and save only the parameter count (an int64 tensor).
"""
import argparse

import torch
import torch.nn.functional as F
from transformers import CLIPConfig, CLIPModel, CLIPTextConfig, CLIPTextModel

from parity_common import main, save_meta_count

BATCH = 4
SEQ = 8
LENGTHS = [8, 6, 5, 7]


def tower_fields(smoke, **published):
    fields = dict(layer_norm_eps=1e-5, attention_dropout=0.0, initializer_range=0.02, initializer_factor=1.0,
                  **published)
    if smoke:
        fields.update(hidden_size=64, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4)
    return fields


def clip_config(smoke):
    # openai/clip-vit-base-patch32's config.json (the legacy special token ids
    # of its text config: bos 0, pad 1, eos 2).
    text = tower_fields(smoke, vocab_size=49408, hidden_size=512, intermediate_size=2048, num_hidden_layers=12,
                        num_attention_heads=8, max_position_embeddings=77, hidden_act="quick_gelu", bos_token_id=0,
                        pad_token_id=1, eos_token_id=2, projection_dim=512)
    vision = tower_fields(smoke, hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12,
                          image_size=224, patch_size=32, num_channels=3, hidden_act="quick_gelu", projection_dim=512)
    projection = 512
    if smoke:
        text.update(vocab_size=1000, projection_dim=32)
        vision.update(image_size=64, patch_size=16, projection_dim=32)
        projection = 32
    return CLIPConfig(text_config=text, vision_config=vision, projection_dim=projection, logit_scale_init_value=2.6592)


def sd_text_config(smoke):
    # stabilityai/stable-diffusion-2's text_encoder/config.json.
    fields = tower_fields(smoke, vocab_size=49408, hidden_size=1024, intermediate_size=4096, num_hidden_layers=23,
                          num_attention_heads=16, max_position_embeddings=77, hidden_act="gelu", bos_token_id=0,
                          pad_token_id=1, eos_token_id=2, projection_dim=512)
    if smoke:
        fields.update(vocab_size=1000)
    return CLIPTextConfig(**fields)


def contrastive_loss(image_embeds, text_embeds, temperature=0.07):
    # TorchBench hf_clip's ContrastiveLossWithTemperature.
    logits = torch.matmul(image_embeds, text_embeds.T) / temperature
    labels = torch.arange(logits.size(0))
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2


def clip_inputs(config):
    vocab = config.text_config.vocab_size
    bos, eos = vocab - 2, vocab - 1
    ids = torch.full((BATCH, SEQ), eos, dtype=torch.long)
    mask = torch.zeros(BATCH, SEQ, dtype=torch.long)
    for row, n in enumerate(LENGTHS):
        ids[row, 0] = bos
        ids[row, 1 : n - 1] = torch.randint(0, vocab - 2, (n - 2,))
        mask[row, :n] = 1
    side = config.vision_config.image_size
    return {"input_ids": ids, "attention_mask": mask, "pixel_values": torch.randn(BATCH, 3, side, side)}


def build(model_id):
    if model_id != "hf_clip":
        raise SystemExit(f"unknown model id {model_id}")
    config = clip_config(smoke=True)
    model = CLIPModel._from_config(config, attn_implementation="eager")
    assert model.text_model.config._attn_implementation == "eager"
    assert model.vision_model.config._attn_implementation == "eager"
    inputs = clip_inputs(config)

    def forward(m, i):
        out = m(**i)
        return torch.cat([out.image_embeds, out.text_embeds, out.logits_per_image], 1)

    def loss(m, i):
        out = m(**i)
        return contrastive_loss(out.image_embeds, out.text_embeds)

    def optimizer(m):
        return torch.optim.AdamW(m.parameters(), lr=5.0e-4, weight_decay=1.0e-4, eps=1.0e-6)

    return {"module": model, "inputs": inputs, "forward": forward, "loss": loss, "optimizer": optimizer,
            "save_grads": True}


def save_sd_text(out):
    torch.manual_seed(0)
    model = CLIPTextModel._from_config(sd_text_config(smoke=True), attn_implementation="eager")
    assert model.config._attn_implementation == "eager"
    ids = torch.randint(0, 1000, (2, 10))
    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.eval()
    with torch.no_grad():
        res = model(input_ids=ids)
        output = torch.cat([res.last_hidden_state, res.pooler_output[:, None]], 1)
    torch.save({"params": params, "param_count": sum(p.numel() for p in model.parameters()),
                "inputs": {"input_ids": ids}, "output": output.detach().clone()}, out)


def meta_modules(model_id):
    if model_id == "hf_clip":
        return [CLIPModel(clip_config(smoke=False))]
    if model_id == "stable_diffusion_text_encoder":
        return [CLIPTextModel(sd_text_config(smoke=False))]
    raise SystemExit(f"unknown model id {model_id}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    args, _ = parser.parse_known_args()
    if args.model.endswith(".meta"):
        save_meta_count(meta_modules, args.model[: -len(".meta")], args.out)
    elif args.model == "stable_diffusion_text_encoder":
        save_sd_text(args.out)
    else:
        main(build)
