// Parity and smoke tests for pytorch_struct (models/pytorch_struct.{h,cc}).
// torch_struct is not installed, so the reference is a re-statement written
// for the test (tests/parity/ref_struct.py): NeuralCFG in torch.nn and a
// plain inside algorithm (each sentence alone at its own length, a dict chart
// and loops over widths and split points). Checked here:
//  - CheckModelParity's protocol: names and shapes of every parameter, the
//    partition of three sentences of unequal lengths (7, 5, 8), the loss
//    (partition.mean()) and every parameter after TorchBench's train step
//    ((-loss).backward(), clip_grad_norm_ 3.0, Adam betas (0.75, 0.999));
//  - the inside algorithm against an enumeration of every labelled binary
//    tree of a tiny grammar (T = NT = 2, lengths 4 and 3 in one padded batch);
//  - the parameter count against NeuralCFG's layer shapes.
#include <doctest/doctest.h>

#include <torch/torch.h>

#include <chrono>
#include <iostream>

#include "models/other/pytorch_struct.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

std::unique_ptr<models::Workload> MakeWorkload(models::Mode mode, int64_t batch, bool smoke = false) {
  const auto* info = models::FindModel("pytorch_struct");
  REQUIRE(info != nullptr);
  models::WorkloadOptions opt;
  opt.mode = mode;
  opt.batch_size = batch;
  opt.smoke = smoke;
  models::SeedAll(0);
  return info->create(opt);
}

// CheckModelParity's protocol in `dtype`: structure, weights and inputs from
// the reference, the partition (eval mode, no grad), then one train step
// seeded as the script does; returns the errors (normwise relative).
parity::ParityErrors Protocol(torch::ScalarType dtype) {
  const bool dbl = dtype == torch::kDouble;
  auto ref = parity::RunReference("ref_struct.py", "pytorch_struct",
                                  dbl ? std::vector<std::string>{"--double"} : std::vector<std::string>{});
  REQUIRE((ref.output.scalar_type() == dtype));
  auto w = MakeWorkload(models::Mode::kTrain, ref.output.size(0));
  w->CastTo(dtype);
  // parity_common.TRAIN_SEED (the step draws nothing)
  const parity::ParityErrors e = parity::MeasureParity(*w, ref, 1234);
  const auto& len = w->inputs().at("lengths");
  std::cout << "parity pytorch_struct (" << (dbl ? "float64" : "float32") << ", lengths " << len[0].item<int64_t>()
            << ", " << len[1].item<int64_t>() << ", " << len[2].item<int64_t>() << "): params " << ref.param_count
            << ", output rel err " << e.output << ", loss rel err " << e.loss << ", updated params max rel err "
            << e.updated_max << " (" << e.worst_param << ")" << std::endl;
  return e;
}

}  // namespace

// The whole step in float64: Adam's first step moves every parameter by about
// lr * sign(grad), so in float32 a gradient entry that is rounding noise in
// both implementations (the step's worst, mlp2.v2.bias, differs by 0.7% of
// its scale) flips sign at random; float64 takes that noise away.
TEST_CASE("parity pytorch_struct") {
  auto e = Protocol(torch::kDouble);
  CHECK(e.output <= 1e-4);
  CHECK(e.loss <= 1e-4);
  CHECK(e.updated_max <= 1e-4);
}

// In float32, the model's own precision: the partition and the loss.
TEST_CASE("parity pytorch_struct float32") {
  auto e = Protocol(torch::kFloat);
  CHECK(e.output <= 1e-4);
  CHECK(e.loss <= 1e-4);
}

