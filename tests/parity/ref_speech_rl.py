"""Reference for the speech and RL models of tests/parity/speech_rl_parity_test.cc
(models/speech/demucs.cc, models/rl/dqn.cc, ...). None of them has a pip package in
our environment, so each network and its training step is re-stated here in
plain torch from the published architecture and TorchBench's configuration
(the sources are cited in the model headers). State-dict names follow the
original repositories, so the C++ models load these weights by name.

Model ids:
  demucs            Demucs v2 at depth 4 (same widths, kernel, stride, GLU,
                    BiLSTM bottleneck; two encoder/decoder levels fewer than
                    TorchBench's depth 6, whose 265M parameters would make the
                    saved state 2 GB) on short streams, TorchBench's augmented
                    L1 training step with Adam(lr 3e-4).
  demucs_full_meta  TorchBench's full Demucs(channels=64) built on the meta
                    device: only its parameter count is meaningful.
  learning_to_paint LearningToPaint's DDPG: actor, critic, their targets, the
                    WGAN discriminator (and target) and the stroke renderer;
                    one update_policy on a given replay batch.
  tacotron2         NVIDIA's Tacotron 2 (TorchBench hparams) on two short
                    utterances of different lengths, teacher-forced, with
                    TorchBench's Tacotron2Loss and Adam(1e-3, wd 1e-6).
  dqn               Mnih et al. 2015's Q-network with its target network; the
                    update on a given minibatch (Huber loss, centered RMSprop).
  tts_angular       Mozilla TTS's speaker encoder (three LSTMs with a bias-free
                    projection, Xavier-normal weights, zero biases; the last
                    frame's embedding, L2-normalised) and its AngleProtoLoss
                    (w 10, b -5, which TorchBench's optimizer never updates),
                    two utterances per speaker, one RAdam(lr 1e-4) step; the
                    gradients are saved, since that first step moves each
                    parameter by only lr * g.
"""
import math

import torch
from torch import nn

from parity_common import main

# ----------------------------------------------------------------- demucs

DEMUCS_SHIFT = 44100  # parser.py data_stride: Shift(data_stride)
DEMUCS_REMIX_GROUP = 4  # parser.py remix_group_size


class BLSTM(nn.Module):
    def __init__(self, dim, layers):
        super().__init__()
        self.lstm = nn.LSTM(input_size=dim, hidden_size=dim, num_layers=layers, bidirectional=True)
        self.linear = nn.Linear(2 * dim, dim)

    def forward(self, x):  # x: batch x channels x time
        y = self.lstm(x.permute(2, 0, 1))[0]
        return self.linear(y).permute(1, 2, 0)


