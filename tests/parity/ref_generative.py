"""Plain-torch re-statements of the generative and video models (test-only).

dcgan, pytorch_cyclegan_and_pix2pix, pytorch_stargan and super_slomo have no
PyPI package; each is re-stated here from its published code (the sources are
cited in models/<domain>/<family>.h), with TorchBench's training step.

Their train steps update more than one network with more than one optimizer
(a GAN's D and G steps), so they do not fit parity_common.main's single
loss/optimizer step. run() below is the same protocol and writes the same file:
seed 0, build, record the eval output, then model.train(), seed TRAIN_SEED and
call the spec's train_step(model, inputs), which does all of the step's
updates and returns the loss that the C++ TrainStep() returns.

--double runs the whole protocol in float64. A GAN step amplifies rounding:
perturbing the float32 weights by 1e-7 (relative) moves dcgan's loss after
its five D+G iterations by about 2e-2 and its BatchNorm biases (which start
at 0 and move by Adam's normalised steps) by over 30%, so float32 results of
two correct implementations cannot agree to 1e-4; in float64 they do.
"""
import argparse

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

from parity_common import TRAIN_SEED


def run(build):
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--double", action="store_true",
                        help="build and run in float64 (the default dtype of every tensor the step creates)")
    args = parser.parse_args()

    if args.double:
        torch.set_default_dtype(torch.float64)
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True, warn_only=True)
    spec = build(args.model)
    model, inputs = spec["module"], spec["inputs"]
    if args.double:
        model.double()
        inputs = {k: v.double() if v.is_floating_point() else v for k, v in inputs.items()}

    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.eval()
    with torch.no_grad():
        output = spec["forward"](model, inputs).detach().clone()

    model.train()
    torch.manual_seed(TRAIN_SEED)
    loss = spec["train_step"](model, inputs)
    updated = {k: v.detach().clone() for k, v in model.named_parameters()}

    torch.save(
        {
            "params": params,
            "param_count": sum(p.numel() for p in model.parameters()),
            "inputs": {k: v.detach().clone() for k, v in inputs.items()},
            "output": output,
            "loss": loss.detach().clone(),
            "updated": updated,
        },
        args.out,
    )


# --------------------------------------------------------------------- dcgan
# pytorch/examples dcgan/main.py as torchbenchmark/models/dcgan/__init__.py
# configures and trains it.

class DcganGenerator(nn.Module):
    def __init__(self, nz=100, ngf=64, nc=3):
        super().__init__()
        layers = []
        widths = [nz, ngf * 8, ngf * 4, ngf * 2, ngf]
        for i in range(4):
            stride, pad = (1, 0) if i == 0 else (2, 1)
            layers += [nn.ConvTranspose2d(widths[i], widths[i + 1], 4, stride, pad, bias=False),
                       nn.BatchNorm2d(widths[i + 1]), nn.ReLU(True)]
        layers += [nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh()]
        self.main = nn.Sequential(*layers)

    def forward(self, z):
        return self.main(z)


class DcganDiscriminator(nn.Module):
    def __init__(self, nc=3, ndf=64):
        super().__init__()
        layers = [nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True)]
        for w in (ndf, ndf * 2, ndf * 4):
            layers += [nn.Conv2d(w, w * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(w * 2), nn.LeakyReLU(0.2, inplace=True)]
        layers += [nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False), nn.Sigmoid()]
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        return self.main(x)


def dcgan_weights_init(m):
    name = m.__class__.__name__
    if name.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif name.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Dcgan(nn.Module):
    def __init__(self):
        super().__init__()
        self.netG = DcganGenerator()
        self.netG.apply(dcgan_weights_init)
        self.netD = DcganDiscriminator()
        self.netD.apply(dcgan_weights_init)


