// Suite configuration: the embedded default suites (collector/suites/*.json,
// compiled in), an optional --config file that overrides them, and the
// command-line options on top. Both the requested options and the effective,
// normalised configuration are recorded in the manifest (loadgen's habit).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace torchgauge::collector {

struct SuiteConfig {
  std::string name;
  std::string description;
  std::string batch_sizes = "default";  // which ModelInfo batch set: default | smoke
  std::vector<std::string> models;      // empty = all non-hidden models
  std::vector<std::string> exclude;
  std::vector<std::string> modes{"train", "eval"};
  std::vector<std::string> backends{"eager"};
  std::vector<std::string> precisions{"default"};
  int warmup = 3;
  int repeat = 10;
  int processes = 1;  // worker processes per run; samples are pooled (see core::Timing)
  int profile_iterations = 3;
  double timeout_s = 1800;
  uint64_t seed = 0;
  std::map<std::string, std::map<std::string, int64_t>> batch_size_overrides;  // model -> mode -> size
};

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
