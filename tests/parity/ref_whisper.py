"""Parity reference for the Whisper family (models/speech/whisper.h), against transformers 4.57.1.

transformers' Whisper models with random weights (nothing is downloaded), in fp32 with eager attention, at the
reduced configuration that the smoke runs build (WhisperSmokeConfig): 2 encoder and 2 decoder layers, d_model 64,
4 heads, ffn 256, 80 mel bins, max_source_positions 100 (so 200 input frames), max_target_positions 128, vocab 1024,
classifier_proj_size 64, num_labels 2.

  hf_whisper, hf_distil_whisper  WhisperForAudioClassification: inputs input_features [2, 80, 200] (randn, as
                                 TorchBench's harness draws them) and labels [2] (class ids); output the logits;
                                 loss model(input_features, labels=labels).loss.
  whisper_tiny                   WhisperForConditionalGeneration: input_features and labels [2, 16] (token ids);
                                 output the logits of model(input_features, labels=labels) (the decoder reads the
                                 labels shifted right); loss its .loss; and greedy_generation's tokens.

hf_distil_whisper's reduced configuration (DistilWhisperSmokeConfig) keeps distil-medium.en's proportions: d_model
128, 8 heads, ffn 512, the rest as above. Each saves every
gradient. The ids <id>.meta build the published configuration on torch.device("meta") and save only its parameter
count (an int64 tensor): WhisperConfig() for hf_whisper, distil-whisper/distil-medium.en's config.json for
hf_distil_whisper, openai/whisper-tiny's for whisper_tiny.
"""

import torch
from transformers import WhisperConfig, WhisperForAudioClassification, WhisperForConditionalGeneration

from parity_common import hf_adam, main

BATCH = 2
DECODER_LEN = 16
GENERATION_PROMPT, GENERATED = 5, 12
CLASSIFIERS = ("hf_whisper", "hf_distil_whisper")


def smoke_config(model_id):
    if model_id == "hf_distil_whisper":
        # DistilWhisperSmokeConfig: distil-medium.en's proportions (head_dim 16, ffn 4 d_model).
        return WhisperConfig(vocab_size=1024, num_mel_bins=80, d_model=128, encoder_layers=2, decoder_layers=2,
                             encoder_attention_heads=8, decoder_attention_heads=8, encoder_ffn_dim=512,
                             decoder_ffn_dim=512, max_source_positions=100, max_target_positions=128,
                             pad_token_id=1000, bos_token_id=1000, eos_token_id=1000, decoder_start_token_id=1001,
                             classifier_proj_size=64, num_labels=2, attn_implementation="eager",
                             torch_dtype=torch.float32)
    return WhisperConfig(vocab_size=1024, num_mel_bins=80, d_model=64, encoder_layers=2, decoder_layers=2,
                         encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=256,
                         decoder_ffn_dim=256, max_source_positions=100, max_target_positions=128, pad_token_id=1000,
                         bos_token_id=1000, eos_token_id=1000, decoder_start_token_id=1001, classifier_proj_size=64,
                         num_labels=2, attn_implementation="eager", torch_dtype=torch.float32)


def full_config(model_id):
    if model_id == "hf_whisper":
        return WhisperConfig(attn_implementation="eager")  # TorchBench's WhisperConfig()
    if model_id == "hf_distil_whisper":
        # distil-whisper/distil-medium.en's config.json.
        return WhisperConfig(vocab_size=51864, num_mel_bins=80, d_model=1024, encoder_layers=24, decoder_layers=2,
                             encoder_attention_heads=16, decoder_attention_heads=16, encoder_ffn_dim=4096,
                             decoder_ffn_dim=4096, max_source_positions=1500, max_target_positions=448,
                             pad_token_id=50256, bos_token_id=50257, eos_token_id=50256, decoder_start_token_id=50257,
                             classifier_proj_size=256, use_weighted_layer_sum=False, scale_embedding=False,
                             attn_implementation="eager")
    if model_id == "whisper_tiny":
        # openai/whisper-tiny's config.json (its widths are WhisperConfig()'s).
        return WhisperConfig(vocab_size=51865, d_model=384, encoder_layers=4, decoder_layers=4,
                             encoder_attention_heads=6, decoder_attention_heads=6, encoder_ffn_dim=1536,
                             decoder_ffn_dim=1536, pad_token_id=50257, bos_token_id=50257, eos_token_id=50257,
                             decoder_start_token_id=50258, attn_implementation="eager")
    raise SystemExit(f"unknown model id {model_id}")


def model_class(model_id):
    return WhisperForAudioClassification if model_id in CLASSIFIERS else WhisperForConditionalGeneration


def build(model_id):
    full_config(model_id)  # rejects unknown ids
    config = smoke_config(model_id)
    model = model_class(model_id)(config)
    frames = 2 * config.max_source_positions
    inputs = {"input_features": torch.randn(BATCH, config.num_mel_bins, frames)}
    if model_id in CLASSIFIERS:
        inputs["labels"] = torch.randint(0, config.num_labels, (BATCH,))
    else:
        inputs["labels"] = torch.randint(0, config.vocab_size, (BATCH, DECODER_LEN))
    spec = {
        "module": model,
        "inputs": inputs,
        "forward": lambda m, i: m(**i).logits,
        "loss": lambda m, i: m(**i).loss,
        "optimizer": hf_adam,
        "save_grads": True,
    }
    if model_id not in CLASSIFIERS:
        spec["extra"] = greedy_generation
    return spec


def greedy_generation(model, inputs):
    """transformers' own cached decoding, greedy: the prompt (per row the
    decoder's start token and GENERATION_PROMPT - 1 fixed ids of its own, so
    that no random draw moves the train step's) through the model with use_cache, then one token
    at a time over past_key_values and the encoder's output. Saves the prompt
    and the GENERATED new tokens, for models::WhisperGenerator to match
    token for token."""
    config = model.config
    features = inputs["input_features"]
    prompt = torch.tensor([[config.decoder_start_token_id] + [(7 * k + 3 + 101 * row) % 1000
                                                              for k in range(GENERATION_PROMPT - 1)]
                           for row in range(features.size(0))])
    out = model(input_features=features, decoder_input_ids=prompt, use_cache=True)
    encoder_outputs = (out.encoder_last_hidden_state,)
    tokens = [out.logits[:, -1:].argmax(-1)]
    past = out.past_key_values
    while len(tokens) < GENERATED:
        out = model(encoder_outputs=encoder_outputs, decoder_input_ids=tokens[-1], past_key_values=past,
                    use_cache=True)
        past = out.past_key_values
        tokens.append(out.logits[:, -1:].argmax(-1))
    return {"generation_prompt": prompt, "generated": torch.cat(tokens, 1)}


def meta_modules(model_id):
    return [model_class(model_id)(full_config(model_id))]


if __name__ == "__main__":
    main(build, meta=meta_modules)
