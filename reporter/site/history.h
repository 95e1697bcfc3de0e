// The comparison window of the site: while builds stream oldest first, the
// run sets of the recent builds are kept, so each build is compared with the
// builds before it (core::CompareWithHistory, the rules of
// `torchgauge-report compare`) without reading them again. A build is never
// compared with a later one, so a published comparison does not change.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/compare.h"
#include "reporter/results/build_refs.h"
#include "reporter/results/load.h"

namespace torchgauge::reporter {

class RecentRuns {
 public:
  RecentRuns(const core::TreeScan& scan, const core::CompareOptions& options, int threads,
             const std::vector<BuildRef>& refs);
  // Adds build `index` (refs[index]), loaded, and forgets the builds no later
  // comparison can reach.
  void Add(size_t index, const BuildResults& b);
  // Compares build `index` (already added) with the builds before it, per
  // platform; nullopt when no platform has an earlier build.
  std::optional<core::Comparison> Compare(size_t index);

 private:
  using Sets = std::map<std::string, core::RunSet>;  // by platform
  const core::RunSet* Get(size_t index, const std::string& platform);
  std::vector<const core::RunSet*> Baselines(size_t index, const std::string& platform);
  static const core::RunSet* Find(const Sets& m, const std::string& platform);

  const core::TreeScan& scan_;
  core::CompareOptions options_;
  int threads_;
  const std::vector<BuildRef>& refs_;
  size_t keep_;
  std::map<size_t, Sets> sets_, loaded_;
};

// The builds whose results build `i`'s pages read besides its own: the
// trend window (the trend_builds - 1 builds before it) and, when comparing,
// per platform the builds its comparison uses (window + persist - 1 earlier
// builds with that platform), as the model pages and RecentRuns pick them.
std::vector<size_t> Dependencies(const std::vector<BuildRef>& refs, size_t i, int trend_builds, bool compare,
                                 const core::CompareOptions& options);

}  // namespace torchgauge::reporter
