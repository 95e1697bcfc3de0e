// Longformer base for masked language modeling (TorchBench hf_Longformer;
// Beltagy et al. 2020, "Longformer: The Long-Document Transformer"), written
// as torch::nn modules whose parameter names follow transformers'
// LongformerForMaskedLM, so its state dict loads by name for the parity test.
//
// TorchBench builds AutoModelForMaskedLM.from_config(AutoConfig.from_pretrained(
// "allenai/longformer-base-4096")) with 1024 tokens for train and 4096 for
// eval (torchbenchmark/util/framework/huggingface/model_factory.py). That
// config, written out here: 12 layers, hidden 768, 12 heads, intermediate
// 3072, GELU, vocab 50265, 4098 positions (RoBERTa's, offset by
// padding_idx + 1 = 2), 1 token type, attention window 512 in every layer,
// dropout 0.1, LayerNorm eps 1e-5, no pooler (LongformerForMaskedLM),
// LM head tied to the token embedding.
//
// The sliding-window attention is computed as transformers computes it:
// queries scaled in place, keys and queries cut into overlapping chunks of
// 2w (w = 256) with as_strided, one einsum per chunk pair, the diagonals
// re-laid out with pad/view tricks, -inf outside the window, a float32
// softmax, dropout, and the probabilities re-diagonalised against a
// value tensor padded with -1 and chunked with as_strided.
//
// Deviations:
// - Global attention is not implemented: TorchBench passes no
//   global_attention_mask, so transformers takes its sliding-window-only
//   path and never runs the global projections (query_global, key_global,
//   value_global). They are part of the model here as there (same names,
//   initialised, in the parameter count; they get no gradient in either); a
//   global token in the mask would be refused with an error, but the
//   workload cannot produce one.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Registers hf_longformer.
void AddLongformerModels(std::vector<ModelInfo>& out);

// For the parity test only: hf_longformer with `num_hidden_layers` layers
// (all widths, heads and windows as registered).
ModelInfo HfLongformerInfoForTest(int64_t num_hidden_layers);

}  // namespace torchgauge::models
