// Parity and smoke tests for the generative and video models (dcgan,
// pytorch_cyclegan_and_pix2pix, pytorch_stargan, super_slomo).
//
// None has a PyPI reference. Each is checked two ways:
//  - its parameter count against a formula written here from the published
//    architecture (the sources are cited in models/<domain>/<family>.h), independently
//    of the C++ module code;
//  - CheckModelParity's protocol, in float64 (CheckParityInDouble below),
//    against a plain-torch re-statement of the model and of TorchBench's
//    training step (tests/parity/ref_generative.py): names and shapes of
//    every parameter and buffer, the eval output, the step's loss and every
//    parameter after the step.
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>

#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

// Weights (and bias) of a k x k convolution or transposed convolution.
int64_t Conv(int64_t in, int64_t out, int64_t k, bool bias = true) { return in * out * k * k + (bias ? out : 0); }
int64_t Norm(int64_t c) { return 2 * c; }  // BatchNorm / affine InstanceNorm weight and bias

std::unique_ptr<models::Workload> Build(const std::string& id, models::Mode mode, int64_t batch, bool smoke) {
  const auto* info = models::FindModel(id);
  REQUIRE_MESSAGE(info != nullptr, "model not registered: ", id);
  models::WorkloadOptions opt;
  opt.mode = mode;
  opt.batch_size = batch;
  opt.smoke = smoke;
  models::SeedAll(0);
  return info->create(opt);
}

int64_t ParamsAtFullSize(const std::string& id) {
  return parity::ParameterCount(Build(id, models::Mode::kEval, 1, /*smoke=*/false)->net());
}

// parity::CheckModelParity's protocol (structure, weights, eval output, one
// TrainStep() from the same weights and seed, every parameter after it), run
// in float64 on both sides: the workload is cast with CastTo(kDouble) and the
// reference script runs with --double; parameter errors use a scale floor
// (below). The GAN steps amplify float32
// rounding far beyond 1e-4 (see ref_generative.py), so two correct float32
// implementations cannot be compared at that tolerance; in float64 they can.
parity::ParityErrors CheckParityInDouble(const std::string& id, double tol = 1e-4) {
  const auto* info = models::FindModel(id);
  REQUIRE_MESSAGE(info != nullptr, "model not registered: ", id);
  auto ref = parity::RunReference("ref_generative.py", id, {"--double"});
  const bool ref_is_double = ref.output.scalar_type() == torch::kDouble;
  REQUIRE(ref_is_double);
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.output.size(0);
  opt.seed = 0;
  models::SeedAll(0);
  auto w = info->create(opt);
  w->CastTo(torch::kDouble);
  auto& net = w->net();
  parity::CheckSameStructure(net, ref);
  parity::LoadWeights(net, ref);
  parity::UseReferenceInputs(*w, ref);
  parity::ParityErrors e;
  {
    net.eval();
    torch::NoGradGuard no_grad;
    auto out = w->Forward();
    const bool out_is_double = out.scalar_type() == torch::kDouble;
    REQUIRE(out_is_double);
    e.output = parity::RelError(out, ref.output);
  }
  net.train();
  torch::manual_seed(1234);  // parity_common.TRAIN_SEED
  auto loss = w->TrainStep();
  const bool loss_is_double = loss.scalar_type() == torch::kDouble;
  REQUIRE(loss_is_double);
  e.loss = parity::RelError(loss, ref.loss);
  auto ours = net.named_parameters();
  for (const auto& entry : ref.updated) {
    const auto& name = entry.first;
    const auto& t = entry.second;
    auto* p = ours.find(name);
    REQUIRE_MESSAGE(p != nullptr, "updated parameter missing: ", name);
    // Normwise relative error, with the scale floored at 1e-6: a bias placed
    // right before a normalisation has an exactly zero gradient, so after
    // the step it holds only Adam's normalised rounding noise (about 1e-13
    // here) and a relative error of noise against noise means nothing. A real
    // disagreement moves a parameter by about the learning rate (>= 1e-5),
    // which the floor still reports as an error of 10 or more.
    auto a = p->detach().to(torch::kCPU, torch::kDouble), b = t.to(torch::kDouble);
    const double err = (a - b).abs().max().item<double>() / std::max(b.abs().max().item<double>(), 1e-6);
    if (err > e.updated_max) {
      e.updated_max = err;
      e.worst_param = name;
    }
  }
  std::cout << "parity " << id << " (float64): params " << ref.param_count << ", output rel err " << e.output
            << ", loss rel err " << e.loss << ", updated params max rel err " << e.updated_max << " (" << e.worst_param
            << ")" << std::endl;
  CHECK(e.output <= tol);
  CHECK(e.loss <= tol);
  CHECK(e.updated_max <= tol);
  return e;
}

}  // namespace

// ------------------------------------------------------------------ dcgan

TEST_CASE("parity dcgan") { CheckParityInDouble("dcgan"); }

