// Parity and smoke tests for the "other" domain's learning procedures: the
// meta-learning models maml and maml_omniglot (CheckModelParity's protocol
// against plain-torch re-statements in ref_maml.py: fine-tuning accuracies
// or eval logits, the meta-loss and every parameter after one meta step),
// with parameter counts worked out from the published layer shapes; and
// moco (one TorchBench train iteration against a plain-torch re-statement
// over torchvision resnet50 encoders, ref_moco.py).
#include <doctest/doctest.h>

#include <torch/torch.h>

#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "models/other/maml.h"
#include "models/other/moco.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

constexpr double kTol = 1e-4;

std::unique_ptr<models::Workload> MakeWorkload(const std::string& id, models::Mode mode, int64_t batch) {
  const auto* info = models::FindModel(id);
  REQUIRE_MESSAGE(info != nullptr, "model not registered: ", id);
  models::WorkloadOptions opt;
  opt.mode = mode;
  opt.batch_size = batch;
  models::SeedAll(0);
  return info->create(opt);
}

int64_t TrainableCount(torch::nn::Module& net) {
  int64_t n = 0;
  for (const auto& p : net.parameters()) n += p.requires_grad() ? p.numel() : 0;
  return n;
}

int64_t ConvParams(int64_t out, int64_t in, int64_t k) { return out * in * k * k + out; }

}  // namespace

// --------------------------------------------------------------------- MAML

TEST_CASE("parity maml") { parity::CheckModelParity("maml", "ref_maml.py"); }

TEST_CASE("parity maml parameter count") {
  // TorchBench's Learner config: conv 1->64 3x3, 64->64 3x3 (x2), 64->64 2x2,
  // each with a BN (weight, bias; running mean/var as frozen Parameters),
  // and linear 64 -> 5.
  const int64_t convs = ConvParams(64, 1, 3) + 2 * ConvParams(64, 64, 3) + ConvParams(64, 64, 2);
  const int64_t trainable = convs + 4 * 2 * 64 + (64 * 5 + 5);
  CHECK(trainable == 91781);
  auto w = MakeWorkload("maml", models::Mode::kTrain, 2);
  std::cout << "parity maml: trainable params " << TrainableCount(w->net()) << " (expected " << trainable << ")"
            << std::endl;
  CHECK(TrainableCount(w->net()) == trainable);
  CHECK(parity::ParameterCount(w->net()) == trainable + 4 * 2 * 64);  // + vars_bn
  auto names = parity::NamedShapes(w->net());
  CHECK(names.count("net.vars.17") == 1);
  CHECK(names.count("net.vars_bn.7") == 1);
}

// CheckModelParity's protocol for the Omniglot nets, with one exception: the
// biases of the convolutions that feed batch norm (0.bias, 4.bias, 8.bias)
// have an exactly zero gradient (batch norm subtracts the batch mean), so
// what the meta-gradient holds there is rounding noise, and Adam's first
// step (TorchBench builds the optimizer anew each step) turns any noise into
// a step of about +-lr. For them we check that bound on both sides instead.
static void CheckOmniglotParity(const std::string& id) {
  const std::set<std::string> zero_grad = {"0.bias", "4.bias", "8.bias"};
  constexpr double kLr = 1e-3;
  auto ref = parity::RunReference("ref_maml.py", id);
  auto w = MakeWorkload(id, models::Mode::kTrain, ref.output.size(0));
  auto& net = w->net();
  parity::CheckSameStructure(net, ref);
  parity::LoadWeights(net, ref);
  parity::UseReferenceInputs(*w, ref);
  double out_err = 0, worst = 0, worst_bound = 0;
  std::string worst_name;
  {
    net.eval();
    torch::NoGradGuard g;
    out_err = parity::RelError(w->Forward(), ref.output);
  }
  net.train();
  torch::manual_seed(1234);
  const double loss_err = parity::RelError(w->TrainStep(), ref.loss);
  auto ours = net.named_parameters();
  for (const auto& entry : ref.updated) {
    const auto& name = entry.first;
    const auto& t = entry.second;
    auto* p = ours.find(name);
    REQUIRE_MESSAGE(p != nullptr, name);
    if (zero_grad.count(name)) {
      const auto& before = ref.params.at(name);
      const double step = std::max((*p - before).abs().max().item<double>(), (t - before).abs().max().item<double>());
      worst_bound = std::max(worst_bound, step);
      continue;
    }
    const double err = parity::RelError(*p, t);
    if (err > worst) {
      worst = err;
      worst_name = name;
    }
  }
  std::cout << "parity " << id << ": params " << ref.param_count << ", output rel err " << out_err << ", loss rel err "
            << loss_err << ", updated params max rel err " << worst << " (" << worst_name
            << "); pre-BN conv biases moved at most " << worst_bound << " (bound lr = " << kLr << ")" << std::endl;
  CHECK(out_err <= kTol);
  CHECK(loss_err <= kTol);
  CHECK(worst <= kTol);
  CHECK(worst_bound <= 1.01 * kLr);
}

