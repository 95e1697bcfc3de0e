#include "reporter/pages/model_page_data.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/contract/result.h"
#include "reporter/output/escape.h"
#include "reporter/output/format.h"
#include "reporter/output/mustache_data.h"
#include "reporter/pages/charts.h"
#include "reporter/pages/figures.h"
#include "reporter/pages/pruned.h"

using nlohmann::json;

namespace torchgauge::reporter {

namespace {

// A cell of a row built for the Markdown tables (RunRow), so the model page
// shows the same formatting as the build page.
std::string Cell(const mu::data& row, const std::string& key) {
  const mu::data* v = row.get(key);
  return v && v->is_string() ? v->string_value() : std::string();
}

const char* const kRunColumns[] = {"median",  "min",     "max",    "cov",    "throughput",
                                   "cpu_mib", "gpu_mib", "gflops", "tflops", "kernels"};

// A generative run's TTFT and median TPOT in ms ("12.3 / 4.56"), the build
// page's generation table's figures; "" for another run.
std::string GenerationCell(const core::RunResult& r) {
  if (!r.generation) return {};
  return Ms(r.generation->ttft_ms) + " / " + Ms(r.generation->tpot_median_ms);
}

// [config, status, noise reason ("" when clean), median, min, max, CoV,
// throughput, CPU MiB, GPU MiB, GFLOP/step, TFLOP/s, kernels/step, % of peak,
// TTFT / TPOT (ms), instructions (M/step), estimated cycles (M/step)]
json RunCells(const core::RunResult& r, const Manifest& m) {
  mu::data row = RunRow(r, "");
  SetPeakShare(row, r, m);
  json cells = json::array({Cell(row, "config"), Cell(row, "status"), Cell(row, "noise_reason")});
  for (const char* key : kRunColumns) cells.push_back(Cell(row, key));
  cells.push_back(Cell(row, "peak_pct"));
  cells.push_back(GenerationCell(r));
  cells.push_back(Cell(row, "instructions_m"));
  cells.push_back(Cell(row, "cycles_m"));
  return cells;
}

// How a timed run was measured: [config, processes, samples, warm-up,
// threads, process medians, noise band (%)].
json MeasurementCells(const core::RunResult& r) {
  const int processes = r.settings ? r.settings->processes : 1;
  std::string medians;
  for (double m : r.timing->process_medians_ms) medians += (medians.empty() ? "" : ", ") + Ms(m);
  auto band = core::NoiseBandPercent(r.timing->process_medians_ms);
  return json::array(
      {ConfigLabel(r), std::to_string(processes), std::to_string(r.timing->samples_ms.size()),
       std::to_string(r.timing->warmup_iterations),
       r.settings && r.settings->threads > 0 ? std::to_string(r.settings->threads) : std::string("default"),
       medians.empty() ? Dash() : medians, band ? Num(*band, "%.1f") : Dash()});
}

double Round4(double v) { return std::round(v * 1e4) / 1e4; }

json PlatformDetail(const PlatformView& p, const std::vector<const core::RunResult*>& runs) {
  json runs_rows = json::array(), measurement = json::array(), kernels = json::array(), samples = json::array();
  for (const auto* r : runs) {
    runs_rows.push_back(RunCells(*r, *p.manifest));
    if (r->timing) {
      measurement.push_back(MeasurementCells(*r));
      json ms = json::array();
      for (double s : r->timing->samples_ms) ms.push_back(Round4(s));
      samples.push_back({{"config", ConfigLabel(*r) + (NoisyVerdict(*r) ? " (noisy)" : "")}, {"ms", std::move(ms)}});
    }
    if (!r->gpu_breakdown) continue;
    for (const auto& k : r->gpu_breakdown->top_kernels) {
      kernels.push_back({ConfigLabel(*r), k.name, Ms(k.total_ms), std::to_string(k.count)});
    }
  }
  json d = {{"id", p.id},
            {"device", p.manifest->device_name.empty() ? Dash() : p.manifest->device_name},
            {"runs", std::move(runs_rows)},
            {"samples", std::move(samples)}};
  if (!measurement.empty()) d["measurement"] = std::move(measurement);
  if (!kernels.empty()) d["kernels"] = std::move(kernels);
  return d;
}

// The trend chart's spec without data: the page's script adds the builds
// up to the page's own. Its layout (small multiples, log ticks, the noisy
// marks) is decided over the whole history, from one stand-in point per
// series and the extremes.
json TrendSpec(const std::string& model, const ModelHistory& h, bool* faceted) {
  std::vector<TrendPoint> stand_ins;
  std::set<std::string> facets;
  bool any_noisy = false;
  for (const auto& s : h.series) {
    stand_ins.push_back({"", "", s.label, s.ms.empty() ? 0 : s.ms.front(), s.facet, false});
    facets.insert(s.facet);
    any_noisy = any_noisy || !s.noisy.empty();
  }
  if (!stand_ins.empty()) {
    stand_ins.front().value_ms = h.lo;
    stand_ins.push_back(stand_ins.front());
    stand_ins.back().value_ms = h.hi;
    stand_ins.back().noisy = any_noisy;
  }
  *faceted = h.series.size() > kMaxSeriesPerPlot && facets.size() > 1;
  json spec = TrendChart(stand_ins, model + ": median step time across builds", "Median step time (ms)");
  spec["data"]["values"] = json::array();
  return spec;
}

// The counted trend's spec without data (estimated cycles per step, in
// millions), as TrendSpec's; null where the model has no counted run.
json CountedTrendSpec(const std::string& model, const ModelHistory& h) {
  if (h.counted.empty()) return nullptr;
  std::vector<TrendPoint> stand_ins;
  double lo = 0, hi = 0;
  for (const auto& s : h.counted) {
    for (double v : s.est_cycles) {
      lo = lo == 0 ? v : std::min(lo, v);
      hi = std::max(hi, v);
    }
    stand_ins.push_back({"", "", s.label, s.est_cycles.front() / 1e6, s.facet, false});
  }
  stand_ins.front().value_ms = lo / 1e6;
  stand_ins.push_back(stand_ins.front());
  stand_ins.back().value_ms = hi / 1e6;
  json spec = TrendChart(stand_ins, model + ": estimated cycles per step across builds (counted under Callgrind)",
                         "Estimated cycles per step (millions)", "Est. cycles (M)");
  spec["data"]["values"] = json::array();
  // Counts repeat within 0.01 %: a scale fitted to the points would draw
  // that as a cliff. At least 1 % either side of the history's range, so a
  // change of the threshold's size looks like one (one plot; small
  // multiples keep their own scales).
  if (spec.contains("encoding")) {
    json& scale = spec["encoding"]["y"]["scale"];
    scale["domainMin"] = lo / 1e6 * 0.99;
    scale["domainMax"] = hi / 1e6 * 1.01;
  }
  return spec;
}

}  // namespace

json BuildModelsData(const BuildView& v) {
  json models = json::object();
  for (const auto& model : v.models) {
    json platforms = json::array();
    const core::RunResult* first = nullptr;
    for (const auto& p : v.platforms) {
      std::vector<const core::RunResult*> runs;
      for (const auto* r : p.runs) {
        if (r->model.id == model) runs.push_back(r);
      }
      if (runs.empty()) continue;
      if (!first) first = runs.front();
      platforms.push_back(PlatformDetail(p, runs));
    }
    if (!first) continue;
    models[model] = {{"paper_name", first->model.paper_name},
                     {"domain", first->model.domain},
                     {"task", first->model.task},
                     {"reference", first->model.reference},
                     {"platforms", std::move(platforms)}};
  }
  return {{"build", v.id}, {"started_at", v.started_at}, {"models", std::move(models)}};
}

json HistoryBuildsData(const std::vector<BuildSummary>& history, const Pruned* pruned) {
  json ids = json::array(), times = json::array(), gone = json::array();
  for (size_t i = 0; i < history.size(); ++i) {
    ids.push_back(history[i].id);
    times.push_back(history[i].started_at);
    if (pruned && pruned->Has(history[i].id)) gone.push_back(i);
  }
  return {{"ids", std::move(ids)}, {"t", std::move(times)}, {"pruned", std::move(gone)}};
}

namespace {

// Series of one kind (timed medians or counts), each found through one hash
// lookup; a series' facet and label are worked out once, when it first
// appears.
template <typename S>
class SeriesIndex {
 public:
  S& At(const std::string& platform, const std::string& model, const std::string& config) {
    key_.assign(platform).append(1, '\n').append(model).append(1, '\n').append(config);
    auto [it, fresh] = index_.try_emplace(key_, entries_.size());
    if (fresh) {
      // Faceted by platform, mode and batch size when there are many
      // series, so the legend names only backend and precision.
      const std::string& c = config;  // mode/backend/precision/bsN
      const size_t mode_end = c.find('/'), batch_at = c.rfind('/');
      Entry e{model, {}};
      e.series.facet = platform + " \xC2\xB7 " + c.substr(0, mode_end) + " \xC2\xB7 " + c.substr(batch_at + 1);
      e.series.label = c.substr(mode_end + 1, batch_at - mode_end - 1);
      entries_.push_back(std::move(e));
    }
    return entries_[it->second].series;
  }
  // The series by model, sorted by (facet, label).
  void MoveInto(std::map<std::string, ModelHistory>& out, std::vector<S> ModelHistory::*member) {
    std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
      return std::tie(a.model, a.series.facet, a.series.label) < std::tie(b.model, b.series.facet, b.series.label);
    });
    for (auto& e : entries_) (out[e.model].*member).push_back(std::move(e.series));
  }

