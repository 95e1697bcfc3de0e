// Renders the site's pages from the Mustache templates (templates/): each
// page once as GitHub Markdown and, from the same template and data, once as
// HTML inside the layout. A Renderer is not thread-safe (a compiled template
// keeps render state); each thread that renders pages has its own.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "reporter/output/mustache_fwd.h"
#include "reporter/output/paths.h"

namespace torchgauge::reporter {

class SiteWriter;

// The template texts, read once per site render.
struct Templates {
  std::string layout, index, build, model, chart, regressions, models, compare, table1, alert;
  static Templates Load(const std::filesystem::path& dir);
};

enum class PageKind { kIndex, kBuild, kModel, kRegressions, kModelGrid, kCompare, kTable1, kAlert };

class Renderer {
 public:
  // Throws std::runtime_error on a template syntax error.
  explicit Renderer(const Templates& t);
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  // Writes one page as Markdown (`md`) and as HTML (`html`); the Markdown
  // text is also returned through `md_out` when given.
  void Page(SiteWriter& w, PageKind kind, mu::data& data, const Target& md, const Target& html,
            const std::string& title, std::string* md_out = nullptr);
  // Writes the page as HTML only. Its header links `twin` (a Markdown file
  // beside it, such as the build's summary.md) as `twin_label`, or nothing
  // when `twin` is null. The page's Markdown is still rendered and returned
  // through `md_out` when given.
  void HtmlPage(SiteWriter& w, PageKind kind, mu::data& data, const Target& html, const std::string& title,
                const Target* twin, const std::string& twin_label, std::string* md_out = nullptr);
  // The page's Markdown only, not written (summary.md's absolute-link twin).
  std::string Markdown(PageKind kind, mu::data& data);

 private:
  void Html(SiteWriter& w, PageKind kind, mu::data& data, const Target& html, const std::string& title,
            const Target* twin, const std::string& twin_label);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The templates link pages by their Markdown twins; in an HTML page, a
// relative link to a .md page must lead to the .html page instead.
std::string HtmlLinks(const std::string& body);

}  // namespace torchgauge::reporter
