"""Parity reference (test-only) for speech_transformer: Speech-Transformer as
TorchBench vendors kaituoxu/Speech-Transformer (transformer/encoder.py,
decoder.py, attention.py, module.py, utils.py, loss.py, optimizer.py),
restated in plain torch, with its training step: label-smoothed (0.1)
cross-entropy over the non-padded targets, Adam(betas 0.9/0.98, eps 1e-9)
at the Noam schedule's first rate (k 0.2, d_model 512, warm-up 1).

No PyPI package has this model; the check is against this independent
statement of the published code. Configuration: TorchBench's config.py
(320 LFR features, d_model 512, 8 heads of 64, FFN 2048, 6 + 6 layers,
dropout 0.1, pe_maxlen 5000, vocabulary 1014 with <sos> 1 and <eos> 2, the
output projection tied to the target embedding). The batch has utterances
and transcripts of different lengths, so every padding mask is exercised;
dropout is active in the train step, and both sides draw its masks from the
same seeded generator in the same order.
"""
import math

import torch
from torch import nn
from torch.nn import functional as F

from parity_common import main

FEATURES, D_MODEL, HEADS, D_K, D_INNER, LAYERS, DROPOUT, PE_MAXLEN = 320, 512, 8, 64, 2048, 6, 0.1, 5000
VOCAB, SOS, EOS, IGNORE, SMOOTHING = 1014, 1, 2, -1, 0.1
BATCH, FRAMES, CHARS = 2, 40, 9


class PositionalEncoding(nn.Module):
    def __init__(self):
        super().__init__()
        pe = torch.zeros(PE_MAXLEN, D_MODEL)
        position = torch.arange(PE_MAXLEN).unsqueeze(1).float()
        div = torch.exp(torch.arange(0, D_MODEL, 2).float() * -(math.log(10000.0) / D_MODEL))
        pe[:, 0::2] = torch.sin(position * div)
        pe[:, 1::2] = torch.cos(position * div)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, length):
        return self.pe[:, :length]


class MultiHeadAttention(nn.Module):
    """Heads folded into the batch (head-major), masks repeated per head."""

    def __init__(self):
        super().__init__()
        self.w_qs, self.w_ks, self.w_vs = (nn.Linear(D_MODEL, HEADS * D_K) for _ in range(3))
        self.layer_norm = nn.LayerNorm(D_MODEL)
        self.fc = nn.Linear(HEADS * D_K, D_MODEL)
        self.attn_dropout, self.dropout = nn.Dropout(DROPOUT), nn.Dropout(DROPOUT)

    def forward(self, q_in, k_in, v_in, mask):
        b = q_in.size(0)

        def heads(x):
            return x.view(b, x.size(1), HEADS, D_K).permute(2, 0, 1, 3).contiguous().view(-1, x.size(1), D_K)

        q, k, v = heads(self.w_qs(q_in)), heads(self.w_ks(k_in)), heads(self.w_vs(v_in))
        scores = torch.bmm(q, k.transpose(1, 2)) / D_K**0.5
        scores = scores.masked_fill(mask.repeat(HEADS, 1, 1), -math.inf)
        out = torch.bmm(self.attn_dropout(F.softmax(scores, dim=2)), v)
        out = out.view(HEADS, b, q_in.size(1), D_K).permute(1, 2, 0, 3).contiguous().view(b, q_in.size(1), -1)
        return self.layer_norm(self.dropout(self.fc(out)) + q_in)


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w_1, self.w_2 = nn.Linear(D_MODEL, D_INNER), nn.Linear(D_INNER, D_MODEL)
        self.dropout = nn.Dropout(DROPOUT)
        self.layer_norm = nn.LayerNorm(D_MODEL)

    def forward(self, x):
        return self.layer_norm(self.dropout(self.w_2(F.relu(self.w_1(x)))) + x)


class EncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.slf_attn, self.pos_ffn = MultiHeadAttention(), FeedForward()

    def forward(self, x, keep, mask):
        x = self.slf_attn(x, x, x, mask) * keep
        return self.pos_ffn(x) * keep


class DecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.slf_attn, self.enc_attn, self.pos_ffn = MultiHeadAttention(), MultiHeadAttention(), FeedForward()

    def forward(self, x, enc, keep, slf_mask, enc_mask):
        x = self.slf_attn(x, x, x, slf_mask) * keep
        x = self.enc_attn(x, enc, enc, enc_mask) * keep
        return self.pos_ffn(x) * keep