 private:
  struct Entry {
    std::string model;
    S series;
  };
  std::vector<Entry> entries_;
  std::unordered_map<std::string, size_t> index_;  // platform \n model \n config -> entries_
  std::string key_;
};

}  // namespace

std::map<std::string, ModelHistory> ModelHistories(const std::vector<BuildSummary>& history) {
  SeriesIndex<ModelHistory::Series> timed;
  SeriesIndex<ModelHistory::CountSeries> counted;
  std::map<std::string, ModelHistory> out;
  for (size_t i = 0; i < history.size(); ++i) {
    const auto& b = history[i];
    if (b.started_at.empty()) continue;  // no time to place it on the axis
    for (const auto& p : b.platforms) {
      for (const auto& c : p.counts) {
        ModelHistory::CountSeries& s = counted.At(p.id, c.model, c.config);
        s.builds.push_back(static_cast<int>(i));
        s.instructions.push_back(c.instructions);
        s.est_cycles.push_back(c.est_cycles);
        out[c.model].latest = b.id;
      }
      for (const auto& m : p.medians) {
        ModelHistory::Series& s = timed.At(p.id, m.model, m.config);
        if (m.noisy) s.noisy.push_back(static_cast<int>(s.builds.size()));
        s.builds.push_back(static_cast<int>(i));
        s.ms.push_back(m.median_ms);
        ModelHistory& h = out[m.model];
        h.lo = h.lo == 0 ? m.median_ms : std::min(h.lo, m.median_ms);
        h.hi = std::max(h.hi, m.median_ms);
        h.latest = b.id;
      }
    }
  }
  timed.MoveInto(out, &ModelHistory::series);
  counted.MoveInto(out, &ModelHistory::counted);
  return out;
}