def build_dcgan():
    model = Dcgan()
    inputs = {"images": torch.randn(2, 3, 64, 64)}
    opt_d = torch.optim.Adam(model.netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_g = torch.optim.Adam(model.netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    criterion = nn.BCELoss()

    def train_step(m, i):
        real = i["images"]
        b = real.size(0)
        for _ in range(5):  # TorchBench's num_epochs
            m.netD.zero_grad()
            label = torch.full((b,), 1.0)
            err_d_real = criterion(m.netD(real).view(-1), label)
            err_d_real.backward()
            noise = torch.randn(b, 100, 1, 1)
            fake = m.netG(noise)
            label.fill_(0.0)
            err_d_fake = criterion(m.netD(fake.detach()).view(-1), label)
            err_d_fake.backward()
            err_d = err_d_real + err_d_fake
            opt_d.step()
            m.netG.zero_grad()
            label.fill_(1.0)
            err_g = criterion(m.netD(fake).view(-1), label)
            err_g.backward()
            opt_g.step()
        return err_d + err_g

    return {"module": model, "inputs": inputs, "forward": lambda m, i: m.netD(i["images"]).view(-1),
            "train_step": train_step}


# ------------------------------------------------------ CycleGAN (junyanz)
# models/networks.py ResnetGenerator(n_blocks=9, InstanceNorm, reflect, no
# dropout) and NLayerDiscriminator(n_layers=3), init normal(0, 0.02);
# models/cycle_gan_model.py optimize_parameters with lambda_A = lambda_B = 10,
# lambda_identity = 0.5, LSGAN. The image pool is empty at the first step, so
# its query returns the generated images themselves.

def _inorm(c):
    return nn.InstanceNorm2d(c, affine=False, track_running_stats=False)


class CgResnetBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv_block = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3, bias=True), _inorm(dim),
                                        nn.ReLU(True), nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3, bias=True),
                                        _inorm(dim))

    def forward(self, x):
        return x + self.conv_block(x)


class CgResnetGenerator(nn.Module):
    def __init__(self, ngf=64, n_blocks=9):
        super().__init__()
        layers = [nn.ReflectionPad2d(3), nn.Conv2d(3, ngf, 7, bias=True), _inorm(ngf), nn.ReLU(True)]
        for mult in (1, 2):
            layers += [nn.Conv2d(ngf * mult, ngf * mult * 2, 3, stride=2, padding=1, bias=True),
                       _inorm(ngf * mult * 2), nn.ReLU(True)]
        layers += [CgResnetBlock(ngf * 4) for _ in range(n_blocks)]
        for mult in (4, 2):
            layers += [nn.ConvTranspose2d(ngf * mult, ngf * mult // 2, 3, stride=2, padding=1, output_padding=1,
                                          bias=True), _inorm(ngf * mult // 2), nn.ReLU(True)]
        layers += [nn.ReflectionPad2d(3), nn.Conv2d(ngf, 3, 7), nn.Tanh()]
        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x)


class CgPatchDiscriminator(nn.Module):
    def __init__(self, ndf=64):
        super().__init__()
        layers = [nn.Conv2d(3, ndf, 4, stride=2, padding=1), nn.LeakyReLU(0.2, True)]
        layers += [nn.Conv2d(ndf, ndf * 2, 4, 2, 1), _inorm(ndf * 2), nn.LeakyReLU(0.2, True)]
        layers += [nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1), _inorm(ndf * 4), nn.LeakyReLU(0.2, True)]
        layers += [nn.Conv2d(ndf * 4, ndf * 8, 4, 1, 1), _inorm(ndf * 8), nn.LeakyReLU(0.2, True)]
        layers += [nn.Conv2d(ndf * 8, 1, 4, 1, 1)]
        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x)


def cg_init(m):
    name = m.__class__.__name__
    if hasattr(m, "weight") and name.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
        if m.bias is not None:
            nn.init.constant_(m.bias.data, 0.0)


class CycleGan(nn.Module):
    def __init__(self):
        super().__init__()
        self.netG_A = CgResnetGenerator()
        self.netG_A.apply(cg_init)
        self.netG_B = CgResnetGenerator()
        self.netG_B.apply(cg_init)
        self.netD_A = CgPatchDiscriminator()
        self.netD_A.apply(cg_init)
        self.netD_B = CgPatchDiscriminator()
        self.netD_B.apply(cg_init)


def lsgan(pred, real):
    return F.mse_loss(pred, torch.full_like(pred, 1.0 if real else 0.0))


