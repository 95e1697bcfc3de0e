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

--model drq: DrQ's update (Kostrikov, Yarats & Fergus 2020; denisyarats/drq's
drq.py, utils.py and replay_buffer.py, as TorchBench's drq vendors them) on
cartpole_swingup's 9 x 84 x 84 pixels (3 stacked RGB frames) and 1-d action,
with drq.py's names: actor, critic, critic_target, log_alpha.

  Encoder          obs / 255, Conv(9, 32, 3, stride 2) and three Conv(32, 32,
                   3), ReLU, flattened to 32 x 35 x 35; head Linear(39200, 50)
                   + LayerNorm(50), tanh; detach=True stops the gradient after
                   the convolutions (the head still learns)
  Actor            own Encoder whose convolutions are the critic's (Parameter
                   objects shared, drq.py's tie_weights) + trunk 50-1024-1024-2,
                   log-std squashed into [-10, 2] as above, squashed Normal
  Critic           Encoder + Q1, Q2: (50+1)-1024-1024-1 on cat(feature, action)
  init             orthogonal, ReLU gain for convolutions, zero biases
  update           random shift of obs, next_obs and of a second copy of each:
                   replicate-pad 4, then an 84 x 84 crop at a per-sample offset;
                   critic: target averaged over the two next_obs views,
                   r + 0.99 not_done (min target Q - alpha log pi), loss the
                   mse of Q1 and Q2 on both obs views, Adam(1e-3) over the
                   critic (convolutions included); actor (step 0 %
                   actor_update_frequency 2): encoder detached on both actor
                   and critic, (alpha.detach() log pi - min Q).mean(),
                   Adam(1e-3) over the actor's parameters (the tied
                   convolutions among them, but without a gradient after its
                   zero_grad); alpha: (alpha (-log pi + 1).detach()).mean(),
                   Adam(1e-3); then (step 0 % 2) Polyak tau 0.01 into
                   critic_target.

The crop offsets come from torch.randint in the order the C++ workload draws
them (rows, then columns, for obs, next_obs and their copies), so that both
sides crop alike from the same seed; the crop itself is done here by slicing,
not by the C++'s gathers. (drq.py crops with kornia's RandomCrop, whose
random numbers neither side reproduces.) The eval output is tanh(mean) on 8
pixel observations; the batch is 128 transitions (DRQConfig.batch_size) of
random pixels. The shared convolutions are counted under both names
(count_tied_by_name), as the C++ module lists them.
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
TARGET_ENTROPY = -float(ACT)  # both agents: -|A|, one action dimension

# drq (config.py / DRQConfig): 3 stacked 84 x 84 RGB frames, 32 filters in 4
# convolutions, feature 50, replicate padding 4 for the random shift.
FRAMES, IMAGE, FILTERS, CONVS, FEATURE, IMAGE_PAD = 3, 84, 32, 4, 50, 4
DRQ_BATCH, DRQ_EVAL_BATCH = 128, 8
DRQ_DISCOUNT, DRQ_TAU, DRQ_LR = 0.99, 0.01, 1e-3


class ClampedTanh(pyd.transforms.TanhTransform):
    def __init__(self):
        super().__init__(cache_size=1)

    def _inverse(self, y):
        return torch.atanh(y.clamp(-0.99, 0.99))


def squashed_normal(mu, std):
    return pyd.TransformedDistribution(pyd.Normal(mu, std), [ClampedTanh()])


def sample_with_log_prob(mu, std):
    """dist.rsample() and its log-density summed over the action."""
    dist = squashed_normal(mu, std)
    a = dist.rsample()
    return a, dist.log_prob(a).sum(-1, keepdim=True)


def gaussian_head(out):
    """Mean and std from the actor's last layer: the log-std squashed by tanh
    into [LOG_STD_LOW, LOG_STD_HIGH] (both agents)."""
    mu, log_std = out.chunk(2, dim=-1)
    log_std = LOG_STD_LOW + 0.5 * (LOG_STD_HIGH - LOG_STD_LOW) * (torch.tanh(log_std) + 1)
    return mu, log_std.exp()


def polyak(target, source, tau):
    """utils.soft_update / soft_update_params: target <- tau source + (1 - tau) target."""
    with torch.no_grad():
        for t, p in zip(target.parameters(), source.parameters()):
            t.copy_(t * (1.0 - tau) + p * tau)


class StochasticActor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(STATE, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)
        self.fc3 = nn.Linear(HIDDEN, 2 * ACT)

    def forward(self, state):
        return gaussian_head(self.fc3(F.relu(self.fc2(F.relu(self.fc1(state))))))


class BigCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(STATE + ACT, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, HIDDEN)
        self.fc3 = nn.Linear(HIDDEN, 1)

    def forward(self, state, action):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(torch.cat((state, action), dim=1))))))


