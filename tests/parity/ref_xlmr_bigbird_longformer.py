"""Parity references for fambench_xlmr, hf_roberta_base, hf_bigbird and hf_longformer, built on parity_common.

Models are built from explicit configs with random weights (nothing is
downloaded). Dropout stays at the published values: the C++ models call the
same ATen random ops in the same order, so the train step seeded with
parity_common.TRAIN_SEED draws the same masks.

Ids ending in "_full" do not train: they build the registered configuration on
torch.device("meta") (no memory, no time) and save, in parity_common's format,
each state-dict tensor's shape (as a 1-D long tensor) under "params" and the
parameter count, so that the C++ test checks the full model's names, shapes
and size while the numeric parity runs on fewer layers.
"""
import sys

import torch
import torch.nn.functional as F
from transformers import (BigBirdConfig, BigBirdForMaskedLM, LongformerConfig, LongformerForMaskedLM, XLMRobertaConfig,
                          XLMRobertaForMaskedLM)

from parity_common import hf_token_lm, main

BATCH = 2
SEQ = 12

# fambench_xlmr: the numeric parity runs on 2 of the 24 layers and an
# 8192-row token table (every width and head count as registered); the
# C++ test builds the same reduced configuration.
XLMR_PARITY_LAYERS = 2
XLMR_PARITY_VOCAB = 8192


def xlmr_config(num_hidden_layers=24, vocab_size=250002):
    # fairseq's xlmr.large as transformers states it (xlm-roberta-large).
    return XLMRobertaConfig(vocab_size=vocab_size, hidden_size=1024, num_hidden_layers=num_hidden_layers,
                            num_attention_heads=16, intermediate_size=4096, hidden_act="gelu",
                            hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1, max_position_embeddings=514,
                            type_vocab_size=1, layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0, eos_token_id=2)


def xlmr_base_config(num_hidden_layers=12, vocab_size=250002):
    # xlm-roberta-base's config.json, which TorchBench's hf_Roberta_base loads.
    return XLMRobertaConfig(vocab_size=vocab_size, hidden_size=768, num_hidden_layers=num_hidden_layers,
                            num_attention_heads=12, intermediate_size=3072, hidden_act="gelu",
                            hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1, max_position_embeddings=514,
                            type_vocab_size=1, layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0, eos_token_id=2)


# hf_bigbird: 2 of the 12 layers, batch 1, 1024 tokens (TorchBench's train
# length: block-sparse attention with the paper's random plan).
BIGBIRD_PARITY_LAYERS = 2
BIGBIRD_SEQ = 1024


# hf_longformer: 2 of the 12 layers, batch 1, 1024 tokens (TorchBench's train
# length: two windows of 512, three overlapping chunks).
LONGFORMER_PARITY_LAYERS = 2
LONGFORMER_SEQ = 1024


def longformer_config(num_hidden_layers=12):
    # allenai/longformer-base-4096's config.json.
    return LongformerConfig(vocab_size=50265, hidden_size=768, num_hidden_layers=num_hidden_layers,
                            num_attention_heads=12, intermediate_size=3072, hidden_act="gelu",
                            hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1, max_position_embeddings=4098,
                            type_vocab_size=1, initializer_range=0.02, layer_norm_eps=1e-5,
                            attention_window=[512] * num_hidden_layers, pad_token_id=1, bos_token_id=0,
                            eos_token_id=2, sep_token_id=2)


def full_model(model_id):
    if model_id == "fambench_xlmr_full":
        return XLMRobertaForMaskedLM(xlmr_config())
    if model_id == "hf_roberta_base_full":
        return XLMRobertaForMaskedLM(xlmr_base_config())
    if model_id == "hf_bigbird_full":
        return BigBirdForMaskedLM(BigBirdConfig(attention_type="block_sparse"))
    if model_id == "hf_longformer_full":
        return LongformerForMaskedLM(longformer_config())
    raise SystemExit(f"unknown model id {model_id}")


def build(model_id):
    if model_id == "fambench_xlmr":
        config = xlmr_config(XLMR_PARITY_LAYERS, XLMR_PARITY_VOCAB)
        model = XLMRobertaForMaskedLM(config)
        inputs = {
            # Ids avoid the padding index 1 (FAMBench's random ids hit it with
            # probability 4e-6 per token; see models/nlp/xlmr.h).
            "input_ids": torch.randint(2, config.vocab_size, (BATCH, SEQ)),
            "y_true": torch.rand(BATCH, SEQ, config.hidden_size),
        }
        # FAMBench: y_pred = xlmr.extract_features(x); F.cross_entropy(y_pred, y_true); SGD(lr=0.01).
        features = lambda m, i: m.roberta(input_ids=i["input_ids"]).last_hidden_state
        return {
            "module": model,
            "inputs": inputs,
            "forward": features,
            "loss": lambda m, i: F.cross_entropy(features(m, i), i["y_true"]),
            "optimizer": lambda m: torch.optim.SGD(m.parameters(), lr=0.01),
        }
    if model_id == "hf_roberta_base":
        # The Hugging Face masked-LM protocol on 2 layers and fambench_xlmr's
        # 8192-row table.
        config = xlmr_base_config(XLMR_PARITY_LAYERS, XLMR_PARITY_VOCAB)
        return hf_token_lm(XLMRobertaForMaskedLM(config), config.vocab_size, BATCH, SEQ)
    if model_id == "hf_bigbird":
        # TorchBench: BigBirdConfig(attention_type="block_sparse"), i.e. google/bigbird-roberta-base.
        config = BigBirdConfig(attention_type="block_sparse", num_hidden_layers=BIGBIRD_PARITY_LAYERS)
        return hf_token_lm(BigBirdForMaskedLM(config), config.vocab_size, 1, BIGBIRD_SEQ)
    if model_id == "hf_longformer":
        config = longformer_config(LONGFORMER_PARITY_LAYERS)
        return hf_token_lm(LongformerForMaskedLM(config), config.vocab_size, 1, LONGFORMER_SEQ)
    raise SystemExit(f"unknown model id {model_id}")


def save_full_shapes(model_id, out):
    with torch.device("meta"):
        model = full_model(model_id)
    empty = torch.zeros(0)
    torch.save(
        {
            "params": {k: torch.tensor(list(v.shape), dtype=torch.long) for k, v in model.state_dict().items()},
            "param_count": sum(p.numel() for p in model.parameters()),
            "inputs": {},
            "output": empty,
            "loss": empty,
            "updated": {},
        },
        out,
    )


if __name__ == "__main__":
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    if args.get("--model", "").endswith("_full"):
        save_full_shapes(args["--model"], args["--out"])
    else:
        main(build)