TEST_CASE("parity dcgan parameter count") {
  // Radford et al. 2016 at nz 100, ngf = ndf = 64, nc 3: bias-free 4x4
  // (transposed) convolutions, BatchNorm after every hidden layer but D's first.
  const int64_t nz = 100, ngf = 64, ndf = 64, nc = 3;
  const int64_t generator = Conv(nz, 8 * ngf, 4, false) + Norm(8 * ngf) + Conv(8 * ngf, 4 * ngf, 4, false) +
                            Norm(4 * ngf) + Conv(4 * ngf, 2 * ngf, 4, false) + Norm(2 * ngf) +
                            Conv(2 * ngf, ngf, 4, false) + Norm(ngf) + Conv(ngf, nc, 4, false);
  const int64_t discriminator = Conv(nc, ndf, 4, false) + Conv(ndf, 2 * ndf, 4, false) + Norm(2 * ndf) +
                                Conv(2 * ndf, 4 * ndf, 4, false) + Norm(4 * ndf) + Conv(4 * ndf, 8 * ndf, 4, false) +
                                Norm(8 * ndf) + Conv(8 * ndf, 1, 4, false);
  CHECK(generator == 3576704);
  CHECK(discriminator == 2765568);
  const int64_t got = ParamsAtFullSize("dcgan");
  std::cout << "parity dcgan: params " << got << " (published architecture: G " << generator << " + D " << discriminator
            << ")" << std::endl;
  CHECK(got == generator + discriminator);
}

// ------------------------------------------------ pytorch_CycleGAN_and_pix2pix

TEST_CASE("parity pytorch_cyclegan_and_pix2pix") { CheckParityInDouble("pytorch_cyclegan_and_pix2pix"); }

TEST_CASE("parity pytorch_cyclegan_and_pix2pix parameter count") {
  // Zhu et al. 2017 / junyanz's networks.py: ResNet-9-block generator (ngf 64,
  // instance norm without affine, so every conv has a bias) and the 70x70
  // PatchGAN (ndf 64, n_layers 3); two of each.
  const int64_t ngf = 64, ndf = 64;
  const int64_t generator = Conv(3, ngf, 7) + Conv(ngf, 2 * ngf, 3) + Conv(2 * ngf, 4 * ngf, 3) +
                            9 * 2 * Conv(4 * ngf, 4 * ngf, 3) + Conv(4 * ngf, 2 * ngf, 3) + Conv(2 * ngf, ngf, 3) +
                            Conv(ngf, 3, 7);
  const int64_t discriminator = Conv(3, ndf, 4) + Conv(ndf, 2 * ndf, 4) + Conv(2 * ndf, 4 * ndf, 4) +
                                Conv(4 * ndf, 8 * ndf, 4) + Conv(8 * ndf, 1, 4);
  CHECK(generator == 11378179);     // "[Network G_A] Total number of parameters : 11.378 M"
  CHECK(discriminator == 2764737);  // "[Network D_A] Total number of parameters : 2.765 M"
  const int64_t got = ParamsAtFullSize("pytorch_cyclegan_and_pix2pix");
  std::cout << "parity pytorch_cyclegan_and_pix2pix: params " << got << " (published architecture: 2 x G " << generator
            << " + 2 x D " << discriminator << ")" << std::endl;
  CHECK(got == 2 * (generator + discriminator));
}

// ------------------------------------------------------------ pytorch_stargan

TEST_CASE("parity pytorch_stargan") { CheckParityInDouble("pytorch_stargan"); }

TEST_CASE("parity pytorch_stargan parameter count") {
  // Choi et al. 2018 / yunjey/stargan model.py, CelebA: c_dim 5, 128 x 128,
  // conv_dim 64, 6 residual blocks, 6 discriminator strides. Generator convs
  // are bias-free with affine instance norms; the discriminator's strided
  // convs have biases, its two heads do not (conv2's kernel is 128 / 2^6).
  const int64_t c = 5;
  const int64_t generator = Conv(3 + c, 64, 7, false) + Norm(64) + Conv(64, 128, 4, false) + Norm(128) +
                            Conv(128, 256, 4, false) + Norm(256) + 6 * 2 * (Conv(256, 256, 3, false) + Norm(256)) +
                            Conv(256, 128, 4, false) + Norm(128) + Conv(128, 64, 4, false) + Norm(64) +
                            Conv(64, 3, 7, false);
  int64_t discriminator = Conv(3, 64, 4);
  for (int64_t d = 64; d < 2048; d *= 2) discriminator += Conv(d, 2 * d, 4);
  discriminator += Conv(2048, 1, 3, false) + Conv(2048, c, 2, false);
  CHECK(generator == 8430528);       // solver.print_network(G): "The number of parameters: 8430528"
  CHECK(discriminator == 44762048);  // solver.print_network(D): "The number of parameters: 44762048"
  const int64_t got = ParamsAtFullSize("pytorch_stargan");
  std::cout << "parity pytorch_stargan: params " << got << " (published architecture: G " << generator << " + D "
            << discriminator << ")" << std::endl;
  CHECK(got == generator + discriminator);
}

// ---------------------------------------------------------------- super_slomo

TEST_CASE("parity super_slomo") { CheckParityInDouble("super_slomo"); }