def orthogonal_init(m):  # nets.weight_init (SAC), utils.weight_init (drq)
    if isinstance(m, nn.Linear):
        nn.init.orthogonal_(m.weight)
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Conv2d):
        nn.init.orthogonal_(m.weight, nn.init.calculate_gain("relu"))
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
    """An update's optimizers by name; the driver's zero_grad and step are no-ops."""

    def __init__(self, **optimizers):
        self.__dict__.update(optimizers)

    def zero_grad(self):
        pass

    def step(self):
        pass


OPTS = {}


def optimizer_maker(make):
    """The driver's optimizer factory: make(module) -> Optimizers, kept in OPTS."""

    def make_optimizer(module):
        OPTS["opts"] = make(module)
        return OPTS["opts"]

    return make_optimizer


def optimize(opt, loss):
    opt.zero_grad()
    loss.backward()
    opt.step()


def sac_update(m, i):
    opts = OPTS["opts"]
    state, action, reward, next_state = i["batch_obs"], i["batch_action"], i["batch_reward"], i["batch_next_obs"]
    done = 1.0 - i["batch_not_done"]
    alpha = torch.exp(m.log_alpha)
    with torch.no_grad():
        a1, logp_a1 = sample_with_log_prob(*m.actor(next_state))
        target_q = torch.min(m.target_critic1(next_state, a1), m.target_critic2(next_state, a1))
        td_target = reward + GAMMA * (1.0 - done) * (target_q - alpha * logp_a1)
    td1 = td_target - m.critic1(state, action)
    td2 = td_target - m.critic2(state, action)
    critic_loss = (0.5 * (td1**2 + td2**2)).mean()
    optimize(opts.critic, critic_loss)
    # step 0 % actor_delay == 0: the actor and alpha updates.
    a, logp_a = sample_with_log_prob(*m.actor(state))
    actor_loss = -(torch.min(m.critic1(state, a), m.critic2(state, a)) - alpha.detach() * logp_a).mean()
    optimize(opts.actor, actor_loss)
    optimize(opts.alpha, (-alpha * (logp_a + TARGET_ENTROPY).detach()).mean())
    # step 0 % target_delay == 0: soft_update.
    polyak(m.target_critic1, m.critic1, TAU)
    polyak(m.target_critic2, m.critic2, TAU)
    # A leaf: the driver's backward after this must not touch the gradients.
    return critic_loss.detach().requires_grad_(True)


def pendulum_states(n):
    theta = torch.rand(n, 1) * 2 * math.pi - math.pi
    return torch.cat([theta.cos(), theta.sin(), torch.rand(n, 1) * 16 - 8], 1)


def build_sac():
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

    def make(module):
        adam = torch.optim.Adam
        return Optimizers(critic=adam(list(module.critic1.parameters()) + list(module.critic2.parameters()), lr=LR,
                                      betas=(0.9, 0.999)),
                          actor=adam(module.actor.parameters(), lr=LR, betas=(0.9, 0.999)),
                          alpha=adam([module.log_alpha], lr=LR, betas=(0.5, 0.999)))

    return {
        "module": m,
        "inputs": inputs,
        # SACAgent.forward: the distribution's mean, tanh of the Normal's mean.
        "forward": lambda m, i: torch.tanh(m.actor(i["state"])[0]),
        "loss": sac_update,
        "optimizer": optimizer_maker(make),
        "save_grads": True,
    }


# ------------------------------------------------------------------ drq


def mlp(inputs, outputs):  # utils.mlp with hidden_depth 2
    return nn.Sequential(nn.Linear(inputs, HIDDEN), nn.ReLU(inplace=True), nn.Linear(HIDDEN, HIDDEN),
                         nn.ReLU(inplace=True), nn.Linear(HIDDEN, outputs))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3 * FRAMES, FILTERS, 3, stride=2)] +
                                   [nn.Conv2d(FILTERS, FILTERS, 3, stride=1) for _ in range(CONVS - 1)])
        side = (IMAGE - 3) // 2 + 1 - 2 * (CONVS - 1)  # 41 after the strided conv, then 2 less per conv
        self.head = nn.Sequential(nn.Linear(FILTERS * side * side, FEATURE), nn.LayerNorm(FEATURE))

    def forward(self, obs, detach=False):
        h = obs / 255.0
        for conv in self.convs:
            h = torch.relu(conv(h))
        h = h.view(h.size(0), -1)
        if detach:
            h = h.detach()
        return torch.tanh(self.head(h))


