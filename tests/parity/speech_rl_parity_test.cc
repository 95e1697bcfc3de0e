// Speech and RL models of the breadth wave: demucs, tacotron2 (speech),
// learning_to_paint and dqn (RL). None has a pip reference in our
// environment, so tests/parity/ref_speech_rl.py re-states each network and
// training step in plain torch from the published architecture and
// TorchBench's configuration, and the C++ workload is held to it with the
// CheckModelParity protocol (output, loss and every parameter after one
// train step, relative error <= 1e-4). demucs runs it at depth 4 (its full
// 265M-parameter state would be 2 GB to exchange); dqn and
// learning_to_paint run their update on the reference's replay batch (the
// environment loop around it is smoke-tested). Parameter counts of the full
// configurations are checked against formulas written here from the papers,
// independently of both implementations.
#include <doctest/doctest.h>

#include <cmath>
#include <iostream>
#include <optional>

#include "models/rl/dqn.h"
#include "models/rl/learning_to_paint.h"
#include "models/speech/demucs.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

constexpr const char* kScript = "ref_speech_rl.py";

int64_t Linear(int64_t in, int64_t out, bool bias = true) { return in * out + (bias ? out : 0); }
int64_t Conv1d(int64_t in, int64_t out, int64_t k) { return in * out * k + out; }
// One direction of one LSTM layer with PyTorch's two bias vectors.
int64_t LstmDirection(int64_t in, int64_t hidden) { return 4 * hidden * (in + hidden) + 2 * 4 * hidden; }

// CheckModelParity's protocol for a workload built outside the registry (a
// reduced configuration of a registered model).
// eval_seed: reseed before the eval forward (for a forward that draws
// random numbers in eval, as Tacotron 2's prenet dropout); the reference
// script seeds the same.
void CheckWorkloadParity(const std::string& label, models::Workload& w, const parity::Reference& ref, double tol = 1e-4,
                         std::optional<uint64_t> eval_seed = std::nullopt) {
  auto& net = w.net();
  parity::CheckSameStructure(net, ref);
  parity::LoadWeights(net, ref);
  parity::UseReferenceInputs(w, ref);
  double out_err;
  {
    net.eval();
    torch::NoGradGuard g;
    if (eval_seed) torch::manual_seed(*eval_seed);
    out_err = parity::RelError(w.Forward(), ref.output);
  }
  net.train();
  torch::manual_seed(1234);
  double loss_err = parity::RelError(w.TrainStep(), ref.loss);
  double worst = 0;
  std::string worst_name;
  auto ours = net.named_parameters();
  for (const auto& entry : ref.updated) {
    const auto& name = entry.first;
    const auto& t = entry.second;
    auto* p = ours.find(name);
    REQUIRE_MESSAGE(p != nullptr, "updated parameter missing: ", name);
    double err = parity::RelError(*p, t);
    if (err > worst) worst = err, worst_name = name;
  }
  std::cout << "parity " << label << ": params " << ref.param_count << ", output rel err " << out_err
            << ", loss rel err " << loss_err << ", updated params max rel err " << worst << " (" << worst_name << ")"
            << std::endl;
  CHECK(out_err <= tol);
  CHECK(loss_err <= tol);
  CHECK(worst <= tol);
}

}  // namespace

// ------------------------------------------------------------------ demucs

TEST_CASE("parity demucs parameter count") {
  // Demucs v2 with channels 64, depth 6, kernel 8, stride 4, GLU rewrites,
  // context 3, 4 stereo sources, 2-layer BiLSTM on the 2048-wide bottleneck.
  int64_t expected = 0, in = 2, ch = 64;
  for (int i = 0; i < 6; ++i) {
    const int64_t out = i > 0 ? in : 4 * 2;
    expected += Conv1d(in, ch, 8) + Conv1d(ch, 2 * ch, 1);   // encoder
    expected += Conv1d(ch, 2 * ch, 3) + ch * out * 8 + out;  // decoder: context conv + transposed conv
    in = ch, ch *= 2;
  }
  expected += 2 * LstmDirection(in, in) + 2 * LstmDirection(2 * in, in) + Linear(2 * in, in);
  // The reference's full model on the meta device.
  auto meta = parity::RunReference(kScript, "demucs_full_meta");
  models::WorkloadOptions opt;
  opt.smoke = true;
  models::SeedAll(0);
  auto w = models::FindModel("demucs")->create(opt);
  const int64_t got = parity::ParameterCount(w->net());
  std::cout << "demucs parameters: " << got << " (published architecture " << expected << ", reference on meta "
            << meta.param_count << ")" << std::endl;
  CHECK(expected == 265679496);
  CHECK(got == expected);
  CHECK(meta.param_count == expected);
  torch::NoGradGuard g;
  w->net().eval();
  auto out = w->Forward();
  CHECK(out.size(0) == 1);
  CHECK(out.size(1) == 4);
  CHECK(out.size(2) == 2);
}

