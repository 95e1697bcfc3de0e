// torchrec_dlrm: DLRM with a DCN-v2 interaction (TorchRec's DLRM_DCN, the
// architecture of MLPerf training's DLRMv2; Naumov et al. 2019,
// arXiv:1906.00091, with the low-rank cross network of Wang et al. 2021,
// "DCN V2", arXiv:2008.13535) as TorchBench configures it in
// torchbenchmark/models/torchrec_dlrm (__init__.py, args.py). TorchBench's
// torchrec_dlrm is not one of the paper's 84 models (its Table 1 lists only
// dlrm and nvidia_deeprecommender for recommendation); it is added here for
// breadth and its paper_name says so.
//
// It differs from our `dlrm` (the dot interaction of dlrm_s_pytorch.py) in
// the operators it exercises: a 3-layer low-rank cross network over the
// concatenated 27 x 64 feature vector instead of bmm + tril gather, 26
// Criteo-shaped tables pooled with include_last_offset offsets, a logit
// output with BCE-with-logits, and Adagrad (sparse for the tables).
//
// Where each hyperparameter comes from (TorchBench args.py defaults, which
// __init__.py passes to torchrec.models.dlrm.DLRM_DCN):
//   tables   26 (torchrec.datasets.criteo DEFAULT_CAT_NAMES cat_0..cat_25),
//            one EmbeddingBagConfig per feature named t_cat_K,
//            num_embeddings 100,000 each (--num_embeddings), embedding_dim 64,
//            pooling SUM, init U(-sqrt(1/n), sqrt(1/n)) (EmbeddingBagConfig)
//   dense    13 inputs (DEFAULT_INT_NAMES), dense arch 512-256-64, ReLU after
//            every layer (torchrec MLP)
//   interaction  LowRankCrossNet over (26 + 1) * 64 = 1728 features,
//            dcn_num_layers 3, dcn_low_rank_dim 512:
//            x_{l+1} = x_0 * (W_l (V_l x_l) + b_l) + x_l, W/V xavier_normal,
//            b zero
//   over arch  1728 -> 512 -> 512 -> 256 (ReLU) -> 1 (Linear, no activation)
//   Linear init  PyTorch's default (kaiming_uniform(a=sqrt(5)), bias
//            U(+-1/sqrt(fan_in)))
//   train    DLRMTrain: BCEWithLogitsLoss(mean) of logits.squeeze(-1) against
//            0/1 labels; Adagrad for the dense parameters and, fused into the
//            backward, for the tables (learning rate: see the deviations)
//   eval     the logits (DLRMTrain returns them squeezed)
//   data     torchrec.datasets.random.RandomRecDataset as TorchBench's random
//            loader calls it: ids_per_feature 1 (exactly one id per feature
//            and sample), ids uniform over each table, dense randn(13),
//            labels randint(0, 2)
//   batch    DEFAULT_TRAIN_BSIZE = DEFAULT_EVAL_BSIZE = 1024
//
// Deviations:
//   - Learning rate 0.005, MLPerf DLRMv2's Adagrad rate for this architecture
//     (mlcommons/training recommendation_v2/torchrec_dlrm README:
//     --interaction_type=dcn --adagrad --learning_rate 0.005), instead of
//     TorchBench's 15.0 (args.py's --learning_rate default, TorchRec's
//     dlrm_main default, tuned there for SGD). With Adagrad the first step
//     moves every dense weight by ~lr, so at 15.0 the cross network's
//     products overflow and the loss is NaN from the second step on (checked
//     with the plain-torch re-statement in tests/parity/ref_torchrec_ncf_deepfm.py); a
//     benchmark that trains on NaNs measures a diverged run.
//   - TorchBench shards the EmbeddingBagCollection with torchrec's
//     shard_modules into an FBGEMM table-batched embedding whose
//     EXACT_ADAGRAD update runs fused inside the backward. FBGEMM is not part
//     of LibTorch: here each table is an nn::EmbeddingBag(sparse=true) and the
//     same Adagrad (eps 1e-10, accumulator 0) updates it from its
//     sparse gradient after the backward, as torch.optim.Adagrad does. The
//     arithmetic is the same (only looked-up rows move); the kernels and the
//     placement of the update inside the step differ.
//   - Smoke runs use 1,000 rows per table (a dataset dimension, the hash
//     size of the random ids; the architecture is unchanged) so that two
//     small CPU cores do not spend the run initialising 26 x 100,000 x 64
//     floats; the parity test uses the smoke size for the same reason and
//     checks the full-size parameter count separately.
//
// Parameter names follow TorchRec's DLRM_DCN state dict:
//   sparse_arch.embedding_bag_collection.embedding_bags.t_cat_K.weight,
//   dense_arch.model._mlp.I._linear.{weight,bias},
//   inter_arch.crossnet.{W_kernels,V_kernels,bias}.L,
//   over_arch.model.0._mlp.I._linear.*, over_arch.model.1.{weight,bias}.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddTorchrecDlrmModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