json ToJson(const ModelHistory& h) {
  json series = json::array();
  for (const auto& s : h.series) {
    json ms = json::array();
    for (double v : s.ms) ms.push_back(Round4(v));
    json row = {{"facet", s.facet}, {"label", s.label}, {"b", s.builds}, {"ms", std::move(ms)}};
    if (!s.noisy.empty()) row["noisy"] = s.noisy;
    series.push_back(std::move(row));
  }
  json out = {{"series", std::move(series)}};
  // Counts in millions per step, to 4 decimals: a 0.0001 % step of a
  // 100 M-instruction run still shows.
  auto millions = [](const std::vector<double>& v) {
    json a = json::array();
    for (double x : v) a.push_back(Round4(x / 1e6));
    return a;
  };
  if (!h.counted.empty()) {
    json counted = json::array();
    for (const auto& s : h.counted) {
      counted.push_back({{"facet", s.facet},
                         {"label", s.label},
                         {"b", s.builds},
                         {"ir", millions(s.instructions)},
                         {"cycles", millions(s.est_cycles)}});
    }
    out["counted"] = std::move(counted);
  }
  return out;
}

std::string DataScript(const std::string& key, const json& data) {
  // JSON is valid JavaScript here: JsonForScript escapes what could end the
  // script or break a string literal.
  return "(window.TorchGaugeData = window.TorchGaugeData || {})[" + JsonForScript(json(key).dump()) +
         "] = " + JsonForScript(data.dump(-1, ' ', false, json::error_handler_t::replace)) + ";\n";
}

std::string HistoryKey(const std::string& name) { return "history/" + name; }
std::string BuildModelsKey(const std::string& build) { return "build/" + build + "/models"; }

mu::data ModelPageData(const PageContext& ctx, const std::string& model, const ModelHistory& h) {
  const Target page{Kind::kModelPage, "", model, "html"};
  mu::data d;
  Set(d, "model", model);
  Set(d, "home", Href(page, {Kind::kIndexPage, "", "", "md"}));
  Set(d, "grid", Href(page, {Kind::kModelGridPage, "", "", "md"}));
  Set(d, "latest", h.latest);
  Set(d, "window", std::to_string(ctx.trend_builds));
  Set(d, "builds_js", Href(page, {Kind::kHistory, "", "builds", ""}));
  Set(d, "history_js", Href(page, {Kind::kHistory, "", model, ""}));
  // The build's detail and page, with {build} for the page's script to fill in.
  Set(d, "detail_js", HrefPattern(page, {Kind::kBuildData, "", "models", ""}, "build"));
  Set(d, "build_page", HrefPattern(page, {Kind::kBuildPage, "", "", "html"}, "build"));
  bool faceted = false;
  json trend = TrendSpec(model, h, &faceted);
  Set(d, "faceted", faceted ? std::string("1") : std::string("0"));
  Set(d, "trend_html", DataChartHtml("spec-trend", "trend", "Median step time of " + model + " across builds", trend));
  json counted = CountedTrendSpec(model, h);
  if (!counted.is_null()) {
    Set(d, "counted_html",
        DataChartHtml("spec-counted", "counted", "Estimated cycles per step of " + model + " across builds", counted));
  }
  json samples = SamplesChart({}, "");
  Set(d, "samples_spec", JsonForScript(samples.dump(-1, ' ', false, json::error_handler_t::replace)));
  return d;
}

}  // namespace torchgauge::reporter
