// Parity and smoke tests for hf_reformer against transformers'
// ReformerForMaskedLM (ref_reformer.py).
//
// The registered model is checked for every state-dict name and shape and
// for its parameter count against the reference built on the meta device.
// The numeric parity (eval output, train-step loss, every parameter after
// one Adam step) runs on a reduced axial grid and chunking (8 x 8 = 64
// tokens, chunks of 16, 8 buckets; every width and layer as registered),
// built in both implementations alike, with the LSH rotations pinned by
// seeding the eval forward and the train step, and transformers' per-layer
// torch.seed() replaced by the same counter on both sides (see
// ref_reformer.py).
#include <doctest/doctest.h>

#include <iostream>
#include <memory>

#include "models/nlp/reformer.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

constexpr const char* kScript = "ref_reformer.py";
// ref_reformer.py's EVAL_SEED and LAYER_SEED_BASE; parity_common.TRAIN_SEED.
constexpr uint64_t kEvalSeed = 4321;
constexpr uint64_t kLayerSeedBase = 1000;
constexpr uint64_t kTrainSeed = 1234;

models::ReformerSizes ParitySizes() {
  models::ReformerSizes sizes;
  sizes.axial_pos_rows = 8;
  sizes.axial_pos_cols = 8;
  sizes.lsh_attn_chunk_length = 16;
  sizes.local_attn_chunk_length = 16;
  sizes.num_buckets = 8;
  auto next = std::make_shared<uint64_t>(kLayerSeedBase);
  sizes.layer_seed = [next] { return (*next)++; };
  return sizes;
}

// The registered model against the reference's full configuration built on
// the meta device: every state-dict name and shape, and the parameter count.
void CheckFullStructure() {
  const auto* info = models::FindModel("hf_reformer");
  REQUIRE(info != nullptr);
  auto ref = parity::RunReference(kScript, "hf_reformer_full");
  models::WorkloadOptions opt;
  models::SeedAll(0);
  auto w = info->create(opt);
  auto ours = parity::NamedShapes(w->net());
  for (const auto& entry : ref.params) {
    const auto& name = entry.first;
    const auto& shape = entry.second;
    INFO("reference tensor ", name);
    auto it = ours.find(name);
    REQUIRE_MESSAGE(it != ours.end(), "missing in the C++ model: ", name);
    auto expected = shape.contiguous();
    CHECK(it->second ==
          std::vector<int64_t>(expected.data_ptr<int64_t>(), expected.data_ptr<int64_t>() + expected.numel()));
  }
  for (const auto& entry : ours) {
    const auto& name = entry.first;
    CHECK_MESSAGE(ref.params.count(name) == 1, "not in the reference: ", name);
  }
  const int64_t count = parity::ParameterCount(w->net());
  std::cout << "parity hf_reformer full configuration: params " << count << ", reference (meta device) "
            << ref.param_count << ", " << ours.size() << " state-dict tensors" << std::endl;
  CHECK(count == ref.param_count);
}

void CheckReducedParity() {
  auto ref = parity::RunReference(kScript, "hf_reformer");
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.output.size(0);
  models::SeedAll(0);
  auto workload = models::ReformerInfo(ParitySizes()).create(opt);
  auto& net = workload->net();
  parity::CheckSameStructure(net, ref);
  parity::LoadWeights(net, ref);
  parity::UseReferenceInputs(*workload, ref);
  double out_err = 0;
  {
    net.eval();
    torch::NoGradGuard no_grad;
    torch::manual_seed(kEvalSeed);
    out_err = parity::RelError(workload->Forward(), ref.output);
  }
  net.train();
  torch::manual_seed(kTrainSeed);
  const double loss_err = parity::RelError(workload->TrainStep(), ref.loss);
  auto ours = net.named_parameters();
  double worst = 0;
  std::string worst_name;
  for (const auto& entry : ref.updated) {
    const auto& name = entry.first;
    const auto& t = entry.second;
    auto* p = ours.find(name);
    REQUIRE_MESSAGE(p != nullptr, "updated parameter missing: ", name);
    const double err = parity::RelError(*p, t);
    if (err > worst) {
      worst = err;
      worst_name = name;
    }
  }
  std::cout << "parity hf_reformer (8 x 8 axial grid, chunks of 16, 8 buckets): params " << ref.param_count
            << ", output rel err " << out_err << ", loss rel err " << loss_err << ", updated params max rel err "
            << worst << " (" << worst_name << ")" << std::endl;
  CHECK(ref.updated.size() == ours.size());
  CHECK(out_err <= 1e-4);
  CHECK(loss_err <= 1e-4);
  CHECK(worst <= 1e-4);
}

}  // namespace

TEST_CASE("parity hf_reformer") {
  CheckFullStructure();
  CheckReducedParity();
}
