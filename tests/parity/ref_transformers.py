"""Parity references for the NLP family (hf_bert, hf_gpt2, hf_t5).

Models are built from explicit configs with random weights (nothing is
downloaded), with the hyperparameters TorchBench uses: BertConfig() for
hf_Bert, the published GPT-2 small config for hf_GPT2 ("gpt2") and the
published T5-small config for hf_T5 ("t5-small"). Dropout stays at the
published 0.1: the C++ models call the same ATen random ops in the same order,
so the train step seeded with parity_common.TRAIN_SEED draws the same masks.
Short sequences keep the test fast; the architecture does not depend on them.
"""
import torch
from transformers import (BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel, T5Config,
                          T5ForConditionalGeneration)

from parity_common import hf_adam, main

BATCH = 2
SEQ = 16


def build(model_id):
    if model_id == "hf_bert":
        config = BertConfig()
        model = BertForMaskedLM(config)
        inputs = {
            "input_ids": torch.randint(0, config.vocab_size, (BATCH, SEQ)),
            "labels": torch.randint(0, config.vocab_size, (BATCH, SEQ)),
        }
        return {
            "module": model,
            "inputs": inputs,
            "forward": lambda m, i: m(input_ids=i["input_ids"]).logits,
            "loss": lambda m, i: m(input_ids=i["input_ids"], labels=i["labels"]).loss,
            "optimizer": hf_adam,
        }
    if model_id == "hf_gpt2":
        # The "gpt2" hub config: 12 layers, 12 heads, n_embd 768, 1024 positions,
        # vocab 50257, gelu_new, dropouts 0.1, LayerNorm eps 1e-5 (GPT2Config defaults).
        config = GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12)
        model = GPT2LMHeadModel(config)
        inputs = {
            "input_ids": torch.randint(0, config.vocab_size, (BATCH, SEQ)),
            "labels": torch.randint(0, config.vocab_size, (BATCH, SEQ)),
        }
        return {
            "module": model,
            "inputs": inputs,
            "forward": lambda m, i: m(input_ids=i["input_ids"]).logits,
            "loss": lambda m, i: m(input_ids=i["input_ids"], labels=i["labels"]).loss,
            "optimizer": hf_adam,
        }
    if model_id == "hf_t5":
        # The "t5-small" hub config.
        config = T5Config(vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_decoder_layers=6,
                          num_heads=8, relative_attention_num_buckets=32, relative_attention_max_distance=128,
                          dropout_rate=0.1, layer_norm_epsilon=1e-6, feed_forward_proj="relu",
                          tie_word_embeddings=True, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
        model = T5ForConditionalGeneration(config)
        inputs = {
            "input_ids": torch.randint(0, config.vocab_size, (BATCH, SEQ)),
            "labels": torch.randint(0, config.vocab_size, (BATCH, SEQ - 4)),
        }
        # Eval output: the logits the train step's forward produces (decoder
        # inputs are the labels shifted right), so that the workload's
        # Forward() is compared on the inputs it holds in train mode.
        return {
            "module": model,
            "inputs": inputs,
            "forward": lambda m, i: m(input_ids=i["input_ids"], labels=i["labels"]).logits,
            "loss": lambda m, i: m(input_ids=i["input_ids"], labels=i["labels"]).loss,
            "optimizer": hf_adam,
        }
    raise SystemExit(f"unknown model id {model_id}")


if __name__ == "__main__":
    main(build)