TEST_CASE("parity maml_omniglot") { CheckOmniglotParity("maml_omniglot"); }

TEST_CASE("parity maml_omniglot parameter count") {
  // higher's Omniglot net: conv 1->64 3x3, 64->64 3x3 (x2), three BN(64),
  // linear 64 -> 5.
  const int64_t expected = ConvParams(64, 1, 3) + 2 * ConvParams(64, 64, 3) + 3 * 2 * 64 + (64 * 5 + 5);
  CHECK(expected == 75205);
  auto w = MakeWorkload("maml_omniglot", models::Mode::kTrain, 2);
  std::cout << "parity maml_omniglot: params " << parity::ParameterCount(w->net()) << " (expected " << expected << ")"
            << std::endl;
  CHECK(parity::ParameterCount(w->net()) == expected);
  CHECK(parity::NamedShapes(w->net()).count("1.running_mean") == 1);
}

// --------------------------------------------------------------------- MoCo

// One TorchBench train() iteration (two query/key pairs, two SGD steps) on
// test-only sizes: 2 x 3 x 64 x 64 images and a queue of K = 16 keys (the
// registered model: 32 x 3 x 224 x 224, K = 32000); dim, m, T and the
// optimizer as registered. Both sides seed the CPU generator with 1234
// before the iteration: randperm (the shuffle-BN) is its only random op.
// In float64 on both sides (ref_moco.py explains why).
TEST_CASE("parity moco") {
  auto ref = parity::RunReference("ref_moco.py", "moco");
  models::SeedAll(0);
  models::MoCoOptions o;
  o.K = 16;
  models::MoCo net(o);
  {
    // Same names and shapes as the reference's state dict, both encoders,
    // the queue and its pointer.
    auto ours = parity::NamedShapes(*net);
    CHECK(ours.size() == ref.params.size());
    for (const auto& entry : ref.params) {
      const auto& name = entry.first;
      const auto& t = entry.second;
      auto it = ours.find(name);
      REQUIRE_MESSAGE(it != ours.end(), name);
      CHECK_MESSAGE(it->second == t.sizes().vec(), name);
    }
  }
  CHECK(parity::ParameterCount(*net) == ref.param_count);
  {
    // float64, as the reference (ref_moco.py says why); queue_ptr stays long.
    torch::NoGradGuard no_grad;
    for (auto& p : net->parameters()) p.set_data(p.to(torch::kDouble));
    for (auto& b : net->buffers())
      if (b.is_floating_point()) b.set_data(b.to(torch::kDouble));
  }
  parity::LoadWeights(*net, ref);
  torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.03).momentum(0.9).weight_decay(1e-4));
  net->train();
  torch::manual_seed(1234);
  std::vector<torch::Tensor> logits, losses;
  const auto& in = ref.inputs;
  models::MoCoTrainIteration(*net, sgd, {{in.at("im_q0"), in.at("im_k0")}, {in.at("im_q1"), in.at("im_k1")}}, &logits,
                             &losses);
  const double out_err = parity::RelError(torch::stack(logits), ref.output);
  const double loss_err = parity::RelError(torch::stack(losses), ref.loss);
  // Every parameter after the iteration, and (stricter: no large unchanged
  // part) its change over the iteration.
  double worst_q = 0, worst_k = 0, worst_delta = 0;
  std::string worst_q_name, worst_delta_name;
  auto params = net->named_parameters();
  for (const auto& entry : ref.updated) {
    const auto& name = entry.first;
    const auto& t = entry.second;
    if (name == "queue" || name == "queue_ptr") continue;
    auto* p = params.find(name);
    REQUIRE_MESSAGE(p != nullptr, name);
    const double err = parity::RelError(*p, t);
    const auto& before = ref.params.at(name);
    const double delta = parity::RelError(*p - before, t - before);
    if (name.rfind("encoder_q.", 0) == 0 && err > worst_q) {
      worst_q = err;
      worst_q_name = name;
    }
    if (name.rfind("encoder_k.", 0) == 0) worst_k = std::max(worst_k, err);
    if (delta > worst_delta) {
      worst_delta = delta;
      worst_delta_name = name;
    }
  }
  CHECK(ref.updated.size() == params.size() + 2);
  const double queue_err = parity::RelError(net->queue, ref.updated.at("queue"));
  // The four enqueued keys (columns 0-3) changed, the other twelve did not.
  const auto& q_before = ref.params.at("queue");
  CHECK_FALSE(torch::allclose(net->queue.slice(1, 0, 4), q_before.slice(1, 0, 4)));
  CHECK(torch::equal(net->queue.slice(1, 4), q_before.slice(1, 4)));
  CHECK(net->queue_ptr.item<int64_t>() == ref.updated.at("queue_ptr").item<int64_t>());
  CHECK(net->queue_ptr.item<int64_t>() == 4);
  // The key encoder moved (momentum), far less than the query encoder.
  const auto& k_before = ref.params.at("encoder_k.fc.weight");
  CHECK_FALSE(torch::equal(*params.find("encoder_k.fc.weight"), k_before));
  std::cout << "parity moco: params " << ref.param_count << ", logits rel err " << out_err << ", loss rel err "
            << loss_err << " (losses " << ref.loss[0].item<double>() << ", " << ref.loss[1].item<double>()
            << "), queue rel err " << queue_err << ", query encoder max rel err " << worst_q << " (" << worst_q_name
            << "), key encoder max rel err " << worst_k << "; parameter change max rel err " << worst_delta << " ("
            << worst_delta_name << ")" << std::endl;
  CHECK(out_err <= kTol);
  CHECK(loss_err <= kTol);
  CHECK(queue_err <= kTol);
  CHECK(worst_q <= kTol);
  CHECK(worst_k <= kTol);
  CHECK(worst_delta <= kTol);
}

TEST_CASE("parity moco parameter count") {
  // Two torchvision resnet50s with num_classes = 128: resnet50's published
  // 25,557,032 parameters less its 2048 x 1000 + 1000 classifier plus a
  // 2048 x 128 + 128 one, each.
  const int64_t encoder = 25557032 - (2048 * 1000 + 1000) + (2048 * 128 + 128);
  auto w = MakeWorkload("moco", models::Mode::kTrain, 2);
  std::cout << "parity moco: params " << parity::ParameterCount(w->net()) << " (expected 2 x " << encoder
            << "), trainable " << TrainableCount(w->net()) << std::endl;
  CHECK(parity::ParameterCount(w->net()) == 2 * encoder);
  CHECK(TrainableCount(w->net()) == encoder);  // the key encoder takes no gradient
  auto names = parity::NamedShapes(w->net());
  CHECK(names.at("queue") == std::vector<int64_t>{128, 32000});
}
