"""Parity references for the transformers variants, against transformers 4.57.1.

hf_distil_bert, hf_albert and hf_bart, and the larger configurations of the
BERT, T5 and GPT-2 families (hf_bert_large, hf_t5_base, hf_t5_large,
hf_gpt2_large). Models are built from
explicit configs with random weights: nothing can be downloaded, so the config
of each named hub checkpoint that TorchBench loads
(torchbenchmark/util/framework/huggingface/basic_configs.py) is written out
here, field by field as the checkpoint's config.json has it
where the field differs from the config class's default.

Dropout stays at the published rates: the C++ models call the same ATen random
ops in the same order, so the train step seeded with parity_common.TRAIN_SEED
draws the same masks. Short sequences keep the test fast; the architecture does
not depend on them.

A model id may carry a suffix:
  <id>.l<N>   the same config with N layers per stack (same widths and heads):
              the full parity check of a configuration too large for the
              test budget.
  <id>.meta   builds the full config on torch.device("meta") and saves only
              its parameter count (no weights are allocated).
"""

import torch
from transformers import (AlbertConfig, AlbertForMaskedLM, BartConfig, BartForConditionalGeneration, BertConfig,
                          BertForMaskedLM, DistilBertConfig, DistilBertForMaskedLM, GPT2Config, GPT2LMHeadModel,
                          T5Config, T5ForConditionalGeneration)

from parity_common import hf_adam, main

BATCH = 2
SEQ = 16


def t5_config(d_model, d_ff, num_heads, num_layers):
    # The "t5-small", "t5-base" and "t5-large" hub configs differ only in these widths and
    # depths; the rest is shared (and equals hf_t5's t5-small in
    # ref_transformers.py).
    return T5Config(vocab_size=32128, d_model=d_model, d_kv=64, d_ff=d_ff, num_layers=num_layers,
                    num_decoder_layers=num_layers, num_heads=num_heads, relative_attention_num_buckets=32,
                    relative_attention_max_distance=128, dropout_rate=0.1, layer_norm_epsilon=1e-6,
                    feed_forward_proj="relu", tie_word_embeddings=True, pad_token_id=0, eos_token_id=1,
                    decoder_start_token_id=0)


def config_for(model_id, layers):
    """(model class, config, objective) for a model id; `layers` overrides the depth."""
    if model_id == "hf_distil_bert":
        # "distilbert-base-uncased" (its config.json equals DistilBertConfig's defaults).
        config = DistilBertConfig(vocab_size=30522, max_position_embeddings=512, sinusoidal_pos_embds=False,
                                  n_layers=layers or 6, n_heads=12, dim=768, hidden_dim=3072, dropout=0.1,
                                  attention_dropout=0.1, activation="gelu", initializer_range=0.02,
                                  pad_token_id=0, tie_weights_=True)
        return DistilBertForMaskedLM, config, "mlm"
    if model_id == "hf_albert":
        # "albert-base-v2": embedding 128, hidden 768, 12 layers sharing one
        # layer group, 12 heads, intermediate 3072, gelu_new, no dropout (v2).
        config = AlbertConfig(vocab_size=30000, embedding_size=128, hidden_size=768, num_hidden_layers=layers or 12,
                              num_hidden_groups=1, num_attention_heads=12, intermediate_size=3072, inner_group_num=1,
                              hidden_act="gelu_new", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                              max_position_embeddings=512, type_vocab_size=2, initializer_range=0.02,
                              layer_norm_eps=1e-12, pad_token_id=0, bos_token_id=2, eos_token_id=3)
        return AlbertForMaskedLM, config, "mlm"
    if model_id == "hf_bart":
        # "facebook/bart-base".
        n = layers or 6
        config = BartConfig(vocab_size=50265, max_position_embeddings=1024, encoder_layers=n, encoder_ffn_dim=3072,
                            encoder_attention_heads=12, decoder_layers=n, decoder_ffn_dim=3072,
                            decoder_attention_heads=12, encoder_layerdrop=0.0, decoder_layerdrop=0.0,
                            activation_function="gelu", d_model=768, dropout=0.1, attention_dropout=0.1,
                            activation_dropout=0.1, init_std=0.02, scale_embedding=False, num_hidden_layers=n,
                            pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
                            forced_eos_token_id=2, tie_word_embeddings=True)
        return BartForConditionalGeneration, config, "seq2seq"
    if model_id == "hf_bert_large":
        # TorchBench's hf_Bert_large config, verbatim: BertConfig(hidden_size=1024,
        # num_hidden_layers=24, num_attention_heads=16); the other fields are
        # BertConfig's defaults (intermediate 3072, vocab 30522).
        config = BertConfig(hidden_size=1024, num_hidden_layers=layers or 24, num_attention_heads=16)
        return BertForMaskedLM, config, "mlm"
    if model_id == "hf_t5_base":
        return T5ForConditionalGeneration, t5_config(768, 3072, 12, layers or 12), "seq2seq"
    if model_id == "hf_t5_large":
        return T5ForConditionalGeneration, t5_config(1024, 4096, 16, layers or 24), "seq2seq"
    if model_id == "hf_gpt2_large":
        # "gpt2-large": n_embd 1280, 36 layers, 20 heads; 1024 positions, vocab
        # 50257, gelu_new, dropouts 0.1 and LayerNorm eps 1e-5 as "gpt2" (the
        # GPT2Config defaults).
        config = GPT2Config(vocab_size=50257, n_positions=1024, n_embd=1280, n_layer=layers or 36, n_head=20)
        return GPT2LMHeadModel, config, "causal"
    raise SystemExit(f"unknown model id {model_id}")


def split_id(model_id):
    """("hf_bert_large", 2) for "hf_bert_large.l2"; (model_id, None) without a suffix."""
    base, _, suffix = model_id.partition(".")
    if not suffix:
        return base, None
    if suffix.startswith("l") and suffix[1:].isdigit():
        return base, int(suffix[1:])
    raise SystemExit(f"unknown model id suffix in {model_id}")


def build(model_id):
    cls, config, objective = config_for(*split_id(model_id))
    model = cls(config)
    label_len = SEQ - 4 if objective == "seq2seq" else SEQ
    inputs = {
        "input_ids": torch.randint(0, config.vocab_size, (BATCH, SEQ)),
        "labels": torch.randint(0, config.vocab_size, (BATCH, label_len)),
    }
    if objective == "seq2seq":
        # Eval output: the logits of the train step's forward (decoder inputs
        # are the labels shifted right), the inputs the workload holds in
        # train mode.
        forward = lambda m, i: m(input_ids=i["input_ids"], labels=i["labels"]).logits
    else:
        forward = lambda m, i: m(input_ids=i["input_ids"]).logits
    return {
        "module": model,
        "inputs": inputs,
        "forward": forward,
        "loss": lambda m, i: m(input_ids=i["input_ids"], labels=i["labels"]).loss,
        "optimizer": hf_adam,
    }


def meta_modules(model_id):
    cls, config, _ = config_for(model_id, None)
    return [cls(config)]


if __name__ == "__main__":
    main(build, meta=meta_modules)
