// ALBERT for masked language modeling (the paper's hf_Albert, TorchBench
// hf_Albert), written as torch::nn modules whose parameter names follow
// transformers' AlbertForMaskedLM, so its state dict loads by name for the
// parity test.
//
// ALBERT (Lan et al. 2019, section 3.1) differs from BERT in two ways that the
// module structure keeps: a factorised embedding (128-wide token, position
// and type embeddings, projected to the 768-wide hidden size by
// encoder.embedding_hidden_mapping_in) and cross-layer parameter sharing (one
// layer group holding one layer, applied num_hidden_layers = 12 times: the
// same parameters run 12 times and their gradients accumulate over the 12
// applications).
//
// Hyperparameters: the published "albert-base-v2" config TorchBench loads:
// vocab 30000, embedding 128, hidden 768, 12 heads, intermediate 3072,
// 12 layers in 1 group of 1 layer, gelu_new, 512 positions, 2 token types,
// LayerNorm eps 1e-12 and no dropout (v2 sets both dropout rates to 0). The
// MLM decoder is tied to the word embeddings (weight) and to
// predictions.bias (bias).
//
// Deviations from the reference: none in the computation. transformers' SDPA
// attention receives no mask for an all-ones attention mask, so the C++
// attention calls the same ATen op without one.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Registers hf_albert.
void AddAlbertModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