TEST_CASE("parity super_slomo parameter count") {
  // Jiang et al. 2018 / avinashpaliwal/Super-SloMo model.py: two U-Nets (6 ->
  // 4 flow, 20 -> 5 refinement), every conv with a bias; plus the frozen
  // VGG16 conv1_1 .. conv4_3 of the perceptual loss.
  auto unet = [](int64_t in, int64_t out) {
    int64_t n = Conv(in, 32, 7) + Conv(32, 32, 7) + Conv(32, 64, 5) + Conv(64, 64, 5);
    for (auto [a, b] : {std::pair<int64_t, int64_t>{64, 128}, {128, 256}, {256, 512}, {512, 512}}) {
      n += Conv(a, b, 3) + Conv(b, b, 3);
    }
    for (auto [a, b] : {std::pair<int64_t, int64_t>{512, 512}, {512, 256}, {256, 128}, {128, 64}, {64, 32}}) {
      n += Conv(a, b, 3) + Conv(2 * b, b, 3);
    }
    return n + Conv(32, out, 3);
  };
  const int64_t vgg = Conv(3, 64, 3) + Conv(64, 64, 3) + Conv(64, 128, 3) + Conv(128, 128, 3) + Conv(128, 256, 3) +
                      2 * Conv(256, 256, 3) + Conv(256, 512, 3) + 2 * Conv(512, 512, 3);
  CHECK(vgg == 7635264);
  // The two U-Nets: 39,610,473, the 39.6 M of the released Super-SloMo model.
  CHECK(unet(6, 4) + unet(20, 5) == 39610473);
  auto w = Build("super_slomo", models::Mode::kEval, 1, /*smoke=*/false);
  const int64_t got = parity::ParameterCount(w->net());
  std::cout << "parity super_slomo: params " << got << " (published architecture: U-Nets " << unet(6, 4) << " + "
            << unet(20, 5) << ", VGG16 conv4_3 " << vgg << ")" << std::endl;
  CHECK(got == unet(6, 4) + unet(20, 5) + vgg);
  int64_t frozen = 0;
  for (const auto& p : w->net().named_parameters()) {
    if (!p.value().requires_grad()) {
      CHECK(p.key().rfind("vgg16_conv_4_3.", 0) == 0);
      frozen += p.value().numel();
    }
  }
  CHECK(frozen == vgg);
}

// --------------------------------------------------------- background_matting

TEST_CASE("parity background_matting") { CheckParityInDouble("background_matting"); }

TEST_CASE("parity background_matting parameter count") {
  // Sengupta et al. 2020 / networks.py: ResnetConditionHR(input_nc (3, 3, 1,
  // 4), output_nc 4, ngf 64, nf_part 64, BatchNorm, 7 + 3 + 3 ResnetBlocks),
  // twice (the frozen teacher netB and netG), and the one-scale PatchGAN
  // (ndf 64, n_layers 3, instance norm without affine).
  const int64_t ngf = 64;
  auto encoder = [&](int64_t in) {
    return Conv(in, ngf, 7) + Norm(ngf) + Conv(ngf, 2 * ngf, 3) + Norm(2 * ngf) + Conv(2 * ngf, 4 * ngf, 3) +
           Norm(4 * ngf);
  };
  const int64_t block = 2 * (Conv(4 * ngf, 4 * ngf, 3) + Norm(4 * ngf));
  const int64_t comb = Conv(8 * ngf, 64, 1, false) + Norm(64);
  const int64_t generator = encoder(3) /* model_enc1 + model_enc2 */ + encoder(3) + encoder(1) + encoder(4) + 3 * comb +
                            Conv(4 * ngf + 3 * 64, 4 * ngf, 1, false) + Norm(4 * ngf) + (7 + 3 + 3) * block +
                            Conv(4 * ngf, 2 * ngf, 3) + Norm(2 * ngf) + Conv(2 * ngf, ngf, 3) + Norm(ngf) +
                            Conv(ngf, 1, 7) /* alpha decoder */ + Conv(4 * ngf, 2 * ngf, 3) + Norm(2 * ngf) +
                            Conv(4 * ngf, ngf, 3) + Norm(ngf) + Conv(ngf, 3, 7) /* foreground decoder */;
  const int64_t discriminator =
      Conv(3, 64, 4) + Conv(64, 128, 4) + Conv(128, 256, 4) + Conv(256, 512, 4) + Conv(512, 1, 4);
  auto w = Build("background_matting", models::Mode::kTrain, 1, /*smoke=*/false);
  const int64_t got = parity::ParameterCount(w->net());
  std::cout << "parity background_matting: params " << got << " (published architecture: netB = netG " << generator
            << ", netD " << discriminator << ")" << std::endl;
  CHECK(got == 2 * generator + discriminator);
  // The teacher is frozen: its parameters, and only its, need no gradient.
  int64_t frozen = 0;
  for (const auto& p : w->net().named_parameters()) {
    if (!p.value().requires_grad()) {
      CHECK(p.key().rfind("netB.", 0) == 0);
      frozen += p.value().numel();
    }
  }
  CHECK(frozen == generator);
}
