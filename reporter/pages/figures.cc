#include "reporter/pages/figures.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "reporter/output/escape.h"
#include "reporter/output/mustache_data.h"
#include "reporter/output/writer.h"

namespace fs = std::filesystem;

namespace torchgauge::reporter {

namespace {
std::string EmbedHtml(const std::string& id, const std::string& title, const std::string& spec_text,
                      const std::string& svg_href) {
  // Built here, not in the template: the JSON must be escaped for <script>.
  return "<figure class=\"chart\"><div class=\"vega-chart\" data-spec=\"" + HtmlEscape(id) +
         "\" role=\"img\" aria-label=\"" + HtmlEscape(title) + "\"></div><script type=\"application/json\" id=\"" +
         HtmlEscape(id) + "\">" + JsonForScript(spec_text) + "</script><figcaption>" + HtmlEscape(title) +
         " · <a href=\"" + HtmlEscape(svg_href) + "\">SVG</a></figcaption></figure>";
}
}  // namespace

std::string DataChartHtml(const std::string& id, const std::string& source, const std::string& title,
                          const nlohmann::json& spec) {
  return "<figure class=\"chart\"><div class=\"vega-chart\" data-spec=\"" + HtmlEscape(id) + "\" data-source=\"" +
         HtmlEscape(source) + "\" role=\"img\" aria-label=\"" + HtmlEscape(title) +
         "\"></div><script type=\"application/json\" id=\"" + HtmlEscape(id) + "\">" +
         JsonForScript(spec.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) + "</script><figcaption>" +
         HtmlEscape(title) + "</figcaption></figure>";
}

void Figures::Queue(const Target& vl, const Target& svg, const std::string& text) {
  FigureJob job{w_.Abs(SitePath(vl)), w_.Abs(SitePath(svg))};
  bool changed = w_.Write(SitePath(vl), text + "\n");
  std::error_code e1, e2;
  auto svg_time = fs::last_write_time(job.svg, e1);
  bool svg_current = !changed && !e1 && svg_time >= fs::last_write_time(job.spec, e2) && !e2;
  if (!svg_current) {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
}

mu::data Figures::Place(const Target& page, const Target& figure, const nlohmann::json& spec, const std::string& title,
                        const std::string& link_base) {
  Target vl = figure, svg = figure;
  vl.ext = "vl.json";
  svg.ext = "svg";
  std::string text = spec.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    first = seen_.insert(SitePath(vl)).second;
  }
  if (first) Queue(vl, svg, text);
  mu::data d;
  Set(d, "title", title);
  Set(d, "svg", link_base + Href(page, svg));
  Set(d, "embed_html", EmbedHtml("spec-" + figure.name, title, text, Href(page, svg)));
  return d;
}

std::vector<FigureJob> Figures::jobs() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<FigureJob> out = jobs_;
  std::sort(out.begin(), out.end(), [](const FigureJob& a, const FigureJob& b) { return a.spec < b.spec; });
  return out;
}

size_t Figures::count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_.size();
}

}  // namespace torchgauge::reporter
