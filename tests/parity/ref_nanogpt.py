"""Parity reference for nanogpt, against transformers 4.57.1's GPT2LMHeadModel.

TorchBench's nanogpt is Karpathy's nanoGPT GPT with GPTConfig's bias=True and
dropout 0.0: GPT-2's architecture, which transformers' GPT2LMHeadModel states
with the same parameter names, its projections stored transposed (Conv1D,
[in, out]) where nanoGPT's are nn.Linear ([out, in]). This script builds
GPT2LMHeadModel (gelu_new, LayerNorm eps 1e-5, no dropout, eager attention,
tied lm_head) with random weights at a reduced configuration (2 layers, 4
heads, n_embd 128, vocab 1024, block 1024; the C++ test builds the same),
and copies its weights into NanoGPT below, a plain-torch statement of
nanoGPT's model.py (the parity module: its state dict is nanoGPT's), after
checking that the two give the same logits. Weights are drawn at std 0.2,
not 0.02 (as ref_llama.py: at 0.02 greedy decoding repeats one token).

The workload follows TorchBench's nanogpt/__init__.py: a 64-token prompt in
[1, vocab), forward = the last position's logits, loss = logits.sum() /
logits.numel(), AdamW(lr 6e-4, betas (0.9, 0.95)) with weight decay 0.1 on
the parameters of two or more dimensions (configure_optimizers).

Besides parity_common's fields it saves, from the initial weights:
  generated   GPT2LMHeadModel.generate(prompt, max_new_tokens=16, do_sample=False)'s new tokens,
              equal to NanoGPT's greedy loop (checked here)
  logits      NanoGPT's logits at every prompt position
  full_param_count  TorchBench's GPTConfig() model's parameter count (built on the meta device)
"""
import math

import torch
from torch import nn
from torch.nn import functional as F
from transformers import GPT2Config, GPT2LMHeadModel

from parity_common import main

BATCH, PROMPT, NEW_TOKENS = 2, 64, 16
SMALL = dict(n_layer=2, n_head=4, n_embd=128, vocab_size=1024, block_size=1024)
FULL = dict(n_layer=12, n_head=12, n_embd=768, vocab_size=50304, block_size=1024)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c["n_embd"], 3 * c["n_embd"])
        self.c_proj = nn.Linear(c["n_embd"], c["n_embd"])
        self.n_head = c["n_head"]

    def forward(self, x):
        b, t, e = x.shape
        q, k, v = (y.view(b, t, self.n_head, e // self.n_head).transpose(1, 2) for y in self.c_attn(x).split(e, 2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, e))


class Mlp(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c["n_embd"], 4 * c["n_embd"])
        self.c_proj = nn.Linear(4 * c["n_embd"], c["n_embd"])

    def forward(self, x):
        return self.c_proj(gelu_tanh(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(c["n_embd"]), Attention(c)
        self.ln_2, self.mlp = nn.LayerNorm(c["n_embd"]), Mlp(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class NanoGPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.block_size = c["block_size"]
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c["vocab_size"], c["n_embd"]), wpe=nn.Embedding(c["block_size"], c["n_embd"]),
            h=nn.ModuleList([Block(c) for _ in range(c["n_layer"])]), ln_f=nn.LayerNorm(c["n_embd"])))
        self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    def logits(self, idx):
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(idx.size(1)).unsqueeze(0))
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))

    def forward(self, idx):
        return self.logits(idx)[:, [-1], :]

    @torch.no_grad()
    def greedy(self, idx, n):
        for _ in range(n):
            nxt = self(idx[:, -self.block_size:])[:, -1].argmax(-1, keepdim=True)
            idx = torch.cat([idx, nxt], 1)
        return idx


def hf_config(c, std):
    return GPT2Config(vocab_size=c["vocab_size"], n_positions=c["block_size"], n_embd=c["n_embd"],
                      n_layer=c["n_layer"], n_head=c["n_head"], activation_function="gelu_new", resid_pdrop=0.0,
                      embd_pdrop=0.0, attn_pdrop=0.0, layer_norm_epsilon=1e-5, initializer_range=std,
                      bos_token_id=None, eos_token_id=None, pad_token_id=None, attn_implementation="eager")


def configure_optimizers(model):
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=6e-4, betas=(0.9, 0.95))


def build(model_id):
    if model_id != "nanogpt":
        raise SystemExit(f"unknown model id {model_id}")
    hf = GPT2LMHeadModel(hf_config(SMALL, 0.2)).eval()
    model = NanoGPT(SMALL)
    conv1d = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")
    state = {k: (v.t() if k.endswith(conv1d) else v) for k, v in hf.state_dict().items()}
    model.load_state_dict(state, strict=True)
    inputs = {"input_ids": torch.randint(1, SMALL["vocab_size"], (BATCH, PROMPT))}
    model.eval()
    with torch.no_grad():
        ours, theirs = model.logits(inputs["input_ids"]), hf(inputs["input_ids"]).logits
    assert (ours - theirs).abs().max() <= 1e-4 * theirs.abs().max(), "NanoGPT differs from GPT2LMHeadModel"

    def extra(m, i):
        ids = i["input_ids"]
        out = hf.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=NEW_TOKENS, do_sample=False)
        generated = out[:, PROMPT:].clone()
        assert torch.equal(m.greedy(ids, NEW_TOKENS)[:, PROMPT:], generated), "greedy loops differ"
        with torch.device("meta"):
            full = NanoGPT(FULL)
        return {"generated": generated, "logits": m.logits(ids).detach().clone(),
                "full_param_count": torch.tensor(sum(p.numel() for p in full.parameters()))}

    return {"module": model, "inputs": inputs, "forward": lambda m, i: m(i["input_ids"]),
            "loss": lambda m, i: (lambda out: out.sum() / out.numel())(m(i["input_ids"])),
            "optimizer": configure_optimizers, "extra": extra, "save_grads": True}


if __name__ == "__main__":
    main(build)
