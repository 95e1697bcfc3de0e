// docTR's two TorchBench models (python-doctr 1.1.0, mindee/doctr), the
// detection and recognition networks of ocr_predictor(det_arch="db_resnet50",
// reco_arch="crnn_vgg16_bn") that torchbenchmark/models/doctr_det_predictor
// and doctr_reco_predictor take out of the predictor (predictor.det_predictor
// .model, predictor.reco_predictor.model).
//
// doctr_det_predictor: DBNet (Liao et al. 2020, "Real-time Scene Text
// Detection with Differentiable Binarization"), db_resnet50
// (doctr/models/detection/differentiable_binarization/pytorch.py):
//  - feat_extractor: torchvision resnet50 through IntermediateLayerGetter,
//    the outputs of layer1..layer4 (256, 512, 1024, 2048 channels at 1/4 ..
//    1/32); avgpool and fc are dropped.
//  - fpn (docTR's FeaturePyramidNetwork, head_chans 256): per level a 1x1 conv
//    to 256 (no bias) + BN + ReLU; top-down, the coarser map upsampled x2
//    (bilinear, align_corners) added to the finer one; per level a 3x3 conv
//    to 256 / 4 = 64 (no bias) + BN + ReLU + bilinear upsample by 2^level to
//    1/4; the four maps concatenated (256 channels).
//  - prob_head: 3x3 conv 256 -> 64 (no bias) + BN + ReLU, ConvTranspose2d(64,
//    64, 2, stride 2, no bias) + BN + ReLU, ConvTranspose2d(64, 1, 2, stride 2)
//    back to the input resolution; thresh_head the same (used only by the
//    training loss, present in the state dict and the parameter count).
//  - init: kaiming_normal (fan_out, relu) convolutions, BN weight 1 bias 0,
//    the ConvTranspose2d layers PyTorch's default.
//  Eval (TorchBench): model(x, return_model_output=True) on a random
//  N x 3 x 1024 x 1024 batch: the network, sigmoid (out["out_map"]), then
//  (target is None) DBPostProcessor on prob_map.detach().cpu() as NumPy.
//
// doctr_reco_predictor: CRNN (Shi et al. 2015), crnn_vgg16_bn
// (doctr/models/recognition/crnn/pytorch.py):
//  - feat_extractor: docTR's vgg16_bn_r features: torchvision vgg16_bn's 13
//    conv3x3 (bias) + BN + ReLU, its 5 max pools with the last three made
//    rectangular MaxPool2d((2, 1)); a 3 x 32 x 128 crop becomes 512 x 1 x 32.
//  - decoder: LSTM(512, 128, num_layers 2, bidirectional, batch_first) over
//    the 32 columns; linear: 256 -> len(VOCABS["french"]) + 1 = 127.
//  - init: as torchvision VGG (kaiming_normal fan_out convolutions, zero
//    biases, BN 1/0); LSTM and Linear PyTorch's defaults.
//  Eval (TorchBench): model(x, return_model_output=True) on a random
//  N x 3 x 32 x 128 batch: the logits (out["out_map"]), then (target is None)
//  CTCPostProcessor: softmax(logits).max(-1).min(1) (confidences), argmax
//  moved to the host, groupby / blank removal / vocab lookup in Python.
//  Train (our extension, TorchBench implements eval only): one iteration of
//  docTR's references/recognition/train.py fit_one_epoch.
#pragma once

#include <vector>

#include "models/workload.h"

namespace torchgauge::models {

// Registers doctr_det_predictor and doctr_reco_predictor.
void AddDoctrModels(std::vector<ModelInfo>& out);

}  // namespace torchgauge::models