def trim_to(x, length):
    delta = x.shape[-1] - length
    if delta == 0:
        return x
    return x[..., delta // 2 : x.shape[-1] - (delta - delta // 2)]


class Demucs(nn.Module):
    def __init__(self, depth=6, channels=64, sources=4, audio_channels=2, kernel=8, stride=4, context=3,
                 lstm_layers=2, rescale=0.1):
        super().__init__()
        self.sources, self.audio_channels = sources, audio_channels
        self.encoder = nn.ModuleList()
        self.decoder = nn.ModuleList()
        cin, ch = audio_channels, channels
        for i in range(depth):
            self.encoder.append(nn.Sequential(nn.Conv1d(cin, ch, kernel, stride), nn.ReLU(),
                                              nn.Conv1d(ch, 2 * ch, 1), nn.GLU(dim=1)))
            out = cin if i > 0 else sources * audio_channels
            dec = [nn.Conv1d(ch, 2 * ch, context), nn.GLU(dim=1), nn.ConvTranspose1d(ch, out, kernel, stride)]
            if i > 0:
                dec.append(nn.ReLU())
            self.decoder.insert(0, nn.Sequential(*dec))
            cin, ch = ch, 2 * ch
        self.lstm = BLSTM(cin, lstm_layers)
        for m in self.modules():
            if isinstance(m, (nn.Conv1d, nn.ConvTranspose1d)):
                scale = (m.weight.std().detach() / rescale) ** 0.5
                m.weight.data /= scale
                m.bias.data /= scale

    def forward(self, mix):
        x = mix
        saved = [x]
        for enc in self.encoder:
            x = enc(x)
            saved.append(x)
        x = self.lstm(x)
        for dec in self.decoder:
            x = x + trim_to(saved.pop(-1), x.shape[-1])
            x = dec(x)
        return x.view(x.shape[0], self.sources, self.audio_channels, x.shape[-1])


def demucs_augment(sources, training):
    # TorchBench: Sequential(FlipSign(), FlipChannels(), Shift(44100), Remix(4)).
    b, s, c, t = sources.shape
    length = t - DEMUCS_SHIFT
    if not training:
        return sources[..., :length]
    signs = torch.randint(2, (b, s, 1, 1), dtype=torch.float32)
    sources = sources * (2 * signs - 1)
    left = torch.randint(2, (b, s, 1, 1), dtype=torch.int64).expand(-1, -1, -1, t)
    sources = torch.cat([sources.gather(2, left), sources.gather(2, 1 - left)], dim=2)
    offsets = torch.randint(DEMUCS_SHIFT, (b, s, 1, 1), dtype=torch.int64).expand(-1, -1, c, -1)
    sources = sources.gather(3, torch.arange(length) + offsets)
    g = b // DEMUCS_REMIX_GROUP
    sources = sources.reshape(g, DEMUCS_REMIX_GROUP, s, c, length)
    perm = torch.argsort(torch.rand(g, DEMUCS_REMIX_GROUP, s, 1, 1), dim=1)
    sources = sources.gather(1, perm.expand(-1, -1, -1, c, length))
    return sources.reshape(b, s, c, length)


class DemucsWrapper(nn.Module):  # TorchBench's wrapper: parameters under "model."
    def __init__(self, **kw):
        super().__init__()
        self.model = Demucs(**kw)

    def forward(self, streams):
        sources = demucs_augment(streams[:, 1:], self.training)
        return sources, self.model(sources.sum(dim=1))


def demucs_loss(m, i):
    sources, estimates = m(i["streams"])
    return nn.functional.l1_loss(estimates, trim_to(sources, estimates.shape[-1]))


def build_demucs():
    model = DemucsWrapper(depth=4)
    # 4 streams (Remix's group), 5 stems, stereo, the shift plus a short excerpt.
    inputs = {"streams": torch.rand(4, 5, 2, DEMUCS_SHIFT + 3000)}
    return {
        "module": model,
        "inputs": inputs,
        "forward": lambda m, i: m(i["streams"])[1],
        "loss": demucs_loss,
        "optimizer": lambda m: torch.optim.Adam(m.parameters(), lr=3e-4),
    }


# ----------------------------------------------------------------- dqn

DQN_ACTIONS = 3  # cart-pole force -1, 0, +1


class QNetwork(nn.Module):  # Mnih et al. 2015, Methods: "Model architecture"
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(4, 32, 8, stride=4), nn.ReLU(), nn.Conv2d(32, 64, 4, stride=2),
                                      nn.ReLU(), nn.Conv2d(64, 64, 3, stride=1), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(64 * 7 * 7, 512), nn.ReLU(), nn.Linear(512, DQN_ACTIONS))

    def forward(self, frames):
        return self.head(self.features(frames.float() / 255.0).flatten(1))


class Dqn(nn.Module):
    def __init__(self):
        super().__init__()
        self.online = QNetwork()
        self.target = QNetwork()
        self.target.load_state_dict(self.online.state_dict())
        for p in self.target.parameters():
            p.requires_grad_(False)


def dqn_loss(m, i):
    with torch.no_grad():
        next_q = m.target(i["batch_next_obs"]).max(1, keepdim=True)[0]
        y = i["batch_reward"] + 0.99 * i["batch_not_done"] * next_q
    q = m.online(i["batch_obs"]).gather(1, i["batch_action"])
    return nn.functional.smooth_l1_loss(q, y)