class DrqActor(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.trunk = mlp(FEATURE, 2 * ACT)
        self.apply(orthogonal_init)

    def forward(self, obs, detach_encoder=False):
        return gaussian_head(self.trunk(self.encoder(obs, detach=detach_encoder)))


class DrqCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.Q1 = mlp(FEATURE + ACT, 1)
        self.Q2 = mlp(FEATURE + ACT, 1)
        self.apply(orthogonal_init)

    def forward(self, obs, action, detach_encoder=False):
        obs_action = torch.cat([self.encoder(obs, detach=detach_encoder), action], dim=-1)
        return self.Q1(obs_action), self.Q2(obs_action)


class Drq(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor, self.critic, self.critic_target = DrqActor(), DrqCritic(), DrqCritic()
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.critic_target.requires_grad_(False)
        for trg, src in zip(self.actor.encoder.convs, self.critic.encoder.convs):  # tie_weights
            trg.weight, trg.bias = src.weight, src.bias
        self.log_alpha = nn.Parameter(torch.tensor(math.log(INIT_ALPHA)))


def random_shift(x):
    """ReplicationPad2d(IMAGE_PAD), then an IMAGE x IMAGE crop per sample at
    offsets (row, column) drawn as the C++ draws them."""
    n, _, h, w = x.shape
    padded = F.pad(x, (IMAGE_PAD,) * 4, mode="replicate")
    rows = torch.randint(0, 2 * IMAGE_PAD + 1, (n, 1)).flatten().tolist()
    cols = torch.randint(0, 2 * IMAGE_PAD + 1, (n, 1)).flatten().tolist()
    return torch.stack([padded[k, :, r:r + h, c:c + w] for k, (r, c) in enumerate(zip(rows, cols))])


def drq_update(m, i):
    opts = OPTS["opts"]
    action, reward, not_done = i["batch_action"], i["batch_reward"], i["batch_not_done"]
    # replay_buffer.sample: float on the device, then the four augmentations.
    obs_u, next_u = i["batch_obs"].float(), i["batch_next_obs"].float()
    obs, next_obs = random_shift(obs_u), random_shift(next_u)
    obs_aug, next_obs_aug = random_shift(obs_u), random_shift(next_u)
    alpha = m.log_alpha.exp()
    with torch.no_grad():  # update_critic's target, next_obs view first

        def target(next_view):
            next_action, log_prob = sample_with_log_prob(*m.actor(next_view))
            target_v = torch.min(*m.critic_target(next_view, next_action)) - alpha.detach() * log_prob
            return reward + not_done * DRQ_DISCOUNT * target_v

        target_q = target(next_obs)
        target_q = (target_q + target(next_obs_aug)) / 2
    q1, q2 = m.critic(obs, action)
    critic_loss = F.mse_loss(q1, target_q) + F.mse_loss(q2, target_q)
    q1_aug, q2_aug = m.critic(obs_aug, action)
    critic_loss = critic_loss + (F.mse_loss(q1_aug, target_q) + F.mse_loss(q2_aug, target_q))
    optimize(opts.critic, critic_loss)
    # step 0 % actor_update_frequency == 0: update_actor_and_alpha.
    a, log_prob = sample_with_log_prob(*m.actor(obs, detach_encoder=True))
    actor_q = torch.min(*m.critic(obs, a, detach_encoder=True))
    optimize(opts.actor, (alpha.detach() * log_prob - actor_q).mean())
    optimize(opts.alpha, (m.log_alpha.exp() * (-log_prob - TARGET_ENTROPY).detach()).mean())
    # step 0 % critic_target_update_frequency == 0.
    polyak(m.critic_target, m.critic, DRQ_TAU)
    return critic_loss.detach().requires_grad_(True)


def pixels(n):
    return torch.randint(0, 256, (n, 3 * FRAMES, IMAGE, IMAGE), dtype=torch.uint8)


def build_drq():
    m = Drq()
    not_done = torch.ones(DRQ_BATCH, 1)
    not_done[::7] = 0.0
    inputs = {
        "obs": pixels(DRQ_EVAL_BATCH).float(),  # agent.act: the float observation
        "batch_obs": pixels(DRQ_BATCH),
        "batch_action": torch.rand(DRQ_BATCH, ACT) * 2 - 1,
        "batch_reward": torch.rand(DRQ_BATCH, 1) * 4,  # 4 physics steps of reward in [0, 1]
        "batch_next_obs": pixels(DRQ_BATCH),
        "batch_not_done": not_done,
    }

    def make(module):
        adam = torch.optim.Adam
        return Optimizers(critic=adam(module.critic.parameters(), lr=DRQ_LR),
                          actor=adam(module.actor.parameters(), lr=DRQ_LR),
                          alpha=adam([module.log_alpha], lr=DRQ_LR))

    return {
        "module": m,
        "inputs": inputs,
        "forward": lambda m, i: torch.tanh(m.actor(i["obs"])[0]),  # agent.act(sample=False)
        "loss": drq_update,
        "optimizer": optimizer_maker(make),
        "save_grads": True,
        "count_tied_by_name": True,
    }


def build(model_id):
    builders = {"soft_actor_critic": build_sac, "drq": build_drq}
    if model_id not in builders:
        raise SystemExit(f"unknown model {model_id}")
    return builders[model_id]()


if __name__ == "__main__":
    main(build)
