// Parity and smoke tests for the timm_* models: timm_efficientnet, timm_regnet,
// timm_resnest, timm_vovnet, timm_nfnet and timm_vision_transformer_large.
//
// The reference is timm 1.0.31 itself (tests/parity/ref_timm.py), built with
// timm.create_model(name, pretrained=False) as TorchBench does; the C++ model
// loads its state dict by name and must reproduce the eval output, the loss
// and every parameter after one timm-SGD train step.
#include <doctest/doctest.h>

#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <string>

#include "models/vision/classification/efficientnet.h"
#include "models/vision/classification/vision_transformer.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

// The CheckModelParity protocol for a workload that is not a registered model
// (a test configuration): structure, weights, eval output, one train step.
void CheckConfigurationParity(
    const std::string& ref_id,
    const std::function<std::unique_ptr<models::Workload>(const models::WorkloadOptions&)>& make, double tol = 1e-4) {
  auto ref = parity::RunReference("ref_timm.py", ref_id);
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = ref.output.size(0);
  models::SeedAll(0);
  auto w = make(opt);
  parity::CheckSameStructure(w->net(), ref);
  parity::LoadWeights(w->net(), ref);
  parity::UseReferenceInputs(*w, ref);
  double out_err;
  {
    w->net().eval();
    torch::NoGradGuard g;
    out_err = parity::RelError(w->Forward(), ref.output);
  }
  w->net().train();
  torch::manual_seed(1234);
  double loss_err = parity::RelError(w->TrainStep(), ref.loss);
  double worst = 0;
  std::string worst_name;
  auto ours = w->net().named_parameters();
  for (const auto& entry : ref.updated) {
    const auto& name = entry.first;
    const auto& t = entry.second;
    auto* p = ours.find(name);
    REQUIRE_MESSAGE(p != nullptr, "updated parameter missing: ", name);
    double err = parity::RelError(*p, t);
    if (err > worst) worst = err, worst_name = name;
  }
  std::cout << "parity " << ref_id << ": params " << ref.param_count << ", output rel err " << out_err
            << ", loss rel err " << loss_err << ", updated params max rel err " << worst << " (" << worst_name << ")"
            << std::endl;
  CHECK(out_err <= tol);
  CHECK(loss_err <= tol);
  CHECK(worst <= tol);
}

}  // namespace

TEST_CASE("parity timm_efficientnet") { parity::CheckModelParity("timm_efficientnet", "ref_timm.py"); }

// TorchBench runs efficientnet_b0 without stochastic depth; this checks the
// drop-path branch (rate 0.2, masks drawn after the same train seed) too.
TEST_CASE("parity timm_efficientnet drop_path_rate 0.2") {
  CheckConfigurationParity("timm_efficientnet_drop_path", [](const models::WorkloadOptions& opt) {
    models::EfficientNetConfig c;
    c.drop_path_rate = 0.2;
    return models::MakeEfficientNetWorkload(opt, c);
  });
}

TEST_CASE("parity timm_regnet") { parity::CheckModelParity("timm_regnet", "ref_timm.py"); }

TEST_CASE("parity timm_resnest") { parity::CheckModelParity("timm_resnest", "ref_timm.py"); }

TEST_CASE("parity timm_vovnet") { parity::CheckModelParity("timm_vovnet", "ref_timm.py"); }

TEST_CASE("parity timm_nfnet") { parity::CheckModelParity("timm_nfnet", "ref_timm.py"); }

namespace {

// ViT-g/14 with fewer blocks: same widths, heads, patch and image size.
models::VitConfig VitGiantFewLayers() {
  auto c = models::VitGiantPatch14Config();
  c.num_layers = 2;
  return c;
}

int64_t PythonInt(const std::string& code) {
  const std::string cmd = std::string(TORCHGAUGE_PYTHON) + " -c '" + code + "' 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  REQUIRE(pipe != nullptr);
  std::string text;
  char buf[256];
  while (fgets(buf, sizeof buf, pipe.get()) != nullptr) text += buf;
  INFO("python said: ", text);
  // The count is the last line.
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const auto nl = text.find_last_of('\n');
  const std::string last = nl == std::string::npos ? text : text.substr(nl + 1);
  REQUIRE(!last.empty());
  REQUIRE(last.find_first_not_of("0123456789") == std::string::npos);
  return std::stoll(last);
}

}  // namespace

// Full configuration: 40 blocks, 1.01 B parameters; counted against timm's
// vit_giant_patch14_224 built on the meta device.
TEST_CASE("parity timm_vision_transformer_large parameter count") {
  const int64_t expected = PythonInt(
      "import timm, torch\n"
      "with torch.device(\"meta\"): m = timm.create_model(\"vit_giant_patch14_224\", pretrained=False)\n"
      "print(sum(p.numel() for p in m.parameters()))");
  auto net = models::MakeVisionTransformer(models::VitGiantPatch14Config());
  const int64_t ours = parity::ParameterCount(*net);
  std::cout << "timm_vision_transformer_large parameters: " << ours << " (timm " << expected << ")" << std::endl;
  CHECK(ours == expected);
  CHECK(ours == 1012611432);
}

// Full parity on 2 of the 40 blocks (a full train step would take minutes and
// ~16 GB on a CPU).
TEST_CASE("parity timm_vision_transformer_large") {
  CheckConfigurationParity("timm_vision_transformer_large", [](const models::WorkloadOptions& opt) {
    return models::MakeVisionTransformerWorkload(opt, VitGiantFewLayers());
  });
}

// The registered workload is 1.01 B parameters (about 12 GB with gradients and
// momentum, ~1.5 TFLOP per training image); the smoke test runs the same
// workload code at the 2-block configuration, batch 1, in both modes.
TEST_CASE("smoke timm_vision_transformer_large") {
  const auto* info = models::FindModel("timm_vision_transformer_large");
  REQUIRE(info != nullptr);
  CHECK(info->default_batch.train == 32);
  for (auto mode : {models::Mode::kTrain, models::Mode::kEval}) {
    models::WorkloadOptions opt;
    opt.mode = mode;
    opt.smoke = true;
    opt.batch_size = info->smoke_batch.For(mode);
    models::SeedAll(0);
    auto w = models::MakeVisionTransformerWorkload(opt, VitGiantFewLayers());
    w->net().train(mode == models::Mode::kTrain);
    if (mode == models::Mode::kTrain) {
      CHECK(torch::isfinite(w->TrainStep()).all().item<bool>());
    } else {
      c10::InferenceMode guard;
      auto out = w->Forward();
      CHECK(out.sizes() == torch::IntArrayRef({1, 1000}));
      CHECK(torch::isfinite(out).all().item<bool>());
    }
  }
}
