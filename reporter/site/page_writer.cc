#include "reporter/site/page_writer.h"

#include "reporter/compare/browser_page.h"

#include <nlohmann/json.hpp>

#include "reporter/compare/report.h"
#include "reporter/output/markdown.h"
#include "reporter/output/mustache_data.h"
#include "reporter/output/parallel.h"
#include "reporter/output/writer.h"
#include "reporter/pages/model_page_data.h"
#include "reporter/paper/build_tables.h"
#include "reporter/paper/table1_page.h"

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
  std::string full = Href(file, {Kind::kBuildPage, v.id, "", "html"});  // the build page beside it
  if (!o_.site_url.empty()) {
    const std::string page_url = SiteUrl(o_.site_url, md);
    const std::string base = page_url.substr(0, page_url.rfind('/') + 1);
    mu::data d = BuildPageData(ctx_, v, cmp, md, base, paper_kit);
    summary = r_.Markdown(PageKind::kBuild, d);
    full = base + Href(md, {Kind::kBuildPage, v.id, "", "html"});
  }
  w_.Write(SitePath(file), TruncateMarkdown(summary, kGitHubCommentLimit, full));
}

// models/<model>.html for every model in the history, and the history
// files their trends draw from (pages/model_page_data.h). Rewritten with every
// render; only the files whose bytes changed are written.
void PageWriter::WriteModelPages(const std::vector<BuildSummary>& history, const Pruned* pruned) {
  w_.Write(SitePath({Kind::kHistory, "", "builds", ""}),
           DataScript(HistoryKey("builds"), HistoryBuildsData(history, pruned)));
  std::map<std::string, ModelHistory> models = ModelHistories(history);
  std::vector<const std::pair<const std::string, ModelHistory>*> list;
  for (const auto& m : models) list.push_back(&m);
  const int threads = ThreadCount(o_.threads, list.size());
  while (static_cast<int>(extra_renderers_.size()) < threads - 1) {
    extra_renderers_.push_back(std::make_unique<Renderer>(t_));
  }
  ParallelFor(list.size(), threads, [&](size_t i, int worker) {
    const auto& [model, h] = *list[i];
    w_.Write(SitePath({Kind::kHistory, "", model, ""}), DataScript(HistoryKey(model), ToJson(h)));
    Renderer& r = worker == 0 ? r_ : *extra_renderers_[worker - 1];
    mu::data d = ModelPageData(ctx_, model, h);
    r.HtmlPage(w_, PageKind::kModel, d, {Kind::kModelPage, "", model, "html"}, model + " · TorchGauge", nullptr, "");
  });
}

void PageWriter::WriteBuild(const BuildView& v, const core::Comparison* cmp, bool paper_kit) {
  // The build page is HTML only: its Markdown form is summary.md, the page
  // an issue links (docs/site.md, "Which pages have a Markdown twin").
  Target md{Kind::kBuildPage, v.id, "", "md"}, html{Kind::kBuildPage, v.id, "", "html"};
  if (cmp) WriteCompareReport(*cmp, v.id);
  mu::data d = BuildPageData(ctx_, v, cmp, md, "", paper_kit);
  std::string markdown;
  const Target summary{Kind::kBuildSummary, v.id, "", ""};
  r_.HtmlPage(w_, PageKind::kBuild, d, html, "Build " + v.id + " · TorchGauge", &summary, "Markdown summary",
              &markdown);
  WriteSummary(v, cmp, markdown, paper_kit);
  WriteTables(w_, v, ctx_.paper);
  mu::data t1 = Table1PageData(v, core::EmbeddedPaperTable1(), ctx_.paper);
  r_.Page(w_, PageKind::kTable1, t1, {Kind::kTable1Page, v.id, "", "md"}, {Kind::kTable1Page, v.id, "", "html"},
          "Table 1 coverage · build " + v.id + " · TorchGauge");
  w_.Write(SitePath({Kind::kBuildData, v.id, "models", ""}), DataScript(BuildModelsKey(v.id), BuildModelsData(v)));
  w_.Write(SitePath({Kind::kBuildData, v.id, "compare", ""}), DataScript(BuildCompareKey(v.id), BuildCompareData(v)));
}

void PageWriter::WriteIndex(const std::vector<BuildSummary>& history, const Pruned* pruned) {
  mu::data d = IndexPageData(ctx_, history, pruned);
  r_.Page(w_, PageKind::kIndex, d, {Kind::kIndexPage, "", "", "md"}, {Kind::kIndexPage, "", "", "html"},
          "TorchGauge results");
}

}  // namespace torchgauge::reporter
