#include "reporter/pages/charts.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "core/contract/vocabulary.h"

using nlohmann::json;

namespace torchgauge::reporter {

namespace {
const json kCategoryPalette = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"};

json Base(const std::string& title) {
  return {{"$schema", kVegaLiteSchema},
          {"title", {{"text", title}, {"anchor", "start"}}},
          {"config",
           {{"font", "sans-serif"},
            {"axis", {{"labelFontSize", 11}, {"titleFontSize", 12}, {"labelLimit", 0}, {"titleLimit", 0}}},
            // No label is ever cut to "…": a reader must tell every series apart.
            {"legend", {{"labelFontSize", 11}, {"labelLimit", 0}, {"titleLimit", 0}}},
            {"view", {{"stroke", nullptr}}}}},
          {"background", "white"}};
}
double Round(double v, double scale) { return std::round(v * scale) / scale; }

// Sets the spec's data to `rows` (objects with the same fields), stored by
// column: one object of parallel arrays, flattened back into rows by the
// spec's first transform. A field's name is written once, not once per row,
// which halves a chart of many marks (every build page inlines its figures).
void SetRows(json& spec, json rows) {
  if (rows.empty()) {
    spec["data"] = {{"values", std::move(rows)}};
    return;
  }
  json columns = json::object(), fields = json::array();
  for (const auto& [field, value] : rows.front().items()) {
    columns[field] = json::array();
    fields.push_back(field);
  }
  for (auto& row : rows) {
    for (auto& [field, value] : row.items()) columns[field].push_back(std::move(value));
  }
  spec["data"] = {{"values", json::array({std::move(columns)})}};
  json transform = json::array({{{"flatten", std::move(fields)}}});
  if (spec.contains("transform")) {
    for (auto& t : spec["transform"]) transform.push_back(std::move(t));
  }
  spec["transform"] = std::move(transform);
}
}  // namespace

namespace {
std::string Capitalized(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}
// Faded marks for a noisy run's figures (datum.noisy), in every chart that shows runs.
json NoisyOpacity() { return {{"condition", {{"test", "datum.noisy"}, {"value", 0.35}}}, {"value", 1}}; }
json NoisyTooltip() { return {{"field", "noise"}, {"title", "Noise"}}; }
}  // namespace

json BreakdownChart(const std::vector<BreakdownBar>& bars, const std::string& title, const BreakdownPartNames& names) {
  json spec = Base(title);
  json values = json::array();
  json order = json::array();
  const std::string labels[] = {Capitalized(names.first), Capitalized(names.second), Capitalized(names.third)};
  for (const auto& b : bars) {
    order.push_back(b.label);
    const double shares[] = {b.active, b.movement, b.idle};
    for (int i = 0; i < 3; ++i) {
      values.push_back({{"model", b.label},
                        {"domain", b.domain},
                        {"part", labels[i]},
                        {"k", i},
                        {"share", Round(shares[i] * 100, 10)},
                        {"noisy", b.noisy},
                        {"noise", b.noisy ? "noisy run" : "clean"}});
    }
  }
  SetRows(spec, std::move(values));
  spec["width"] = 520;
  spec["height"] = {{"step", 14}};
  spec["mark"] = {{"type", "bar"}};
  spec["encoding"] = {{"y",
                       {{"field", "model"},
                        {"type", "nominal"},
                        {"sort", order},
                        {"title", std::string("Model (sorted by ") + names.first + " share; faded: noisy run)"}}},
                      {"x",
                       {{"field", "share"},
                        {"type", "quantitative"},
                        {"stack", "normalize"},
                        {"title", "Share of step time (%)"},
                        {"axis", {{"format", ".0%"}}}}},
                      {"color",
                       {{"field", "part"},
                        {"type", "nominal"},
                        {"title", "Step time"},
                        {"scale",
                         {{"domain", json::array({labels[0], labels[1], labels[2]})},
                          {"range", {kActiveColor, kMovementColor, kIdleColor}}}},
                        {"legend", {{"orient", "top"}}}}},
                      {"opacity", NoisyOpacity()},
                      {"order", {{"field", "k"}, {"type", "quantitative"}}},
                      {"tooltip",
                       {{{"field", "model"}, {"title", "Model"}},
                        {{"field", "domain"}, {"title", "Domain"}},
                        {{"field", "part"}, {"title", "Part"}},
                        {{"field", "share"}, {"title", "Share (%)"}}}}};
  spec["encoding"]["tooltip"].push_back(NoisyTooltip());
  return spec;
}

namespace {

// 1-2-5 ticks across [lo, hi], for the log scale of a chart whose values
// span a factor of three or more; empty otherwise (the default ticks read
// better on a narrow range).
json LogTicks(double lo, double hi) {
  json ticks = json::array();
  if (!(lo > 0) || hi < 3 * lo) return ticks;
  for (double decade = std::pow(10.0, std::floor(std::log10(lo))); decade <= hi; decade *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (decade * m >= lo / 2 && decade * m <= hi * 2) ticks.push_back(Round(decade * m, 1e6));
    }
  }
  return ticks;
}

// The reader's controls: a log-scale checkbox and a "since" date, bound
// to inputs under the chart (ignored by the static SVG, which shows the
// defaults: log scale, every build).
json TrendParams() {
  return json::array(
      {{{"name", "log_scale"}, {"value", true}, {"bind", {{"input", "checkbox"}, {"name", "Log scale "}}}},
       {{"name", "since"}, {"value", ""}, {"bind", {{"input", "date"}, {"name", "Since "}}}}});
}

// The y scale the log toggle switches: symlog with a tiny constant is a log
// scale for step times, with a huge one it is linear (Vega-Lite cannot
// switch a scale's type from a param).
json TrendY(const std::string& y_title, const json& log_ticks) {
  json axis = {{"titleLimit", 0}};
  if (!log_ticks.empty()) axis["values"] = {{"expr", "log_scale ? " + log_ticks.dump() + " : null"}};
  return {{"field", "ms"},
          {"type", "quantitative"},
          {"title", y_title},
          {"axis", axis},
          {"scale",
           {{"type", "symlog"},
            {"constant", {{"expr", "log_scale ? 0.001 : 1e9"}}},
            {"zero", false},
            // A nice domain would start at 0, which a log scale cannot show.
            {"nice", false},
            {"padding", 8}}}};
}

json TrendUnit(const std::string& y_title, const std::string& value_title, const json& log_ticks, bool faceted) {
  json unit;
  unit["width"] = faceted ? 300 : 560;
  unit["height"] = faceted ? 150 : 240;
  // Clicking a legend entry shows that series alone (shift-click adds).
  unit["params"] =
      json::array({{{"name", "pick"}, {"select", {{"type", "point"}, {"fields", {"series"}}}}, {"bind", "legend"}}});
  unit["mark"] = {{"type", "line"}, {"point", true}};
  unit["encoding"] = {{"x",
                       {{"field", "t"},
                        {"type", "temporal"},
                        {"title", "Build start (UTC)"},
                        {"scale", {{"type", "utc"}}},
                        {"axis", {{"format", "%Y-%m-%d"}, {"labelAngle", -30}}}}},
                      {"y", TrendY(y_title, log_ticks)},
                      {"color",
                       {{"field", "series"},
                        {"type", "nominal"},
                        {"title", faceted ? "Configuration" : "Series"},
                        {"scale", {{"range", kCategoryPalette}}},
                        {"legend", {{"orient", "bottom"}, {"columns", 2}, {"labelLimit", 0}, {"symbolOpacity", 1}}}}},
                      {"opacity", {{"condition", {{"param", "pick"}, {"value", 1}}}, {"value", 0.12}}},
                      {"tooltip",
                       {{{"field", "build"}, {"title", "Build"}},
                        {{"field", "series"}, {"title", "Series"}},
                        {{"field", "ms"}, {"title", value_title}, {"format", ".4g"}}}}};
  return unit;
}

// The unit with a cross over each noisy point, drawn on top: {width,
// height, layer: [the line and its points (with the legend selection), the
// crosses]}. A noisy median is never drawn as a clean one.
json WithNoisyMarks(json unit) {
  const json& enc = unit["encoding"];
  json tooltip = enc["tooltip"];
  tooltip.push_back({{"field", "noise"}, {"title", "Noise"}});
  json crosses = {
      {"transform", json::array({{{"filter", "datum.noisy"}}})},
      {"mark", {{"type", "point"}, {"shape", "cross"}, {"size", 70}, {"filled", true}, {"color", "#000000"}}},
      {"encoding", {{"x", enc["x"]}, {"y", enc["y"]}, {"opacity", enc["opacity"]}, {"tooltip", tooltip}}}};
  json layered = {{"width", unit["width"]}, {"height", unit["height"]}};
  unit.erase("width");
  unit.erase("height");
  layered["layer"] = json::array({std::move(unit), std::move(crosses)});
  return layered;
}

}  // namespace

