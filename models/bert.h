// BERT-base for masked language modeling (TorchBench hf_Bert), written as
// torch::nn modules whose parameter names follow transformers'
// BertForMaskedLM, so its state dict loads by name for the parity test.
//
// Hyperparameters are transformers' BertConfig() defaults, which TorchBench
// builds its model from (bert-base-uncased: 12 layers, hidden 768, 12 heads,
// intermediate 3072, vocab 30522, 512 positions, 2 token types, GELU,
// dropout 0.1, LayerNorm eps 1e-12; Devlin et al. 2018, table in section 3).
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Registers hf_bert.
void AddBertModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
