#include "core/contract/layout.h"

#include <stdexcept>

namespace torchgauge::core {

bool IsSafeId(const std::string& id) {
  if (id.empty() || id.size() > 128 || id == "." || id == "..") return false;
  auto ok = [](char c, bool first) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return !first && (c == '.' || c == '_' || c == '+' || c == '-');
  };
  for (size_t i = 0; i < id.size(); ++i) {
    if (!ok(id[i], i == 0)) return false;
  }
  return true;
}

void CheckSafeId(const std::string& id, const std::string& what) {
  if (!IsSafeId(id)) {
    throw std::invalid_argument(what + " '" + id +
                                "' is not a safe id: use 1-128 of [A-Za-z0-9._+-], starting with a letter or digit");
  }
}

std::string RunKey::FileStem() const { return model + "." + mode + "." + backend + "." + precision; }

std::filesystem::path PlatformDir(const std::filesystem::path& root, const std::string& build_id,
                                  const std::string& platform_id) {
  CheckSafeId(build_id, "build id");
  CheckSafeId(platform_id, "platform id");
  return root / build_id / platform_id;
}

std::filesystem::path ManifestPath(const std::filesystem::path& platform_dir) { return platform_dir / "manifest.json"; }
std::filesystem::path RunsDir(const std::filesystem::path& platform_dir) { return platform_dir / "runs"; }
std::filesystem::path RunPath(const std::filesystem::path& platform_dir, const RunKey& key) {
  return RunsDir(platform_dir) / (key.FileStem() + ".json");
}

std::string ProcessStem(const RunKey& key, int process, int processes) {
  return processes > 1 ? key.FileStem() + ".p" + std::to_string(process) : key.FileStem();
}
std::filesystem::path WorkDir(const std::filesystem::path& platform_dir) { return platform_dir / ".work"; }
std::filesystem::path LogsDir(const std::filesystem::path& platform_dir) { return platform_dir / "logs"; }
std::filesystem::path ProbeLogPath(const std::filesystem::path& platform_dir, int shard_index) {
  return LogsDir(platform_dir) /
         (shard_index < 0 ? std::string("probe.log") : "probe.shard-" + std::to_string(shard_index) + ".log");
}
std::filesystem::path TracesDir(const std::filesystem::path& platform_dir) { return platform_dir / "traces"; }
std::filesystem::path SpecPath(const std::filesystem::path& platform_dir, const std::string& process_stem) {
  return WorkDir(platform_dir) / (process_stem + ".spec.json");
}
std::filesystem::path PartResultPath(const std::filesystem::path& platform_dir, const std::string& process_stem) {
  return WorkDir(platform_dir) / (process_stem + ".result.json");
}
std::filesystem::path LogPath(const std::filesystem::path& platform_dir, const std::string& process_stem) {
  return LogsDir(platform_dir) / (process_stem + ".log");
}
std::filesystem::path TracePath(const std::filesystem::path& platform_dir, const RunKey& key) {
  return TracesDir(platform_dir) / (key.FileStem() + ".trace.json");
}

std::filesystem::path ProfilesDir(const std::filesystem::path& platform_dir) { return platform_dir / "profiles"; }
std::filesystem::path ProfilePath(const std::filesystem::path& platform_dir, const RunKey& key) {
  return ProfilesDir(platform_dir) / (key.FileStem() + ".callgrind.gz");
}
std::filesystem::path CallgrindOutPath(const std::filesystem::path& platform_dir, const std::string& process_stem) {
  return WorkDir(platform_dir) / (process_stem + ".callgrind");
}

std::filesystem::path BisectResultsRoot(const std::filesystem::path& work_dir) { return work_dir / "results"; }
std::filesystem::path BisectLogPath(const std::filesystem::path& work_dir) { return work_dir / "bisect.log"; }

}  // namespace torchgauge::core
