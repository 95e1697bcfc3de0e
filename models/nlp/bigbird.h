// BigBird-RoBERTa base for masked language modeling (TorchBench hf_BigBird;
// Zaheer et al. 2020, "Big Bird: Transformers for Longer Sequences"), written
// as torch::nn modules whose parameter names follow transformers'
// BigBirdForMaskedLM, so its state dict loads by name for the parity test.
//
// TorchBench builds BigBirdForMaskedLM(BigBirdConfig(attention_type=
// "block_sparse")) (torchbenchmark/util/framework/huggingface/model_factory.py:
// 1024 tokens for train, 4096 for eval): the google/bigbird-roberta-base
// shape, i.e. BigBirdConfig()'s defaults: 12 layers, hidden 768, 12 heads,
// intermediate 3072, gelu_new, vocab 50358, 4096 positions, 2 token types,
// dropout 0.1, LayerNorm eps 1e-12, block size 64, 3 random blocks, with the
// pooler (BigBirdModel's add_pooling_layer default).
//
// The block-sparse attention ("ITC": 2 global blocks, a 3-block sliding
// window, 3 random key blocks per query block) is computed as transformers
// computes it, in five parts (q[0], q[1], q[2:-2], q[-2], q[-1]) with the
// same gathers, einsums and -10000 mask penalties, and no attention-probability
// dropout (the reference has none on this path). The random key blocks are
// what transformers draws: it reseeds numpy's global generator with the layer
// index (np.random.seed(layer_idx)) on every call and, for sequence lengths
// 1024, 3072 and 4096 (the paper's "old plans", the only ones TorchBench
// uses), builds each head's adjacency list with np.random.permutation over a
// 4096-token plan limited to the first 1024 tokens. The C++ code reproduces
// that stream exactly: std::mt19937 seeded with an integer is numpy's legacy
// MT19937 seeding, and the permutation is numpy's legacy shuffle (Fisher-
// Yates from the end, bounded draws by masked rejection). In eval mode
// transformers uses no randomness (every random block is block 0), and so
// does this code.
//
// Deviations:
// - Sequences that need the other ("with head") random plan (block-sparse
//   lengths other than 1024, 3072 and 4096) are refused with an error; the
//   workloads never use them.
// - Sequences of at most (5 + 2 * 3) * 64 = 704 tokens use full attention, as
//   transformers does; transformers makes that switch permanent for the
//   model object, here it is decided per call (the workload's sequence
//   length never changes).
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Registers hf_bigbird.
void AddBigBirdModels(std::vector<ModelInfo>& out);

// For the parity test only: hf_bigbird with `num_hidden_layers` layers (all
// widths, heads and the attention as registered).
ModelInfo HfBigBirdInfoForTest(int64_t num_hidden_layers);

}  // namespace torchgauge::models
