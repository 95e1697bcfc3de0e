#include "reporter/compare/browser_page.h"

#include <nlohmann/json.hpp>

#include "core/analysis/compare.h"
#include "core/contract/version.h"
#include "reporter/compare/report.h"
#include "reporter/output/escape.h"
#include "reporter/output/mustache_data.h"
#include "reporter/output/paths.h"
#include "reporter/output/vega_lite.h"

using nlohmann::json;

namespace torchgauge::reporter {

namespace {

json OrNull(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

// One run as the rules read it: [model, mode, backend, precision, status,
// reason, batch size, device, samples (ms), process medians (ms), samples
// per step (null: no throughput), CPU peak (bytes), GPU peak (bytes), noise
// reason (null: clean), settings ([smoke, warm-up, repeat, processes,
// threads]; null: unknown), generation (null: none; else {metric: samples}
// and "medians": {metric: per-process medians} for ttft, tpot and
// tokens_per_s, as core's comparison reads them)].
json GenerationInputs(const core::RunResult& r) {
  if (!r.generation) return nullptr;
  json g = json::object(), medians = json::object();
  for (core::Metric m : {core::Metric::kTtft, core::Metric::kTpot, core::Metric::kTokensPerSecond}) {
    g[core::MetricName(m)] = core::MetricSamples(r, m);
    medians[core::MetricName(m)] = core::MetricProcessMedians(r, m);
  }
  g["medians"] = std::move(medians);
  return g;
}

json RuleInputs(const core::RunResult& r) {
  json samples = nullptr, medians = nullptr, per_step = nullptr;
  if (r.timing) {
    samples = r.timing->samples_ms;
    medians = r.timing->process_medians_ms;
    if (r.timing->throughput_per_s) per_step = r.timing->samples_per_step;
  }
  json cpu = nullptr, gpu = nullptr;
  if (r.memory) {
    cpu = OrNull(r.memory->cpu_peak_rss_bytes);
    gpu = OrNull(r.memory->gpu_peak_allocated_bytes);
  }
  const core::NoiseVerdict noise = core::RunNoise(r);
  json settings = nullptr;
  if (r.settings) {
    settings = {r.settings->smoke ? 1 : 0, r.settings->warmup, r.settings->repeat, r.settings->processes,
                r.settings->threads};
  }
  return json::array({r.model.id, r.mode, r.backend, r.precision, r.status, r.reason ? json(*r.reason) : json(nullptr),
                      r.batch_size, r.device, std::move(samples), std::move(medians), std::move(per_step),
                      std::move(cpu), std::move(gpu), noise.noisy ? json(noise.reason) : json(nullptr),
                      std::move(settings), GenerationInputs(r)});
}

}  // namespace

json BuildCompareData(const BuildView& v) {
  json platforms = json::object();
  for (const auto& p : v.platforms) {
    // As a comparison reads a build (core::MakeRunSet): a platform without
    // its manifest is not compared.
    if (!p.manifest || !p.manifest->present) continue;
    json runs = json::array();
    for (const auto* r : p.runs) runs.push_back(RuleInputs(*r));
    platforms[p.id] = {{"env", EnvironmentValues(core::ToJson(*p.manifest))}, {"runs", std::move(runs)}};
  }
  return {{"build", v.id}, {"started_at", v.started_at}, {"platforms", std::move(platforms)}};
}

std::string BuildCompareKey(const std::string& build) { return "build/" + build + "/compare"; }

mu::data ComparePageData(const core::CompareOptions& options, const std::string& site_url) {
  const Target page{Kind::kCompareBuildsPage, "", "", "html"};
  json rules = json::array();
  for (const auto& r : options.rules)
    rules.push_back({{"metric", r.metric}, {"model_regex", r.model_regex}, {"percent", r.percent}});
  const std::string base = SafeSiteUrl(site_url);
  json config = {
      {"options",
       {{"threshold_percent", options.threshold_percent},
        {"alpha", options.alpha},
        {"memory_min_abs_bytes", options.memory_min_abs_bytes},
        {"max_noisy_percent", options.max_noisy_percent},
        {"rules", std::move(rules)}}},
      {"version", core::Version()},
      {"vl_schema", kVegaLiteSchema},
      {"environment", EnvironmentNames()},
      // The Markdown's links, as `compare --site-url` writes them ("" without a site URL).
      {"md_model_url", SiteUrlPattern(base, {Kind::kModelPage, "", "", "html"})},
      {"md_full_url", SiteUrlPattern(base, {Kind::kComparePage, "", "", "html"})},
      // The page's own links, relative.
      {"model_href", SiteUrlPattern(RootHref(page), {Kind::kModelPage, "", "", "html"})},
      {"build_href", SiteUrlPattern(RootHref(page), {Kind::kBuildPage, "", "", "html"})},
      {"data_href", HrefPattern(page, {Kind::kBuildData, "", "compare", ""}, "build")},
  };
  mu::data d;
  Set(d, "home", Href(page, {Kind::kIndexPage, "", "", "html"}));
  Set(d, "builds_js", Href(page, {Kind::kHistory, "", "builds", ""}));
  Set(d, "compare_js", Href(page, {Kind::kAsset, "", "compare.js", ""}));
  Set(d, "config", JsonForScript(config.dump()));
  return d;
}

}  // namespace torchgauge::reporter
