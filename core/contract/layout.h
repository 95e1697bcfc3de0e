// The results layout, computed in one place:
//   <root>/<build-id>/<platform-id>/manifest.json
//   <root>/<build-id>/<platform-id>/runs/<model>.<mode>.<backend>.<precision>.json
// and the collector's working files beside them (not part of the contract):
//   <platform>/logs/<process-stem>.log          each worker process's output
//   <platform>/logs/probe[.shard-<i>].log       the peaks probe (one per shard:
//                                               shards merge into one logs/)
//   <platform>/traces/<stem>.trace.json         --trace: the profiling pass
//   <platform>/.work/<process-stem>.spec.json   a worker's instructions
//   <platform>/.work/<process-stem>.result.json a worker's result, before pooling
// where <stem> is model.mode.backend.precision and <process-stem> is <stem>
// for a single-process run and <stem>.p<k> for process k of several. A
// bisection's work directory holds results/<rev-build>/bisect/ and bisect.log.
// Ids are validated against a safe character set so that no id can escape
// the results or site directory.
#pragma once

#include <filesystem>
#include <string>
#include <tuple>

namespace torchgauge::core {

// [A-Za-z0-9][A-Za-z0-9._+-]{0,127}, and not "." or "..".
bool IsSafeId(const std::string& id);
// Throws std::invalid_argument naming `what` when `id` is not safe.
void CheckSafeId(const std::string& id, const std::string& what);

struct RunKey {
  std::string model, mode, backend, precision;
  bool operator<(const RunKey& o) const {
    return std::tie(model, mode, backend, precision) < std::tie(o.model, o.mode, o.backend, o.precision);
  }
  bool operator==(const RunKey& o) const = default;
  std::string FileStem() const;  // model.mode.backend.precision
};

std::filesystem::path PlatformDir(const std::filesystem::path& root, const std::string& build_id,
                                  const std::string& platform_id);
std::filesystem::path ManifestPath(const std::filesystem::path& platform_dir);
std::filesystem::path RunsDir(const std::filesystem::path& platform_dir);
std::filesystem::path RunPath(const std::filesystem::path& platform_dir, const RunKey& key);

// The collector's working files (see the top of this file).
std::string ProcessStem(const RunKey& key, int process, int processes);
std::filesystem::path WorkDir(const std::filesystem::path& platform_dir);
std::filesystem::path LogsDir(const std::filesystem::path& platform_dir);
// `shard_index` < 0: an unsharded collection.
std::filesystem::path ProbeLogPath(const std::filesystem::path& platform_dir, int shard_index);
std::filesystem::path TracesDir(const std::filesystem::path& platform_dir);
std::filesystem::path SpecPath(const std::filesystem::path& platform_dir, const std::string& process_stem);
std::filesystem::path PartResultPath(const std::filesystem::path& platform_dir, const std::string& process_stem);
std::filesystem::path LogPath(const std::filesystem::path& platform_dir, const std::string& process_stem);
std::filesystem::path TracePath(const std::filesystem::path& platform_dir, const RunKey& key);
// Counted runs: the Callgrind profile kept for a run (its median step,
// gzip), and where a worker process's per-step dumps go (.N appended).
std::filesystem::path ProfilesDir(const std::filesystem::path& platform_dir);
std::filesystem::path ProfilePath(const std::filesystem::path& platform_dir, const RunKey& key);
std::filesystem::path CallgrindOutPath(const std::filesystem::path& platform_dir, const std::string& process_stem);

// A bisection's work directory: every step's results tree and the log.
std::filesystem::path BisectResultsRoot(const std::filesystem::path& work_dir);
std::filesystem::path BisectLogPath(const std::filesystem::path& work_dir);

}  // namespace torchgauge::core
