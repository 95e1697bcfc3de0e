// Parity and smoke tests for yolov3 (TorchBench's ultralytics YOLOv3-SPP).
//
// No PyPI package holds it. The model is checked three ways:
//  - its parameter count against a formula written here from the published
//    architecture (Darknet-53, the SPP block and the three detection heads of
//    cfg/yolov3-spp.cfg), and against ultralytics' model_info figure;
//  - the whole step in float64 against a plain-torch re-statement
//    (tests/parity/ref_yolov3.py) that builds its own Darknet from the cfg
//    text models/vision/detection/yolov3.cc builds from (YoloV3SppCfg, handed over as a file)
//    and restates compute_loss / build_targets and TorchBench's ni = 0 SGD
//    step: names and shapes of every parameter and buffer, the eval output
//    (decoded boxes of the three yolo layers), the loss and every parameter
//    after the step, at batch 2 and 64x64 images;
//  - the eval step's non_max_suppression against the re-statement's, which
//    calls torchvision.ops.nms, on a crafted prediction batch where many
//    boxes pass the thresholds (the randomly initialised network's own
//    predictions rarely pass conf 0.3).
#include <doctest/doctest.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>

#include "models/vision/detection/yolov3.h"
#include "tests/parity/parity.h"

using namespace torchgauge;

namespace {

// A Darknet [convolutional] block: k x k weights, then BN scale and shift
// (or the conv's own bias without BN).
int64_t Conv(int64_t in, int64_t out, int64_t k, bool bn = true) { return in * out * k * k + (bn ? 2 * out : out); }

std::unique_ptr<models::Workload> Build(models::Mode mode, int64_t batch, bool smoke) {
  const auto* info = models::FindModel("yolov3");
  REQUIRE_MESSAGE(info != nullptr, "model not registered: yolov3");
  models::WorkloadOptions opt;
  opt.mode = mode;
  opt.batch_size = batch;
  opt.smoke = smoke;
  models::SeedAll(0);
  return info->create(opt);
}

std::string WriteCfg() {
  const auto path = std::filesystem::path(TORCHGAUGE_BINARY_DIR) / "parity" / "yolov3-spp.cfg";
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << models::YoloV3SppCfg();
  return path.string();
}

}  // namespace

TEST_CASE("parity yolov3 parameter count") {
  // Darknet-53: a 3x3 stem of 32, then five stages, each a stride-2 3x3 conv
  // doubling the width and 1, 2, 8, 8, 4 residual units (1x1 to half, 3x3 back).
  int64_t backbone = Conv(3, 32, 3);
  const int64_t widths[] = {64, 128, 256, 512, 1024}, units[] = {1, 2, 8, 8, 4};
  for (int s = 0; s < 5; ++s) {
    const int64_t w = widths[s];
    backbone += Conv(w / 2, w, 3) + units[s] * (Conv(w, w / 2, 1) + Conv(w / 2, w, 3));
  }
  const int64_t det = 3 * (80 + 5);  // 3 anchors x (box, objectness, 80 classes)
  // P5: 1x1 512, 3x3 1024, 1x1 512, SPP (concat of 4 x 512), 1x1 512, 3x3, 1x1, 3x3, detection conv.
  const int64_t p5 = Conv(1024, 512, 1) + Conv(512, 1024, 3) + Conv(1024, 512, 1) + Conv(2048, 512, 1) +
                     Conv(512, 1024, 3) + Conv(1024, 512, 1) + Conv(512, 1024, 3) + Conv(1024, det, 1, false);
  // P4 / P3: a 1x1 lateral conv, upsample, concat with stage 4 / 3, three (1x1, 3x3) pairs, detection conv.
  auto head = [&](int64_t lateral_in, int64_t w, int64_t skip) {
    return Conv(lateral_in, w, 1) + Conv(w + skip, w, 1) + Conv(w, 2 * w, 3) +
           2 * (Conv(2 * w, w, 1) + Conv(w, 2 * w, 3)) + Conv(2 * w, det, 1, false);
  };
  const int64_t formula = backbone + p5 + head(512, 256, 512) + head(256, 128, 256);
  CHECK(backbone == 40584928);  // Darknet-53 without its classifier
  CHECK(formula == 62998749);   // ultralytics model_info for yolov3-spp: 6.29987e+07 parameters
  auto w = Build(models::Mode::kEval, 1, /*smoke=*/false);
  const int64_t got = parity::ParameterCount(w->net());
  std::cout << "parity yolov3: params " << got << " (published architecture: Darknet-53 " << backbone << ", total "
            << formula << ")" << std::endl;
  CHECK(got == formula);
  // 114 layers; yolo layers at 89, 101, 113 (yolo_models.get_yolo_layers).
  auto shapes = parity::NamedShapes(w->net());
  for (const char* name : {"module_list.89.anchor_vec", "module_list.101.anchor_vec", "module_list.113.anchor_vec",
                           "module_list.88.Conv2d.bias", "module_list.0.BatchNorm2d.weight"}) {
    CHECK_MESSAGE(shapes.count(name) == 1, name);
  }
  CHECK(shapes.count("module_list.114.Conv2d.weight") == 0);
}

