// The platform's manifest.json (schemas/manifest.schema.json): what the
// collection ran on and with, written before the first run and again, with
// the end time and the run counts, after the last. BuildManifest assembles
// every field and returns the typed core::Manifest, which the collector writes
// with core::ToJson: the environment's sections pass through
// core::ManifestFromJson, the readers' own parser, so the collector cannot
// write a manifest that validate, build or compare would refuse.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/config.h"
#include "collector/run_spec.h"
#include "core/contract/manifest.h"

namespace torchgauge::collector {

struct ManifestFacts {
  std::string build_id, platform_id;
  std::string device;           // cpu | cuda, after resolving auto
  nlohmann::json environment;   // DescribeEnvironment(device)
  nlohmann::json clocks_start;  // ReadClocks(device) before the first run
  std::string started_at;
  const SuiteConfig* suite = nullptr;  // effective: suite file, --config and the command line
  PlanFilters filters;
  std::vector<std::string> argv;  // the command line after the program name
  std::string config_file, suite_name;
  std::optional<core::CpuFrequencyPolicy> cpu_frequency;  // unset: not recorded
  std::optional<core::ProbeResult> peaks;                 // unset: not probed (--no-probe) or the probe failed
  // Known once the collection stopped; unset in the manifest written at the start.
  struct End {
    std::string finished_at;
    nlohmann::json clocks_end;
    bool interrupted = false;
    std::map<std::string, int> counts;  // status -> runs
  };
  std::optional<End> end;
};

// Throws core::FileError naming `path` (where it is to be written) and the
// field when a fact does not hold (a bug of the collector, never the user's).
core::Manifest BuildManifest(const ManifestFacts& facts, const std::filesystem::path& path);

// The started_at of the manifest an interrupted collection left at `path`
// (kept by --resume); nullopt when there is none or it is unreadable.
std::optional<std::string> EarlierStartedAt(const std::filesystem::path& path);

}  // namespace torchgauge::collector
