"""References for the meta-learning models maml and maml_omniglot.

No pip package carries these models, so each is re-stated here in plain
torch from its TorchBench source (the training procedure is the model):
  maml                    dragen1860/MAML-Pytorch's Learner + Meta as TorchBench
                          configures them (first-order inner loop, update_lr
                          0.4, 5 steps train / 10 fine-tuning steps eval).
  maml_omniglot           higher's maml-omniglot: 5 differentiable SGD steps
                          (lr 0.1, create_graph) per task, written with
                          torch.func.functional_call instead of higher.
Inputs are small seeded meta-batches: 2 tasks, 5 support and 15 query
images each (the networks take any number of images; TorchBench uses 5 or
25 support and 75 query images).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from parity_common import main

TASKS = 2


def meta_batch(n_way, k_spt, k_qry, tasks=TASKS):
    return {
        "x_spt": torch.randn(tasks, n_way * k_spt, 1, 28, 28),
        "y_spt": torch.randint(0, n_way, (tasks, n_way * k_spt)),
        "x_qry": torch.randn(tasks, n_way * k_qry, 1, 28, 28),
        "y_qry": torch.randint(0, n_way, (tasks, n_way * k_qry)),
    }


# ---------------------------------------------------------------- maml
class Learner(nn.Module):
    # (out, in, k, stride) of the four conv blocks; each conv -> relu -> bn.
    CONVS = [(64, 1, 3, 2), (64, 64, 3, 2), (64, 64, 3, 2), (64, 64, 2, 1)]

    def __init__(self, n_way=5):
        super().__init__()
        self.vars = nn.ParameterList()
        self.vars_bn = nn.ParameterList()
        for out_c, in_c, k, _ in self.CONVS:
            w = torch.ones(out_c, in_c, k, k)
            nn.init.kaiming_normal_(w)
            self.vars.extend([nn.Parameter(w), nn.Parameter(torch.zeros(out_c)),
                              nn.Parameter(torch.ones(out_c)), nn.Parameter(torch.zeros(out_c))])
            self.vars_bn.extend([nn.Parameter(torch.zeros(out_c), requires_grad=False),
                                 nn.Parameter(torch.ones(out_c), requires_grad=False)])
        w = torch.ones(n_way, 64)
        nn.init.kaiming_normal_(w)
        self.vars.extend([nn.Parameter(w), nn.Parameter(torch.zeros(n_way))])

    def forward(self, x, weights=None, stats=None):
        weights = list(self.vars) if weights is None else weights
        stats = list(self.vars_bn) if stats is None else stats
        for b, (_, _, _, stride) in enumerate(self.CONVS):
            w, bias, gamma, beta = weights[4 * b:4 * b + 4]
            x = F.relu(F.conv2d(x, w, bias, stride=stride), inplace=True)
            x = F.batch_norm(x, stats[2 * b], stats[2 * b + 1], gamma, beta, training=True)
        return F.linear(x.flatten(1), weights[-2], weights[-1])


class Meta(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = Learner()


LR_INNER = 0.4


def sgd(ws, gs, lr):
    return [w - lr * g for w, g in zip(ws, gs)]


def maml_train_loss(meta, i):
    net = meta.net
    params = list(net.vars)
    tasks = i["x_spt"].shape[0]
    last = 0
    for t in range(tasks):
        xs, ys, xq, yq = i["x_spt"][t], i["y_spt"][t], i["x_qry"][t], i["y_qry"][t]
        g = torch.autograd.grad(F.cross_entropy(net(xs, params), ys), params)  # first order
        fast = sgd(params, g, LR_INNER)
        with torch.no_grad():  # the two logged losses of the reference (they move the BN statistics)
            net(xq, params)
            net(xq, fast)
        for _ in range(1, 5):
            g = torch.autograd.grad(F.cross_entropy(net(xs, fast), ys), fast)
            fast = sgd(fast, g, LR_INNER)
            loss_q = F.cross_entropy(net(xq, fast), yq)
        last = last + loss_q
    return last / tasks


def maml_finetune(meta, i):
    with torch.enable_grad():
        net = meta.net
        stats = [s.detach().clone() for s in net.vars_bn]  # a copy's statistics
        params = list(net.vars)
        xs, ys, xq, yq = i["x_spt"][0], i["y_spt"][0], i["x_qry"][0], i["y_qry"][0]
        acc = []
        g = torch.autograd.grad(F.cross_entropy(net(xs, params, stats), ys), params)
        fast = sgd(params, g, LR_INNER)
        with torch.no_grad():
            acc.append((net(xq, params, stats).argmax(1) == yq).sum())
            acc.append((net(xq, fast, stats).argmax(1) == yq).sum())
        for _ in range(1, 10):
            g = torch.autograd.grad(F.cross_entropy(net(xs, fast, stats), ys), fast)
            fast = sgd(fast, g, LR_INNER)
            acc.append((net(xq, fast, stats).argmax(1) == yq).sum())
        return torch.stack(acc).float() / xq.shape[0]


# ---------------------------------------------------------- maml_omniglot
def omniglot_net(track_running_stats=True):
    def bn():
        if track_running_stats:
            return nn.BatchNorm2d(64, momentum=1, affine=True)
        return nn.BatchNorm2d(64, affine=True, track_running_stats=False)

    layers = []
    for c_in in (1, 64, 64):
        layers += [nn.Conv2d(c_in, 64, 3), bn(), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2)]
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(64, 5))


def maml_omniglot_loss(net, i):
    names = [n for n, _ in net.named_parameters()]
    params = [p for _, p in net.named_parameters()]
    total = 0
    for t in range(i["x_spt"].shape[0]):
        fast = params
        for _ in range(5):
            logits = functional_call(net, dict(zip(names, fast)), (i["x_spt"][t],))
            g = torch.autograd.grad(F.cross_entropy(logits, i["y_spt"][t]), fast, create_graph=True)
            fast = sgd(fast, g, 0.1)
        logits = functional_call(net, dict(zip(names, fast)), (i["x_qry"][t],))
        total = total + F.cross_entropy(logits, i["y_qry"][t])
    return total


def build(model_id):
    if model_id == "maml":
        meta = Meta()
        return {"module": meta, "inputs": meta_batch(5, 1, 3), "forward": maml_finetune, "loss": maml_train_loss,
                "optimizer": lambda m: torch.optim.Adam(m.net.vars.parameters(), lr=1e-3)}
    if model_id == "maml_omniglot":
        net = omniglot_net()
        return {"module": net, "inputs": meta_batch(5, 1, 3), "forward": lambda m, i: m(i["x_spt"][0]),
                "loss": maml_omniglot_loss,
                "optimizer": lambda m: torch.optim.Adam(m.parameters(), lr=1e-3)}
    raise SystemExit(f"unknown model {model_id}")


if __name__ == "__main__":
    main(build)
