"""Reference for the docTR pair (models/vision/detection/doctr.cc): python-doctr 1.1.0 itself.

doctr_det_predictor: doctr.models.detection.db_resnet50 and
doctr_reco_predictor: doctr.models.recognition.crnn_vgg16_bn, both built with
pretrained=False, pretrained_backbone=False (nothing downloaded), randomly
initialised with the seed parity_common sets.

BatchNorm calibration: at random initialisation the running statistics are
0 / 1, so in eval mode the activations grow block after block (db_resnet50's
logits reach |700| and its sigmoid is a map of exact 0s and 1s, which would
compare equal whatever the network did). Before anything is saved, one
train-mode forward under no_grad with momentum None (a cumulative average:
the running statistics become that batch's statistics) sets them as a
trained network's would be; momentum 0.1 is then restored. The C++ model
loads these buffers with the rest of the state dict.

det (eval only, as TorchBench): inputs images 1 x 3 x 128 x 128 (randn,
as TorchBench's); output model(x, return_model_output=True)["out_map"], the
sigmoid probability map. Saved: params, param_count, inputs, output.

reco (parity_common.main): inputs images 2 x 3 x 32 x 128 in [0, 1) (train.py
feeds ToTensor crops), random words of 1..12 characters of VOCABS["french"]
(train.py --min-chars 1 --max-chars 12) as model.build_target encodes them
(targets, N x 32 int32 padded with len(vocab); target_lengths int32).
forward: model(Normalize(x), return_model_output=True)["out_map"] (the logits);
loss: model(Normalize(x), words)["loss"] (CRNN.compute_loss: CTC); optimizer:
references/recognition/train.py's Adam(lr 1e-3, betas (0.95, 0.999), eps
1e-6, weight_decay 0) with its clip_grad_norm_(parameters, 5) between backward
and step. Normalize is torchvision.transforms.v2.Normalize, train.py's
batch_transforms mean / std.
"""
import argparse

import torch
from torch import nn

from doctr.datasets import VOCABS
from doctr.models import detection, recognition
from torchvision.transforms.v2 import Normalize
from parity_common import main

MEAN, STD = (0.694, 0.695, 0.693), (0.299, 0.296, 0.301)  # train.py batch_transforms
MIN_CHARS, MAX_CHARS = 1, 12


def calibrate_batchnorm(model, x, **kwargs):
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    for m in bns:
        m.momentum = None
        m.reset_running_stats()
    model.train()
    with torch.no_grad():
        model(x, **kwargs)
    for m in bns:
        m.momentum = 0.1
        m.num_batches_tracked.zero_()


class ClippedAdam(torch.optim.Adam):
    """train.py's Adam, with fit_one_epoch's clip_grad_norm_(parameters, 5) before each step."""

    def __init__(self, model):
        params = [p for p in model.parameters() if p.requires_grad]
        super().__init__(params, 1e-3, betas=(0.95, 0.999), eps=1e-6, weight_decay=0)
        self.clipped = params

    def step(self, closure=None):
        torch.nn.utils.clip_grad_norm_(self.clipped, 5)
        return super().step(closure)


def random_words(n):
    vocab = VOCABS["french"]
    lengths = torch.randint(MIN_CHARS, MAX_CHARS + 1, (n,))
    return ["".join(vocab[i] for i in torch.randint(0, len(vocab), (int(k),)).tolist()) for k in lengths]


def build_reco(model_id):
    assert model_id == "doctr_reco_predictor", model_id
    model = recognition.crnn_vgg16_bn(pretrained=False, pretrained_backbone=False)
    norm = Normalize(mean=MEAN, std=STD)
    images = torch.rand(2, 3, 32, 128)
    words = random_words(2)
    encoded, seq_len = model.build_target(words)
    assert (encoded < len(model.vocab)).sum() == sum(seq_len)
    calibrate_batchnorm(model, norm(images), target=words)
    return {
        "module": model,
        "inputs": {
            "images": images,
            "targets": torch.from_numpy(encoded),
            "target_lengths": torch.tensor(seq_len, dtype=torch.int32),
        },
        "forward": lambda m, i: m(norm(i["images"]), return_model_output=True)["out_map"],
        "loss": lambda m, i: m(norm(i["images"]), words)["loss"],
        "optimizer": ClippedAdam,
    }


def main_det(out):
    torch.manual_seed(0)
    model = detection.db_resnet50(pretrained=False, pretrained_backbone=False)
    images = torch.randn(1, 3, 128, 128)
    calibrate_batchnorm(model, images, return_model_output=True)
    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.eval()
    with torch.no_grad():
        output = model(images, return_model_output=True)["out_map"]
    torch.save(
        {
            "params": params,
            "param_count": sum(p.numel() for p in model.parameters()),
            "inputs": {"images": images},
            "output": output.detach().clone(),
        },
        out,
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    args, _ = parser.parse_known_args()
    if args.model == "doctr_det_predictor":
        main_det(args.out)
    else:
        main(build_reco)