json TrendChart(const std::vector<TrendPoint>& points, const std::string& title, const std::string& y_title,
                const std::string& value_title) {
  const bool any_noisy = std::any_of(points.begin(), points.end(), [](const TrendPoint& p) { return p.noisy; });
  json spec = Base(any_noisy ? title + " (\xC3\x97: noisy run)" : title);
  // One row per series with parallel arrays, flattened by Vega-Lite: the
  // series label is stored once, not once per point (a per-model trend of
  // 30 builds x 16 series was ~60 KB per chart, written twice per page).
  std::map<std::pair<std::string, std::string>, std::array<json, 4>> series;  // (facet, series): build, t, ms, noisy
  std::set<std::string> facets;
  double lo = 0, hi = 0;
  for (const auto& p : points) {
    auto& cols = series[{p.facet, p.series}];
    cols[0].push_back(p.build);
    cols[1].push_back(p.started_at);
    cols[2].push_back(Round(p.value_ms, 1e4));
    cols[3].push_back(p.noisy);
    facets.insert(p.facet);
    lo = lo == 0 ? p.value_ms : std::min(lo, p.value_ms);
    hi = std::max(hi, p.value_ms);
  }
  const bool faceted = series.size() > kMaxSeriesPerPlot && facets.size() > 1;
  json values = json::array();
  for (auto& [key, cols] : series) {
    const auto& [facet, label] = key;
    json row = {{"series", faceted || facet.empty() ? label : facet + " " + label},
                {"build", std::move(cols[0])},
                {"t", std::move(cols[1])},
                {"ms", std::move(cols[2])}};
    if (any_noisy) row["noisy"] = std::move(cols[3]);  // clean charts stay as small as before
    if (faceted) row["facet"] = facet;
    values.push_back(std::move(row));
  }
  // Vega-Lite would parse "t" as a date at the source, before the flatten
  // (an array is no date): parse it after.
  spec["data"] = {{"values", values}, {"format", {{"parse", nullptr}}}};
  json flatten = any_noisy ? json({"build", "t", "ms", "noisy"}) : json({"build", "t", "ms"});
  spec["transform"] = json::array({{{"flatten", flatten}},
                                   {{"calculate", "toDate(datum.t)"}, {"as", "t"}},
                                   {{"filter", "!since || time(datum.t) >= time(toDate(since))"}}});
  if (any_noisy) {
    spec["transform"].push_back({{"calculate", "datum.noisy ? 'noisy run' : 'clean'"}, {"as", "noise"}});
  }
  spec["params"] = TrendParams();
  json unit = TrendUnit(y_title, value_title, faceted ? json::array() : LogTicks(lo, hi), faceted);
  if (any_noisy) unit = WithNoisyMarks(std::move(unit));  // the legend selection stays in the line's layer
  if (!faceted && any_noisy) {
    spec.update(unit);
    return spec;
  }
  if (!faceted) {
    json params = std::move(spec["params"]);
    for (auto& p : unit["params"]) params.push_back(std::move(p));
    spec.update(unit);
    spec["params"] = std::move(params);
    return spec;
  }
  // Small multiples, one per facet (platform and mode), each with its own
  // y scale: a CPU and a GPU platform differ by orders of magnitude.
  spec["facet"] = {{"field", "facet"}, {"type", "nominal"}, {"title", nullptr}, {"header", {{"labelLimit", 0}}}};
  spec["columns"] = 2;
  spec["spec"] = unit;
  spec["resolve"] = {{"scale", {{"y", "independent"}}}};
  return spec;
}