TEST_CASE("parity demucs depth 4") {
  auto ref = parity::RunReference(kScript, "demucs");
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.output.size(0);
  opt.smoke = true;
  models::SeedAll(0);
  auto w = models::MakeDemucsWorkload(opt, 4);
  CheckWorkloadParity("demucs (depth 4)", *w, ref);
}

// ------------------------------------------------------------------ dqn

TEST_CASE("parity dqn parameter count") {
  // Mnih et al. 2015: 8x8/4 (32), 4x4/2 (64), 3x3/1 (64) convolutions on
  // 4 x 84 x 84, 512 hidden units, one output per action (3 here); the
  // target network is a second copy of the same parameters.
  auto conv = [](int64_t in, int64_t out, int64_t k) { return in * out * k * k + out; };
  const int64_t q = conv(4, 32, 8) + conv(32, 64, 4) + conv(64, 64, 3) + Linear(64 * 7 * 7, 512) + Linear(512, 3);
  auto w = models::FindModel("dqn")->create(models::WorkloadOptions{});
  const int64_t got = parity::ParameterCount(w->net());
  std::cout << "dqn parameters: " << got << " (published architecture, online + target: " << 2 * q << ")" << std::endl;
  CHECK(q == 1685667);
  CHECK(got == 2 * q);
  // The target network starts as a copy of the online network and is frozen.
  auto params = w->net().named_parameters();
  CHECK(torch::equal(params["online.head.2.weight"], params["target.head.2.weight"]));
  CHECK_FALSE(params["target.features.0.weight"].requires_grad());
  // Observations are stacked 8-bit luminance frames of the rendered cart-pole.
  auto obs = w->inputs()["obs"];
  CHECK(obs.dtype() == torch::kByte);
  CHECK(obs.sizes() == torch::IntArrayRef({1, 4, 84, 84}));
  CHECK(obs.max().item<int>() > obs.min().item<int>());
}

TEST_CASE("parity dqn update") {
  auto ref = parity::RunReference(kScript, "dqn");
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.output.size(0);
  models::SeedAll(0);
  auto w = models::MakeDqnWorkload(opt, /*replay=*/false);
  CheckWorkloadParity("dqn", *w, ref);
  // The target network did not move.
  auto params = w->net().named_parameters();
  CHECK(torch::equal(params["target.head.0.weight"], ref.params.at("target.head.0.weight")));
}

// ------------------------------------------------------------------ learning_to_paint

TEST_CASE("parity learning_to_paint parameter count") {
  // Huang et al. 2019 as in the LearningToPaint repository: ResNet-18 layout
  // (two BasicBlocks per stage, every stage stride 2, 1x1 projection
  // shortcut on each stage's first block).
  auto conv = [](int64_t in, int64_t out, int64_t k) { return in * out * k * k; };
  auto wn_conv = [&](int64_t in, int64_t out, int64_t k) { return conv(in, out, k) + 2 * out; };  // v, g, bias
  int64_t actor = conv(9, 64, 3) + 2 * 64, critic = wn_conv(12, 64, 3) + 1;
  int64_t in = 64;
  for (int64_t p : {64, 128, 256, 512}) {
    actor += conv(in, p, 3) + conv(p, p, 3) + conv(in, p, 1) + 3 * 2 * p;  // block 1: 3 convs + 3 BatchNorms
    actor += 2 * conv(p, p, 3) + 2 * 2 * p;                                // block 2
    critic += wn_conv(in, p, 3) + wn_conv(p, p, 3) + wn_conv(in, p, 1) + 2;
    critic += 2 * wn_conv(p, p, 3) + 2;
    in = p;
  }
  actor += Linear(512, 65);
  critic += Linear(512, 1);
  const int64_t disc =
      wn_conv(6, 16, 5) + wn_conv(16, 32, 5) + wn_conv(32, 64, 5) + wn_conv(64, 128, 5) + wn_conv(128, 1, 5) + 4;
  const int64_t renderer = Linear(10, 512) + Linear(512, 1024) + Linear(1024, 2048) + Linear(2048, 4096) +
                           conv(16, 32, 3) + 32 + conv(32, 32, 3) + 32 + conv(8, 16, 3) + 16 + conv(16, 16, 3) + 16 +
                           conv(4, 8, 3) + 8 + conv(8, 4, 3) + 4;
  const int64_t expected = 2 * actor + 2 * critic + 2 * disc + renderer;
  models::WorkloadOptions opt;
  opt.batch_size = 2;
  models::SeedAll(0);
  auto w = models::FindModel("learning_to_paint")->create(opt);
  const int64_t got = parity::ParameterCount(w->net());
  std::cout << "learning_to_paint parameters: " << got << " (actor " << actor << ", critic " << critic
            << ", discriminator " << disc << ", renderer " << renderer << "; with targets " << expected << ")"
            << std::endl;
  CHECK(got == expected);
  // hard_update: the actor target's BatchNorm statistics are the actor's tensors.
  auto buffers = w->net().named_buffers();
  CHECK(buffers["actor.bn1.running_mean"].data_ptr() == buffers["actor_target.bn1.running_mean"].data_ptr());
  // Observations: canvas, target and step number as 7 uint8 channels.
  CHECK(w->inputs()["state"].sizes() == torch::IntArrayRef({2, 7, 128, 128}));
  torch::NoGradGuard g;
  w->net().eval();
  auto strokes = w->Forward();
  CHECK(strokes.sizes() == torch::IntArrayRef({2, 65}));
  CHECK(strokes.min().item<float>() >= 0.0f);  // sigmoid outputs
  CHECK(strokes.max().item<float>() <= 1.0f);
}

