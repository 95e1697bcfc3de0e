// The paper kit's figures as Vega-Lite specs in the publication theme
// (paper/theme.h): Figures 1/2 (the time breakdown per model), 3/4 (the
// backends against eager: T, CM, GM) and 5 (platform ratios). The data are
// the site's views (results/aggregate.h, results/platform_ratio.h), so a figure here and the
// page's chart show the same numbers; only the styling differs. vl-convert
// turns each spec into the PDF (paper/kit.h).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reporter/paper/theme.h"
#include "reporter/results/aggregate.h"

namespace torchgauge::reporter {

// 100% stacked horizontal bars per model, parts named by PartNames(source),
// models in the bars' order (first part's share, descending).
nlohmann::json PaperBreakdownFigure(const std::vector<BreakdownBar>& bars, BreakdownSource source, PaperWidth width);

// One mode's backend / eager ratios: per model, T, CM and GM as points
// (colour and shape) on a log axis with a rule at 1; models sorted by time
// ratio. A ratio not measured has no point.
nlohmann::json PaperCompilerFigure(const std::vector<BackendRatio>& ratios, PaperWidth width);

// The platform ratios of one pair: per model (and backend/precision where a
// model has several), train and eval as points (colour and shape) on a log
// axis with a rule at 1; an open ring marks differing effective precisions.
nlohmann::json PaperRatioFigure(const PlatformRatios& ratios, PaperWidth width);

}  // namespace torchgauge::reporter
