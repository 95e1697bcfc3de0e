// deepfm: DeepFM (Guo et al. 2017, "DeepFM: A Factorization-Machine based
// Neural Network for CTR Prediction", IJCAI'17, arXiv:1703.04247), the
// DeepFM-D variant of the paper's Criteo experiments, on Criteo-shaped
// inputs. Not one of the TorchBench paper's 84 models; added for breadth of
// the recommendation domain, and its paper_name says so. Chosen over Wide &
// Deep because its FM component adds operators the other recommendation
// models lack (the square-of-sum minus sum-of-squares pairwise term: pow,
// sum over a field dimension, sub; value-scaled continuous-field embeddings;
// a sigmoid output trained with binary_cross_entropy; dropout).
//
// Architecture (paper section 2.1, Figures 1-4):
//   fields   39 Criteo fields: 13 continuous, 26 categorical. A categorical
//            field looks up its own embedding table; a continuous field i is
//            "represented as the value itself": its field vector is
//            x_i * v_i with one learned vector v_i (and first-order weight
//            w_i).
//   FM       y_FM = <w, x> + sum_{i<j} <V_i, V_j> x_i x_j, computed as
//            bias + sum of first-order terms + 0.5 * sum_k ((sum_i e_ik)^2 -
//            sum_i e_ik^2) over the 39 field vectors e_i
//   DNN      the 39 x 10 field vectors, flattened (390), through 400-400-400
//            with ReLU and dropout 0.5, then Linear(400, 1)
//   output   y = sigmoid(y_FM + y_DNN); log loss (binary cross-entropy)
//
// Hyperparameters: the paper's Criteo settings (section 3.1, following Qu et
// al. 2016's FNN/PNN settings): dropout 0.5, network 400-400-400, Adam,
// ReLU. Embedding size 10 (k in the paper; the PNN settings it adopts).
// Stated as not given by the paper, and chosen here: Adam's learning rate
// (PyTorch's default 0.001), the initialisation (embeddings and first-order
// weights N(0, 0.01), Linear layers PyTorch's default), and the batch size
// (1024, as TorchBench's Criteo-shaped torchrec_dlrm; the paper states none).
//
// Criteo shape: the 26 categorical vocabularies are the Criteo Kaggle
// (Display Advertising Challenge) cardinalities that facebookresearch/dlrm
// and TorchRec use for that dataset (1460, 583, 10131227, ..., 142572;
// 33,762,577 rows in all). Inputs are random: one id per categorical field,
// uniform over its vocabulary; continuous values U[0, 1) (Criteo's counts
// after the usual log(1 + x) scaling are non-negative); labels 0/1.
//
// Deviations: smoke runs cap every vocabulary at 1,000 rows (dataset
// dimensions; the architecture is unchanged) so that two small CPU cores do
// not initialise and Adam-update 371M weights; the parity test uses the
// smoke size and checks the full-size parameter count separately.
//
// Parameter names (this re-statement's; the paper publishes no code):
//   embeddings.K.weight [n_K, 10] and first_order.K.weight [n_K, 1] for the
//   categorical fields, dense_embedding [13, 10], dense_first_order
//   (Linear(13, 1): the continuous fields' w_i and the global bias),
//   dnn.{0,3,6,9} (Linear; ReLU and Dropout between).
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddDeepFmModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
