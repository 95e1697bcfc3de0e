"""Parity reference (test-only) for attention_is_all_you_need_pytorch: the
base Transformer as TorchBench's copy of jadore801120/attention-is-all-you-
need-pytorch builds it (transformer/Models.py, Layers.py, SubLayers.py,
Modules.py), restated in plain torch, and its training step (train.py):
summed cross-entropy ignoring the padding id, Adam(betas 0.9/0.98, eps 1e-9)
at ScheduledOptim's first learning rate (lr_mul 2, d_model 512, 128 warm-up
steps).

No PyPI package has this model; the check is against this independent
statement of the published code. Configuration: TorchBench's opt namespace
(d_model 512, d_inner 2048, 8 heads of 64, 6 + 6 layers, dropout 0.1,
separate source/target embeddings and projection, n_position 200, the
shared Multi30k vocabulary of 9521 with <blank> = 1). Dropout is active in
the train step: both sides draw its masks from the same seeded generator in
the same order, so the step is compared exactly.
"""
import math

import torch
from torch import nn
from torch.nn import functional as F

from parity_common import main

VOCAB, PAD, D_MODEL, D_INNER, HEADS, D_K, LAYERS, N_POSITION, DROPOUT = 9521, 1, 512, 2048, 8, 64, 6, 200, 0.1
BATCH, SRC_LEN, TRG_LEN, FIRST_WORD = 2, 32, 32, 4


def sinusoid_table(n_position, d_hid):
    pos = torch.arange(n_position, dtype=torch.float64).unsqueeze(1)
    j = torch.arange(d_hid, dtype=torch.float64)
    angle = pos / torch.pow(10000.0, 2 * torch.div(j, 2, rounding_mode="floor") / d_hid)
    table = torch.where(j.long() % 2 == 0, torch.sin(angle), torch.cos(angle))
    return table.float().unsqueeze(0)


class PositionalEncoding(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("pos_table", sinusoid_table(N_POSITION, D_MODEL))

    def forward(self, x):
        return x + self.pos_table[:, : x.size(1)].clone().detach()


class MultiHeadAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.w_qs = nn.Linear(D_MODEL, HEADS * D_K, bias=False)
        self.w_ks = nn.Linear(D_MODEL, HEADS * D_K, bias=False)
        self.w_vs = nn.Linear(D_MODEL, HEADS * D_K, bias=False)
        self.fc = nn.Linear(HEADS * D_K, D_MODEL, bias=False)
        self.layer_norm = nn.LayerNorm(D_MODEL, eps=1e-6)
        self.drop_attn, self.drop_out = nn.Dropout(DROPOUT), nn.Dropout(DROPOUT)

    def forward(self, q_in, kv, mask):
        b, lq, lk = q_in.size(0), q_in.size(1), kv.size(1)
        q = self.w_qs(q_in).view(b, lq, HEADS, D_K).transpose(1, 2)
        k = self.w_ks(kv).view(b, lk, HEADS, D_K).transpose(1, 2)
        v = self.w_vs(kv).view(b, lk, HEADS, D_K).transpose(1, 2)
        scores = torch.matmul(q / math.sqrt(D_K), k.transpose(2, 3)).masked_fill(mask.unsqueeze(1) == 0, -1e9)
        probs = self.drop_attn(F.softmax(scores, dim=-1))
        out = torch.matmul(probs, v).transpose(1, 2).contiguous().view(b, lq, -1)
        return self.layer_norm(self.drop_out(self.fc(out)) + q_in)


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w_1, self.w_2 = nn.Linear(D_MODEL, D_INNER), nn.Linear(D_INNER, D_MODEL)
        self.layer_norm = nn.LayerNorm(D_MODEL, eps=1e-6)
        self.dropout = nn.Dropout(DROPOUT)

    def forward(self, x):
        return self.layer_norm(self.dropout(self.w_2(F.relu(self.w_1(x)))) + x)


class EncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.slf_attn, self.pos_ffn = MultiHeadAttention(), FeedForward()

    def forward(self, x, mask):
        return self.pos_ffn(self.slf_attn(x, x, mask))


class DecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.slf_attn, self.enc_attn, self.pos_ffn = MultiHeadAttention(), MultiHeadAttention(), FeedForward()

    def forward(self, x, enc, slf_mask, enc_mask):
        return self.pos_ffn(self.enc_attn(self.slf_attn(x, x, slf_mask), enc, enc_mask))


class Stack(nn.Module):
    def __init__(self, emb_name, layer):
        super().__init__()
        setattr(self, emb_name, nn.Embedding(VOCAB, D_MODEL, padding_idx=PAD))
        self.emb_name = emb_name
        self.position_enc = PositionalEncoding()
        self.dropout = nn.Dropout(DROPOUT)
        self.layer_stack = nn.ModuleList([layer() for _ in range(LAYERS)])
        self.layer_norm = nn.LayerNorm(D_MODEL, eps=1e-6)

    def embed(self, seq):
        # No sqrt(d_model) scale (scale_emb False); dropout before the norm.
        return self.layer_norm(self.dropout(self.position_enc(getattr(self, self.emb_name)(seq))))


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Stack("src_word_emb", EncoderLayer)
        self.decoder = Stack("trg_word_emb", DecoderLayer)
        self.trg_word_prj = nn.Linear(D_MODEL, VOCAB, bias=False)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def forward(self, src, trg):
        src_mask = (src != PAD).unsqueeze(-2)
        n = trg.size(1)
        subsequent = (1 - torch.triu(torch.ones(1, n, n), diagonal=1)).bool()
        trg_mask = (trg != PAD).unsqueeze(-2) & subsequent
        enc = self.encoder.embed(src)
        for layer in self.encoder.layer_stack:
            enc = layer(enc, src_mask)
        dec = self.decoder.embed(trg)
        for layer in self.decoder.layer_stack:
            dec = layer(dec, enc, trg_mask, src_mask)
        logits = self.trg_word_prj(dec)
        return logits.view(-1, logits.size(2))


def first_noam_rate(lr_mul=2.0, d_model=D_MODEL, warmup=128, step=1):
    return lr_mul * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def build(model_id):
    if model_id != "attention_is_all_you_need_pytorch":
        raise SystemExit(f"unknown model {model_id}")
    model = Transformer()
    trg = torch.randint(FIRST_WORD, VOCAB, (BATCH, TRG_LEN + 1))
    inputs = {
        "src_seq": torch.randint(FIRST_WORD, VOCAB, (BATCH, SRC_LEN)),
        "trg_seq": trg[:, :-1].contiguous(),  # train.py patch_trg
        "gold": trg[:, 1:].contiguous().view(-1),
    }
    return {
        "module": model,
        "inputs": inputs,
        "forward": lambda m, i: m(i["src_seq"], i["trg_seq"]),
        "loss": lambda m, i: F.cross_entropy(m(i["src_seq"], i["trg_seq"]), i["gold"], ignore_index=PAD,
                                             reduction="sum"),
        "optimizer": lambda m: torch.optim.Adam(m.parameters(), lr=first_noam_rate(), betas=(0.9, 0.98), eps=1e-9),
        "save_grads": True,
    }


if __name__ == "__main__":
    main(build)
