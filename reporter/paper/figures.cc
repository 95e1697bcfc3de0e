#include "reporter/paper/figures.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/contract/vocabulary.h"
#include "reporter/output/vega_lite.h"

using nlohmann::json;

namespace torchgauge::reporter {

namespace {

// Room for the x axis, its title and a one-line legend on top, beside the
// rows; the breakdown's legend takes three lines.
inline constexpr double kOverheadPt = 55;
inline constexpr double kBreakdownOverheadPt = 80;
// A row holds an 8 pt label: at least 10 pt apart; 16 pt when labels wrap
// onto two lines (PaperModelAxis).
inline constexpr double kRowPt = 10;
double RowPt(const PaperLabelAxis& a) { return a.lines > 1 ? 1.6 * kRowPt : kRowPt; }
json ModelY(const json& order, const PaperLabelAxis& a) {
  json y = {{"field", "model"}, {"type", "nominal"}, {"sort", order}, {"title", nullptr}};
  if (!a.axis.empty()) y["axis"] = a.axis;
  return y;
}

double Round(double v, double scale) { return std::round(v * scale) / scale; }

std::string Capitalized(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

json Series(size_t n, const char* const* values) {
  json a = json::array();
  for (size_t i = 0; i < n; ++i) a.push_back(values[i]);
  return a;
}

// The x axis of a ratio figure: log scale, as in the paper's Figures 3-5,
// over the points and 1, with ticks at 1, 2 and 5 times the powers of ten
// (Vega's own log ticks crowd a narrow column).
json LogRatioAxis(const std::string& title, const json& values) {
  double lo = 1, hi = 1;
  for (const auto& v : values) {
    lo = std::min(lo, v["ratio"].get<double>());
    hi = std::max(hi, v["ratio"].get<double>());
  }
  lo /= 1.15;
  hi *= 1.15;
  json ticks = json::array();
  for (double decade = std::pow(10.0, std::floor(std::log10(lo))); decade <= hi; decade *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (m * decade >= lo && m * decade <= hi) ticks.push_back(Round(m * decade, 1e6));
    }
  }
  return {{"field", "ratio"},
          {"type", "quantitative"},
          {"title", title},
          {"scale", {{"type", "log"}, {"domain", {lo, hi}}, {"nice", false}}},
          {"axis", {{"values", ticks}, {"format", "~g"}, {"labelOverlap", "greedy"}, {"labelFlush", true}}}};
}

json RuleAtOne() {
  return {{"mark", {{"type", "rule"}, {"color", "#000000"}, {"strokeDash", {3, 2}}, {"strokeWidth", 0.75}}},
          {"encoding", {{"x", {{"datum", 1}, {"type", "quantitative"}}}}}};
}

// Colour and shape by `field` over `domain`: the series' n-th colour and shape.
json SeriesEncoding(const std::string& field, const json& domain, const std::string& title) {
  json legend = {{"orient", "top"}, {"title", title.empty() ? json(nullptr) : json(title)}, {"labelLimit", 400}};
  json colour = {{"field", field},
                 {"type", "nominal"},
                 {"legend", legend},
                 {"scale", {{"domain", domain}, {"range", Series(domain.size(), kPaperSeriesColors)}}}};
  json shape = colour;
  shape["scale"]["range"] = Series(domain.size(), kPaperSeriesShapes);
  return {{"color", colour}, {"shape", shape}};
}

}  // namespace

json PaperBreakdownFigure(const std::vector<BreakdownBar>& bars, BreakdownSource source, PaperWidth width) {
  const BreakdownPartNames names = PartNames(source);
  const json parts = {Capitalized(names.first), Capitalized(names.second), Capitalized(names.third)};
  json values = json::array(), order = json::array();
  for (const auto& b : bars) {
    order.push_back(b.label);
    const double shares[] = {b.active, b.movement, b.idle};
    for (int i = 0; i < 3; ++i) {
      values.push_back({{"model", b.label}, {"part", parts[i]}, {"k", i}, {"share", Round(shares[i] * 100, 10)}});
    }
  }
  json spec = {{"$schema", kVegaLiteSchema}, {"data", {{"values", values}}}};
  spec["mark"] = {{"type", "bar"}, {"stroke", "#000000"}, {"strokeWidth", 0.25}};
  const PaperLabelAxis axis = PaperModelAxis(order, width);
  spec["encoding"] = {
      {"y", ModelY(order, axis)},
      {"x",
       {{"field", "share"},
        {"type", "quantitative"},
        {"stack", "normalize"},
        {"title", "Share of step time"},
        {"axis", {{"format", ".0%"}}}}},
      {"color",
       {{"field", "part"},
        {"type", "nominal"},
        {"title", nullptr},
        {"scale", {{"domain", parts}, {"range", {kPaperFirstColor, kPaperSecondColor, kPaperThirdColor}}}},
        // One entry a line: a top legend starts where the plot does, right of the model names.
        {"legend", {{"orient", "top"}, {"direction", "vertical"}}}}},
      {"order", {{"field", "k"}, {"type", "quantitative"}}}};
  ApplyPaperTheme(spec, width, kBreakdownOverheadPt + RowPt(axis) * static_cast<double>(bars.size()));
  return spec;
}

namespace {
// "resnet50", with the precision and backend where the ratios hold more than one.
std::vector<std::string> CompilerLabels(const std::vector<const BackendRatio*>& rows) {
  std::set<std::string> precisions, backends;
  for (const auto* r : rows) {
    precisions.insert(r->precision);
    backends.insert(r->backend);
  }
  std::vector<std::string> labels;
  for (const auto* r : rows) {
    std::string l = r->model;
    if (precisions.size() > 1) l += " (" + r->precision + ")";
    if (backends.size() > 1) l += ", " + r->backend;
    labels.push_back(l);
  }
  return labels;
}
}  // namespace

json PaperCompilerFigure(const std::vector<BackendRatio>& ratios, PaperWidth width) {
  static const char* kMetrics[] = {"T", "CM", "GM"};
  std::vector<const BackendRatio*> rows;
  for (const auto& r : ratios) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) { return a->ratio < b->ratio; });
  const std::vector<std::string> labels = CompilerLabels(rows);
  json values = json::array(), order = json::array(), present = json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (std::find(order.begin(), order.end(), labels[i]) == order.end()) order.push_back(labels[i]);
    const std::optional<double> v[] = {rows[i]->ratio, rows[i]->cpu_memory_ratio, rows[i]->gpu_memory_ratio};
    for (int m = 0; m < 3; ++m) {
      if (!v[m] || *v[m] <= 0) continue;  // not measured: no point, never a 0
      values.push_back({{"model", labels[i]}, {"metric", kMetrics[m]}, {"ratio", Round(*v[m], 1e4)}});
      if (std::find(present.begin(), present.end(), kMetrics[m]) == present.end()) present.push_back(kMetrics[m]);
    }
  }
  // Keep T, CM, GM in that order (and the colours/shapes with them).
  json metrics = json::array();
  for (const char* m : kMetrics) {
    if (std::find(present.begin(), present.end(), m) != present.end()) metrics.push_back(m);
  }
  json enc = SeriesEncoding("metric", metrics, "");
  const PaperLabelAxis axis = PaperModelAxis(order, width);
  enc["y"] = ModelY(order, axis);
  enc["x"] = LogRatioAxis("Backend / eager (log scale)", values);
  enc["yOffset"] = {{"field", "metric"}, {"scale", {{"domain", metrics}}}};
  json points = {{"mark", {{"type", "point"}, {"filled", true}, {"size", 14}, {"opacity", 1}}}, {"encoding", enc}};
  json spec = {{"$schema", kVegaLiteSchema}, {"data", {{"values", values}}}, {"layer", {points, RuleAtOne()}}};
  ApplyPaperTheme(spec, width, kOverheadPt + 1.2 * RowPt(axis) * static_cast<double>(order.size()));
  return spec;
}