def build_cyclegan():
    model = CycleGan()
    size = 32  # fully convolutional; 256 in TorchBench
    inputs = {"real_A": torch.rand(1, 3, size, size) * 2 - 1, "real_B": torch.rand(1, 3, size, size) * 2 - 1}
    opt_g = torch.optim.Adam(list(model.netG_A.parameters()) + list(model.netG_B.parameters()), lr=2e-4,
                             betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(list(model.netD_A.parameters()) + list(model.netD_B.parameters()), lr=2e-4,
                             betas=(0.5, 0.999))

    def set_requires_grad(nets, flag):
        for n in nets:
            for p in n.parameters():
                p.requires_grad = flag

    def backward_d(net_d, real, fake):
        loss = (lsgan(net_d(real), True) + lsgan(net_d(fake.detach()), False)) * 0.5
        loss.backward()
        return loss

    def train_step(m, i):
        real_A, real_B = i["real_A"], i["real_B"]
        fake_B = m.netG_A(real_A)
        rec_A = m.netG_B(fake_B)
        fake_A = m.netG_B(real_B)
        rec_B = m.netG_A(fake_A)
        set_requires_grad([m.netD_A, m.netD_B], False)
        opt_g.zero_grad()
        loss_idt_A = F.l1_loss(m.netG_A(real_B), real_B) * 10.0 * 0.5
        loss_idt_B = F.l1_loss(m.netG_B(real_A), real_A) * 10.0 * 0.5
        loss_G_A = lsgan(m.netD_A(fake_B), True)
        loss_G_B = lsgan(m.netD_B(fake_A), True)
        loss_cycle_A = F.l1_loss(rec_A, real_A) * 10.0
        loss_cycle_B = F.l1_loss(rec_B, real_B) * 10.0
        loss_G = loss_G_A + loss_G_B + loss_cycle_A + loss_cycle_B + loss_idt_A + loss_idt_B
        loss_G.backward()
        opt_g.step()
        set_requires_grad([m.netD_A, m.netD_B], True)
        opt_d.zero_grad()
        # ImagePool(50) at its first query returns the images it is given.
        loss_D_A = backward_d(m.netD_A, real_B, fake_B.data)
        loss_D_B = backward_d(m.netD_B, real_A, fake_A.data)
        opt_d.step()
        return loss_G + loss_D_A + loss_D_B

    return {"module": model, "inputs": inputs, "forward": lambda m, i: m.netG_A(i["real_A"]),
            "train_step": train_step}


# ------------------------------------------------------------------- StarGAN
# yunjey/stargan model.py (CelebA: c_dim 5, 128 x 128, 6 + 6 repeats) and
# Solver.train() at i = 0 as TorchBench runs it (num_iters = 1): only the
# discriminator step, since (i + 1) % n_critic != 0.

def _sg_norm(c):
    return nn.InstanceNorm2d(c, affine=True, track_running_stats=True)


class SgResidualBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.main = nn.Sequential(nn.Conv2d(dim, dim, 3, 1, 1, bias=False), _sg_norm(dim), nn.ReLU(inplace=True),
                                  nn.Conv2d(dim, dim, 3, 1, 1, bias=False), _sg_norm(dim))

    def forward(self, x):
        return x + self.main(x)


class SgGenerator(nn.Module):
    def __init__(self, conv_dim=64, c_dim=5, repeat_num=6):
        super().__init__()
        layers = [nn.Conv2d(3 + c_dim, conv_dim, 7, 1, 3, bias=False), _sg_norm(conv_dim), nn.ReLU(inplace=True)]
        d = conv_dim
        for _ in range(2):
            layers += [nn.Conv2d(d, d * 2, 4, 2, 1, bias=False), _sg_norm(d * 2), nn.ReLU(inplace=True)]
            d *= 2
        layers += [SgResidualBlock(d) for _ in range(repeat_num)]
        for _ in range(2):
            layers += [nn.ConvTranspose2d(d, d // 2, 4, 2, 1, bias=False), _sg_norm(d // 2), nn.ReLU(inplace=True)]
            d //= 2
        layers += [nn.Conv2d(d, 3, 7, 1, 3, bias=False), nn.Tanh()]
        self.main = nn.Sequential(*layers)

    def forward(self, x, c):
        c = c.view(c.size(0), c.size(1), 1, 1).repeat(1, 1, x.size(2), x.size(3))
        return self.main(torch.cat([x, c], dim=1))


class SgDiscriminator(nn.Module):
    def __init__(self, image_size=128, conv_dim=64, c_dim=5, repeat_num=6):
        super().__init__()
        layers = [nn.Conv2d(3, conv_dim, 4, 2, 1), nn.LeakyReLU(0.01)]
        d = conv_dim
        for _ in range(1, repeat_num):
            layers += [nn.Conv2d(d, d * 2, 4, 2, 1), nn.LeakyReLU(0.01)]
            d *= 2
        self.main = nn.Sequential(*layers)
        self.conv1 = nn.Conv2d(d, 1, 3, 1, 1, bias=False)
        self.conv2 = nn.Conv2d(d, c_dim, image_size // 2 ** repeat_num, bias=False)

    def forward(self, x):
        h = self.main(x)
        out_cls = self.conv2(h)
        return self.conv1(h), out_cls.view(out_cls.size(0), out_cls.size(1))


class StarGan(nn.Module):
    def __init__(self):
        super().__init__()
        self.G = SgGenerator()
        self.D = SgDiscriminator()


def build_stargan():
    model = StarGan()
    n = 2
    x_real = torch.rand(n, 3, 128, 128) * 2 - 1
    label_org = torch.randint(0, 2, (n, 5)).to(torch.get_default_dtype())
    c_trg = label_org.clone()
    c_trg[:, 0] = 1
    c_trg[:, 1] = 0
    c_trg[:, 2] = 0
    inputs = {"x_real": x_real, "label_org": label_org, "c_trg": c_trg}
    g_opt = torch.optim.Adam(model.G.parameters(), 1e-4, [0.5, 0.999])
    d_opt = torch.optim.Adam(model.D.parameters(), 1e-4, [0.5, 0.999])

    def cls_loss(logit, target):
        return F.binary_cross_entropy_with_logits(logit, target, reduction="sum") / logit.size(0)

    def train_step(m, i):
        x_real, label_org = i["x_real"], i["label_org"]
        rand_idx = torch.randperm(label_org.size(0))
        label_trg = label_org[rand_idx]
        c_trg = label_trg.clone()
        out_src, out_cls = m.D(x_real)
        d_loss_real = -torch.mean(out_src)
        d_loss_cls = cls_loss(out_cls, label_org)
        x_fake = m.G(x_real, c_trg)
        out_src, _ = m.D(x_fake.detach())
        d_loss_fake = torch.mean(out_src)
        alpha = torch.rand(x_real.size(0), 1, 1, 1)
        x_hat = (alpha * x_real.data + (1 - alpha) * x_fake.data).requires_grad_(True)
        out_src, _ = m.D(x_hat)
        dydx = torch.autograd.grad(outputs=out_src, inputs=x_hat, grad_outputs=torch.ones(out_src.size()),
                                   retain_graph=True, create_graph=True, only_inputs=True)[0]
        dydx = dydx.view(dydx.size(0), -1)
        d_loss_gp = torch.mean((torch.sqrt(torch.sum(dydx ** 2, dim=1)) - 1) ** 2)
        d_loss = d_loss_real + d_loss_fake + 1.0 * d_loss_cls + 10.0 * d_loss_gp
        g_opt.zero_grad()
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()
        return d_loss

    return {"module": model, "inputs": inputs, "forward": lambda m, i: m.G(i["x_real"], i["c_trg"]),
            "train_step": train_step}


# -------------------------------------------------------------- Super SloMo
# avinashpaliwal/Super-SloMo model.py UNet/backWarp and TorchBench's
# model_wrapper.Model loss; VGG16 features[:22] from torchvision (random
# weights: nothing is downloaded), frozen.

class SmDown(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, k, stride=1, padding=(k - 1) // 2)
        self.conv2 = nn.Conv2d(cout, cout, k, stride=1, padding=(k - 1) // 2)

    def forward(self, x):
        x = F.avg_pool2d(x, 2)
        x = F.leaky_relu(self.conv1(x), negative_slope=0.1)
        return F.leaky_relu(self.conv2(x), negative_slope=0.1)


class SmUp(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=1, padding=1)
        self.conv2 = nn.Conv2d(2 * cout, cout, 3, stride=1, padding=1)

    def forward(self, x, skip):
        x = F.interpolate(x, scale_factor=2.0, mode="bilinear")
        x = F.leaky_relu(self.conv1(x), negative_slope=0.1)
        return F.leaky_relu(self.conv2(torch.cat((x, skip), 1)), negative_slope=0.1)


class SmUNet(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, 32, 7, stride=1, padding=3)
        self.conv2 = nn.Conv2d(32, 32, 7, stride=1, padding=3)
        self.down1 = SmDown(32, 64, 5)
        self.down2 = SmDown(64, 128, 3)
        self.down3 = SmDown(128, 256, 3)
        self.down4 = SmDown(256, 512, 3)
        self.down5 = SmDown(512, 512, 3)
        self.up1 = SmUp(512, 512)
        self.up2 = SmUp(512, 256)
        self.up3 = SmUp(256, 128)
        self.up4 = SmUp(128, 64)
        self.up5 = SmUp(64, 32)
        self.conv3 = nn.Conv2d(32, cout, 3, stride=1, padding=1)

    def forward(self, x):
        x = F.leaky_relu(self.conv1(x), negative_slope=0.1)
        s1 = F.leaky_relu(self.conv2(x), negative_slope=0.1)
        s2 = self.down1(s1)
        s3 = self.down2(s2)
        s4 = self.down3(s3)
        s5 = self.down4(s4)
        x = self.down5(s5)
        x = self.up1(x, s5)
        x = self.up2(x, s4)
        x = self.up3(x, s3)
        x = self.up4(x, s2)
        x = self.up5(x, s1)
        return F.leaky_relu(self.conv3(x), negative_slope=0.1)


def sm_backwarp(img, flow):
    H, W = img.shape[2], img.shape[3]
    grid_x, grid_y = np.meshgrid(np.arange(W), np.arange(H))
    grid_x, grid_y = torch.tensor(grid_x), torch.tensor(grid_y)
    u, v = flow[:, 0, :, :], flow[:, 1, :, :]
    x = grid_x.unsqueeze(0).expand_as(u).to(dtype=u.dtype) + u
    y = grid_y.unsqueeze(0).expand_as(v).to(dtype=u.dtype) + v
    x = 2 * (x / W - 0.5)
    y = 2 * (y / H - 0.5)
    return F.grid_sample(img, torch.stack((x, y), dim=3), mode="bilinear", padding_mode="zeros", align_corners=False)


class SuperSloMo(nn.Module):
    def __init__(self):
        super().__init__()
        self.flowComp = SmUNet(6, 4)
        self.ArbTimeFlowIntrp = SmUNet(20, 5)
        from torchvision.models import vgg16
        self.vgg16_conv_4_3 = nn.Sequential(*list(vgg16(weights=None).children())[0][:22])
        for p in self.vgg16_conv_4_3.parameters():
            p.requires_grad = False

    def forward(self, idx, I0, I1, IFrame):
        flowOut = self.flowComp(torch.cat((I0, I1), dim=1))
        F_0_1, F_1_0 = flowOut[:, :2, :, :], flowOut[:, 2:, :, :]
        t = torch.linspace(0.125, 0.875, 7)[idx][:, None, None, None]
        C00 = -(1 - t) * t
        C01, C10, C11 = t * t, (1 - t) * (1 - t), C00
        F_t_0 = C00 * F_0_1 + C01 * F_1_0
        F_t_1 = C10 * F_0_1 + C11 * F_1_0
        g_I0_F_t_0 = sm_backwarp(I0, F_t_0)
        g_I1_F_t_1 = sm_backwarp(I1, F_t_1)
        intrpOut = self.ArbTimeFlowIntrp(torch.cat((I0, I1, F_0_1, F_1_0, F_t_1, F_t_0, g_I1_F_t_1, g_I0_F_t_0), 1))
        F_t_0_f = intrpOut[:, :2, :, :] + F_t_0
        F_t_1_f = intrpOut[:, 2:4, :, :] + F_t_1
        V_t_0 = torch.sigmoid(intrpOut[:, 4:5, :, :])
        V_t_1 = 1 - V_t_0
        g_I0_F_t_0_f = sm_backwarp(I0, F_t_0_f)
        g_I1_F_t_1_f = sm_backwarp(I1, F_t_1_f)
        W0, W1 = 1 - t, t
        Ft_p = (W0 * V_t_0 * g_I0_F_t_0_f + W1 * V_t_1 * g_I1_F_t_1_f) / (W0 * V_t_0 + W1 * V_t_1)
        recnLoss = F.l1_loss(Ft_p, IFrame)
        prcpLoss = F.mse_loss(self.vgg16_conv_4_3(Ft_p), self.vgg16_conv_4_3(IFrame))
        warpLoss = (F.l1_loss(g_I0_F_t_0, IFrame) + F.l1_loss(g_I1_F_t_1, IFrame) +
                    F.l1_loss(sm_backwarp(I0, F_1_0), I1) + F.l1_loss(sm_backwarp(I1, F_0_1), I0))

        def smooth(f):
            return (torch.mean(torch.abs(f[:, :, :, :-1] - f[:, :, :, 1:])) +
                    torch.mean(torch.abs(f[:, :, :-1, :] - f[:, :, 1:, :])))

        loss = 204 * recnLoss + 102 * warpLoss + 0.005 * prcpLoss + smooth(F_1_0) + smooth(F_0_1)
        return Ft_p, loss


def build_super_slomo():
    model = SuperSloMo()
    n, size = 2, 64  # 352 x 352 in TorchBench; the U-Nets need multiples of 32
    mean = torch.tensor([0.429, 0.431, 0.397]).view(1, 3, 1, 1)
    inputs = {"trainFrameIndex": torch.randint(0, 7, (n,)), "I0": torch.rand(n, 3, size, size) - mean,
              "I1": torch.rand(n, 3, size, size) - mean, "IFrame": torch.rand(n, 3, size, size) - mean}
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    args = lambda i: (i["trainFrameIndex"], i["I0"], i["I1"], i["IFrame"])

    def train_step(m, i):
        opt.zero_grad()
        _, loss = m(*args(i))
        loss.backward()
        opt.step()
        return loss

    return {"module": model, "inputs": inputs, "forward": lambda m, i: m(*args(i))[0], "train_step": train_step}


# -------------------------------------------------------- Background Matting
# senguptaumd/Background-Matting networks.py (ResnetConditionHR,
# MultiscaleDiscriminator num_D = 1 with InstanceNorm), loss_functions.py and
# functions.compose_image_withshift, and TorchBench's train() for its one
# batch. numpy's draws are replaced by the SplitMix64 that the C++ workload
# uses (re-stated below).

MASK64 = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def randint(self, lo, hi):
        assert hi > lo
        lo, hi = int(lo), int(hi)
        return lo + self.next() % (hi - lo)

    def random_sample(self):
        return (self.next() >> 11) * 2.0 ** -53

    def permutation(self, n):
        p = list(range(n))
        for i in range(n - 1, 0, -1):
            j = self.next() % (i + 1)
            p[i], p[j] = p[j], p[i]
        return p


class BmResnetBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv_block = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3, bias=True), nn.BatchNorm2d(dim),
                                        nn.ReLU(True), nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3, bias=True),
                                        nn.BatchNorm2d(dim))

    def forward(self, x):
        return x + self.conv_block(x)


def _bm_encoder(cin, ngf=64):
    return nn.Sequential(nn.ReflectionPad2d(3), nn.Conv2d(cin, ngf, 7, padding=0), nn.BatchNorm2d(ngf), nn.ReLU(True),
                         nn.Conv2d(ngf, ngf * 2, 3, 2, 1), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
                         nn.Conv2d(ngf * 2, ngf * 4, 3, 2, 1), nn.BatchNorm2d(ngf * 4), nn.ReLU(True))


def _bm_up():
    return nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)


class BmResnetConditionHR(nn.Module):
    def __init__(self, ngf=64, nf_part=64, n_blocks1=7, n_blocks2=3):
        super().__init__()
        self.model_enc1 = nn.Sequential(nn.ReflectionPad2d(3), nn.Conv2d(3, ngf, 7, padding=0), nn.BatchNorm2d(ngf),
                                        nn.ReLU(True), nn.Conv2d(ngf, ngf * 2, 3, 2, 1), nn.BatchNorm2d(ngf * 2),
                                        nn.ReLU(True))
        self.model_enc2 = nn.Sequential(nn.Conv2d(ngf * 2, ngf * 4, 3, 2, 1), nn.BatchNorm2d(ngf * 4), nn.ReLU(True))
        self.model_enc_back = _bm_encoder(3)
        self.model_enc_seg = _bm_encoder(1)
        self.model_enc_multi = _bm_encoder(4)
        comb = lambda: nn.Sequential(nn.Conv2d(ngf * 8, nf_part, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True))
        self.comb_back, self.comb_seg, self.comb_multi = comb(), comb(), comb()
        self.model_res_dec = nn.Sequential(nn.Conv2d(ngf * 4 + 3 * nf_part, ngf * 4, 1, bias=False),
                                           nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
                                           *[BmResnetBlock(ngf * 4) for _ in range(n_blocks1)])
        self.model_res_dec_al = nn.Sequential(*[BmResnetBlock(ngf * 4) for _ in range(n_blocks2)])
        self.model_res_dec_fg = nn.Sequential(*[BmResnetBlock(ngf * 4) for _ in range(n_blocks2)])
        self.model_al_out = nn.Sequential(_bm_up(), nn.Conv2d(ngf * 4, ngf * 2, 3, 1, 1), nn.BatchNorm2d(ngf * 2),
                                          nn.ReLU(True), _bm_up(), nn.Conv2d(ngf * 2, ngf, 3, 1, 1),
                                          nn.BatchNorm2d(ngf), nn.ReLU(True), nn.ReflectionPad2d(3),
                                          nn.Conv2d(ngf, 1, 7, padding=0), nn.Tanh())
        self.model_dec_fg1 = nn.Sequential(_bm_up(), nn.Conv2d(ngf * 4, ngf * 2, 3, 1, 1), nn.BatchNorm2d(ngf * 2),
                                           nn.ReLU(True))
        self.model_fg_out = nn.Sequential(_bm_up(), nn.Conv2d(ngf * 4, ngf, 3, 1, 1), nn.BatchNorm2d(ngf),
                                          nn.ReLU(True), nn.ReflectionPad2d(3), nn.Conv2d(ngf, 3, 7, padding=0))

    def forward(self, image, back, seg, multi):
        img_feat1 = self.model_enc1(image)
        img_feat = self.model_enc2(img_feat1)
        back_feat = self.model_enc_back(back)
        seg_feat = self.model_enc_seg(seg)
        multi_feat = self.model_enc_multi(multi)  # unused, as in the reference
        oth_feat = torch.cat([self.comb_back(torch.cat([img_feat, back_feat], dim=1)),
                              self.comb_seg(torch.cat([img_feat, seg_feat], dim=1)),
                              self.comb_multi(torch.cat([img_feat, back_feat], dim=1))], dim=1)
        out_dec = self.model_res_dec(torch.cat([img_feat, oth_feat], dim=1))
        al_out = self.model_al_out(self.model_res_dec_al(out_dec))
        out_dec_fg1 = self.model_dec_fg1(self.model_res_dec_fg(out_dec))
        fg_out = self.model_fg_out(torch.cat([out_dec_fg1, img_feat1], dim=1))
        return al_out, fg_out


class BmMultiscaleDiscriminator(nn.Module):
    def __init__(self, ndf=64):
        super().__init__()
        IN = nn.InstanceNorm2d
        self.layer0 = nn.Sequential(nn.Conv2d(3, ndf, 4, 2, 2), nn.LeakyReLU(0.2, True),
                                    nn.Conv2d(ndf, ndf * 2, 4, 2, 2), IN(ndf * 2), nn.LeakyReLU(0.2, True),
                                    nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 2), IN(ndf * 4), nn.LeakyReLU(0.2, True),
                                    nn.Conv2d(ndf * 4, ndf * 8, 4, 1, 2), IN(ndf * 8), nn.LeakyReLU(0.2, True),
                                    nn.Conv2d(ndf * 8, 1, 4, 1, 2))
        self.downsample = nn.AvgPool2d(3, stride=2, padding=[1, 1], count_include_pad=False)

    def forward(self, x):
        return [[self.layer0(x)]]


def bm_conv_init(m):
    name = m.__class__.__name__
    if name.find("Conv") != -1:
        nn.init.xavier_uniform_(m.weight, gain=np.sqrt(2))
        if m.bias is not None:
            nn.init.constant_(m.bias, 0)
    if name.find("BatchNorm2d") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.2)
        nn.init.constant_(m.bias.data, 0.0)


