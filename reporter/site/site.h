// Stage 3 of the pipeline and its driver: render a results tree into a static
// site (see output/paths.h for the layout). Builds are streamed oldest first, so
// memory holds one build's results at a time and each build's trend charts
// see exactly the builds up to it: a published snapshot does not change when
// later builds arrive. Only the builds selected are written; the others are
// read from their cached summaries (builds/<id>/data/summary.json) for the
// index and trends, and their files are left untouched. Files are written only
// when their bytes change, so re-rendering the same inputs is a no-op on disk.
// Each build is compared with the builds before it only, so that too is fixed
// once published. A retention policy (max_builds, since; site/retention.h)
// deletes the older snapshots but keeps them in every history page.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "reporter/results/load.h"
#include "reporter/site/options.h"

namespace torchgauge::reporter {

struct SiteReport {
  int builds_rendered = 0;
  int builds_unchanged = 0;   // skipped: fingerprint unchanged
  int builds_pruned = 0;      // under the retention policy: no pages, history only
  int snapshots_deleted = 0;  // pruned builds whose builds/<id>/ this render deleted
  int pruned_reloaded = 0;    // pruned builds whose summary had to be made from their results
  size_t files_written = 0, files_unchanged = 0, bytes = 0;
  size_t figures = 0, svg_rendered = 0;
  std::vector<Problem> problems;     // skipped inputs (warnings)
  std::vector<std::string> skipped;  // outputs not produced, with why
  // What is wrong with <results>/triage.json (empty: nothing). The site was
  // rendered with the triage of the last render that read it whole; `build`
  // exits kExitTriageMalformed after writing everything.
  std::string triage_problem;
  std::filesystem::path index;
};

// Throws StrictError (strict mode), std::runtime_error for unusable options.
SiteReport BuildSite(const SiteOptions& options);

}  // namespace torchgauge::reporter
