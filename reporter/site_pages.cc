#include "reporter/site_pages.h"

#include <nlohmann/json.hpp>

#include "reporter/compare_report.h"
#include "reporter/markdown.h"
#include "reporter/mustache_data.h"
#include "reporter/parallel.h"
#include "reporter/site_tables.h"
#include "reporter/site_writer.h"

using nlohmann::json;

namespace torchgauge::reporter {

PageWriter::PageWriter(const SiteOptions& o, SiteWriter& w, const Templates& t, Figures& figures,
                       const PaperTable2& paper)
    : o_(o), w_(w), t_(t), ctx_{paper, figures, o.results, o.trend_builds}, r_(t) {}

PageWriter::~PageWriter() = default;

// The full comparison report, as `torchgauge-report compare --html` writes
// it; model links are relative unless the site has a public URL.
void PageWriter::WriteCompareReport(const core::Comparison& cmp, const std::string& build) {
  ReportOptions ro;
  ro.site_url = o_.site_url;
  Target html{Kind::kComparePage, build, "", "html"}, md{Kind::kComparePage, build, "", "md"};
  ro.page = html;
  w_.Write(SitePath(html), RenderCompareHtml(cmp, ro));
  ro.page = md;
  w_.Write(SitePath(md), RenderCompareMarkdown(cmp, ro));
}

// summary.md: the build page for pasting into a GitHub issue, under the
// comment limit; with --site-url its links are absolute.
void PageWriter::WriteSummary(const BuildView& v, const core::Comparison* cmp, const std::string& markdown,
                              bool paper_kit) {
  Target md{Kind::kBuildPage, v.id, "", "md"};
  std::string summary = markdown;
  const Target file{Kind::kBuildSummary, v.id, "", ""};
  std::string full = Href(file, md);  // the build page beside it
  if (!o_.site_url.empty()) {
    const std::string page_url = SiteUrl(o_.site_url, md);
    const std::string base = page_url.substr(0, page_url.rfind('/') + 1);
    mu::data d = BuildPageData(ctx_, v, cmp, md, base, paper_kit);
    summary = r_.Markdown(PageKind::kBuild, d);
    full = base + Href(md, {Kind::kBuildPage, v.id, "", "html"});
  }
  w_.Write(SitePath(file), TruncateMarkdown(summary, kGitHubCommentLimit, full));
}

// Model pages are independent: they are rendered on up to o_.threads
// threads (0: every core), each with its own Renderer, kept for the next
// build. Output bytes do not depend on the thread count.
void PageWriter::WriteModels(const BuildView& v, const std::vector<BuildSummary>& history) {
  const int threads = ThreadCount(o_.threads, v.models.size());
  while (static_cast<int>(extra_renderers_.size()) < threads - 1) {
    extra_renderers_.push_back(std::make_unique<Renderer>(t_));
  }
  ParallelFor(v.models.size(), threads, [&](size_t i, int worker) {
    const std::string& model = v.models[i];
    Renderer& r = worker == 0 ? r_ : *extra_renderers_[worker - 1];
    mu::data d = ModelPageData(ctx_, v, model, history);
    r.Page(w_, PageKind::kModel, d, {Kind::kModelPage, v.id, model, "md"}, {Kind::kModelPage, v.id, model, "html"},
           model + " · " + v.id + " · TorchGauge");
  });
}

// The data the tables show, for scripts.
void PageWriter::WriteRunsJson(const BuildView& v) {
  json runs = json::array();
  for (const auto& p : v.platforms) {
    for (const auto* r : p.runs) {
      json row = {{"platform", p.id}, {"model", r->model.id}, {"domain", r->model.domain}, {"mode", r->mode},
                  {"backend", r->backend}, {"precision", r->precision}, {"batch_size", r->batch_size},
                  {"status", r->status}};
      if (r->timing) row["median_ms"] = r->timing->median_ms;
      if (r->gpu_breakdown) {
        row["gpu_active_fraction"] = r->gpu_breakdown->active_fraction;
        row["data_movement_fraction"] = r->gpu_breakdown->data_movement_fraction;
        row["gpu_idle_fraction"] = r->gpu_breakdown->idle_fraction;
      }
      runs.push_back(row);
    }
  }
  w_.Write(SitePath({Kind::kData, v.id, "runs", ""}), runs.dump(1, ' ', false, json::error_handler_t::replace) + "\n");
}

void PageWriter::WriteBuild(const BuildView& v, const core::Comparison* cmp, const std::vector<BuildSummary>& history,
                            bool paper_kit) {
  Target md{Kind::kBuildPage, v.id, "", "md"}, html{Kind::kBuildPage, v.id, "", "html"};
  if (cmp) WriteCompareReport(*cmp, v.id);
  mu::data d = BuildPageData(ctx_, v, cmp, md, "", paper_kit);
  std::string markdown;
  r_.Page(w_, PageKind::kBuild, d, md, html, "Build " + v.id + " · TorchGauge", &markdown);
  WriteSummary(v, cmp, markdown, paper_kit);
  WriteTables(w_, v, ctx_.paper);
  WriteModels(v, history);
  WriteRunsJson(v);
}

void PageWriter::WriteIndex(const std::vector<BuildSummary>& history, const Pruned* pruned) {
  mu::data d = IndexPageData(ctx_, history, pruned);
  r_.Page(w_, PageKind::kIndex, d, {Kind::kIndexPage, "", "", "md"}, {Kind::kIndexPage, "", "", "html"},
          "TorchGauge results");
}

}  // namespace torchgauge::reporter