class BackgroundMatting(nn.Module):
    def __init__(self):
        super().__init__()
        self.netB = BmResnetConditionHR()
        self.netB.eval()
        for p in self.netB.parameters():
            p.requires_grad = False
        self.netG = BmResnetConditionHR()
        self.netG.apply(bm_conv_init)
        self.netD = BmMultiscaleDiscriminator()
        self.netD.apply(bm_conv_init)


def bm_normalized_l1(alpha, alpha_pred, mask):
    loss = 0
    for i in range(alpha.shape[0]):
        if mask[i, ...].sum() > 0:
            loss = loss + torch.sum(torch.abs(alpha[i, ...] * mask[i, ...] - alpha_pred[i, ...] * mask[i, ...])) / (
                torch.sum(mask[i, ...]) + 1e-6)
    return loss / alpha.shape[0]


def bm_gradient_loss(alpha, alpha_pred, mask):
    fx = torch.Tensor([[1, 0, -1], [2, 0, -2], [1, 0, -1]]).view((1, 1, 3, 3))
    fy = torch.Tensor([[1, 2, 1], [0, 0, 0], [-1, -2, -1]]).view((1, 1, 3, 3))
    return (bm_normalized_l1(F.conv2d(alpha, fx, padding=1), F.conv2d(alpha_pred, fx, padding=1), mask) +
            bm_normalized_l1(F.conv2d(alpha, fy, padding=1), F.conv2d(alpha_pred, fy, padding=1), mask))


