"""Plain-torch reference for soft_actor_critic (models/rl/sac.cc): one SAC
update as TorchBench's soft_actor_critic runs it (learn_standard in
__init__.py, nets.py, sac.py, config.py, utils.soft_update, and the
SquashedNormal of torchbenchmark/util/distribution.py), on Pendulum-v1's
3-d state and 1-d action, with TorchBench's names: actor, critic1, critic2
(SACAgent's attributes), target_critic1/target_critic2 (target_agent's
critics; its unused actor copy is left out) and log_alpha.

  StochasticActor  fc1 3-1024, fc2 1024-1024, fc3 1024-2, ReLU; mean and
                   log-std, the log-std squashed by tanh into [-10, 2]; a
                   tanh-squashed Normal (cache_size 1, inverse clamped to
                   +-0.99 though the cache makes the clamp unreachable)
  BigCritic        fc1 (3+1)-1024, fc2 1024-1024, fc3 1024-1 on cat(state, action)
  update           critic: 0.5 (td1^2 + td2^2) mean against
                   r + 0.99 (1 - done) (min target Q - alpha log pi(a'|s')),
                   Adam(1e-4) over both critics; actor (actor_delay 1):
                   -(min Q - alpha.detach() log pi).mean(), Adam(1e-4), its
                   backward also reaching the critics' gradients; alpha:
                   -(alpha (log pi - 1).detach()).mean(), Adam(1e-4, betas
                   0.5/0.999); then, at step 0 (target_delay 2), Polyak
                   tau 0.005 into the target critics.

The batch is TorchBench's 256 transitions, given as inputs (the C++ workload's
parity hook runs the update on them without its environment loop); the eval
output is the deterministic action tanh(mean) for 256 states. The driver is
parity_common.main; the update runs its own three optimizers inside "loss".
"""
import math

import torch
import torch.nn.functional as F
from torch import distributions as pyd
from torch import nn

from parity_common import main

STATE, ACT, HIDDEN, BATCH = 3, 1, 1024, 256
LOG_STD_LOW, LOG_STD_HIGH = -10.0, 2.0
GAMMA, TAU, INIT_ALPHA, LR = 0.99, 0.005, 0.1, 1e-4


class ClampedTanh(pyd.transforms.TanhTransform):
    def __init__(self):
        super().__init__(cache_size=1)

    def _inverse(self, y):
        return torch.atanh(y.clamp(-0.99, 0.99))


def squashed_normal(mu, std):
    return pyd.TransformedDistribution(pyd.Normal(mu, std), [ClampedTanh()])


class StochasticActor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(STATE, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)
        self.fc3 = nn.Linear(HIDDEN, 2 * ACT)

    def forward(self, state):
        mu, log_std = self.fc3(F.relu(self.fc2(F.relu(self.fc1(state))))).chunk(2, dim=1)
        log_std = LOG_STD_LOW + 0.5 * (LOG_STD_HIGH - LOG_STD_LOW) * (torch.tanh(log_std) + 1)
        return mu, log_std.exp()


class BigCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(STATE + ACT, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)
        self.fc3 = nn.Linear(HIDDEN, 1)

    def forward(self, state, action):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(torch.cat((state, action), dim=1))))))


def orthogonal_init(m):  # nets.weight_init
    if isinstance(m, nn.Linear):
        nn.init.orthogonal_(m.weight)
        nn.init.zeros_(m.bias)