def padded_keys(lengths, frames, rows):
    """batch x rows x frames, True at the keys past each length."""
    return (torch.arange(frames).unsqueeze(0) >= lengths.unsqueeze(1)).unsqueeze(1).expand(-1, rows, -1)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear_in = nn.Linear(FEATURES, D_MODEL)
        self.layer_norm_in = nn.LayerNorm(D_MODEL)
        self.positional_encoding = PositionalEncoding()
        self.dropout = nn.Dropout(DROPOUT)
        self.layer_stack = nn.ModuleList([EncoderLayer() for _ in range(LAYERS)])

    def forward(self, x, lengths):
        frames = x.size(1)
        keep = (torch.arange(frames).unsqueeze(0) < lengths.unsqueeze(1)).float().unsqueeze(-1)
        mask = padded_keys(lengths, frames, frames)
        x = self.dropout(self.layer_norm_in(self.linear_in(x)) + self.positional_encoding(frames))
        for layer in self.layer_stack:
            x = layer(x, keep, mask)
        return x


def add_sos_eos(padded_target):
    """decoder.py preprocess: <sos> + y padded with <eos>; y + <eos> padded
    with IGNORE_ID; written per utterance, as the original does."""
    ys = [y[y != IGNORE] for y in padded_target]
    width = max(len(y) for y in ys) + 1
    ys_in = torch.full((len(ys), width), EOS, dtype=torch.long)
    ys_out = torch.full((len(ys), width), IGNORE, dtype=torch.long)
    for i, y in enumerate(ys):
        ys_in[i, : len(y) + 1] = torch.cat([torch.tensor([SOS]), y])
        ys_out[i, : len(y) + 1] = torch.cat([y, torch.tensor([EOS])])
    return ys_in, ys_out


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tgt_word_emb = nn.Embedding(VOCAB, D_MODEL)
        self.positional_encoding = PositionalEncoding()
        self.dropout = nn.Dropout(DROPOUT)
        self.layer_stack = nn.ModuleList([DecoderLayer() for _ in range(LAYERS)])

    def forward(self, padded_target, enc, enc_lengths):
        ys_in, ys_out = add_sos_eos(padded_target)
        n = ys_in.size(1)
        keep = ys_in.ne(EOS).float().unsqueeze(-1)
        subsequent = torch.triu(torch.ones(n, n, dtype=torch.uint8), diagonal=1).unsqueeze(0).expand(ys_in.size(0), -1, -1)
        keypad = ys_in.eq(EOS).unsqueeze(1).expand(-1, n, -1)
        slf_mask = (keypad.to(torch.uint8) + subsequent).gt(0)
        enc_mask = padded_keys(enc_lengths, enc.size(1), n)
        # x_logit_scale sqrt(d_model) on the embedding; the projection is the
        # embedding matrix (tgt_emb_prj_weight_sharing).
        x = self.dropout(self.tgt_word_emb(ys_in) * D_MODEL**0.5 + self.positional_encoding(n))
        for layer in self.layer_stack:
            x = layer(x, enc, keep, slf_mask, enc_mask)
        return F.linear(x, self.tgt_word_emb.weight), ys_out


class SpeechTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder, self.decoder = Encoder(), Decoder()
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def forward(self, padded_input, input_lengths, padded_target):
        return self.decoder(padded_target, self.encoder(padded_input, input_lengths), input_lengths)


def smoothed_loss(logits, gold):
    """loss.py cal_loss with smoothing, averaged over the non-padded targets."""
    pred, gold = logits.view(-1, logits.size(2)), gold.contiguous().view(-1)
    non_pad = gold.ne(IGNORE)
    one_hot = torch.zeros_like(pred).scatter(1, (gold * non_pad.long()).view(-1, 1), 1)
    one_hot = one_hot * (1 - SMOOTHING) + (1 - one_hot) * SMOOTHING / pred.size(1)
    per_token = -(one_hot * F.log_softmax(pred, dim=1)).sum(dim=1)
    return per_token.masked_select(non_pad).sum() / non_pad.sum().item()


def build(model_id):
    if model_id != "speech_transformer":
        raise SystemExit(f"unknown model {model_id}")
    input_lengths = torch.tensor([FRAMES, FRAMES - 13])
    features = torch.randn(BATCH, FRAMES, FEATURES)
    features = features * (torch.arange(FRAMES).unsqueeze(0) < input_lengths.unsqueeze(1)).float().unsqueeze(-1)
    target = torch.randint(EOS + 1, VOCAB, (BATCH, CHARS))
    target[1, CHARS - 4:] = IGNORE
    inputs = {"padded_input": features, "input_lengths": input_lengths, "padded_target": target}

    def loss(m, i):
        logits, gold = m(i["padded_input"], i["input_lengths"], i["padded_target"])
        return smoothed_loss(logits, gold)

    return {
        "module": SpeechTransformer(),
        "inputs": inputs,
        "forward": lambda m, i: m(i["padded_input"], i["input_lengths"], i["padded_target"])[0],
        "loss": loss,
        # TransformerOptimizer: k * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) at step 1, warm-up 1.
        "optimizer": lambda m: torch.optim.Adam(m.parameters(), lr=0.2 * D_MODEL**-0.5, betas=(0.9, 0.98), eps=1e-9),
        "save_grads": True,
    }


if __name__ == "__main__":
    main(build)
