// The base Transformer of "Attention Is All You Need" (Vaswani et al. 2017)
// as TorchBench runs it: attention_is_all_you_need_pytorch, a copy of
// jadore801120/attention-is-all-you-need-pytorch (transformer/Models.py,
// Layers.py, SubLayers.py, Modules.py) trained on Multi30k de->en.
// Parameter names follow that repository's module attributes.
//
// Hyperparameters and where they come from:
//  - d_model = d_word_vec 512, d_inner 2048, n_head 8, d_k = d_v 64,
//    n_layers 6 (encoder) + 6 (decoder), dropout 0.1: TorchBench's
//    attention_is_all_you_need_pytorch/__init__.py opt namespace (= the
//    paper's base model, table 3).
//  - embs_share_weight False, proj_share_weight False: the same namespace,
//    so source embedding, target embedding and output projection are three
//    separate matrices and logits are not rescaled.
//  - n_position 200 (sinusoid table), LayerNorm eps 1e-6, bias-free q/k/v/fc
//    projections, post-norm residual blocks, a LayerNorm after the embedding
//    and positional encoding, no sqrt(d_model) embedding scale: Models.py and
//    SubLayers.py of that code.
//  - Vocabulary: the shared Multi30k de-en vocabulary of TorchBench's
//    m30k_deen_shr.pkl (preprocess.py -share_vocab), 9521 tokens for source
//    and target, <blank> padding at index 1. The pickle is stored in Git LFS
//    and could not be read here; 9521 is the size reported for that file.
//  - Optimizer: Adam(betas (0.9, 0.98), eps 1e-9) under ScheduledOptim with
//    lr_mul 2.0, d_model 512, 128 warm-up steps; loss: summed cross entropy
//    ignoring padding, no label smoothing (TorchBench's __init__.py/train.py).
#pragma once

#include <cstdint>
#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

struct AttentionIsAllYouNeedConfig {
  int64_t src_vocab_size = 9521;
  int64_t trg_vocab_size = 9521;
  int64_t pad_idx = 1;
  int64_t d_model = 512;
  int64_t d_inner = 2048;
  int64_t n_layers = 6;
  int64_t n_head = 8;
  int64_t d_k = 64;
  int64_t d_v = 64;
  int64_t n_position = 200;
  double dropout = 0.1;
};

// Registers attention_is_all_you_need_pytorch.
void AddTransformerModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