def build_dqn():
    b = 2
    frames = lambda: torch.randint(0, 256, (b, 4, 84, 84), dtype=torch.uint8)
    inputs = {
        "obs": frames(),
        "batch_obs": frames(),
        "batch_next_obs": frames(),
        "batch_action": torch.randint(0, DQN_ACTIONS, (b, 1)),
        "batch_reward": torch.randn(b, 1),
        "batch_not_done": torch.tensor([[1.0], [0.0]]),
    }
    return {
        "module": Dqn(),
        "inputs": inputs,
        "forward": lambda m, i: m.online(i["obs"]),
        "loss": dqn_loss,
        # PyTorch's centered RMSprop standing for the paper's RMSProp.
        "optimizer": lambda m: torch.optim.RMSprop(m.online.parameters(), lr=2.5e-4, alpha=0.95, eps=0.01,
                                                   centered=True),
    }


# ----------------------------------------------------------------- learning_to_paint

LTP_WIDTH, LTP_MAX_STEP, LTP_DISCOUNT, LTP_TAU = 128, 40, 0.95 ** 5, 0.001


class LtpBasicBlock(nn.Module):  # DRL/actor.py BasicBlock (BatchNorm)
    def __init__(self, cin, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class LtpActor(nn.Module):  # DRL/actor.py ResNet(9, 18, 65)
    def __init__(self, cin=9, cout=65):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, 64, 3, 2, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        planes_in = 64
        for li, planes in enumerate([64, 128, 256, 512]):
            setattr(self, f"layer{li + 1}", nn.Sequential(LtpBasicBlock(planes_in, planes, 2), LtpBasicBlock(planes, planes, 1)))
            planes_in = planes
        self.fc = nn.Linear(512, cout)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return torch.sigmoid(self.fc(nn.functional.avg_pool2d(x, 4).flatten(1)))


def wn(conv):
    return torch.nn.utils.weight_norm(conv)


class TReLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.alpha = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return torch.relu(x - self.alpha) + self.alpha


class LtpCriticBlock(nn.Module):  # DRL/critic.py BasicBlock (weight norm, TReLU)
    def __init__(self, cin, planes, stride):
        super().__init__()
        self.conv1 = wn(nn.Conv2d(cin, planes, 3, stride, 1))
        self.conv2 = wn(nn.Conv2d(planes, planes, 3, 1, 1))
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != planes:
            self.shortcut = nn.Sequential(wn(nn.Conv2d(cin, planes, 1, stride)))
        self.relu_1 = TReLU()
        self.relu_2 = TReLU()

    def forward(self, x):
        out = self.relu_1(self.conv1(x))
        return self.relu_2(self.conv2(out) + self.shortcut(x))


class LtpCritic(nn.Module):  # DRL/critic.py ResNet_wobn(3 + 9, 18, 1)
    def __init__(self):
        super().__init__()
        self.conv1 = wn(nn.Conv2d(12, 64, 3, 2, 1))
        planes_in = 64
        for li, planes in enumerate([64, 128, 256, 512]):
            setattr(self, f"layer{li + 1}", nn.Sequential(LtpCriticBlock(planes_in, planes, 2), LtpCriticBlock(planes, planes, 1)))
            planes_in = planes
        self.fc = nn.Linear(512, 1)
        self.relu_1 = TReLU()

    def forward(self, x):
        x = self.relu_1(self.conv1(x))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(nn.functional.avg_pool2d(x, 4).flatten(1))


class LtpDiscriminator(nn.Module):  # DRL/wgan.py
    def __init__(self):
        super().__init__()
        chans = [6, 16, 32, 64, 128, 1]
        for k in range(5):
            setattr(self, f"conv{k}", wn(nn.Conv2d(chans[k], chans[k + 1], 5, 2, 2)))
        for k in range(4):
            setattr(self, f"relu{k}", TReLU())

    def forward(self, x):
        for k in range(4):
            x = getattr(self, f"relu{k}")(getattr(self, f"conv{k}")(x))
        return nn.functional.avg_pool2d(self.conv4(x), 4).view(-1, 1)


class LtpRenderer(nn.Module):  # Renderer/model.py FCN
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(10, 512), nn.Linear(512, 1024)
        self.fc3, self.fc4 = nn.Linear(1024, 2048), nn.Linear(2048, 4096)
        self.conv1, self.conv2 = nn.Conv2d(16, 32, 3, 1, 1), nn.Conv2d(32, 32, 3, 1, 1)
        self.conv3, self.conv4 = nn.Conv2d(8, 16, 3, 1, 1), nn.Conv2d(16, 16, 3, 1, 1)
        self.conv5, self.conv6 = nn.Conv2d(4, 8, 3, 1, 1), nn.Conv2d(8, 4, 3, 1, 1)

    def forward(self, x):
        for fc in (self.fc1, self.fc2, self.fc3, self.fc4):
            x = torch.relu(fc(x))
        x = x.view(-1, 16, 16, 16)
        ps = nn.functional.pixel_shuffle
        x = ps(self.conv2(torch.relu(self.conv1(x))), 2)
        x = ps(self.conv4(torch.relu(self.conv3(x))), 2)
        x = ps(self.conv6(torch.relu(self.conv5(x))), 2)
        return 1 - torch.sigmoid(x).view(-1, 128, 128)


def ltp_decode(x, canvas, renderer):
    x = x.view(-1, 13)
    stroke = 1 - renderer(x[:, :10])
    stroke = stroke.view(-1, 128, 128, 1)
    color = (stroke * x[:, -3:].view(-1, 1, 1, 3)).permute(0, 3, 1, 2).reshape(-1, 5, 3, 128, 128)
    stroke = stroke.permute(0, 3, 1, 2).reshape(-1, 5, 1, 128, 128)
    for i in range(5):
        canvas = canvas * (1 - stroke[:, i]) + color[:, i]
    return canvas


def share_buffers(target, source):  # utils/util.py hard_update
    for m1, m2 in zip(target.modules(), source.modules()):
        m1._buffers = m2._buffers.copy()
    with torch.no_grad():
        for t, p in zip(target.parameters(), source.parameters()):
            t.copy_(p)


def soft_update(target, source, tau):
    with torch.no_grad():
        for t, p in zip(target.parameters(), source.parameters()):
            t.copy_(t * (1.0 - tau) + p * tau)


class LearningToPaint(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor, self.actor_target = LtpActor(), LtpActor()
        self.critic, self.critic_target = LtpCritic(), LtpCritic()
        self.netD, self.target_netD = LtpDiscriminator(), LtpDiscriminator()
        self.decoder = LtpRenderer()
        share_buffers(self.actor_target, self.actor)
        share_buffers(self.critic_target, self.critic)
        share_buffers(self.target_netD, self.netD)
        coord = torch.zeros(1, 2, 128, 128)
        idx = torch.arange(128, dtype=torch.float32) / 127.0
        coord[0, 0] = idx.view(128, 1).expand(128, 128)
        coord[0, 1] = idx.view(1, 128).expand(128, 128)
        self.coord = coord  # a plain attribute in TorchBench, not a buffer

    def play(self, state, target=False):
        x = torch.cat([state[:, :6].float() / 255, state[:, 6:7].float() / LTP_MAX_STEP,
                       self.coord.expand(state.shape[0], 2, 128, 128)], 1)
        return (self.actor_target if target else self.actor)(x)

    def evaluate(self, state, action, target=False):
        t = state[:, 6:7]
        gt = state[:, 3:6].float() / 255
        canvas0 = state[:, :3].float() / 255
        canvas1 = ltp_decode(action, canvas0, self.decoder)
        gan_reward = self.target_netD(torch.cat([gt, canvas1], 1)) - self.target_netD(torch.cat([gt, canvas0], 1))
        merged = torch.cat([canvas0, canvas1, gt, (t + 1).float() / LTP_MAX_STEP,
                            self.coord.expand(state.shape[0], 2, 128, 128)], 1)
        q = (self.critic_target if target else self.critic)(merged)
        return q + gan_reward, gan_reward


class LtpOptimizers:
    def __init__(self, m):
        self.m = m
        self.critic = torch.optim.Adam(m.critic.parameters(), lr=3e-4)  # update_policy's lr (3e-4, 1e-3)
        self.actor = torch.optim.Adam(m.actor.parameters(), lr=1e-3)
        self.netD = torch.optim.Adam(m.netD.parameters(), lr=3e-4, betas=(0.5, 0.999))

    def zero_grad(self):
        pass

    def step(self):
        pass


LTP_OPTS = {}


def ltp_update(m, i):
    opts = LTP_OPTS["opts"]
    state, action, next_state, terminal = i["batch_state"], i["batch_action"], i["batch_next_state"], i["batch_terminal"]
    # update_gan(next_state): WGAN-GP step of the discriminator.
    fake_img = next_state[:, :3].float() / 255
    real_img = next_state[:, 3:6].float() / 255
    fake = torch.cat([real_img, fake_img], 1)
    real = torch.cat([real_img, real_img], 1)
    d_real, d_fake = m.netD(real), m.netD(fake)
    b = real.shape[0]
    alpha = torch.rand(b, 1).expand(b, real.nelement() // b).contiguous().view(b, 6, 128, 128)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_interp = m.netD(interp)
    grads = torch.autograd.grad(d_interp, interp, grad_outputs=torch.ones_like(d_interp), create_graph=True,
                                retain_graph=True)[0]
    penalty = ((grads.view(b, -1).norm(2, dim=1) - 1) ** 2).mean() * 10
    opts.netD.zero_grad()
    (d_fake.mean() - d_real.mean() + penalty).backward()
    opts.netD.step()
    soft_update(m.target_netD, m.netD, 0.001)
    # Critic.
    with torch.no_grad():
        next_action = m.play(next_state, True)
        target_q, _ = m.evaluate(next_state, next_action, True)
        target_q = LTP_DISCOUNT * (1 - terminal.float()).view(-1, 1) * target_q
    cur_q, step_reward = m.evaluate(state, action)
    target_q = target_q + step_reward.detach()
    value_loss = nn.functional.mse_loss(cur_q, target_q)
    m.critic.zero_grad()
    value_loss.backward(retain_graph=True)
    opts.critic.step()
    # Actor.
    pre_q, _ = m.evaluate(state.detach(), m.play(state))
    policy_loss = -pre_q.mean()
    m.actor.zero_grad()
    policy_loss.backward(retain_graph=True)
    opts.actor.step()
    soft_update(m.actor_target, m.actor, LTP_TAU)
    soft_update(m.critic_target, m.critic, LTP_TAU)
    # A leaf: the driver's backward after this must not re-enter the graph
    # whose weights the optimizers already changed.
    return value_loss.detach().requires_grad_(True)


def build_learning_to_paint():
    m = LearningToPaint()
    b = 2

    def state():
        s = torch.randint(0, 256, (b, 7, 128, 128), dtype=torch.uint8)
        s[:, 6] = torch.randint(0, LTP_MAX_STEP, (b, 1, 1), dtype=torch.uint8)
        return s

    inputs = {
        "state": state(),
        "batch_state": state(),
        "batch_action": torch.rand(b, 65),
        "batch_next_state": state(),
        "batch_terminal": torch.tensor([0.0, 1.0]),
    }

    def make_optimizer(module):
        LTP_OPTS["opts"] = LtpOptimizers(module)
        return LTP_OPTS["opts"]

    return {
        "module": m,
        "inputs": inputs,
        "forward": lambda m, i: m.play(i["state"]),
        # The whole DDPG update runs its own optimizer steps inside "loss";
        # the driver's zero_grad/backward/step after it are no-ops.
        "loss": ltp_update,
        "optimizer": make_optimizer,
    }


# ----------------------------------------------------------------- tacotron2

TACO_SYMBOLS, TACO_MELS = 148, 80
TACO_EVAL_SEED = 4321  # the prenet's dropout stays on in eval: seed both sides


class LinearNorm(nn.Module):
    def __init__(self, cin, cout, bias=True, gain="linear"):
        super().__init__()
        self.linear_layer = nn.Linear(cin, cout, bias=bias)
        nn.init.xavier_uniform_(self.linear_layer.weight, gain=nn.init.calculate_gain(gain))

    def forward(self, x):
        return self.linear_layer(x)


class ConvNorm(nn.Module):
    def __init__(self, cin, cout, k=1, bias=True, gain="linear"):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, k, padding=(k - 1) // 2, bias=bias)
        nn.init.xavier_uniform_(self.conv.weight, gain=nn.init.calculate_gain(gain))

    def forward(self, x):
        return self.conv(x)


class Prenet(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([LinearNorm(TACO_MELS, 256, bias=False), LinearNorm(256, 256, bias=False)])

    def forward(self, x):
        for linear in self.layers:
            x = nn.functional.dropout(torch.relu(linear(x)), p=0.5, training=True)
        return x


class Postnet(nn.Module):
    def __init__(self):
        super().__init__()
        dims = [TACO_MELS, 512, 512, 512, 512, TACO_MELS]
        self.convolutions = nn.ModuleList([
            nn.Sequential(ConvNorm(dims[i], dims[i + 1], 5, gain="tanh" if i < 4 else "linear"),
                          nn.BatchNorm1d(dims[i + 1])) for i in range(5)])

    def forward(self, x):
        for i in range(4):
            x = nn.functional.dropout(torch.tanh(self.convolutions[i](x)), 0.5, self.training)
        return nn.functional.dropout(self.convolutions[4](x), 0.5, self.training)


class TacoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.convolutions = nn.ModuleList([
            nn.Sequential(ConvNorm(512, 512, 5, gain="relu"), nn.BatchNorm1d(512)) for _ in range(3)])
        self.lstm = nn.LSTM(512, 256, 1, batch_first=True, bidirectional=True)

    def forward(self, x, lengths):
        for conv in self.convolutions:
            x = nn.functional.dropout(torch.relu(conv(x)), 0.5, self.training)
        x = x.transpose(1, 2)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True)
        out, _ = self.lstm(packed)
        return nn.utils.rnn.pad_packed_sequence(out, batch_first=True)[0]


class LocationLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.location_conv = ConvNorm(2, 32, 31, bias=False)
        self.location_dense = LinearNorm(32, 128, bias=False, gain="tanh")

    def forward(self, w):
        return self.location_dense(self.location_conv(w).transpose(1, 2))


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.query_layer = LinearNorm(1024, 128, bias=False, gain="tanh")
        self.memory_layer = LinearNorm(512, 128, bias=False, gain="tanh")
        self.v = LinearNorm(128, 1, bias=False)
        self.location_layer = LocationLayer()

    def forward(self, query, memory, processed_memory, weights_cat, mask):
        energies = self.v(torch.tanh(self.query_layer(query.unsqueeze(1)) + self.location_layer(weights_cat) +
                                     processed_memory)).squeeze(-1)
        energies = energies.masked_fill(mask, float("-inf"))
        weights = torch.softmax(energies, dim=1)
        return torch.bmm(weights.unsqueeze(1), memory).squeeze(1), weights


class TacoDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.prenet = Prenet()
        self.attention_rnn = nn.LSTMCell(256 + 512, 1024)
        self.attention_layer = Attention()
        self.decoder_rnn = nn.LSTMCell(1024 + 512, 1024, 1)
        self.linear_projection = LinearNorm(1024 + 512, TACO_MELS)
        self.gate_layer = LinearNorm(1024 + 512, 1, bias=True, gain="sigmoid")

    def forward(self, memory, mels, memory_lengths):
        b, t_in = memory.shape[0], memory.shape[1]
        go = memory.new_zeros(1, b, TACO_MELS)
        inputs = self.prenet(torch.cat([go, mels.permute(2, 0, 1)], 0))
        mask = torch.arange(t_in).unsqueeze(0) >= memory_lengths.unsqueeze(1)
        zeros = lambda n: memory.new_zeros(b, n)
        ah, ac, dh, dc = zeros(1024), zeros(1024), zeros(1024), zeros(1024)
        w, wcum, ctx = zeros(t_in), zeros(t_in), zeros(512)
        processed = self.attention_layer.memory_layer(memory)
        mel_out, gate_out, align = [], [], []
        for step in range(mels.shape[2]):
            ah, ac = self.attention_rnn(torch.cat([inputs[step], ctx], -1), (ah, ac))
            ah = nn.functional.dropout(ah, 0.1, self.training)
            cat = torch.cat([w.unsqueeze(1), wcum.unsqueeze(1)], 1)
            ctx, w = self.attention_layer(ah, memory, processed, cat, mask)
            wcum = wcum + w
            dh, dc = self.decoder_rnn(torch.cat([ah, ctx], -1), (dh, dc))
            dh = nn.functional.dropout(dh, 0.1, self.training)
            hc = torch.cat([dh, ctx], 1)
            mel_out.append(self.linear_projection(hc))
            gate_out.append(self.gate_layer(hc).squeeze(1))
            align.append(w)
        return (torch.stack(mel_out).permute(1, 2, 0), torch.stack(gate_out).transpose(0, 1),
                torch.stack(align).transpose(0, 1))


class Tacotron2(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(TACO_SYMBOLS, 512)
        val = math.sqrt(3.0) * math.sqrt(2.0 / (TACO_SYMBOLS + 512))
        self.embedding.weight.data.uniform_(-val, val)
        self.encoder = TacoEncoder()
        self.decoder = TacoDecoder()
        self.postnet = Postnet()

    def forward(self, text, text_lengths, mels, output_lengths):
        memory = self.encoder(self.embedding(text).transpose(1, 2), text_lengths)
        mel, gate, align = self.decoder(memory, mels, text_lengths)
        post = mel + self.postnet(mel)
        # parse_output (mask_padding): filled through .data, so the gradient
        # passes the padded frames unmasked, as in the original.
        pad = torch.arange(mels.shape[2]).unsqueeze(0) >= output_lengths.unsqueeze(1)
        mel.data.masked_fill_(pad.unsqueeze(1), 0.0)
        post.data.masked_fill_(pad.unsqueeze(1), 0.0)
        gate.data.masked_fill_(pad, 1e3)
        return mel, post, gate, align


def taco_loss(m, i):
    mel, post, gate, _ = m(i["text"], i["text_lengths"], i["mels"], i["output_lengths"])
    mse = nn.functional.mse_loss
    return (mse(mel, i["mels"]) + mse(post, i["mels"]) +
            nn.functional.binary_cross_entropy_with_logits(gate.reshape(-1, 1), i["gates"].reshape(-1, 1)))


def taco_forward(m, i):
    torch.manual_seed(TACO_EVAL_SEED)
    return m(i["text"], i["text_lengths"], i["mels"], i["output_lengths"])[1]


def build_tacotron2():
    text_lengths, output_lengths = torch.tensor([9, 7]), torch.tensor([12, 10])
    text = torch.randint(1, TACO_SYMBOLS, (2, 9))
    text[1, 7:] = 0
    mels = torch.randn(2, TACO_MELS, 12)
    mels[1, :, 10:] = 0
    gates = torch.zeros(2, 12)
    gates[0, 11:] = 1
    gates[1, 9:] = 1
    inputs = {"text": text, "text_lengths": text_lengths, "mels": mels, "output_lengths": output_lengths,
              "gates": gates}
    return {
        "module": Tacotron2(),
        "inputs": inputs,
        "forward": taco_forward,
        "loss": taco_loss,
        "optimizer": lambda m: torch.optim.Adam(m.parameters(), lr=1e-3, weight_decay=1e-6),
    }


# ----------------------------------------------------------------- driver

def save_count_only(model_id, out):
    with torch.device("meta"):
        if model_id == "demucs_full_meta":
            module = DemucsWrapper(depth=6)
        else:
            raise SystemExit(f"unknown model {model_id}")
    torch.save({"params": {}, "inputs": {}, "updated": {}, "output": torch.zeros(1), "loss": torch.zeros(()),
                "param_count": sum(p.numel() for p in module.parameters())}, out)


# ------------------------------------------------------------ tts_angular

TTS_MELS, TTS_FRAMES, TTS_LSTM, TTS_PROJ, TTS_LAYERS, TTS_UTTERANCES = 40, 50, 768, 256, 3, 2


class LSTMWithProjection(nn.Module):
    def __init__(self, input_size, hidden_size, proj_size):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, batch_first=True)
        self.linear = nn.Linear(hidden_size, proj_size, bias=False)

    def forward(self, x):
        o, _ = self.lstm(x)
        return self.linear(o)


class SpeakerEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [LSTMWithProjection(TTS_MELS, TTS_LSTM, TTS_PROJ)]
        layers += [LSTMWithProjection(TTS_PROJ, TTS_LSTM, TTS_PROJ) for _ in range(TTS_LAYERS - 1)]
        self.layers = nn.Sequential(*layers)
        for name, param in self.layers.named_parameters():
            if "bias" in name:
                nn.init.constant_(param, 0.0)
            else:
                nn.init.xavier_normal_(param)

    def forward(self, x):
        d = self.layers(x)
        return nn.functional.normalize(d[:, -1], p=2, dim=1)


def angle_proto_loss(x, w=10.0, b=-5.0):
    """AngleProtoLoss.forward on speakers x utterances x dim embeddings: the
    first utterance is the positive, the mean of the others the anchor."""
    out_anchor = torch.mean(x[:, 1:, :], 1)
    out_positive = x[:, 0, :]
    speakers = out_anchor.size(0)
    cos = nn.functional.cosine_similarity(
        out_positive.unsqueeze(-1).expand(-1, -1, speakers),
        out_anchor.unsqueeze(-1).expand(-1, -1, speakers).transpose(0, 2),
    )
    return nn.functional.cross_entropy(cos * w + b, torch.arange(speakers))


def build_tts_angular():
    batch = 2 * TTS_UTTERANCES  # two speakers
    return {
        "module": SpeakerEncoder(),
        "inputs": {"mels": torch.rand(batch, TTS_FRAMES, TTS_MELS)},
        "forward": lambda m, i: m(i["mels"]),
        "loss": lambda m, i: angle_proto_loss(m(i["mels"]).view(-1, TTS_UTTERANCES, TTS_PROJ)),
        "optimizer": lambda m: torch.optim.RAdam(m.parameters(), lr=1e-4),
        "save_grads": True,
    }


BUILDERS = {"demucs": build_demucs, "dqn": build_dqn, "learning_to_paint": build_learning_to_paint,
            "tacotron2": build_tacotron2, "tts_angular": build_tts_angular}


def build(model_id):
    if model_id not in BUILDERS:
        raise SystemExit(f"unknown model {model_id}")
    return BUILDERS[model_id]()


if __name__ == "__main__":
    import sys

    args = sys.argv[1:]
    model_id = args[args.index("--model") + 1]
    if model_id.endswith("_meta"):
        save_count_only(model_id, args[args.index("--out") + 1])
    else:
        main(build)