json SamplesChart(const std::vector<SamplePoint>& samples, const std::string& title, const std::string& x_title) {
  json spec = Base(title);
  json values = json::array();
  for (const auto& s : samples) values.push_back({{"config", s.config}, {"ms", Round(s.ms, 1e4)}});
  spec["data"] = {{"values", values}};
  spec["width"] = 520;
  spec["height"] = {{"step", 22}};
  json y = {{"field", "config"}, {"type", "nominal"}, {"title", "Configuration"}};
  json x = {{"field", "ms"}, {"type", "quantitative"}, {"title", x_title}, {"scale", {{"zero", false}}}};
  spec["layer"] = {
      {{"mark", {{"type", "boxplot"}, {"extent", "min-max"}, {"color", kActiveColor}, {"opacity", 0.35}}},
       {"encoding", {{"y", y}, {"x", x}}}},
      {{"mark", {{"type", "tick"}, {"color", "#000000"}, {"thickness", 1}}},
       {"encoding", {{"y", y}, {"x", x}, {"tooltip", {{{"field", "config"}}, {{"field", "ms"}, {"title", "ms"}}}}}}}};
  return spec;
}

json CompilerChart(const std::vector<BackendRatio>& ratios, const std::string& title) {
  json spec = Base(title);
  // T, CM, GM as the paper labels them; colours outside the breakdown's three.
  static const char* kMetrics[] = {"Time (T)", "CPU memory (CM)", "GPU memory (GM)"};
  static const char* kMetricColors[] = {"#E69F00", "#009E73", "#CC79A7"};
  std::vector<const BackendRatio*> by_time;
  for (const auto& r : ratios) by_time.push_back(&r);
  std::stable_sort(by_time.begin(), by_time.end(),
                   [](const BackendRatio* a, const BackendRatio* b) { return a->ratio < b->ratio; });
  json values = json::array();
  json order = json::array();
  bool present[3] = {false, false, false};
  for (const auto* r : by_time) {
    const std::string label = r->model + " (" + r->precision + ")";
    if (std::find(order.begin(), order.end(), label) == order.end()) order.push_back(label);
    const std::optional<double> v[] = {r->ratio, r->cpu_memory_ratio, r->gpu_memory_ratio};
    for (int m = 0; m < 3; ++m) {
      if (!v[m] || *v[m] <= 0) continue;  // not measured: no point, never a 0
      values.push_back({{"model", label},
                        {"backend", r->backend},
                        {"metric", kMetrics[m]},
                        {"ratio", Round(*v[m], 1e4)},
                        {"noisy", !r->noisy.empty()},
                        {"noise", r->noisy.empty() ? "clean" : r->noisy}});
      present[m] = true;
    }
  }
  // The legend lists only the ratios measured here (no GPU memory on CPU).
  json metric_domain = json::array(), metric_range = json::array();
  for (int m = 0; m < 3; ++m) {
    if (!present[m]) continue;
    metric_domain.push_back(kMetrics[m]);
    metric_range.push_back(kMetricColors[m]);
  }
  json y = {{"field", "model"},
            {"type", "nominal"},
            {"sort", order},
            {"title", "Model (sorted by time ratio)"},
            {"axis", {{"labelLimit", 0}}}};
  json x = {{"field", "ratio"},
            {"type", "quantitative"},
            {"scale", {{"type", "log"}, {"nice", false}, {"padding", 12}}},
            {"title", "Backend / eager (< 1: the backend does better)"}};
  SetRows(spec, std::move(values));
  spec["width"] = 520;
  spec["height"] = {{"step", 18}};
  spec["layer"] = {{{"mark", {{"type", "point"}, {"filled", true}, {"size", 45}}},
                    {"encoding",
                     {{"y", y},
                      {"x", x},
                      {"yOffset", {{"field", "metric"}, {"sort", metric_domain}}},
                      {"color",
                       {{"field", "metric"},
                        {"type", "nominal"},
                        {"title", "Ratio"},
                        {"scale", {{"domain", metric_domain}, {"range", metric_range}}},
                        {"legend", {{"orient", "top"}}}}},
                      {"shape", {{"field", "backend"}, {"type", "nominal"}, {"title", "Backend"}}},
                      {"opacity", NoisyOpacity()},
                      {"tooltip",
                       {{{"field", "model"}, {"title", "Model"}},
                        {{"field", "backend"}, {"title", "Backend"}},
                        {{"field", "metric"}, {"title", "Ratio"}},
                        {{"field", "ratio"}, {"title", "Backend / eager"}, {"format", ".3f"}},
                        {{"field", "noise"}, {"title", "Noise"}}}}}}},
                   {{"mark", {{"type", "rule"}, {"color", "#000000"}, {"strokeDash", {4, 3}}}},
                    {"encoding", {{"x", {{"datum", 1}, {"type", "quantitative"}}}}}}};
  return spec;
}

