// GPT-2 small causal language model (the paper's hf_ptg1, TorchBench hf_GPT2),
// written as torch::nn modules whose parameter names follow transformers'
// GPT2LMHeadModel, so its state dict loads by name for the parity test.
//
// Hyperparameters: the published "gpt2" config that TorchBench loads
// (Radford et al. 2019, smallest model of table 2): 12 layers, n_embd 768,
// 12 heads, 1024 positions, vocab 50257, gelu_new, dropout 0.1 (embedding,
// attention, residual), LayerNorm eps 1e-5, lm_head tied to the token
// embedding. Projections are GPT-2's Conv1D (weight stored [in, out]).
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Registers hf_gpt2.
void AddGpt2Models(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
