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
};

// Writes the tree under `root` (created). Returns the number of run files.
size_t GenerateFixtureTree(const std::filesystem::path& root, const FixtureSpec& spec);

// The build id of build `index` (0-based) for `spec`.
std::string FixtureBuildId(const FixtureSpec& spec, int index);

}  // namespace torchgauge::reporter