json PaperRatioFigure(const PlatformRatios& p, PaperWidth width) {
  const std::vector<std::string> labels = RatioRowLabels(p.rows);
  std::map<std::string, double> lowest;  // label -> its smallest ratio, for the order
  json values = json::array();
  bool any_differs = false;
  for (size_t i = 0; i < p.rows.size(); ++i) {
    const RatioRow& r = p.rows[i];
    if (!r.ratio) continue;  // not measured on one side: no point, never a 0
    const bool differs = r.precision_check == PrecisionCheck::kDiffers;
    any_differs = any_differs || differs;
    values.push_back({{"model", labels[i]},
                      {"mode", r.mode},
                      {"ratio", Round(*r.ratio, 1e4)},
                      {"differs", differs ? "effective precisions differ" : ""}});
    auto [it, fresh] = lowest.emplace(labels[i], *r.ratio);
    if (!fresh) it->second = std::min(it->second, *r.ratio);
  }
  std::vector<std::pair<double, std::string>> by_ratio;
  for (const auto& [label, v] : lowest) by_ratio.push_back({v, label});
  std::sort(by_ratio.begin(), by_ratio.end());
  json order = json::array();
  for (const auto& [v, label] : by_ratio) order.push_back(label);
  const json modes = core::kModes;
  json enc = SeriesEncoding("mode", modes, "");
  const PaperLabelAxis axis = PaperModelAxis(order, width);
  enc["y"] = ModelY(order, axis);
  enc["x"] = LogRatioAxis("Time ratio (log scale)", values);  // the caption names the platforms
  enc["yOffset"] = {{"field", "mode"}, {"scale", {{"domain", modes}}}};
  json layers =
      json::array({{{"mark", {{"type", "point"}, {"filled", true}, {"size", 14}, {"opacity", 1}}}, {"encoding", enc}}});
  if (any_differs) {
    json ring = {{"y", enc["y"]},
                 {"x", enc["x"]},
                 {"yOffset", enc["yOffset"]},
                 {"stroke",
                  {{"field", "differs"},
                   {"type", "nominal"},
                   {"title", nullptr},
                   {"scale", {{"range", {"#000000"}}}},
                   {"legend", nullptr}}}};  // the caption explains it
    layers.push_back({{"transform", {{{"filter", "datum.differs != ''"}}}},
                      {"mark", {{"type", "point"}, {"filled", false}, {"size", 60}, {"strokeWidth", 0.75}}},
                      {"encoding", ring}});
  }
  layers.push_back(RuleAtOne());
  json spec = {{"$schema", kVegaLiteSchema}, {"data", {{"values", values}}}, {"layer", layers}};
  ApplyPaperTheme(spec, width, kOverheadPt + 1.1 * RowPt(axis) * static_cast<double>(order.size()));
  return spec;
}

}  // namespace torchgauge::reporter
