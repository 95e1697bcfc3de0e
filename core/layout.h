// The results layout, computed in one place:
//   <root>/<build-id>/<platform-id>/manifest.json
//   <root>/<build-id>/<platform-id>/runs/<model>.<mode>.<backend>.<precision>.json
// Ids are validated against a safe character set so that no id can escape
// the results or site directory.
#pragma once

#include <filesystem>
#include <string>

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

}  // namespace torchgauge::core