TEST_CASE("parity yolov3") {
  auto ref = parity::RunReference("ref_yolov3.py", "yolov3", {"--cfg", WriteCfg(), "--size", "64", "--double"});
  const bool ref_is_double = ref.output.scalar_type() == torch::kDouble;
  REQUIRE(ref_is_double);
  auto w = Build(models::Mode::kTrain, ref.inputs.at("images").size(0), /*smoke=*/true);
  w->CastTo(torch::kDouble);
  const parity::ParityErrors e = parity::MeasureParity(*w, ref, 1234);  // parity_common.TRAIN_SEED
  int64_t moved = 0;
  for (const auto& [name, t] : ref.updated) {
    if (!torch::equal(t, ref.params.at(name))) ++moved;
  }
  std::cout << "parity yolov3 (float64): params " << ref.param_count << ", output rel err " << e.output
            << ", loss rel err " << e.loss << ", updated params max rel err " << e.updated_max << " (" << e.worst_param
            << "), " << moved << " parameters moved by the step" << std::endl;
  CHECK(e.output <= 1e-4);
  CHECK(e.loss <= 1e-4);
  CHECK(e.updated_max <= 1e-4);
  // At ni = 0 only the biases (lr 0.1) move: 73 BN shifts + 3 detection biases.
  CHECK(moved == 76);
}

TEST_CASE("parity yolov3 nms") {
  auto ref = parity::RunReference("ref_yolov3.py", "yolov3_nms");
  auto got = models::YoloNonMaxSuppression(ref.inputs.at("pred"));
  std::cout << "parity yolov3 nms: " << ref.output.size(0) << " detections kept (reference), " << got.size(0)
            << " (ours)" << std::endl;
  REQUIRE(ref.output.size(0) > 10);
  REQUIRE(got.sizes() == ref.output.sizes());
  CHECK(parity::RelError(got, ref.output) <= 1e-9);
}

TEST_CASE("smoke yolov3") {
  using Clock = std::chrono::steady_clock;
  const auto* info = models::FindModel("yolov3");
  REQUIRE(info != nullptr);
  for (auto mode : {models::Mode::kTrain, models::Mode::kEval}) {
    auto w = Build(mode, info->smoke_batch.For(mode), /*smoke=*/true);
    w->net().train(mode == models::Mode::kTrain);
    for (int i = 0; i < 2; ++i) {
      const auto start = Clock::now();
      w->Step(mode);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      std::cout << "smoke yolov3 " << models::ModeName(mode) << " step " << i << ": " << ms << " ms wall" << std::endl;
    }
    if (mode == models::Mode::kTrain) {
      auto loss = w->TrainStep();
      CHECK(loss.numel() == 1);
      CHECK(torch::isfinite(loss).all().item<bool>());
    } else {
      c10::InferenceMode guard;
      auto out = w->Forward();
      CHECK(out.size(0) == info->smoke_batch.eval);
      CHECK(out.size(1) == 3 * (3 * 4 + 6 * 8 + 12 * 16));  // 96x128: grids 3x4, 6x8, 12x16
      CHECK(torch::isfinite(out).all().item<bool>());
    }
    for (const auto& p : w->net().parameters()) CHECK(torch::isfinite(p).all().item<bool>());
  }
}