json PairedChart(const std::vector<BackendRatio>& ratios, const std::string& title) {
  json spec = Base(title);
  std::vector<const BackendRatio*> paired;
  for (const auto& r : ratios) {
    if (r.paired) paired.push_back(&r);
  }
  std::stable_sort(paired.begin(), paired.end(), [](const BackendRatio* a, const BackendRatio* b) {
    return a->paired->speedup < b->paired->speedup;
  });
  static const char* kVerdicts[] = {"faster", "slower", "within noise", "one process: no interval"};
  static const char* kVerdictColors[] = {"#009E73", "#D55E00", "#999999", "#000000"};
  json values = json::array(), order = json::array();
  for (const auto* r : paired) {
    const core::PairedTiming& p = *r->paired;
    const std::string label = r->model + " (" + r->mode + ", " + r->backend + ", " + r->precision + ")";
    order.push_back(label);
    // Every row has every field (SetRows stores columns): null without a range.
    const bool ranged = p.speedup_low && p.speedup_high;
    values.push_back({{"run", label},
                      {"speedup", Round(p.speedup, 1e4)},
                      {"low", ranged ? json(Round(*p.speedup_low, 1e4)) : json(nullptr)},
                      {"high", ranged ? json(Round(*p.speedup_high, 1e4)) : json(nullptr)},
                      {"verdict", PairedVerdict(p)},
                      {"processes", std::max<size_t>(1, p.process_speedups.size())}});
  }
  // No axis title: long run labels pushed it over them; the chart's title says the order.
  json y = {{"field", "run"}, {"type", "nominal"}, {"sort", order}, {"title", nullptr}, {"axis", {{"labelLimit", 0}}}};
  json x = {{"field", "speedup"},
            {"type", "quantitative"},
            {"scale", {{"type", "log"}, {"nice", false}, {"padding", 12}}},
            {"title", "Eager / compiled in one worker (> 1: the compiled forward is faster)"}};
  json color = {{"field", "verdict"},
                {"type", "nominal"},
                {"title", "Verdict"},
                {"scale", {{"domain", kVerdicts}, {"range", kVerdictColors}}},
                {"legend", {{"orient", "top"}}}};
  json tooltip = {{{"field", "run"}, {"title", "Run"}},
                  {{"field", "speedup"}, {"title", "Speedup"}, {"format", ".3f"}},
                  {{"field", "low"}, {"title", "Lowest process"}, {"format", ".3f"}},
                  {{"field", "high"}, {"title", "Highest process"}, {"format", ".3f"}},
                  {{"field", "processes"}, {"title", "Processes"}},
                  {{"field", "verdict"}, {"title", "Verdict"}}};
  SetRows(spec, std::move(values));
  spec["width"] = 520;
  spec["height"] = {{"step", 18}};
  json range_x = x;
  range_x["field"] = "low";
  json range_bar = {{"transform", json::array({{{"filter", "isValid(datum.low)"}}})},
                    {"mark", {{"type", "rule"}, {"strokeWidth", 2}}},
                    {"encoding", {{"y", y}, {"x", range_x}, {"x2", {{"field", "high"}}}, {"color", color}}}};
  json point = {{"mark", {{"type", "point"}, {"filled", true}, {"size", 45}}},
                {"encoding", {{"y", y}, {"x", x}, {"color", color}, {"tooltip", tooltip}}}};
  spec["layer"] = {range_bar,
                   point,
                   {{"mark", {{"type", "rule"}, {"color", "#000000"}, {"strokeDash", {4, 3}}}},
                    {"encoding", {{"x", {{"datum", 1}, {"type", "quantitative"}}}}}}};
  return spec;
}