class Sac(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor, self.critic1, self.critic2 = StochasticActor(), BigCritic(), BigCritic()
        self.apply(orthogonal_init)
        self.target_critic1, self.target_critic2 = BigCritic(), BigCritic()
        for target, source in ((self.target_critic1, self.critic1), (self.target_critic2, self.critic2)):
            target.load_state_dict(source.state_dict())  # hard_update
            target.requires_grad_(False)
        self.log_alpha = nn.Parameter(torch.tensor([math.log(INIT_ALPHA)]))


class Optimizers:
    """The update's three optimizers; the driver's zero_grad and step are no-ops."""

    def __init__(self, m):
        self.critic = torch.optim.Adam(list(m.critic1.parameters()) + list(m.critic2.parameters()), lr=LR,
                                       betas=(0.9, 0.999))
        self.actor = torch.optim.Adam(m.actor.parameters(), lr=LR, betas=(0.9, 0.999))
        self.alpha = torch.optim.Adam([m.log_alpha], lr=LR, betas=(0.5, 0.999))

    def zero_grad(self):
        pass

    def step(self):
        pass


OPTS = {}


def sac_update(m, i):
    opts = OPTS["opts"]
    state, action, reward, next_state = i["batch_obs"], i["batch_action"], i["batch_reward"], i["batch_next_obs"]
    done = 1.0 - i["batch_not_done"]
    alpha = torch.exp(m.log_alpha)
    with torch.no_grad():
        dist1 = squashed_normal(*m.actor(next_state))
        a1 = dist1.rsample()
        logp_a1 = dist1.log_prob(a1).sum(-1, keepdim=True)
        target_q = torch.min(m.target_critic1(next_state, a1), m.target_critic2(next_state, a1))
        td_target = reward + GAMMA * (1.0 - done) * (target_q - alpha * logp_a1)
    td1 = td_target - m.critic1(state, action)
    td2 = td_target - m.critic2(state, action)
    critic_loss = (0.5 * (td1**2 + td2**2)).mean()
    opts.critic.zero_grad()
    critic_loss.backward()
    opts.critic.step()
    # step 0 % actor_delay == 0: the actor and alpha updates.
    dist = squashed_normal(*m.actor(state))
    a = dist.rsample()
    logp_a = dist.log_prob(a).sum(-1, keepdim=True)
    actor_loss = -(torch.min(m.critic1(state, a), m.critic2(state, a)) - alpha.detach() * logp_a).mean()
    opts.actor.zero_grad()
    actor_loss.backward()
    opts.actor.step()
    alpha_loss = (-alpha * (logp_a + TARGET_ENTROPY).detach()).mean()
    opts.alpha.zero_grad()
    alpha_loss.backward()
    opts.alpha.step()
    # step 0 % target_delay == 0: soft_update.
    with torch.no_grad():
        for target, source in ((m.target_critic1, m.critic1), (m.target_critic2, m.critic2)):
            for t, p in zip(target.parameters(), source.parameters()):
                t.copy_(t * (1.0 - TAU) + p * TAU)
    # A leaf: the driver's backward after this must not touch the gradients.
    return critic_loss.detach().requires_grad_(True)


TARGET_ENTROPY = -float(ACT)


def pendulum_states(n):
    theta = torch.rand(n, 1) * 2 * math.pi - math.pi
    return torch.cat([theta.cos(), theta.sin(), torch.rand(n, 1) * 16 - 8], 1)


def build(model_id):
    if model_id != "soft_actor_critic":
        raise SystemExit(f"unknown model {model_id}")
    m = Sac()
    not_done = torch.ones(BATCH, 1)
    not_done[::7] = 0.0
    inputs = {
        "state": pendulum_states(BATCH),
        "batch_obs": pendulum_states(BATCH),
        "batch_action": torch.rand(BATCH, ACT) * 2 - 1,
        "batch_reward": -torch.rand(BATCH, 1) * 16,
        "batch_next_obs": pendulum_states(BATCH),
        "batch_not_done": not_done,
    }

    def make_optimizer(module):
        OPTS["opts"] = Optimizers(module)
        return OPTS["opts"]

    return {
        "module": m,
        "inputs": inputs,
        # SACAgent.forward: the distribution's mean, tanh of the Normal's mean.
        "forward": lambda m, i: torch.tanh(m.actor(i["state"])[0]),
        "loss": sac_update,
        "optimizer": make_optimizer,
        "save_grads": True,
    }


if __name__ == "__main__":
    main(build)