TEST_CASE("parity learning_to_paint update") {
  auto ref = parity::RunReference(kScript, "learning_to_paint");
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.output.size(0);
  models::SeedAll(0);
  auto w = models::MakeLearningToPaintWorkload(opt, /*replay=*/false);
  CheckWorkloadParity("learning_to_paint", *w, ref);
}

// ------------------------------------------------------------------ tacotron2

TEST_CASE("parity tacotron2 parameter count") {
  // NVIDIA Tacotron 2 with TorchBench's hparams (148 symbols, 512-wide
  // embedding and encoder, 1024-wide attention and decoder LSTMCells,
  // 128-dim location-sensitive attention with 32 filters of width 31,
  // 80 mel channels, 5-layer 512-wide postnet).
  auto conv = [](int64_t in, int64_t out, int64_t k) { return in * out * k + out; };
  auto cell = [](int64_t in, int64_t h) { return 4 * h * (in + h) + 2 * 4 * h; };
  const int64_t embedding = 148 * 512;
  const int64_t encoder = 3 * (conv(512, 512, 5) + 2 * 512) + 2 * LstmDirection(512, 256);
  const int64_t attention = 1024 * 128 + 512 * 128 + 128 + 32 * 2 * 31 + 32 * 128;
  const int64_t decoder =
      80 * 256 + 256 * 256 + cell(768, 1024) + attention + cell(1536, 1024) + Linear(1536, 80) + Linear(1536, 1);
  const int64_t postnet = conv(80, 512, 5) + 2 * 512 + 3 * (conv(512, 512, 5) + 2 * 512) + conv(512, 80, 5) + 2 * 80;
  const int64_t expected = embedding + encoder + decoder + postnet;
  models::WorkloadOptions opt;
  opt.batch_size = 2;
  opt.smoke = true;
  models::SeedAll(0);
  auto w = models::FindModel("tacotron2")->create(opt);
  const int64_t got = parity::ParameterCount(w->net());
  std::cout << "tacotron2 parameters: " << got << " (published architecture " << expected << ")" << std::endl;
  CHECK(expected == 28193153);
  CHECK(got == expected);
  // The prenet's dropout stays on in eval: two eval forwards differ.
  torch::NoGradGuard g;
  w->net().eval();
  auto a = w->Forward(), b = w->Forward();
  CHECK(a.sizes() == torch::IntArrayRef({2, 80, 40}));
  CHECK_FALSE(torch::equal(a, b));
  // Padded frames of the shorter utterance are zeroed (mask_padding).
  const int64_t frames = w->inputs()["output_lengths"][1].item<int64_t>();
  CHECK(frames < 40);
  CHECK(a[1].slice(1, frames).abs().max().item<float>() == 0.0f);
}

TEST_CASE("parity tacotron2") {
  auto ref = parity::RunReference(kScript, "tacotron2");
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.output.size(0);
  opt.smoke = true;
  models::SeedAll(0);
  auto w = models::FindModel("tacotron2")->create(opt);
  CheckWorkloadParity("tacotron2", *w, ref, 1e-4, /*eval_seed=*/4321);
}
