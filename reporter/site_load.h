// What the site reads of the results tree besides reporter/load.h: the list
// of builds in render order (from the manifests alone, before any result is
// loaded) and a loaded platform as the comparison reads it.
// Kept apart so the site can move to core/results_tree with a local change.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/compare.h"
#include "reporter/load.h"

namespace torchgauge::reporter {

struct BuildRef {
  std::string id, started_at;
  std::set<std::string> platforms;  // with a readable manifest of this build
};

// Every build under `root`, oldest first (BuildBefore). Reads only the
// manifests; an unreadable one is reported when the build is loaded.
std::vector<BuildRef> ScanBuilds(const std::filesystem::path& root);

// One platform's loaded results as the comparison reads them. Unreadable
// files were skipped by the loader, so a comparison sees what the page shows.
core::RunSet ToRunSet(const BuildResults& b, const PlatformResults& p, const std::filesystem::path& results);

}  // namespace torchgauge::reporter
