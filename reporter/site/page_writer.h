// Writes the pages of the site: per build its page (Markdown and HTML), its
// summary.md for GitHub issues, its comparison report, its tables, its model
// pages and its runs.json; and the index. Page data comes from pages/page_data.h,
// rendering from output/render.h, every path from output/paths.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/analysis/compare.h"
#include "reporter/output/render.h"
#include "reporter/pages/page_data.h"
#include "reporter/results/aggregate.h"
#include "reporter/alerts/regressions.h"
#include "reporter/site/options.h"

namespace torchgauge::reporter {

class SiteWriter;
struct Pruned;

class PageWriter {
 public:
  PageWriter(const SiteOptions& o, SiteWriter& w, const Templates& t, Figures& figures, const PaperTable2& paper);
  ~PageWriter();

  // `cmp`: the comparison with earlier builds (null: none). `paper_kit`:
  // the build's paper kit zip was written; the page links it.
  void WriteBuild(const BuildView& v, const core::Comparison* cmp, bool paper_kit = false);
  // models/<model>.html and the history/ data files, from every build's
  // summary, oldest first (pages/model_page_data.h).
  void WriteModelPages(const std::vector<BuildSummary>& history, const Pruned* pruned = nullptr);
  // `pruned`: the builds the retention policy pruned (site/retention.h),
  // listed without links; null: none.
  void WriteIndex(const std::vector<BuildSummary>& history, const Pruned* pruned = nullptr);
  // regressions.{md,html,atom} and models.{md,html} (reader_pages.cc), from
  // every build's summary and cached flagged changes, oldest first. Returns
  // what is wrong with <results>/triage.json (empty: nothing): a malformed
  // file does not stop the render, which applies the last good triage.
  std::string WriteReaderPages(const std::vector<BuildSummary>& history, const std::vector<BuildChanges>& changes,
                               const Pruned* pruned = nullptr);

 private:
  void WriteCompareReport(const core::Comparison& cmp, const std::string& build);
  void WriteSummary(const BuildView& v, const core::Comparison* cmp, const std::string& markdown, bool paper_kit);

  const SiteOptions& o_;
  SiteWriter& w_;
  const Templates& t_;
  PageContext ctx_;
  Renderer r_;
  std::vector<std::unique_ptr<Renderer>> extra_renderers_;  // one per model-page thread beyond the first
};

}  // namespace torchgauge::reporter
