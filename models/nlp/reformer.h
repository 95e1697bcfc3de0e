// Reformer for masked language modeling (TorchBench hf_Reformer; Kitaev et
// al. 2020, "Reformer: The Efficient Transformer"), written as torch::nn
// modules whose parameter names follow transformers' ReformerForMaskedLM, so
// its state dict loads by name for the parity test.
//
// TorchBench builds AutoModelForMaskedLM.from_config(ReformerConfig()) and
// sets num_buckets = 128 where the config leaves it unset
// (torchbenchmark/models/hf_Reformer/__init__.py), with 4096 tokens for train
// and eval (basic_configs.py 'hf_Reformer': (4096, 4096, 'ReformerConfig()',
// 'AutoModelForMaskedLM')). ReformerConfig's defaults (transformers 4.57.1),
// written out here: hidden 256, 12 heads of 64, feed-forward 512 (ReLU), six
// layers alternating local / LSH self-attention, chunks of 64 tokens that
// attend to themselves and the previous chunk, one hash round, axial
// position embeddings of shape 64 x 64 with widths 64 + 192, vocab 320,
// dropout 0.05 (hidden and local attention; 0 on LSH attention), LayerNorm
// eps 1e-12, no word-embedding tie, an encoder (is_decoder False: no causal
// mask).
//
// Computed as transformers computes it: reversible residual layers on two
// streams (Y1 = X1 + Attention(X2), Y2 = X2 + FeedForward(Y1)), their
// concatenation normalised over 2 x 256 and projected on the vocabulary;
// LSH attention with shared query/key, a random rotation drawn per forward
// (torch.randn), buckets from the argmax over [xR, -xR], a stable argsort by
// bucket, gathers into chunk order, keys length-normalised, the self mask
// (-1e5 where a query meets its own position), logsumexp-normalised scores,
// and the outputs gathered back; local attention chunked the same way
// without hashing; axial position embeddings with dropout2d (a grid column
// at a time) in training and an index_select of the needed rows in eval.
//
// The backward is transformers' too (_ReversibleFunction): the forward keeps
// no activations, and the backward recomputes each layer from its outputs,
// last layer first, replaying the seeds the forward set and the LSH
// buckets it drew, and backpropagates through the recomputation (a second
// forward of every layer per train step, as in TorchBench). ReverseSort's
// custom backward (a gather by the sort order) is kept. Reproduced as it
// is, this backward's gradient is not exactly the gradient of the forward:
// an LSH layer's recomputation reuses the buckets and so skips the rotation
// draw, which shifts the generator, and its output dropout (p = 0.05) then
// draws another mask than the forward did; plain autograd through the same
// forward differs from it by up to 120% in some gradients (checked with
// transformers 4.57.1 at the parity test's sizes; they agree to 5e-7 with
// hidden dropout 0).
//
// Training reseeds the default generators before each layer's attention and
// feed-forward with a seed from the OS's entropy (transformers' torch.seed()),
// so train runs draw different dropout masks and rotations from run to run,
// as TorchBench's do.
//
// Not implemented (TorchBench's inputs never reach them): attention masks
// and the padding to a multiple of the chunk length (the lengths used are
// multiples), sequences no longer than a chunk (plain attention), factorised
// bucket counts, the hash seed, the cache for generation.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Registers hf_reformer.
void AddReformerModels(std::vector<ModelInfo>& out);

// The fields the parity test reduces (transformers' ReformerConfig fields of
// the same names); the defaults are the registered model's.
struct ReformerSizes {
  int64_t axial_pos_rows = 64, axial_pos_cols = 64;  // axial_pos_shape
  int64_t lsh_attn_chunk_length = 64;
  int64_t local_attn_chunk_length = 64;
  int64_t num_buckets = 128;
  // The seed each layer sets before its attention and its feed-forward in
  // training (transformers' torch.seed()); unset: from the OS's entropy, as
  // there. A parity test gives both implementations the same sequence.
  std::function<uint64_t()> layer_seed;
};

// hf_reformer's registry entry at `sizes`; train and eval sequences have
// axial_pos_rows x axial_pos_cols tokens.
ModelInfo ReformerInfo(const ReformerSizes& sizes = {});

}  // namespace torchgauge::models
