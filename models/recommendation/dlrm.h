// dlrm: the Deep Learning Recommendation Model (Naumov et al. 2019, "Deep
// Learning Recommendation Model for Personalization and Recommendation
// Systems", arXiv:1906.00091; facebookresearch/dlrm dlrm_s_pytorch.py) as
// configured in TorchBench's torchbenchmark/models/dlrm/__init__.py.
//
// Where each hyperparameter comes from (TorchBench dlrm/__init__.py, which
// cites the paper's configuration):
//   arch_embedding_size  8 tables of 1,000,000 rows ("1000000-...-1000000")
//   arch_sparse_feature_size  64 (embedding dimension m_spa)
//   arch_mlp_bot  512-512-64: dense input 512, bottom MLP 512 -> 512 -> 64
//   arch_interaction_op "dot", arch_interaction_itself False: pairwise dots of
//          the 9 feature vectors (8 sparse + 1 dense), strictly lower
//          triangle (36) concatenated with the dense vector (64) -> 100
//   arch_mlp_top  1024-1024-1024-1 after the 100-wide interaction
//   sigmoid_bot = sigmoid_top = -1: every layer, the last included, is
//          followed by ReLU (TorchBench passes -1 rather than the CLI's
//          "last layer" default, so there is no final sigmoid)
//   embeddings  nn.EmbeddingBag(n, 64, mode="sum", sparse=True), offsets per
//          table, num_indices_per_lookup = 100 (fixed)
//   init   embeddings U(-sqrt(1/n), sqrt(1/n)); Linear weights
//          N(0, sqrt(2/(in+out))), biases N(0, sqrt(1/out))
//   train  MSELoss(mean) against random targets in [0, 1) (TorchBench
//          replaces the configured BCE with MSE for train), SGD lr 0.01
//   data   random: dense U[0, 1), indices uniform over each table,
//          mini_batch_size 2048
//
// Parameter names follow DLRM_Net: emb_l.K.weight, bot_l.{0,2}.*,
// top_l.{0,2,4,6}.* (ReLU modules sit at the odd indices of the Sequentials).
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddDlrmModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
