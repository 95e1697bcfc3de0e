"""Parity reference for hf_reformer: transformers' ReformerForMaskedLM, built on parity_common.

The model is built from an explicit config with random weights (nothing is
downloaded). Dropout stays at ReformerConfig's values: the C++ model calls the
same ATen random ops in the same order, so seeded runs draw the same masks and
the same LSH rotations.

Two sources of randomness are pinned for the comparison, in both
implementations alike:
- The LSH layers draw a random rotation (torch.randn) in every forward, eval
  included: the eval forward is seeded with EVAL_SEED (parity_common seeds the
  train step with TRAIN_SEED).
- In training, transformers' ReformerLayer reseeds the generators before each
  layer's attention and feed-forward with torch.seed(), a seed from the OS's
  entropy. Here torch.seed is replaced by a counter from LAYER_SEED_BASE (it
  seeds the generator as torch.seed does and returns the seed); the C++ test
  gives its model the same counter (models::ReformerSizes::layer_seed).

The full configuration (seq 4096 = the 64 x 64 axial grid) is too slow for the
test, so the numeric parity runs on a reduced grid and chunking: axial shape
8 x 8 (64 tokens), chunks of 16 tokens (4 per sequence, each attending to
itself and the previous one), 8 buckets; every width, head count and layer is
as registered. The id "hf_reformer_full" builds the registered configuration
on torch.device("meta") and saves each state-dict tensor's shape and the
parameter count (as ref_xlmr_bigbird_longformer.py does).
"""
import sys

import torch
from transformers import ReformerConfig, ReformerForMaskedLM

from parity_common import main

BATCH = 2
AXIAL_POS_SHAPE = (8, 8)
CHUNK_LENGTH = 16
NUM_BUCKETS = 8
EVAL_SEED = 4321
LAYER_SEED_BASE = 1000


class CountingSeed:
    """Stands in for torch.seed(): seeds the generators with the next number of a counter and returns it."""

    def __init__(self, first):
        self.next = first

    def __call__(self):
        seed = self.next
        self.next += 1
        torch.manual_seed(seed)
        return seed


def full_config():
    # torchbenchmark/models/hf_Reformer/__init__.py: ReformerConfig(), num_buckets = 128 when unset.
    config = ReformerConfig()
    config.num_buckets = 128
    return config


def build(model_id):
    if model_id != "hf_reformer":
        raise SystemExit(f"unknown model id {model_id}")
    config = ReformerConfig(axial_pos_shape=list(AXIAL_POS_SHAPE), lsh_attn_chunk_length=CHUNK_LENGTH,
                            local_attn_chunk_length=CHUNK_LENGTH, num_buckets=NUM_BUCKETS)
    model = ReformerForMaskedLM(config)
    seq = AXIAL_POS_SHAPE[0] * AXIAL_POS_SHAPE[1]
    inputs = {
        "input_ids": torch.randint(0, config.vocab_size, (BATCH, seq)),
        "labels": torch.randint(0, config.vocab_size, (BATCH, seq)),
    }
    torch.seed = CountingSeed(LAYER_SEED_BASE)

    def forward(m, i):
        torch.manual_seed(EVAL_SEED)
        return m(input_ids=i["input_ids"]).logits

    return {
        "module": model,
        "inputs": inputs,
        "forward": forward,
        "loss": lambda m, i: m(input_ids=i["input_ids"], labels=i["labels"]).loss,
        # TorchBench's Hugging Face models: optim.Adam(model.parameters(), lr=0.001).
        "optimizer": lambda m: torch.optim.Adam(m.parameters(), lr=0.001),
    }


def save_full_shapes(out):
    with torch.device("meta"):
        model = ReformerForMaskedLM(full_config())
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
    if args.get("--model") == "hf_reformer_full":
        save_full_shapes(args["--out"])
    else:
        main(build)