def bm_compose_loss(image, alpha_pred, fg, bg, mask):
    alpha_pred = (alpha_pred + 1) / 2
    return bm_normalized_l1(image, fg * alpha_pred + (1 - alpha_pred) * bg, mask)


def bm_gan_loss(pred, real):
    loss = 0
    for i in range(len(pred)):
        labels = torch.ones(pred[i][0].shape) if real else torch.zeros(pred[i][0].shape)
        loss += F.mse_loss(pred[i][0], labels)
    return loss / len(pred)


def bm_compose_with_shift(alpha_pred, fg_pred, bg, seg, rng):
    image_sh = torch.zeros(fg_pred.shape)
    for t in range(fg_pred.shape[0]):
        al_tmp = ((seg[t, ...].data.numpy() + 1) / 2).transpose((1, 2, 0))
        al_tmp[al_tmp > 1] = 1
        al_tmp[al_tmp < 0] = 0
        al_tmp = al_tmp.squeeze(2)
        where = np.array(np.where((al_tmp > 0.1).astype(np.float32)))
        x1, y1 = np.amin(where, axis=1)
        x2, y2 = np.amax(where, axis=1)
        n = rng.randint(-(y1 - 10), al_tmp.shape[1] - y2 - 10)
        alpha_pred_sh = torch.cat((alpha_pred[t, :, :, -n:], alpha_pred[t, :, :, :-n]), dim=2)
        fg_pred_sh = torch.cat((fg_pred[t, :, :, -n:], fg_pred[t, :, :, :-n]), dim=2)
        alpha_pred_sh = (alpha_pred_sh + 1) / 2
        image_sh[t, ...] = fg_pred_sh * alpha_pred_sh + (1 - alpha_pred_sh) * bg[t, ...]
    return torch.autograd.Variable(image_sh)


