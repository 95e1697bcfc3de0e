// DistilBERT for masked language modeling (the paper's hf_DistilBert,
// TorchBench hf_DistilBert), written as torch::nn modules whose parameter
// names follow transformers' DistilBertForMaskedLM, so its state dict loads by
// name for the parity test.
//
// Hyperparameters: the published "distilbert-base-uncased" config TorchBench
// loads (Sanh et al. 2019, section 3: BERT-base with half the layers and no
// token-type embeddings or pooler): 6 layers, dim 768, 12 heads, FFN 3072,
// GELU, vocab 30522, 512 learned positions, dropout 0.1 (embeddings, attention
// probabilities, FFN output), LayerNorm eps 1e-12, and the vocabulary
// projector's weight tied to the word embeddings (its bias is its own).
//
// Deviations from the reference: none in the computation. transformers' SDPA
// attention receives no mask for an all-ones attention mask
// (_prepare_4d_attention_mask_for_sdpa returns None), so the C++ attention
// calls the same ATen op without one.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Registers hf_distil_bert.
void AddDistilBertModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
