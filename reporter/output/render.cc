#include "reporter/output/render.h"

#include <stdexcept>

#include "reporter/output/escape.h"
#include "reporter/output/markdown.h"
#include "reporter/output/mustache_data.h"
#include "reporter/output/writer.h"

namespace fs = std::filesystem;

namespace torchgauge::reporter {

Templates Templates::Load(const fs::path& dir) {
  Templates t;
  t.layout = ReadText(dir / "layout.html.mustache");
  t.index = ReadText(dir / "index.md.mustache");
  t.build = ReadText(dir / "build.md.mustache");
  t.model = ReadText(dir / "model.md.mustache");
  t.chart = ReadText(dir / "chart.mustache");
  t.regressions = ReadText(dir / "regressions.md.mustache");
  t.models = ReadText(dir / "models.md.mustache");
  t.compare = ReadText(dir / "compare.md.mustache");
  t.table1 = ReadText(dir / "table1.md.mustache");
  t.alert = ReadText(dir / "alert.md.mustache");
  return t;
}

struct Renderer::Impl {
  explicit Impl(const Templates& t)
      : chart_partial(t.chart),
        layout(t.layout),
        index(t.index),
        build(t.build),
        model(t.model),
        regressions(t.regressions),
        models(t.models),
        compare(t.compare),
        table1(t.table1),
        alert(t.alert) {}
  mu::mustache& Of(PageKind kind) {
    switch (kind) {
      case PageKind::kIndex:
        return index;
      case PageKind::kBuild:
        return build;
      case PageKind::kModel:
        return model;
      case PageKind::kRegressions:
        return regressions;
      case PageKind::kModelGrid:
        return models;
      case PageKind::kCompare:
        return compare;
      case PageKind::kTable1:
        return table1;
      case PageKind::kAlert:
        return alert;
    }
    throw std::logic_error("unknown page kind");
  }
  // The page body as Markdown; `html` selects the template's HTML variant.
  std::string Body(PageKind kind, mu::data& data, bool html) {
    std::string partial = chart_partial;
    Set(data, "chart", mu::data(mu::partial([partial] { return partial; })));
    Set(data, "html", html);
    mu::mustache& tmpl = Of(kind);
    std::string text = tmpl.render(data);
    if (!tmpl.is_valid()) throw std::runtime_error("template error: " + tmpl.error_message());
    return text;
  }
  std::string chart_partial;
  mu::mustache layout, index, build, model, regressions, models, compare, table1, alert;
};

Renderer::Renderer(const Templates& t) : impl_(std::make_unique<Impl>(t)) {
  for (auto* m : {&impl_->index, &impl_->build, &impl_->model, &impl_->regressions, &impl_->models, &impl_->compare,
                  &impl_->table1, &impl_->alert}) {
    m->set_custom_escape([](const std::string& s) { return MarkdownEscape(s); });
  }
  impl_->layout.set_custom_escape([](const std::string& s) { return HtmlEscape(s); });
  for (auto* m : {&impl_->layout, &impl_->index, &impl_->build, &impl_->model, &impl_->regressions, &impl_->models,
                  &impl_->compare, &impl_->table1, &impl_->alert}) {
    if (!m->is_valid()) throw std::runtime_error("template error: " + m->error_message());
  }
}

Renderer::~Renderer() = default;

void Renderer::Page(SiteWriter& w, PageKind kind, mu::data& data, const Target& md, const Target& html,
                    const std::string& title, std::string* md_out) {
  std::string markdown = impl_->Body(kind, data, false);
  w.Write(SitePath(md), markdown);
  if (md_out) *md_out = std::move(markdown);
  Html(w, kind, data, html, title, &md, "Markdown version");
}

void Renderer::HtmlPage(SiteWriter& w, PageKind kind, mu::data& data, const Target& html, const std::string& title,
                        const Target* twin, const std::string& twin_label, std::string* md_out) {
  if (md_out) *md_out = impl_->Body(kind, data, false);
  Html(w, kind, data, html, title, twin, twin_label);
}

void Renderer::Html(SiteWriter& w, PageKind kind, mu::data& data, const Target& html, const std::string& title,
                    const Target* twin, const std::string& twin_label) {
  std::string body = HtmlLinks(MarkdownToHtml(impl_->Body(kind, data, true)));
  mu::data page;
  Set(page, "title", title);
  Set(page, "body", body);
  Set(page, "css", Href(html, {Kind::kAsset, "", "torchgauge.css", ""}));
  Set(page, "bundle", Href(html, {Kind::kAsset, "", "vega-bundle.js", ""}));
  Set(page, "js", Href(html, {Kind::kAsset, "", "torchgauge.js", ""}));
  Set(page, "home", Href(html, {Kind::kIndexPage, "", "", "html"}));
  if (twin) {
    Set(page, "markdown", Href(html, *twin));
    Set(page, "twin_label", twin_label);
  }
  w.Write(SitePath(html), impl_->layout.render(page));
}

std::string Renderer::Markdown(PageKind kind, mu::data& data) { return impl_->Body(kind, data, false); }

std::string HtmlLinks(const std::string& body) {
  // summary.md is Markdown for pasting into an issue and has no HTML twin:
  // its link stays as it is.
  const std::string summary = SitePath({Kind::kBuildSummary, "b", "", ""});
  const std::string no_twin = summary.substr(summary.rfind('/') + 1);
  std::string out;
  out.reserve(body.size());
  const std::string open = "href=\"";
  size_t pos = 0;
  for (;;) {
    size_t at = body.find(open, pos);
    if (at == std::string::npos) break;
    size_t start = at + open.size();
    size_t end = body.find('"', start);
    if (end == std::string::npos) break;
    std::string url = body.substr(start, end - start);
    size_t hash = url.find('#');
    std::string path = url.substr(0, hash);
    const std::string file = path.substr(path.rfind('/') + 1);
    if (url.find(':') == std::string::npos && path.size() > 3 && path.compare(path.size() - 3, 3, ".md") == 0 &&
        file != no_twin) {
      url = path.substr(0, path.size() - 3) + ".html" + (hash == std::string::npos ? "" : url.substr(hash));
    }
    out.append(body, pos, start - pos);
    out += url;
    pos = end;
  }
  out.append(body, pos, std::string::npos);
  return out;
}

}  // namespace torchgauge::reporter
