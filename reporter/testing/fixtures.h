// Synthetic results trees for tests and the benchmark: N builds x M models x
// K configurations on one GPU-style platform (with GPU breakdowns, so Figures
// 1/2 and Table 2 are exercised) and optionally a CPU platform (with host
// breakdowns instead). Every run has a system load, a few of them busy enough
// to be noisy; every manifest has measured peaks.
// Output is a pure function of the spec: the same spec gives the same bytes.
// Files are valid against schemas/run_result.schema.json and
// schemas/manifest.schema.json (a test checks with jsonschema).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace torchgauge::reporter {

struct FixtureSpec {
  int builds = 3;
  int models = 4;
  int configs = 4;  // 1..8: (mode, backend, precision) combinations
  bool cpu_platform = true;
  int samples = 10;
  int ops_per_model = 30;
  uint64_t seed = 1;
  int first_day = 0;  // days after 2026-01-01 of the first build
  // Planted changes for the regressions history (-1: none): from build
  // `plant_at` on, model 1's eval/eager/fp32 run on the GPU platform is 30%
  // slower (a step that stays); in build `plant_at` alone, model 2's is (a
  // spike that recovers in the next build).
  int plant_at = -1;
  // The alerts' acceptance history (alerts/alerts.h), all on the GPU
  // platform's eval/eager/fp32 runs, which are then never busy and never
  // fail, so what is planted is what the comparison sees:
  // - step_at >= 0: models 0..step_models-1 are 30% slower from build
  //   step_at on, until build step_until (exclusive; -1: for good);
  int step_at = -1, step_models = 6, step_until = -1;
  // - drift_model >= 0: that model slows by 3% a build over the drift_builds
  //   builds from drift_from on (each step under the 7% threshold), then stays;
  int drift_model = -1, drift_from = 10, drift_builds = 10;
  // - machine_change_at >= 0: from that build on, the GPU platform's
  //   manifest names another CPU model and core count under the same id;
  int machine_change_at = -1;
  // - missing_build >= 0: that build (a night) is not written at all.
  int missing_build = -1;
  // cpu_stops_after >= 0: the CPU platform has no build after that one,
  // while the GPU platform goes on (a runner pool that stopped reporting).
  int cpu_stops_after = -1;
  // busy_from >= 0: from that build on, every run on every platform ran
  // beside another busy process (all noisy), planted runs included.
  int busy_from = -1;
};

// Writes the tree under `root` (created). Returns the number of run files.
size_t GenerateFixtureTree(const std::filesystem::path& root, const FixtureSpec& spec);

// The build id of build `index` (0-based) for `spec`.
std::string FixtureBuildId(const FixtureSpec& spec, int index);

}  // namespace torchgauge::reporter
