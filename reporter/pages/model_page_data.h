// One page per model across builds (models/<model>.html, the build in the
// URL's fragment), and the data files it draws from:
//   history/builds.js         every build's id and start time, oldest first;
//   history/<model>.js        the model's median per platform and
//                             configuration in every build (rewritten with
//                             each build, append-only in content);
//   builds/<id>/data/models.js  the build's detail per model: identity, runs,
//                             measurement, top kernels and step-time samples.
// The page is a shell: site/torchgauge.js loads the build's detail and draws
// the trend of the builds up to the page's build only, so a published
// build's view of a model does not change when later builds are added.
// The data files are JavaScript, loaded by <script src>, so the pages work
// from file:// (where Chromium cannot fetch JSON) as from a server.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "reporter/output/mustache_fwd.h"
#include "reporter/pages/page_data.h"
#include "reporter/results/aggregate.h"

namespace torchgauge::reporter {

struct Pruned;

// builds/<id>/data/models.js: every model of the build, by id.
nlohmann::json BuildModelsData(const BuildView& v);

// A model's medians across builds.
struct ModelHistory {
  struct Series {
    std::string facet, label;  // "cpu-x86_64-2c · eval · bs8", "eager/fp32"
    std::vector<int> builds;   // indices into history/builds.js
    std::vector<double> ms;
    std::vector<int> noisy;  // indices into `builds` whose median is noisy
  };
  std::vector<Series> series;  // sorted by (facet, label)
  double lo = 0, hi = 0;       // the smallest and largest median
  std::string latest;          // the newest build that has the model
  // The counted runs' series (instructions and estimated cycles per step,
  // docs/counted.md), charted beside time.
  struct CountSeries {
    std::string facet, label;
    std::vector<int> builds;
    std::vector<double> instructions, est_cycles;
  };
  std::vector<CountSeries> counted;  // sorted by (facet, label)
};
// history/builds.js's content; `pruned` (may be null) marks the builds whose
// snapshot the retention policy deleted (their medians stay in the history).
nlohmann::json HistoryBuildsData(const std::vector<BuildSummary>& history, const Pruned* pruned);
// Every model's history, by model id, from every build's summary (oldest first).
std::map<std::string, ModelHistory> ModelHistories(const std::vector<BuildSummary>& history);
nlohmann::json ToJson(const ModelHistory& h);

// JavaScript that publishes `data` under `key` (window.TorchGaugeData[key]).
std::string DataScript(const std::string& key, const nlohmann::json& data);
// The keys the pages' scripts look data up by.
std::string HistoryKey(const std::string& name);       // "history/<name>"
std::string BuildModelsKey(const std::string& build);  // "build/<id>/models"

// The template data of models/<model>.html (templates/model.md.mustache).
mu::data ModelPageData(const PageContext& ctx, const std::string& model, const ModelHistory& h);

}  // namespace torchgauge::reporter
