// Places the site's figures: writes each Vega-Lite spec once, queues the SVG
// that vl-convert must make from it, and gives the page the data that shows
// the chart (embedded for HTML, an SVG image for Markdown). Thread-safe:
// model pages place their charts from several threads.
#pragma once

#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "reporter/output/mustache_fwd.h"
#include "reporter/output/paths.h"

namespace torchgauge::reporter {

class SiteWriter;

struct FigureJob {
  std::filesystem::path spec, svg;
};

// A chart whose data the page's script supplies (site/torchgauge.js): the
// spec, with empty data, sits in the page, and `source` names the data set
// the script fills in. No spec file and no SVG: such charts live only in
// the HTML pages that load their data.
std::string DataChartHtml(const std::string& id, const std::string& source, const std::string& title,
                          const nlohmann::json& spec);

class Figures {
 public:
  explicit Figures(SiteWriter& w) : w_(w) {}
  // Writes the spec file, queues its SVG unless an SVG newer than an
  // unchanged spec exists, and returns the template data that places the
  // chart on `page`. `link_base` prefixes the links (summary.md's absolute
  // twin); the embedded spec is the same either way.
  mu::data Place(const Target& page, const Target& figure, const nlohmann::json& spec, const std::string& title,
                 const std::string& link_base = "");
  // The SVGs to make, sorted so the helper's order does not depend on thread timing.
  std::vector<FigureJob> jobs() const;
  // Distinct figures placed.
  size_t count() const;

 private:
  void Queue(const Target& vl, const Target& svg, const std::string& text);

  SiteWriter& w_;
  mutable std::mutex mu_;
  std::vector<FigureJob> jobs_;
  std::set<std::string> seen_;
};

}  // namespace torchgauge::reporter
