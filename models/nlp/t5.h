// T5-small encoder-decoder (TorchBench hf_T5), written as torch::nn modules
// whose parameter names follow transformers' T5ForConditionalGeneration, so
// its state dict loads by name for the parity test.
//
// Hyperparameters: the published "t5-small" config TorchBench loads (Raffel
// et al. 2020, section 3.1 and the released checkpoint): d_model 512, d_ff
// 2048, d_kv 64, 8 heads, 6 encoder and 6 decoder blocks, vocab 32128,
// ReLU feed-forward, dropout 0.1, RMS-style T5LayerNorm (eps 1e-6, no bias,
// no mean subtraction), bucketed relative position bias (32 buckets, max
// distance 128) in the first block of each stack, no biases anywhere, and
// input embeddings and LM head all tied to `shared`.
//
// hf_t5_base (the paper's hf_T5_base) is the same network at the published
// "t5-base" config (d_model 768, d_ff 3072, 12 heads, 12 + 12 blocks); every
// other field (d_kv 64, vocab, buckets, dropout, ReLU feed-forward, ties) is
// shared with t5-small. hf_t5_large (the paper's hf_T5_large) is the same
// network at the published "t5-large" config (d_model 1024, d_ff 4096, 16
// heads, 24 + 24 blocks, d_kv 64 and the rest as t5-small).
#pragma once

#include <cstdint>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Registers hf_t5, hf_t5_base and hf_t5_large.
void AddT5Models(std::vector<ModelInfo>& out);

// hf_t5_base's registry entry with `num_layers` blocks per stack (12 in the
// registered model). The parity test builds it with fewer blocks (same widths
// and heads) to compare every parameter within its time budget.
ModelInfo T5BaseInfo(int64_t num_layers = 12);

// hf_t5_large's registry entry with `num_layers` blocks per stack (24 in the
// registered model), for the same purpose.
ModelInfo T5LargeInfo(int64_t num_layers = 24);

}  // namespace torchgauge::models
