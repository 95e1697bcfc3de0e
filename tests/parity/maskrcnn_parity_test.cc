// Parity of vision_maskrcnn (models/vision/detection/maskrcnn.h) with torchvision's Mask R-CNN
// ResNet-50-FPN, built as TorchBench builds it (tests/parity/ref_maskrcnn.py):
// torchvision's weights loaded by name, the reference's two tiny images and
// targets, then the eval outputs (RPN proposals, box predictor outputs, and
// per image boxes, scores, labels and pasted masks, non-empty), the five
// training losses and every parameter after one SGD step, each within 1e-4.
#include <doctest/doctest.h>

#include <torch/torch.h>

#include <cmath>
#include <iostream>

#include "models/vision/detection/maskrcnn.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

constexpr double kTol = 1e-4;

// Compares every tensor of `expected`: same shape, integer tensors equal,
// floating ones within kTol. Returns the worst relative error.
double CompareAll(const std::map<std::string, torch::Tensor>& actual,
                  const std::map<std::string, torch::Tensor>& expected, const std::string& what) {
  double worst = 0;
  for (const auto& entry : expected) {
    const auto& name = entry.first;
    const auto& t = entry.second;
    INFO(what, " ", name);
    auto it = actual.find(name);
    REQUIRE_MESSAGE(it != actual.end(), "missing in the C++ outputs: ", name);
    REQUIRE(it->second.sizes() == t.sizes());
    if (!t.is_floating_point()) {
      CHECK(torch::equal(it->second.cpu(), t));
      continue;
    }
    const double err = parity::RelError(it->second, t);
    CHECK(err <= kTol);
    worst = std::max(worst, err);
  }
  return worst;
}

}  // namespace

TEST_CASE("vision_maskrcnn parity: eval detections, five losses and one SGD step against torchvision") {
  // ref_maskrcnn.py saves eval outputs and losses in place of Reference's
  // single output and loss, so only its weight fields are read into one.
  auto dict = parity::RunReferenceScript("ref_maskrcnn.py", "vision_maskrcnn");
  parity::Reference ref;
  ref.params = parity::Tensors(dict.at("params"), "params");
  ref.inputs = parity::Tensors(dict.at("inputs"), "inputs");
  ref.updated = parity::Tensors(dict.at("updated"), "updated");
  ref.param_count = dict.at("param_count").toInt();
  // torchvision's documented figure for maskrcnn_resnet50_fpn (FrozenBatchNorm2d).
  CHECK(ref.param_count == 44401393);

  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.batch_size = 2;
  models::SeedAll(0);
  // ref_maskrcnn.py: MIN_SIZE, MAX_SIZE, SCORE_THRESH, and TorchBench's lr for its one step.
  models::MaskRcnnSettings settings{112, 160, 0.0, 0.02};
  auto workload = models::MakeMaskRcnnWorkload(opt, settings);
  parity::CheckSameStructure(workload->net(), ref);
  parity::LoadWeights(workload->net(), ref);
  parity::UseReferenceInputs(*workload, ref);

  const auto expected_eval = parity::Tensors(dict.at("eval"), "eval");
  for (const char* k : {"boxes0", "boxes1"}) REQUIRE(expected_eval.at(k).size(0) > 0);
  const double eval_err = CompareAll(models::MaskRcnnEvalOutputs(*workload), expected_eval, "eval");

  torch::manual_seed(1234);  // ref_maskrcnn.py: TRAIN_SEED, before the train step (the samplers' randperm)
  const double loss_err =
      CompareAll(models::MaskRcnnTrainLosses(*workload), parity::Tensors(dict.at("losses"), "losses"), "loss");
  std::map<std::string, torch::Tensor> ours;
  for (const auto& p : workload->net().named_parameters()) ours[p.key()] = p.value();
  const double updated_err = CompareAll(ours, ref.updated, "updated");
  std::cout << "parity vision_maskrcnn: params " << ref.param_count << ", eval worst rel err " << eval_err
            << ", losses worst rel err " << loss_err << ", updated params worst rel err " << updated_err << std::endl;
}

// The registered smoke workload's train steps (the collector's `--suite ci
// --mode train`): parameters stay finite and the box head sees the balanced
// sampler's 512 RoIs at every step. At TorchBench's lr 0.02 from random
// weights the box head saw fewer RoIs from the second step on (19 in the
// issue's repro) and the losses went non-finite; torchvision itself
// diverges so (see MaskRcnnSettings). Eval sees the RPN's proposals, at
// most its post-NMS 1000.
TEST_CASE("vision_maskrcnn smoke train stays finite with 512 sampled RoIs per image") {
  const auto* info = models::FindModel("vision_maskrcnn");
  REQUIRE(info != nullptr);
  models::WorkloadOptions opt;
  opt.mode = models::Mode::kTrain;
  opt.smoke = true;
  opt.batch_size = info->smoke_batch.train;
  opt.seed = 0;
  models::SeedAll(0);
  auto w = info->create(opt);
  w->net().train();
  for (int step = 0; step < 5; ++step) {
    INFO("step ", step);
    const auto loss = w->TrainStep();
    CHECK(std::isfinite(loss.item<double>()));
    for (int64_t n : models::MaskRcnnSampledRois(*w)) CHECK(n == 512);
  }
  for (const auto& p : w->net().named_parameters()) {
    INFO(p.key());
    CHECK(torch::isfinite(p.value()).all().item<bool>());
  }
  const auto eval = models::MaskRcnnEvalOutputs(*w);
  const auto proposals = eval.at("proposals0").size(0);
  std::cout << "vision_maskrcnn smoke: 512 sampled RoIs per train step, " << proposals << " eval proposals"
            << std::endl;
  CHECK(proposals > 512);
  CHECK(proposals <= 1000);
}
