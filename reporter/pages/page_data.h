// The data each page template renders (templates/*.mustache): the index, a
// build and a model page, built from the aggregated views (results/aggregate.h).
// Every value is formatted here (output/format.h) and every link computed by
// output/paths.h; the templates only lay them out. Figures are placed as the data
// is built (pages/figures.h), so building a page's data writes its specs.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/compare.h"
#include "reporter/output/mustache_fwd.h"
#include "reporter/output/paths.h"
#include "reporter/results/aggregate.h"

namespace torchgauge::reporter {

class Figures;
struct Pruned;

struct PageContext {
  const PaperTable2& paper;
  Figures& figures;
  std::filesystem::path results;  // problems show their files relative to it
  int trend_builds = 30;          // builds in a model page's trend chart (model_page_data.h)
};

// The build page (builds/<id>/index.md) for `page`. `base` prefixes every
// link: "" for the site's relative links, or the build directory's absolute
// URL for summary.md's twin. `cmp` is the comparison with earlier builds.
// `paper_kit`: the build's paper kit zip was written (site --paper-kit).
mu::data BuildPageData(const PageContext& ctx, const BuildView& v, const core::Comparison* cmp, const Target& page,
                       const std::string& base, bool paper_kit = false);
// `pruned`: builds the retention policy pruned (listed without links, and
// the page says what was pruned); null: none.
mu::data IndexPageData(const PageContext& ctx, const std::vector<BuildSummary>& history,
                       const Pruned* pruned = nullptr);

// What the comparison flagged, per platform, for the build summary and the index.
std::vector<FlaggedChanges> Flagged(const core::Comparison& c);
// A platform's verdict as the index and the build page print it: "regression
// found", "a run stopped working", "inconclusive: 12 of 12 runs noisy",
// "cannot tell: 6 of 6 runs too few samples" or "no regression".
std::string OutcomeText(const FlaggedChanges& f);

// "3 ok, 1 oom": a platform's status counts in core's order of statuses.
std::string StatusText(const std::map<std::string, int>& counts);

// Rows and sections the page builders share (page_data.cc).
mu::data RunRow(const core::RunResult& r, const std::string& model_href);
mu::data Table2Rows(const std::vector<DomainBreakdown>& rows, bool train, const PaperTable2& paper);
mu::data ProblemRows(const std::vector<Problem>& problems, const std::filesystem::path& root);
// Trust signals (trust_page_data.cc): the platform's measured peaks ("probed"
// false when the manifest has none), the % of peak summaries, a run row's
// "peak_pct" and noisy badge ("noisy", "noise_reason", "noisy_html"), the
// host breakdown's note and the per-platform noise warnings.
mu::data PeaksData(const Manifest& m);
mu::data PeakSummaryRows(const PlatformView& p, const PaperTable2& paper);
void SetPeakShare(mu::data& row, const core::RunResult& r, const Manifest& m);
void SetNoise(mu::data& row, const core::RunResult& r);
mu::data HostNoteData(const PlatformView& p);
mu::data NoiseWarnings(const BuildView& v);
// The build page's "Regressions and improvements" section (build_page_data.cc).
mu::data RegressionData(const core::Comparison& c, const std::string& build, const Target& page,
                        const std::string& base);

}  // namespace torchgauge::reporter
