// The manifest contract in C++ (schemas/manifest.schema.json): one per build
// and platform, results/<build-id>/<platform-id>/manifest.json. The collector
// fills a Manifest and writes it with ToJson; every reader parses it with
// ManifestFromJson, which holds every check, so all commands accept and
// reject the same manifests.
//
// Nullable strings of the schema (cuda_runtime, driver, finished_at, ...) are
// std::string here: "" means null (absent or not detected) and is written as
// null. Nullable numbers are std::optional. The fields the collector writes
// only when the suite ends (interrupted, device.clocks_end, runs) are written
// by ToJson only once finished_at is set (runs only when present), so a
// manifest written before the first run does not claim "not interrupted".
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/contract/peaks.h"
#include "core/stats/system_load.h"

namespace torchgauge::core {

// A read-only snapshot of the GPU clocks and power state (nvidia-smi), taken
// when the suite starts and ends. Unreadable numbers are nullopt.
struct Clocks {
  std::optional<double> sm_clock_mhz, sm_clock_max_mhz, mem_clock_mhz;
  std::string pstate;  // "P0", ...
  std::optional<double> power_draw_w, temperature_c;
  std::string at;  // RFC 3339 UTC
  bool operator==(const Clocks&) const = default;
};

// One run of a sharded plan, as every shard records the whole partition
// (`shard.plan`): the merge learns from any one shard what every shard owed,
// even a shard that never started, and checks that all shards computed the
// same partition (same plan, same costs).
struct PlannedRun {
  std::string run;  // the run key's file stem, model.mode.backend.precision
  int64_t batch_size = 1;
  int shard = 0;    // 0-based index of the owning shard
  double cost = 0;  // the partition's cost (core/shard/shard.h), seconds with --cost-from
  bool operator==(const PlannedRun&) const = default;
};

// `run --shard I/N`: this collection is shard `index` of `count`.
struct ShardBlock {
  int index = 0, count = 1;
  std::string host;
  std::string started_at, finished_at;  // finished_at "": not finished (null)
  int64_t runs_assigned = 0;
  std::string device;       // the runs' device (cpu | cuda), for the merge's missing results
  std::string cost_source;  // "static" or "measured" (--cost-from)
  std::vector<PlannedRun> plan;
  bool operator==(const ShardBlock&) const = default;
};

// A merged collection (`torchgauge-collect merge`): one entry per shard of
// the partition, in index order, including a shard that left nothing (then
// host, started_at and wall_s are empty/unset).
struct ShardSummary {
  int index = 0;
  std::string host, started_at, finished_at;  // "": null
  std::optional<double> wall_s;               // finished_at - started_at; unset when either is unknown
  int64_t runs_assigned = 0, runs_present = 0, runs_missing = 0;
  double planned_cost = 0;
  bool operator==(const ShardSummary&) const = default;
};

struct Manifest {
  std::string build_id, platform_id;
  std::string started_at;
  std::string finished_at;  // "": the suite has not finished (null)

  // collector
  std::string collector_version, git_sha;
  std::string collector_compiler;  // "": not recorded (manifests before it)

  // libtorch
  std::string libtorch_version;
  // Who built it (schemas/manifest.schema.json libtorch): "" where not
  // recorded (an older manifest) or not known.
  std::string libtorch_git_commit, libtorch_build_version, libtorch_cuda_build, libtorch_hip_build,
      libtorch_origin_kind, libtorch_origin_path;
  bool cuda_available = false;
  std::string cuda_runtime, cudnn, hip_runtime, miopen;  // "": null

  // device
  std::string vendor;  // NVIDIA | AMD | CPU
  std::string device_name;
  std::string compute_capability, gcn_arch, driver;  // "": null
  std::optional<int64_t> multiprocessor_count, device_memory_bytes;
  std::optional<Clocks> clocks_start, clocks_end;

  // cpu
  std::string cpu_model;
  int logical_cores = 0;
  std::optional<int64_t> torch_threads, cpu_memory_bytes;

  // CPU frequency policy at the start of the collection; unset: not recorded.
  std::optional<CpuFrequencyPolicy> cpu_frequency;
  // `torchgauge-collect probe`'s measured peaks; unset: not probed.
  std::optional<ProbeResult> peaks;

  // host
  std::string hostname, os;
  std::string kernel, arch;  // "": null / not recorded

  // suite: `suite` is its name; suite_config the whole effective
  // configuration object as the collector wrote it (its shape belongs to the
  // collector's suite parser, so it is kept as JSON; it always holds "name").
  std::string suite;
  nlohmann::json suite_config = nlohmann::json::object();
  // The options as the user gave them (argv, config_file, suite), or null.
  nlohmann::json requested;

  bool interrupted = false;
  std::optional<std::map<std::string, int64_t>> run_counts;  // "runs": status -> count, at the end

  // Set in a shard's own manifest (`run --shard`); unset otherwise.
  std::optional<ShardBlock> shard;
  // Set in a merged manifest (`merge`): how the collection was sharded.
  std::optional<std::vector<ShardSummary>> shards;

  // Not part of the file: false for the placeholder a loader keeps when
  // manifest.json is missing or was refused.
  bool present = false;

  bool operator==(const Manifest&) const = default;
};

nlohmann::json ToJson(const Manifest& m);

// Parses and checks a manifest; throws FileError naming `file` and the field.
// Refuses a newer schema_version with advice (CheckSchema).
Manifest ManifestFromJson(const nlohmann::json& j, const std::filesystem::path& file);

}  // namespace torchgauge::core
