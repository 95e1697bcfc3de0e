// Benchmark (label bench): the collector's median against a hand-timed loop
// of the same model in this process, side by side in one run. Prints both
// medians and their ratio; asserts nothing about time.
#include <sys/wait.h>

#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_io.h"
#include "core/layout.h"
#include "core/result.h"
#include "core/stats.h"
#include "models/workload.h"

namespace fs = std::filesystem;
using namespace torchgauge;

namespace {

// The same protocol as the worker (seeded, warm-up, one step per sample),
// with the smoke suite's input sizes.
double HandTimedMedianMs(const std::string& id, models::Mode mode, int64_t batch, int warmup, int repeat) {
  const auto* info = models::FindModel(id);
  models::WorkloadOptions opt;
  opt.mode = mode;
  opt.batch_size = batch;
  opt.smoke = true;
  models::SeedAll(0);
  auto w = info->create(opt);
  if (mode == models::Mode::kTrain) w->net().train(); else w->net().eval();
  for (int i = 0; i < warmup; ++i) w->Step(mode);
  std::vector<double> samples;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    w->Step(mode);
    samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return core::Summarize(samples).median;
}

}  // namespace

int main() {
  const fs::path root = fs::path(TORCHGAUGE_BINARY_DIR) / "test-output" / "timing-crosscheck";
  fs::remove_all(root);
  const int warmup = 3, repeat = 5;
  std::printf("%-10s %-6s %6s %14s %14s %8s\n", "MODEL", "MODE", "BATCH", "COLLECTOR ms", "HAND LOOP ms", "RATIO");
  for (const std::string id : {"resnet50", "hf_bert"}) {
    const auto* info = models::FindModel(id);
    const int64_t batch = info->smoke_batch.train;
    const std::string cmd = std::string(TORCHGAUGE_COLLECT) + " run --model '^" + id +
                            "$' --mode train --device cpu --suite smoke --warmup " + std::to_string(warmup) +
                            " --repeat " + std::to_string(repeat) + " --batch-size " + std::to_string(batch) +
                            " --profile-iterations 0 --no-summary --build-id x --platform-id cpu --out " +
                            root.string() + " > /dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      std::cerr << "collector failed for " << id << "\n";
      return 1;
    }
    const auto path = core::RunPath(root / "x" / "cpu", {id, "train", "eager", "default"});
    auto r = core::RunResultFromJson(core::ReadJsonFile(path), path);
    const double hand = HandTimedMedianMs(id, models::Mode::kTrain, batch, warmup, repeat);
    std::printf("%-10s %-6s %6lld %14.2f %14.2f %8.3f\n", id.c_str(), "train", static_cast<long long>(batch),
                r.timing->median_ms, hand, r.timing->median_ms / hand);
    std::printf("  collector samples:");
    for (double v : r.timing->samples_ms) std::printf(" %.2f", v);
    std::printf("\n");
  }
  return 0;
}
