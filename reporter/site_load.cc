#include "reporter/site_load.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/json_io.h"
#include "core/layout.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace torchgauge::reporter {

std::vector<BuildRef> ScanBuilds(const fs::path& root) {
  std::vector<BuildRef> refs;
  for (const auto& id : ListBuildIds(root, nullptr)) {
    BuildRef ref{id, "", {}};
    std::error_code ec;
    for (fs::directory_iterator it(root / id, ec), end; !ec && it != end; it.increment(ec)) {
      std::string pid = it->path().filename().string();
      if (!core::IsSafeId(pid) || !it->is_directory(ec)) continue;
      try {
        fs::path mp = core::ManifestPath(it->path());
        Manifest m = ManifestFromJson(core::ReadJsonFile(mp), mp);
        if (m.build_id != id || m.platform_id != pid) continue;
        ref.platforms.insert(pid);
        if (ref.started_at.empty() || m.started_at < ref.started_at) ref.started_at = m.started_at;
      } catch (const std::exception&) {
        // Reported when the build is loaded.
      }
    }
    refs.push_back(ref);
  }
  std::sort(refs.begin(), refs.end(),
            [](const BuildRef& a, const BuildRef& b) { return BuildBefore(a.started_at, a.id, b.started_at, b.id); });
  return refs;
}

core::RunSet ToRunSet(const BuildResults& b, const PlatformResults& p, const fs::path& results) {
  core::RunSet set;
  set.build_id = b.id;
  set.platform_id = p.manifest.platform_id;
  try {
    set.manifest = core::ReadJsonFile(core::ManifestPath(core::PlatformDir(results, b.id, set.platform_id)));
  } catch (const std::exception&) {
    set.manifest = json::object();
  }
  for (const auto& r : p.runs) set.runs.insert_or_assign(core::RunKey{r.model.id, r.mode, r.backend, r.precision}, r);
  return set;
}

}  // namespace torchgauge::reporter