def build_background_matting():
    model = BackgroundMatting()
    n, size = 2, 32  # 512 x 512 in TorchBench
    box = torch.full((n, 1, size, size), -1.0)
    box[:, :, size // 4:size // 4 + size // 2, 3 * size // 8:3 * size // 8 + size // 4] = 1.0
    inputs = {"image": torch.rand(n, 3, size, size) * 2 - 1, "bg": torch.rand(n, 3, size, size) * 2 - 1,
              "multi_fr": torch.rand(n, 4, size, size) * 2 - 1, "back_rnd": torch.rand(n, 3, size, size) * 2 - 1,
              "seg": box, "seg_gt": box.clone()}
    opt_g = torch.optim.Adam(model.netG.parameters(), lr=1e-4)
    opt_d = torch.optim.Adam(model.netD.parameters(), lr=1e-5)
    rng = SplitMix64(0)

    def train_step(m, i):
        m.netB.eval()
        m.netG.train()
        m.netD.train()
        image, bg, seg, multi_fr = i["image"], i["bg"], i["seg"], i["multi_fr"]
        seg_gt, back_rnd = i["seg_gt"], i["back_rnd"]
        wt = 1
        mask0 = torch.ones(seg.shape)
        alpha_pred_sup, fg_pred_sup = m.netB(image, bg, seg, multi_fr)
        mask = (alpha_pred_sup > -0.98).type(torch.FloatTensor)
        mask1 = (seg_gt > 0.95).type(torch.FloatTensor)
        alpha_pred, fg_pred = m.netG(image, bg, seg, multi_fr)
        al_loss = bm_normalized_l1(alpha_pred_sup, alpha_pred, mask0) + 0.5 * bm_gradient_loss(
            alpha_pred_sup, alpha_pred, mask0)
        fg_loss = bm_normalized_l1(fg_pred_sup, fg_pred, mask)
        comp_loss = bm_compose_loss(image, alpha_pred, fg_pred, bg, mask1)
        perm = torch.LongTensor(rng.permutation(bg.shape[0]))
        bg_sh = bg[perm, :, :, :]
        al_mask = (alpha_pred > 0.95).type(torch.FloatTensor)
        if rng.random_sample() > 0.5:
            bg_sh = back_rnd
        image_sh = bm_compose_with_shift(alpha_pred, image * al_mask + fg_pred * (1 - al_mask), bg_sh, seg, rng)
        loss_ganG = bm_gan_loss(m.netD(image_sh), True)
        lossG = loss_ganG + wt * (0.05 * comp_loss + 0.05 * al_loss + 0.05 * fg_loss)
        opt_g.zero_grad()
        lossG.backward()
        opt_g.step()
        loss_ganD_fake = bm_gan_loss(m.netD(image_sh), False)
        loss_ganD_real = bm_gan_loss(m.netD(image), True)
        lossD = (loss_ganD_real + loss_ganD_fake) * 0.5
        opt_d.zero_grad()
        lossD.backward()
        opt_d.step()
        return lossG + lossD

    def forward(m, i):
        al, fg = m.netG(i["image"], i["bg"], i["seg"], i["multi_fr"])
        return torch.cat([al, fg], 1)

    return {"module": model, "inputs": inputs, "forward": forward, "train_step": train_step}


BUILDERS = {
    "background_matting": build_background_matting,
    "dcgan": build_dcgan,
    "pytorch_cyclegan_and_pix2pix": build_cyclegan,
    "pytorch_stargan": build_stargan,
    "super_slomo": build_super_slomo,
}


def build(model_id):
    if model_id not in BUILDERS:
        raise ValueError(f"unknown model {model_id}")
    return BUILDERS[model_id]()


if __name__ == "__main__":
    run(build)
