// The model grid (models.{md,html}): models x platforms of the newest build,
// each cell the latest median of the model's headline configuration with a
// sparkline of its history and a link to the model page, like asv's grid and
// the PyTorch HUD's summary table. Read from the cached build summaries
// (results/aggregate.h), so it costs no results parsing. The Markdown lists models by
// domain, then name; the HTML table sorts by domain, name or change since the
// previous build offline (site/readers.js).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reporter/output/mustache_fwd.h"
#include "reporter/results/aggregate.h"

namespace torchgauge::reporter {

struct GridCell {
  std::string config;            // the headline configuration shown
  double median_ms = 0;          // in the newest build
  std::optional<double> change;  // vs the previous build with it: new / old - 1
  std::vector<double> history;   // oldest first, up to the trend window, ending with median_ms
};
struct GridRow {
  std::string model, domain;
  std::map<std::string, GridCell> cells;      // by platform
  std::optional<double> WorstChange() const;  // the largest change over the row's cells
};
struct ModelGrid {
  std::string build;  // the newest build
  std::vector<std::string> platforms;
  std::vector<GridRow> rows;  // by domain, then model
};

// The headline configuration of a model among its medians on one platform:
// the first eager eval configuration, else the first eager one, else the first.
const ConfigMedian* HeadlineConfig(const std::vector<const ConfigMedian*>& medians);

// `domains`: model id -> domain; `trend_builds`: the sparkline's length.
ModelGrid BuildModelGrid(const std::vector<BuildSummary>& history, const std::map<std::string, std::string>& domains,
                         int trend_builds);

// An inline SVG sparkline of `values` (empty for fewer than two).
std::string Sparkline(const std::vector<double>& values);

mu::data ModelGridPageData(const ModelGrid& grid);

}  // namespace torchgauge::reporter
