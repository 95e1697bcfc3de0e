// BERT-base for masked language modeling (TorchBench hf_Bert), written as
// torch::nn modules whose parameter names follow transformers'
// BertForMaskedLM, so its state dict loads by name for the parity test.
//
// Hyperparameters are transformers' BertConfig() defaults, which TorchBench
// builds its model from (bert-base-uncased: 12 layers, hidden 768, 12 heads,
// intermediate 3072, vocab 30522, 512 positions, 2 token types, GELU,
// dropout 0.1, LayerNorm eps 1e-12; Devlin et al. 2018, table in section 3).
//
// hf_bert_large (the paper's hf_Bert_large) is the same network at
// TorchBench's hf_Bert_large config: BertConfig(hidden_size=1024,
// num_hidden_layers=24, num_attention_heads=16) with the other fields at their
// defaults (intermediate 3072, vocab 30522). TorchBench's comment names
// bert-large-cased, whose intermediate size (4096) and vocabulary (28996)
// differ; the config TorchBench actually builds is the one reproduced here.
#pragma once

#include <cstdint>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Registers hf_bert and hf_bert_large.
void AddBertModels(std::vector<ModelInfo>& out);

// hf_bert_large's registry entry with `num_hidden_layers` layers (24 in the
// registered model). The parity test builds it with fewer layers (same widths
// and heads) to compare every parameter within its time budget.
ModelInfo BertLargeInfo(int64_t num_hidden_layers = 24);

}  // namespace torchgauge::models