TEST_CASE("parity pytorch_struct inside algorithm vs tree enumeration") {
  auto ref = parity::RunReference("ref_struct.py", "pytorch_struct_brute");
  const auto& in = ref.inputs;
  auto ours = models::CfgLogPartition(in.at("terms"), in.at("rules"), in.at("roots"), in.at("lengths"));
  const double vs_brute = parity::RelError(ours, ref.output);
  const double loop_vs_brute = parity::RelError(ref.loss, ref.output);
  std::cout << "parity pytorch_struct inside vs enumeration (T = NT = 2, lengths 4, 3): rel err " << vs_brute
            << " (the reference's loop: " << loop_vs_brute << ")" << std::endl;
  CHECK(vs_brute <= 1e-10);  // float64
  CHECK(loop_vs_brute <= 1e-10);
  // The lengths matter: read at the padded width, sentence 2 scores otherwise.
  auto full = models::CfgLogPartition(in.at("terms"), in.at("rules"), in.at("roots"), torch::tensor({4, 4}));
  CHECK(std::abs(full[1].item<double>() - ref.output[1].item<double>()) > 1e-3);
  // Sentence 2 alone, cut to its 3 words, gives what the padded batch gave.
  auto alone = models::CfgLogPartition(in.at("terms").slice(0, 1, 2).slice(1, 0, 3), in.at("rules").slice(0, 1, 2),
                                       in.at("roots").slice(0, 1, 2), torch::tensor({3}));
  CHECK(alone[0].item<double>() == doctest::Approx(ours[1].item<double>()).epsilon(1e-12));
}

TEST_CASE("parity pytorch_struct parameter count") {
  // NeuralCFG(V = 5000, T = 30, NT = 30, H = 256): word_emb V x H, term_emb
  // T x H, nonterm_emb NT x H, nonterm_emb_c (NT+T)^2 x H, root_emb NT x H,
  // s_emb 1 x H, and two Res blocks of five Linear(H, H) with bias.
  constexpr int64_t V = 5000, T = 30, NT = 30, H = 256;
  const int64_t expected = V * H + T * H + NT * H + (NT + T) * (NT + T) * H + NT * H + H + 2 * 5 * (H * H + H);
  CHECK(expected == 2882816);
  auto w = MakeWorkload(models::Mode::kTrain, 1);
  const int64_t got = parity::ParameterCount(w->net());
  std::cout << "parity pytorch_struct: params " << got << " (expected " << expected << ")" << std::endl;
  CHECK(got == expected);
  auto shapes = parity::NamedShapes(w->net());
  CHECK(shapes.at("nonterm_emb_c") == std::vector<int64_t>{NT + T, NT + T, H});
  CHECK(shapes.at("mlp2.w.weight") == std::vector<int64_t>{H, H});
}

TEST_CASE("smoke pytorch_struct") {
  const auto* info = models::FindModel("pytorch_struct");
  REQUIRE(info != nullptr);
  CHECK_FALSE(info->supports_eval);
  CHECK(info->unsupported_reason.find("NotImplementedError") != std::string::npos);
  // Full-size sentences: 6..29 words.
  auto full = MakeWorkload(models::Mode::kTrain, 64);
  CHECK(full->inputs().at("lengths").min().item<int64_t>() >= 6);
  CHECK(full->inputs().at("lengths").max().item<int64_t>() <= 29);
  CHECK(full->inputs().at("lengths").max().item<int64_t>() > 12);
  full.reset();
  // Smoke sentences: 6..12 words.
  auto w = MakeWorkload(models::Mode::kTrain, info->smoke_batch.train, /*smoke=*/true);
  const auto& lengths = w->inputs().at("lengths");
  CHECK(lengths.min().item<int64_t>() >= 6);
  CHECK(lengths.max().item<int64_t>() <= 12);
  CHECK(w->inputs().at("words").size(1) == lengths.max().item<int64_t>());
  for (int i = 0; i < 2; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    w->Step(models::Mode::kTrain);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "smoke pytorch_struct train batch " << info->smoke_batch.train << " (words "
              << w->inputs().at("words").sizes() << "): " << ms << " ms per step" << std::endl;
  }
  auto loss = w->TrainStep();
  CHECK(torch::isfinite(loss).all().item<bool>());
  CHECK(loss.item<double>() < 0);  // a log-likelihood
}
