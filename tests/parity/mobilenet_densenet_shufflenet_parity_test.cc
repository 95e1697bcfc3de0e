// Parity of mobilenet_v2, mobilenet_v3_large, densenet121 and
// shufflenet_v2_x1_0 with torchvision 0.26 through ref_mobilenet_densenet_shufflenet.py, and a
// smoke run of each at its smoke batch sizes.
#include <doctest/doctest.h>

#include <chrono>
#include <ctime>
#include <iostream>
#include <string>

#include "models/vision/classification/shufflenet_v2.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

bool AllFinite(const torch::Tensor& t) { return torch::isfinite(t).all().item<bool>(); }

// Process CPU time: on a shared, overloaded machine the wall time says more
// about the neighbours than about the model.
double CpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Runs Step() twice at the smoke batch size in every supported mode, checks
// that the loss, the parameters and the logits stay finite and prints the
// time of each step. `published_params` is torchvision's num_params for the
// architecture (its weights' metadata), a check that needs no Python.
void SmokeRun(const std::string& id, int64_t published_params) {
  const auto* info = models::FindModel(id);
  REQUIRE_MESSAGE(info != nullptr, "model not registered: ", id);
  CHECK(info->domain == models::Domain::kVision);
  CHECK(info->task == "image classification");
  for (auto mode : {models::Mode::kTrain, models::Mode::kEval}) {
    REQUIRE(info->supports_train);
    REQUIRE(info->supports_eval);
    models::WorkloadOptions opt;
    opt.mode = mode;
    opt.batch_size = info->smoke_batch.For(mode);
    opt.smoke = true;  // as the smoke suite builds it: 64x64 images, same architecture
    models::SeedAll(0);
    auto w = info->create(opt);
    CHECK(parity::ParameterCount(w->net()) == published_params);
    CHECK(w->samples_per_step() == opt.batch_size);
    // The first step pays one-off costs (allocator warm-up, Adam's state), so
    // each of the two steps is reported.
    double wall_ms[2], cpu_ms[2];
    for (int i = 0; i < 2; ++i) {
      const auto start = std::chrono::steady_clock::now();
      const double cpu_start = CpuMs();
      w->Step(mode);
      cpu_ms[i] = CpuMs() - cpu_start;
      wall_ms[i] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
    if (mode == models::Mode::kTrain) {
      auto loss = w->TrainStep();
      CHECK(loss.numel() == 1);
      CHECK(AllFinite(loss));
      for (const auto& p : w->net().parameters()) CHECK(AllFinite(p));
    } else {
      c10::InferenceMode guard;
      auto out = w->Forward();
      CHECK(out.sizes() == torch::IntArrayRef({opt.batch_size, 1000}));
      CHECK(AllFinite(out));
    }
    std::cout << "smoke " << id << " " << models::ModeName(mode) << " batch " << opt.batch_size
              << ": steps 1, 2: " << wall_ms[0] << ", " << wall_ms[1] << " ms wall; " << cpu_ms[0] << ", " << cpu_ms[1]
              << " ms CPU (all threads)" << std::endl;
  }
}

// The MobileNets' train-step parity relies on dropout drawing the same masks
// on both sides. This shows the masks matter: in train mode, two forwards
// under different seeds differ, and under the same seed they agree exactly.
void CheckDropoutIsSeeded(const std::string& id) {
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = 2;
  models::SeedAll(0);
  auto w = models::FindModel(id)->create(opt);
  w->net().train();
  torch::NoGradGuard no_grad;
  auto run = [&](uint64_t seed) {
    torch::manual_seed(seed);
    return w->Forward();
  };
  auto a = run(1234), b = run(1234), c = run(4321);
  // BatchNorm in train mode normalises with batch statistics, so repeated
  // forwards see the same activations; only dropout can tell a from c.
  CHECK(torch::equal(a, b));
  CHECK_FALSE(torch::equal(a, c));
}

}  // namespace

// The MobileNets train with classifier dropout active (p 0.2): both sides
// reseed the CPU generator with TRAIN_SEED and dropout is the only random op
// in the step, drawn by the same ATen kernel, so the masks are identical.
TEST_CASE("parity mobilenet_v2") { parity::CheckModelParity("mobilenet_v2", "ref_mobilenet_densenet_shufflenet.py"); }
TEST_CASE("parity mobilenet_v3_large") {
  parity::CheckModelParity("mobilenet_v3_large", "ref_mobilenet_densenet_shufflenet.py");
}
TEST_CASE("parity densenet121") { parity::CheckModelParity("densenet121", "ref_mobilenet_densenet_shufflenet.py"); }
TEST_CASE("parity shufflenet_v2_x1_0") {
  parity::CheckModelParity("shufflenet_v2_x1_0", "ref_mobilenet_densenet_shufflenet.py");
}

TEST_CASE("parity mobilenet_v2 dropout is active and seeded") { CheckDropoutIsSeeded("mobilenet_v2"); }
TEST_CASE("parity mobilenet_v3_large dropout is active and seeded") { CheckDropoutIsSeeded("mobilenet_v3_large"); }

TEST_CASE("parity shufflenet_v2 channel shuffle interleaves the two halves") {
  // Channels [0 1 2 3 | 4 5 6 7] with 2 groups become [0 4 1 5 2 6 3 7].
  auto x = torch::arange(8, torch::kFloat).view({1, 8, 1, 1});
  auto y = models::ChannelShuffle(x, 2).flatten();
  CHECK(torch::equal(y, torch::tensor({0.f, 4.f, 1.f, 5.f, 2.f, 6.f, 3.f, 7.f})));
}

// Published parameter counts: torchvision's weight metadata (num_params).
TEST_CASE("smoke mobilenet_v2") { SmokeRun("mobilenet_v2", 3504872); }
TEST_CASE("smoke mobilenet_v3_large") { SmokeRun("mobilenet_v3_large", 5483032); }
TEST_CASE("smoke densenet121") { SmokeRun("densenet121", 7978856); }
TEST_CASE("smoke shufflenet_v2_x1_0") { SmokeRun("shufflenet_v2_x1_0", 2278604); }
