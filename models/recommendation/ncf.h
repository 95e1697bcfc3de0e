// ncf: NeuMF, the Neural Collaborative Filtering model (He et al. 2017,
// "Neural Collaborative Filtering", WWW'17, arXiv:1708.05031), as the MLPerf
// training v0.5 recommendation benchmark's PyTorch reference builds and
// trains it (mlcommons/training recommendation/pytorch: neumf.py, ncf.py,
// dataset.py, run_and_time.sh). Not one of the TorchBench paper's 84 models;
// added for breadth of the recommendation domain, and its paper_name says so.
//
// NeuMF fuses two towers over the same (user, item) pair: GMF, the
// elementwise product of a user and an item embedding, and an MLP over the
// concatenation of a second pair of embeddings; a final Linear maps
// [GMF, MLP] to one logit.
//
// Where each hyperparameter comes from (MLPerf v0.5 run_and_time.sh:
// `ncf.py ml-20m -l 0.0005 -b 2048 --layers 256 256 128 64 -f 64`):
//   dataset  MovieLens-20m as convert.py indexes it: 138,493 users, 26,744
//            items (the rows of the user and item tables)
//   factors  mf_dim 64: GMF embeddings of width 64
//   layers   256 256 128 64: MLP embeddings of width 256 / 2 = 128 per side,
//            Linear 256 -> 256 -> 128 -> 64, ReLU after each
//   final    Linear(64 + 64, 1), no activation in training (logits); the
//            evaluation's predict() applies a sigmoid (sigmoid=True)
//   init     embeddings N(0, 0.01); MLP weights Glorot uniform
//            (limit sqrt(6 / (fan_in + fan_out))), final weight LeCun uniform
//            (limit sqrt(3 / fan_in)); biases PyTorch's Linear default
//   loss     BCEWithLogitsLoss (mean) against 0/1 labels
//   negatives  4 per positive (-n default): dataset.py returns, for every
//            positive (user, item, 1), four (user, random item, 0)
//   optim    Adam lr 0.0005, betas (0.9, 0.999), eps 1e-8
//   batch    2048 (-b) for training; evaluation scores one user's 999
//            held-out negatives plus the test item per forward (1000)
//
// Inputs: `user`, `item` (int64 [B]) and `label` (float [B, 1]) laid out as
// dataset.py does before shuffling: groups of five samples of one user, the
// first a positive, the other four that user with uniformly random items
// (the negative sampling). The positives are random (user, item) pairs (no
// ratings are loaded), so dataset.py's "not already rated" re-draw has
// nothing to reject; sampling happens when the workload is built, as data
// loading is outside the measured step.
//
// Deviations: smoke runs use 2,000 users and 1,000 items (dataset
// dimensions; the towers are unchanged) to keep Adam's dense update of the
// 31.7M embedding weights off two small CPU cores; the parity test uses the
// smoke size and checks the full-size parameter count separately.
//
// Parameter names follow NeuMF: mf_user_embed, mf_item_embed,
// mlp_user_embed, mlp_item_embed, mlp.{0,1,2}, final.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddNcfModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
