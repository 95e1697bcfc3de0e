// GPT-2 small causal language model (the paper's hf_ptg1, TorchBench hf_GPT2),
// written as torch::nn modules whose parameter names follow transformers'
// GPT2LMHeadModel, so its state dict loads by name for the parity test.
//
// Hyperparameters: the published "gpt2" config that TorchBench loads
// (Radford et al. 2019, smallest model of table 2): 12 layers, n_embd 768,
// 12 heads, 1024 positions, vocab 50257, gelu_new, dropout 0.1 (embedding,
// attention, residual), LayerNorm eps 1e-5, lm_head tied to the token
// embedding. Projections are GPT-2's Conv1D (weight stored [in, out]).
//
// hf_gpt2_large (the paper's hf_ptg1_large, TorchBench hf_GPT2_large) is the
// same network at the published "gpt2-large" config (Radford et al. 2019,
// table 2, 774M): n_embd 1280, 36 layers, 20 heads; positions, vocab,
// activation, dropouts and eps as "gpt2".
#pragma once

#include <cstdint>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Registers hf_gpt2 and hf_gpt2_large.
void AddGpt2Models(std::vector<ModelInfo>& out);

// hf_gpt2_large's registry entry with `num_layers` blocks (36 in the
// registered model). The parity test builds it with fewer blocks (same widths
// and heads) to compare every parameter within its time budget.
ModelInfo Gpt2LargeInfo(int64_t num_layers = 36);

}  // namespace torchgauge::models
