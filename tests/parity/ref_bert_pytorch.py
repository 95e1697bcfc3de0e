"""Parity reference for bert_pytorch: a short re-statement, written for this
test, of codertimo/BERT-pytorch as TorchBench vendors it
(torchbenchmark/models/BERT_pytorch/bert_pytorch; no pip package exists).

Facts re-stated from that package: BERTEmbedding (token and segment
embeddings with padding_idx 0, the sinusoidal "pe" buffer of max_len 512,
dropout), 12 pre-norm TransformerBlocks with its own LayerNorm
(a_2 * (x - mean) / (std + 1e-6) + b_2, unbiased std), MultiHeadedAttention
with masked_fill(mask == 0, -1e9) on the padding keys, a GELU (nn.GELU, erf)
feed-forward, dropout 0.1 everywhere, the NSP and MLM LogSoftmax heads; the
loss is NLLLoss(ignore_index=0) on both heads; the optimizer is Adam(betas
(0.9, 0.999), weight_decay 0.01) whose lr ScheduledOptim(768, 10000) sets
before each step. Sizes: TorchBench's (hidden 768, 12 layers, 12 heads, a
20,005-word vocabulary). The C++ model calls the same ATen random ops in the
same order, so the train step seeded with parity_common.TRAIN_SEED draws the
same dropout masks.

The first step's learning rate is 768^-0.5 * 10000^-1.5 = 3.6e-8, so the
updated parameters barely move: the gradients of the step are saved too.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from parity_common import main

VOCAB, HIDDEN, LAYERS, HEADS, P = 20005, 768, 12, 12, 0.1
SEQ = 16


class LayerNorm(nn.Module):
    def __init__(self, n, eps=1e-6):
        super().__init__()
        self.a_2, self.b_2, self.eps = nn.Parameter(torch.ones(n)), nn.Parameter(torch.zeros(n)), eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        std = x.std(-1, keepdim=True)
        return self.a_2 * (x - mean) / (std + self.eps) + self.b_2


class Position(nn.Module):
    def __init__(self, d, max_len=512):
        super().__init__()
        pe = torch.zeros(max_len, d)
        position = torch.arange(0, max_len).float().unsqueeze(1)
        div = (torch.arange(0, d, 2).float() * -(math.log(10000.0) / d)).exp()
        pe[:, 0::2], pe[:, 1::2] = torch.sin(position * div), torch.cos(position * div)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return self.pe[:, : x.size(1)]


class Embedding(nn.Module):
    def __init__(self):
        super().__init__()
        self.token = nn.Embedding(VOCAB, HIDDEN, padding_idx=0)
        self.position = Position(HIDDEN)
        self.segment = nn.Embedding(3, HIDDEN, padding_idx=0)

    def forward(self, seq, seg):
        return F.dropout(self.token(seq) + self.position(seq) + self.segment(seg), P, self.training)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear_layers = nn.ModuleList([nn.Linear(HIDDEN, HIDDEN) for _ in range(3)])
        self.output_linear = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x, mask):
        b, d_k = x.size(0), HIDDEN // HEADS
        q, k, v = [l(x).view(b, -1, HEADS, d_k).transpose(1, 2) for l in self.linear_layers]
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)
        p_attn = F.dropout(F.softmax(scores.masked_fill(mask == 0, -1e9), dim=-1), P, self.training)
        return self.output_linear(torch.matmul(p_attn, v).transpose(1, 2).contiguous().view(b, -1, HIDDEN))


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w_1, self.w_2 = nn.Linear(HIDDEN, 4 * HIDDEN), nn.Linear(4 * HIDDEN, HIDDEN)

    def forward(self, x):
        return self.w_2(F.dropout(F.gelu(self.w_1(x)), P, self.training))


class Sublayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = LayerNorm(HIDDEN)

    def forward(self, x, f):
        return x + F.dropout(f(self.norm(x)), P, self.training)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention, self.feed_forward = Attention(), FeedForward()
        self.input_sublayer, self.output_sublayer = Sublayer(), Sublayer()

    def forward(self, x, mask):
        x = self.input_sublayer(x, lambda t: self.attention(t, mask))
        x = self.output_sublayer(x, self.feed_forward)
        return F.dropout(x, P, self.training)


class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = Embedding()
        self.transformer_blocks = nn.ModuleList([Block() for _ in range(LAYERS)])

    def forward(self, x, seg):
        mask = (x > 0).unsqueeze(1).repeat(1, x.size(1), 1).unsqueeze(1)
        x = self.embedding(x, seg)
        for block in self.transformer_blocks:
            x = block(x, mask)
        return x


class Head(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.linear = nn.Linear(HIDDEN, n)

    def forward(self, x):
        return F.log_softmax(self.linear(x), dim=-1)


class BertLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert, self.next_sentence, self.mask_lm = Bert(), Head(2), Head(VOCAB)

    def forward(self, x, seg):
        x = self.bert(x, seg)
        return self.next_sentence(x[:, 0]), self.mask_lm(x)


class ScheduledAdam:
    def __init__(self, model):
        self.adam = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), weight_decay=0.01)
        self.steps = 0

    def zero_grad(self):
        self.adam.zero_grad()

    def step(self):
        self.steps += 1
        lr = HIDDEN ** -0.5 * min(self.steps ** -0.5, 10000 ** -1.5 * self.steps)
        for group in self.adam.param_groups:
            group["lr"] = lr
        self.adam.step()


def sentence_pairs():
    # Two BERTDataset samples: [SOS]=3 t1 [EOS]=2 t2 [EOS], then padding 0;
    # segments 1, 2, 0; masked words (<mask>=4, a random index, or kept) are
    # labelled with the original word, 0 elsewhere. is_next 1 and 0 (the
    # second NSP term is ignored by ignore_index=0, as in TorchBench).
    words = torch.randint(6, VOCAB, (2, 6))
    ids = torch.zeros(2, SEQ, dtype=torch.long)
    ids[0, :8] = torch.tensor([3, *words[0, :3], 2, *words[0, 3:5], 2])
    ids[1, :6] = torch.tensor([3, words[1, 0], 2, *words[1, 1:3], 2])
    seg = torch.zeros_like(ids)
    seg[0, :5], seg[0, 5:8], seg[1, :3], seg[1, 3:6] = 1, 2, 1, 2
    labels = torch.zeros_like(ids)
    for b, pos, token in ((0, 2, 4), (0, 6, int(torch.randint(0, VOCAB, ()))), (1, 1, 4), (1, 4, None)):
        labels[b, pos] = ids[b, pos]
        if token is not None:
            ids[b, pos] = token
    return {"bert_input": ids, "segment_label": seg, "is_next": torch.tensor([1, 0]), "bert_label": labels}


def loss(m, i):
    next_sent, mask_lm = m(i["bert_input"], i["segment_label"])
    return F.nll_loss(next_sent, i["is_next"], ignore_index=0) + F.nll_loss(
        mask_lm.transpose(1, 2), i["bert_label"], ignore_index=0)


def build(model_id):
    if model_id != "bert_pytorch":
        raise SystemExit(f"unknown model id {model_id}")
    return {
        "module": BertLM(),
        "inputs": sentence_pairs(),
        "forward": lambda m, i: m(i["bert_input"], i["segment_label"])[1],
        "loss": loss,
        "optimizer": ScheduledAdam,
        "save_grads": True,
    }


if __name__ == "__main__":
    main(build)
