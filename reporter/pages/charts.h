// Vega-Lite specs for every chart on the site. The same spec is embedded in
// the HTML page (vega-embed) and rendered to SVG by vl-convert for Markdown.
// Specs carry their data inline so they render offline and from file://.
// Colours: one fixed, colour-blind-safe mapping for the GPU breakdown
// (Okabe-Ito blue / vermillion / grey, as the paper's blue / red / grey) and
// the Okabe-Ito palette for categories.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reporter/output/vega_lite.h"
#include "reporter/results/aggregate.h"

namespace torchgauge::reporter {

inline constexpr const char* kActiveColor = "#0072B2";
inline constexpr const char* kMovementColor = "#D55E00";
inline constexpr const char* kIdleColor = "#999999";

// Figures 1 and 2: 100% stacked horizontal bars per model, the parts named
// by `names` (GPU or host breakdown). A noisy run's bar is drawn faded.
nlohmann::json BreakdownChart(const std::vector<BreakdownBar>& bars, const std::string& title,
                              const BreakdownPartNames& names);

struct TrendPoint {
  std::string build, started_at, series;
  double value_ms = 0;
  // The small multiple the series belongs to ("cpu-x86_64-2c · eval"), or
  // empty: with more than kMaxSeriesPerPlot series the chart is faceted by
  // it, else it prefixes the series label.
  std::string facet = "";
  bool noisy = false;  // the run's timing is noisy (core::RunNoise)
};
inline constexpr size_t kMaxSeriesPerPlot = 6;
// Line chart across builds (time axis in UTC), with a log-scale toggle
// (on by default), a "since" date input and a legend that shows and hides
// series on click (Vega-Lite params bound to inputs and to the legend).
// A noisy point gets a cross over it and says so in its tooltip.
// `value_title` names a point's value in the tooltip; the points' value_ms
// holds another metric's values where it is not time (the model page's
// counted trend: millions of estimated cycles).
nlohmann::json TrendChart(const std::vector<TrendPoint>& points, const std::string& title, const std::string& y_title,
                          const std::string& value_title = "Time (ms)");

struct SamplePoint {
  std::string config;
  double ms = 0;
};
// Per-configuration distribution of timing samples (box plot plus ticks),
// on an x axis titled `x_title`.
nlohmann::json SamplesChart(const std::vector<SamplePoint>& samples, const std::string& title,
                            const std::string& x_title = "Step time (ms)");

// Figures 3 (train) and 4 (eval): per model, the backend / eager ratios of
// time (T), CPU memory (CM) and GPU memory (GM) as points on a log axis with
// a rule at 1; models sorted by time ratio. Pass the ratios of one mode.
nlohmann::json CompilerChart(const std::vector<BackendRatio>& ratios, const std::string& title);

// The compiled runs' paired passes: per run (model, mode, backend,
// precision), the speedup eager / compiled as a point on a log axis, the
// range of its processes' ratios as a bar where it has one, coloured by
// PairedVerdict ("within noise" where the range includes 1), with a rule at
// 1. Runs without a paired pass are left out; sorted by speedup.
nlohmann::json PairedChart(const std::vector<BackendRatio>& ratios, const std::string& title);

// Figure 5, generalized: per model (and backend/precision where a model has
// several), the time ratio of one platform over the reference as points on
// a log axis with a rule at 1, colour and shape by mode; a ring marks the
// points whose effective precisions differ. Models sorted by ratio.
nlohmann::json PlatformRatioChart(const PlatformRatios& ratios);

}  // namespace torchgauge::reporter
