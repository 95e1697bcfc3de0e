// XLM-R large (TorchBench fambench_xlmr, FAMBench's xlmr "ootb" benchmark),
// written as torch::nn modules whose parameter names follow transformers'
// XLMRobertaForMaskedLM, so its state dict loads by name for the parity test.
//
// What TorchBench runs (torchbenchmark/models/fambench_xlmr/__init__.py and
// FAMBench benchmarks/xlmr/ootb/xlmr.py, xlmr_data.py):
//   model  fairseq XLMRModel "xlmr.large" (Conneau et al. 2019): RoBERTa
//          architecture, 24 post-LN layers, hidden 1024, 16 heads, FFN 4096,
//          GELU, dropout 0.1 (attention dropout 0.1), LayerNorm eps 1e-5,
//          vocabulary 250002, learned positions offset by padding_idx + 1
//          (padding_idx 1, 514 position rows), embedding LayerNorm, the LM
//          head (dense, GELU, LayerNorm, decoder tied to the token
//          embedding, own bias) present but unused;
//   step   y_pred = xlmr.extract_features(x) (the last layer's features,
//          batch x seq x 1024, no LM head), loss = F.cross_entropy(y_pred,
//          y_true) with y_true = torch.rand(batch, seq, 1024) read as class
//          probabilities over dim 1 (FAMBench's own recipe, kept as is),
//          torch.optim.SGD(lr=0.01); eval returns the features;
//   inputs token ids uniform in [0, 250000), sequence length 64.
//
// Deviations:
// - The module tree is transformers' XLMRobertaForMaskedLM (the brief's
//   parity reference) rather than fairseq's: the same computation, one extra
//   1 x 1024 token-type embedding (type_vocab_size 1, a constant vector added
//   to every token; 1024 parameters) that fairseq does not have.
// - The token ids are drawn with torch::randint instead of FAMBench's
//   (torch.rand * vocab).int(); as in transformers without an attention
//   mask, an id equal to the padding index (1) is not masked out of the
//   attention (fairseq would mask it; the chance per token is 4e-6).
// - TorchBench's eval runs the model in fp16 on CUDA by default
//   (DEFAULT_EVAL_CUDA_PRECISION); the precision is the collector's choice.
//
// hf_roberta_base, TorchBench's hf_Roberta_base (added since the paper), is
// the same module tree at xlm-roberta-base's configuration, which
// TorchBench's Hugging Face table loads for it despite the name: 12 layers,
// hidden 768, 12 heads, FFN 3072, the same 250002-token vocabulary (278M
// parameters, 192M of them the token table). It runs as TorchBench's other
// masked LMs do (models/shared/hf_harness.h: AutoModelForMaskedLM's loss and
// Adam), 512 tokens in train and eval, batch 4 / 1. Smoke runs keep every
// layer and width but an 8192-row token table.
#pragma once

#include <cstdint>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Registers fambench_xlmr and hf_roberta_base.
void AddXlmrModels(std::vector<ModelInfo>& out);

// For the parity test only: the fambench_xlmr workload on an XLM-R with
// `num_hidden_layers` layers and a `vocab_size`-row token table (all widths
// and heads as registered), so that the full train-step parity fits the
// test's memory budget (the 250002 x 1024 table alone is 1 GB in fp32).
ModelInfo FambenchXlmrInfoForTest(int64_t num_hidden_layers, int64_t vocab_size);

// For the parity test only: hf_roberta_base with `num_hidden_layers` layers
// and a `vocab_size`-row token table, as FambenchXlmrInfoForTest.
ModelInfo HfRobertaBaseInfoForTest(int64_t num_hidden_layers, int64_t vocab_size);

}  // namespace torchgauge::models
