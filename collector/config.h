// Suite configuration: the embedded default suites (collector/suites/*.json,
// compiled in), an optional --config file that overrides them, and the
// command-line options on top (applied to the parsed core::RunSettings, not
// to the JSON). Both the requested options and the effective,
// normalised configuration are recorded in the manifest (loadgen's habit).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/platform/probe.h"
#include "core/contract/run_settings.h"
#include "core/contract/vocabulary.h"

namespace torchgauge::collector {

struct SuiteConfig {
  std::string name;
  std::string description;
  std::string batch_sizes = "default";  // which ModelInfo batch set: default | smoke
  std::vector<std::string> models;      // empty = all non-hidden models
  std::vector<std::string> exclude;
  std::vector<std::string> modes{std::begin(core::kModes), std::end(core::kModes)};  // every mode
  std::vector<std::string> backends{"eager"};
  std::vector<std::string> precisions{"default"};
  // warmup, repeat, processes, profile_iterations, timeout_s and seed come
  // from the suite file (same field names, at its top level); smoke follows
  // batch_sizes; threads only from the command line.
  core::RunSettings settings;
  std::map<std::string, std::map<std::string, int64_t>> batch_size_overrides;  // model -> mode -> size
  // backend -> mode -> models: a backend named here runs, in each mode, only
  // the models listed for that mode (none where the mode is not listed); the
  // suite's other backends run every selected model. Applies to the suite's
  // own backends, not to ones asked for with --backend. The smoke suite uses
  // it to compile a representative few within its budget.
  std::map<std::string, std::map<std::string, std::vector<std::string>>> backend_models;
  // backend -> worker processes per run: that backend's runs use this many
  // processes instead of `processes`, so that a compiler's paired speedup gets
  // an interval from the processes' ratios while the eager runs stay in one
  // process. Applies to the suite's own backends; --processes on the command
  // line sets every run's count and lifts it.
  std::map<std::string, int> backend_processes;
  // The per-collection probe's sizes (the suite file's "probe" object:
  // matmul_n, warmup, repeats, triad_elements, kernels); 0 sizes mean the
  // probe's defaults. `device` is set when the collection runs.
  ProbeOptions probe;
};

// The command line's run settings: each one given replaces the suite's.
struct SettingsOverrides {
  std::optional<int> warmup, repeat, processes, profile_iterations, threads;
  std::optional<int> prompt_tokens, decode_steps, generations;
  std::optional<double> timeout_s;
  std::optional<uint64_t> seed;
  std::optional<std::string> pairing, measure, cpu_isa;
};
// Applies `o` to the suite's settings and checks the result; a value out of
// range throws std::invalid_argument naming the option (--repeat: ...).
void ApplyOverrides(const SettingsOverrides& o, core::RunSettings& settings);
// The same for a whole suite: --processes also replaces the suite's
// per-backend counts (backend_processes), so that it sets every run's.
void ApplyOverrides(const SettingsOverrides& o, SuiteConfig& suite);

// Names of the embedded suites.
std::vector<std::string> EmbeddedSuiteNames();
// The embedded suite's JSON; throws std::invalid_argument for an unknown name.
nlohmann::json EmbeddedSuiteJson(const std::string& name);

// Overlays `overrides` onto `base` key by key (objects merge recursively,
// everything else replaces), like a JSON merge patch without deletions.
nlohmann::json MergeConfig(const nlohmann::json& base, const nlohmann::json& overrides);

// Parses and validates a suite; errors name `source` and the field.
SuiteConfig ParseSuite(const nlohmann::json& j, const std::string& source);
nlohmann::json SuiteToJson(const SuiteConfig& s);

}  // namespace torchgauge::collector
