// One planned run, as the supervisor hands it to a worker child process
// (serialised as JSON), and the plan built from a suite and the filters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/config.h"
#include "core/contract/layout.h"
#include "core/contract/run_settings.h"

namespace torchgauge::collector {

struct RunSpec {
  std::string model, mode, backend, precision;
  int64_t batch_size = 1;
  std::string device = "cpu";  // cpu | cuda
  // How the run is measured. settings.processes worker processes each do
  // warm-up and `repeat` timed steps in a fresh process, so process-to-process
  // variation (memory layout, placement, host noise) shows in the pooled
  // samples. Only the first does the profiling pass.
  core::RunSettings settings;
  // Where the worker writes its result; empty: the run's own result path.
  std::string result_file;
  bool trace = false;
  std::string build_id, platform_id;
  std::string platform_dir;  // where results go
  // Test hook: extra host-side delay per step as a fraction of the step's own
  // time (used to plant a known regression); 0 in normal use.
  double slowdown = 0;
  double jitter = 0;    // testing: sleep a random fraction in [0, jitter) of each step's time (plants noise)
  int ballast_mib = 0;  // testing: hold this many MiB, touched, through the timed steps (plants a memory change)
  // Testing (--plant-cost OP=N): a known instruction cost on one ATen CPU kernel (collector/counted.h).
  std::string plant_cost;
  // Counted runs (settings.measure "counted"): the Valgrind that runs the
  // worker, where Callgrind writes its dumps, and where the worker keeps
  // its median step's profile ("" in the other processes of a run).
  std::string valgrind_version, callgrind_out, keep_profile;

  core::RunKey key() const { return {model, mode, backend, precision}; }
  nlohmann::json ToJson() const;
  static RunSpec FromJson(const nlohmann::json& j);
};

struct PlanFilters {
  std::string model_regex;              // empty = all
  std::vector<std::string> domains;     // empty = all
  std::vector<std::string> modes;       // empty = suite's
  std::vector<std::string> precisions;  // empty = suite's
  std::vector<std::string> backends;    // empty = suite's
  int64_t batch_size = 0;               // 0 = per model
  bool include_hidden = false;          // the harness's test models
};

// Expands a suite into runs for `device` (cpu | cuda), in registry order;
// every run carries suite.settings. Throws std::invalid_argument for an
// unknown model or domain.
std::vector<RunSpec> BuildPlan(const SuiteConfig& suite, const PlanFilters& filters, const std::string& device);

}  // namespace torchgauge::collector