namespace {
json RatioTooltip(const PlatformRatios& p) {
  return {{{"field", "model"}, {"title", "Model"}},
          {{"field", "mode"}, {"title", "Mode"}},
          {{"field", "ratio"}, {"title", p.other + " / " + p.reference}, {"format", ".3f"}},
          {{"field", "ref_ms"}, {"title", p.reference + " (ms)"}, {"format", ".4g"}},
          {{"field", "other_ms"}, {"title", p.other + " (ms)"}, {"format", ".4g"}},
          {{"field", "ref_precision"}, {"title", "Effective precision, " + p.reference}},
          {{"field", "other_precision"}, {"title", "Effective precision, " + p.other}},
          {{"field", "noise"}, {"title", "Noise"}}};
}
}  // namespace

json PlatformRatioChart(const PlatformRatios& p) {
  json spec = Base(p.title);
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
                      {"ref_ms", Round(*r.reference_ms, 1e4)},
                      {"other_ms", Round(*r.other_ms, 1e4)},
                      {"ref_precision", r.reference_precision.value_or("not recorded")},
                      {"other_precision", r.other_precision.value_or("not recorded")},
                      {"differs", differs ? "effective precisions differ" : ""},
                      {"noisy", !r.noisy.empty()},
                      {"noise", r.noisy.empty() ? "clean" : r.noisy}});
    auto [it, fresh] = lowest.emplace(labels[i], *r.ratio);
    if (!fresh) it->second = std::min(it->second, *r.ratio);
  }
  std::vector<std::pair<double, std::string>> by_ratio;
  for (const auto& [label, v] : lowest) by_ratio.push_back({v, label});
  std::sort(by_ratio.begin(), by_ratio.end());
  json order = json::array();
  for (const auto& [v, label] : by_ratio) order.push_back(label);
  json y = {{"field", "model"},
            {"type", "nominal"},
            {"sort", order},
            {"title", "Model (sorted by ratio)"},
            {"axis", {{"labelLimit", 0}}}};
  json x = {{"field", "ratio"},
            {"type", "quantitative"},
            {"scale", {{"type", "log"}, {"nice", false}, {"padding", 12}}},
            {"title", "Median step time, " + p.other + " / " + p.reference + " (< 1: faster)"},
            {"axis", {{"titleLimit", 1000}}}};
  json mode = {{"field", "mode"},
               {"type", "nominal"},
               {"title", "Mode"},
               {"scale", {{"domain", core::kModes}}},
               {"legend", {{"orient", "top"}, {"labelLimit", 1000}}}};
  // Train and eval side by side within a model's row, not on top of each other.
  json offset = {{"field", "mode"}, {"type", "nominal"}, {"scale", {{"domain", core::kModes}}}};
  json color = mode;
  color["scale"]["range"] = {"#0072B2", "#E69F00"};
  json layers = json::array();
  layers.push_back({{"mark", {{"type", "point"}, {"filled", true}, {"size", 60}}},
                    {"encoding",
                     {{"y", y},
                      {"x", x},
                      {"yOffset", offset},
                      {"color", color},
                      {"shape", mode},
                      {"opacity", NoisyOpacity()},
                      {"tooltip", RatioTooltip(p)}}}});
  if (any_differs) {
    layers.push_back({{"transform", {{{"filter", "datum.differs != ''"}}}},
                      {"mark", {{"type", "point"}, {"filled", false}, {"size", 150}, {"strokeWidth", 1.5}}},
                      {"encoding",
                       {{"y", y},
                        {"x", x},
                        {"yOffset", offset},
                        {"stroke",
                         {{"field", "differs"},
                          {"type", "nominal"},
                          {"title", "Precision"},
                          {"scale", {{"range", {"#D55E00"}}}},
                          {"legend", {{"orient", "top"}, {"labelLimit", 1000}}}}}}}});
  }
  layers.push_back({{"mark", {{"type", "rule"}, {"color", "#000000"}, {"strokeDash", {4, 3}}}},
                    {"encoding", {{"x", {{"datum", 1}, {"type", "quantitative"}}}}}});
  SetRows(spec, std::move(values));
  spec["width"] = 520;
  spec["height"] = {{"step", 11}};  // per mode within a model's row
  spec["layer"] = layers;
  return spec;
}

}  // namespace torchgauge::reporter
