"""Parity reference for pytorch_struct (test-only; torch_struct is not installed).

--model pytorch_struct: NeuralCFG restated in torch.nn (as
torchbenchmark/models/pytorch_struct/networks/NeuralCFG.py describes it) and a
plain inside algorithm written for this test: each sentence alone, cut to its
own length, a dict chart over spans (i, j) and a loop over widths, split
points and the rule's children, summed in log space with torch.logsumexp. Then
TorchBench's train step: loss = partition.mean(); (-loss).backward();
clip_grad_norm_(3.0); Adam(lr 1e-3, betas (0.75, 0.999)). Saved in
parity_common's format (params, inputs, output = partition, loss, updated);
--double runs it in float64.

--model pytorch_struct_brute: a tiny random grammar (T = NT = 2, float64),
two sentences of lengths 4 and 3 padded to 4; output = log Z by enumerating
every labelled binary tree, loss = the same from the loop above (so the loop
itself is checked against the enumeration here).
"""
import argparse
import itertools

import torch
import torch.nn as nn

V, T, NT, H = 5000, 30, 30, 256  # the C++ model's sizes (V an estimate there too)
PAD = 1


class Res(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.u1, self.u2, self.v1, self.v2, self.w = (nn.Linear(h, h) for _ in range(5))

    def forward(self, y):
        y = self.w(y)
        y = y + torch.relu(self.v1(torch.relu(self.u1(y))))
        return y + torch.relu(self.v2(torch.relu(self.u2(y))))


class NeuralCFG(nn.Module):
    def __init__(self, v, t, nt, h):
        super().__init__()
        self.V, self.T, self.NT = v, t, nt
        self.word_emb = nn.Parameter(torch.empty(v, h))
        self.term_emb = nn.Parameter(torch.empty(t, h))
        self.nonterm_emb = nn.Parameter(torch.empty(nt, h))
        self.nonterm_emb_c = nn.Parameter(torch.empty(nt + t, nt + t, h))
        self.root_emb = nn.Parameter(torch.empty(nt, h))
        self.s_emb = nn.Parameter(torch.empty(1, h))
        self.mlp1, self.mlp2 = Res(h), Res(h)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def forward(self, words):
        # Per sentence, no expand/gather: a row lookup of the (T, V) table.
        term_table = (self.mlp1(self.term_emb) @ self.word_emb.t()).log_softmax(-1)  # (T, V)
        terms = term_table[:, words].permute(1, 2, 0)  # (b, n, T)
        s = self.NT + self.T
        scores = (self.nonterm_emb[:, None, None, :] * self.nonterm_emb_c[None]).sum(-1)  # (NT, S, S)
        rules = scores.reshape(self.NT, s * s).log_softmax(-1).reshape(self.NT, s, s)
        roots = (self.mlp2(self.root_emb) @ self.s_emb[0]).log_softmax(-1)  # (NT,)
        return terms, rules, roots


def inside_one(terms, rules, roots):
    """log Z of one sentence: terms (n, T), rules (NT, S, S), roots (NT)."""
    n, t = terms.shape
    nt = rules.shape[0]
    neg = torch.full((nt,), float("-inf"), dtype=terms.dtype)
    chart = {}  # (i, j) -> (S,) scores of symbols over words i..j
    for i in range(n):
        chart[i, i] = torch.cat([neg, terms[i]])
    for width in range(2, n + 1):
        for i in range(n - width + 1):
            j = i + width - 1
            parts = []
            for k in range(i, j):  # left i..k, right k+1..j
                pair = chart[i, k][:, None] + chart[k + 1, j][None, :]  # (S, S)
                parts.append((rules + pair[None]).reshape(nt, -1))
            inner = torch.logsumexp(torch.cat(parts, dim=1), dim=1)  # (NT,)
            chart[i, j] = torch.cat([inner, torch.full((t,), float("-inf"), dtype=terms.dtype)])
    return torch.logsumexp(chart[0, n - 1][:nt] + roots, dim=0)


def inside(terms, rules, roots, lengths):
    return torch.stack([inside_one(terms[b, : int(l)], rules, roots) for b, l in enumerate(lengths)])


def brute_one(terms, rules, roots):
    """log Z by listing every tree: (score of each labelled tree)."""
    n, t = terms.shape
    nt = rules.shape[0]

    def trees(sym, i, j):  # log scores of all derivations of symbol sym over i..j
        if i == j:
            return [terms[i, sym - nt]] if sym >= nt else []
        if sym >= nt:
            return []
        out = []
        for k in range(i, j):
            for y, z in itertools.product(range(nt + t), repeat=2):
                for a in trees(y, i, k):
                    for c in trees(z, k + 1, j):
                        out.append(rules[sym, y, z] + a + c)
        return out

    scores = [roots[x] + s for x in range(nt) for s in trees(x, 0, n - 1)]
    return torch.logsumexp(torch.stack(scores), dim=0), len(scores)


def sentences():
    g = torch.Generator().manual_seed(7)
    lengths = torch.tensor([7, 5, 8])  # unequal: the padded tail must not count
    words = torch.randint(PAD + 1, V, (3, 8), generator=g)
    words[torch.arange(8)[None, :] >= lengths[:, None]] = PAD
    return words, lengths


def run_parity(out, double):
    torch.manual_seed(0)
    model = NeuralCFG(V, T, NT, H)
    if double:
        model.double()
    words, lengths = sentences()
    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    with torch.no_grad():
        output = inside(*model(words), lengths)
    opt = torch.optim.Adam(model.parameters(), lr=0.001, betas=[0.75, 0.999])
    opt.zero_grad()
    loss = inside(*model(words), lengths).mean()
    (-loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 3.0)
    opt.step()
    torch.save({
        "params": params, "param_count": sum(p.numel() for p in model.parameters()),
        "inputs": {"words": words, "lengths": lengths}, "output": output, "loss": loss.detach(),
        "updated": {k: v.detach().clone() for k, v in model.named_parameters()},
    }, out)


def run_brute(out, _):
    g = torch.Generator().manual_seed(3)
    t, nt, b, n = 2, 2, 2, 4
    s = nt + t
    terms = torch.randn(b, n, t, generator=g, dtype=torch.float64)
    rules = torch.randn(b, nt, s, s, generator=g, dtype=torch.float64).log_softmax(-1)
    roots = torch.randn(b, nt, generator=g, dtype=torch.float64).log_softmax(-1)
    lengths = torch.tensor([4, 3])
    brute, counts = zip(*(brute_one(terms[i, : int(l)], rules[i], roots[i]) for i, l in enumerate(lengths)))
    print("trees enumerated per sentence:", counts)
    loop = torch.stack([inside_one(terms[i, : int(l)], rules[i], roots[i]) for i, l in enumerate(lengths)])
    torch.save({
        "params": {}, "param_count": 0, "updated": {}, "output": torch.stack(brute), "loss": loop,
        "inputs": {"terms": terms, "rules": rules, "roots": roots, "lengths": lengths},
    }, out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--double", action="store_true", help="the parity protocol in float64")
    args = parser.parse_args()
    torch.use_deterministic_algorithms(True, warn_only=True)
    {"pytorch_struct": run_parity, "pytorch_struct_brute": run_brute}[args.model](args.out, args.double)
