// nvidia_deeprecommender: NVIDIA's DeepRecommender, a deep autoencoder for
// collaborative filtering (Kuchaiev & Ginsburg 2017, "Training Deep
// AutoEncoders for Collaborative Filtering", arXiv:1708.01715;
// NVIDIA/DeepRecommender reco_encoder/model/model.py) as configured in
// TorchBench's torchbenchmark/models/nvidia_deeprecommender (nvtrain.py,
// nvinfer.py).
//
// Where each hyperparameter comes from (TorchBench nvtrain.py /
// nvinfer.py benchmark arguments):
//   input  197951 items ("number of movies in netflix training set", toyvocab)
//   hidden_layers 512,512,1024 -> layer_sizes [197951, 512, 512, 1024]:
//          encoder 197951 -> 512 -> 512 -> 1024, decoder 1024 -> 512 -> 512
//          -> 197951 (six layers, as the paper's section 2.1 says)
//   non_linearity_type selu on every layer, the decoder's last included
//          (skip_last_layer_nl False)
//   constrained False: the decoder has its own weights (decode_w)
//   drop_prob 0.8: dropout on the 1024-wide code only
//   init   xavier_uniform weights, zero biases (model.py)
//   loss   masked MSE: sum over rated items ((y * mask - x)^2) / number of
//          ratings (model.MSEloss, size_average False, then / num_ratings)
//   optim  "momentum": SGD lr 0.005, momentum 0.9, weight decay 0
//   batch  256 (TorchBench DEFAULT_TRAIN_BSIZE / DEFAULT_EVAL_BSIZE)
//
// Inputs: TorchBench feeds dense randn "toy" rows; here each row is a user's
// sparse rating vector (ratings 1..5 on a random ~2% of items, 0 elsewhere),
// stored dense as the data layer's to_dense() would, so the mask in the
// loss does real work.
//
// Parameter names follow AutoEncoder: encode_w.N, encode_b.N, decode_w.N,
// decode_b.N (ParameterLists).
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

void AddDeepRecommenderModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
