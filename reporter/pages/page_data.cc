#include "reporter/pages/page_data.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/analysis/metrics.h"
#include "core/contract/result.h"
#include "reporter/output/format.h"
#include "reporter/output/mustache_data.h"
#include "reporter/pages/charts.h"
#include "reporter/pages/figures.h"
#include "reporter/pages/pruned.h"
#include "reporter/pages/regressions_page.h"

namespace fs = std::filesystem;

namespace torchgauge::reporter {

std::string StatusText(const std::map<std::string, int>& counts) {
  std::string out;
  for (const char* s : core::kStatuses) {
    auto it = counts.find(s);
    if (it == counts.end()) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(it->second) + " " + s;
  }
  return out.empty() ? "no runs" : out;
}

mu::data Table2Rows(const std::vector<DomainBreakdown>& rows, bool train, const PaperTable2& paper) {
  mu::data list = List();
  for (const auto& d : rows) {
    if (d.models == 0 && !d.paper) continue;
    mu::data r;
    Set(r, "domain", DomainLabel(d.domain, paper));
    Set(r, "models",
        !d.models      ? Dash()
        : d.noisy_runs ? std::to_string(d.models) + " (" + std::to_string(d.noisy_runs) + " noisy run" +
                             (d.noisy_runs > 1 ? "s" : "") + ")"
                       : std::to_string(d.models));
    Set(r, "active", d.models ? Pct(d.active) : Dash());
    Set(r, "movement", d.models ? Pct(d.movement) : Dash());
    Set(r, "idle", d.models ? Pct(d.idle) : Dash());
    if (d.paper) {
      Set(r, "paper_active", Num(train ? d.paper->train_active : d.paper->eval_active, "%.1f"));
      Set(r, "paper_movement", Num(train ? d.paper->train_movement : d.paper->eval_movement, "%.1f"));
      Set(r, "paper_idle", Num(train ? d.paper->train_idle : d.paper->eval_idle, "%.1f"));
    } else {
      Set(r, "paper_active", Dash());
      Set(r, "paper_movement", Dash());
      Set(r, "paper_idle", Dash());
    }
    Append(list, std::move(r));
  }
  return list;
}

mu::data RunRow(const core::RunResult& r, const std::string& model_href) {
  mu::data d;
  Set(d, "model", r.model.id);
  Set(d, "model_href", model_href);
  Set(d, "domain", r.model.domain);
  Set(d, "mode", r.mode);
  Set(d, "backend", r.backend);
  Set(d, "precision", r.precision);
  Set(d, "config", ConfigLabel(r));
  Set(d, "batch", std::to_string(r.batch_size));
  const bool timed = r.timing.has_value();
  Set(d, "median", timed ? Ms(r.timing->median_ms) : Dash());
  Set(d, "min", timed ? Ms(r.timing->min_ms) : Dash());
  Set(d, "max", timed ? Ms(r.timing->max_ms) : Dash());
  Set(d, "throughput", timed && r.timing->throughput_per_s ? Num(*r.timing->throughput_per_s, "%.1f") : Dash());
  Set(d, "cov", timed ? Pct(r.timing->cov) : Dash());
  Set(d, "cpu_mib", r.memory ? MiB(r.memory->cpu_peak_rss_bytes) : Dash());
  Set(d, "gpu_mib", r.memory ? MiB(r.memory->gpu_peak_allocated_bytes) : Dash());
  auto tf = Tflops(r);
  Set(d, "tflops", tf ? Sig3(*tf) : Dash());
  double flops = 0;
  if (r.flops) flops = r.flops->profiler_flops_per_iter.value_or(r.flops->analytic_flops_per_iter.value_or(0));
  Set(d, "gflops", flops > 0 ? Sig3(flops / 1e9) : Dash());
  Set(d, "kernels", r.gpu_breakdown ? Num(r.gpu_breakdown->kernel_count, "%.0f") : Dash());
  // A counted run's median counts per step, in millions (docs/counted.md).
  for (auto [key, metric] : {std::pair{"instructions_m", core::Metric::kInstructions},
                             std::pair{"cycles_m", core::Metric::kEstimatedCycles}}) {
    const auto v = core::MetricMedian(r, metric);
    Set(d, key, v ? Num(*v / 1e6, "%.3f") : Dash());
  }
  Set(d, "status", r.status);
  Set(d, "reason", r.reason.value_or(r.signal ? "signal " + std::to_string(*r.signal) : ""));
  SetNoise(d, r);
  return d;
}

// Paths are shown relative to the results root, so pages do not depend on
// where the results were when the site was rendered.
mu::data ProblemRows(const std::vector<Problem>& problems, const fs::path& root) {
  mu::data list = List();
  const std::string prefix = root.string() + (root.string().ends_with("/") ? "" : "/");
  for (const auto& p : problems) {
    mu::data d;
    Set(d, "file", p.file.starts_with(prefix) ? p.file.substr(prefix.size()) : p.file);
    Set(d, "field", p.field.empty() ? Dash() : p.field);
    Set(d, "message", p.message);
    Append(list, std::move(d));
  }
  return list;
}

// Each platform's comparison judged alone, by compare's own counts and
// rules, so that the site's figures are compare's: a slowed run is one
// regression however many metrics moved, and a platform whose comparison is
// inconclusive or cannot tell says so.
std::vector<FlaggedChanges> Flagged(const core::Comparison& c) {
  std::vector<FlaggedChanges> out;
  for (const auto& p : c.platforms) {
    core::Comparison one;
    one.options = c.options;
    one.platforms = {p};
    FlaggedChanges f;
    f.platform = p.platform_id;
    f.baseline = p.base_builds.empty() ? "" : p.base_builds.back();
    f.regressions = static_cast<int>(one.CountRuns(core::Verdict::kRegression));
    f.confirmed = static_cast<int>(one.CountRuns(core::Verdict::kRegression, true));
    f.improvements = static_cast<int>(one.CountRuns(core::Verdict::kImprovement));
    f.status_changes = static_cast<int>(p.status_changes.size() + p.presence.size());
    f.outcome = one.Outcome();
    f.compared_runs = static_cast<int>(one.ComparedRuns());
    f.noisy_runs = static_cast<int>(one.NoisyRuns());
    f.untestable_runs = static_cast<int>(one.UntestableRuns());
    out.push_back(f);
  }
  return out;
}

std::string OutcomeText(const FlaggedChanges& f) {
  const std::string of = " of " + std::to_string(f.compared_runs) + " runs";
  // The night fails on a confirmed regression or on a run that stopped working.
  if (f.outcome == "regression") return f.confirmed > 0 ? "regression found" : "a run stopped working";
  if (f.outcome == "inconclusive") return "inconclusive: " + std::to_string(f.noisy_runs) + of + " noisy";
  if (f.outcome == "cannot_tell") return "cannot tell: " + std::to_string(f.untestable_runs) + of + " too few samples";
  return "no regression";
}

// ---------------------------------------------------------------- index page

namespace {

std::string Device(const std::string& vendor, const std::string& device) {
  return device.empty() ? Dash() : device.starts_with(vendor) ? device : vendor + " " + device;
}

bool IsPruned(const Pruned* pruned, const std::string& build) { return pruned && pruned->Has(build); }

mu::data BuildRows(const std::vector<BuildSummary>& history, const Target& md, const Pruned* pruned) {
  mu::data builds = List();
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    const auto& b = *it;
    mu::data bd;
    Set(bd, "id", b.id);
    Set(bd, "pruned", IsPruned(pruned, b.id));
    Set(bd, "href", Href(md, {Kind::kBuildPage, b.id, "", "html"}));
    Set(bd, "started_at", b.started_at.empty() ? Dash() : b.started_at);
    std::string plats;
    for (const auto& p : b.platforms) plats += (plats.empty() ? "" : ", ") + p.id;
    Set(bd, "platforms", plats.empty() ? Dash() : plats);
    Set(bd, "runs", std::to_string(b.runs));
    Set(bd, "ok", std::to_string(b.ok));
    Set(bd, "problems", std::to_string(b.problems));
    Append(builds, std::move(bd));
  }
  return builds;
}

// Every build's flagged changes, newest first; `any_compared` says whether
// any build was compared at all.
mu::data FlaggedRows(const std::vector<BuildSummary>& history, const Target& md, const Pruned* pruned,
                     bool* any_compared) {
  mu::data flagged = List();
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    for (const auto& f : it->flagged) {
      *any_compared = true;
      if (!f.Any()) continue;
      mu::data x;
      Set(x, "build", it->id);
      Set(x, "pruned", IsPruned(pruned, it->id));
      Set(x, "href", Href(md, {Kind::kBuildPage, it->id, "", "html"}));
      Set(x, "platform", f.platform);
      Set(x, "baseline", f.baseline);
      Set(x, "regressions",
          f.confirmed == f.regressions
              ? std::to_string(f.regressions)
              : std::to_string(f.regressions) + " (" + std::to_string(f.confirmed) + " confirmed)");
      Set(x, "improvements", std::to_string(f.improvements));
      Set(x, "status_changes", std::to_string(f.status_changes));
      Set(x, "outcome", OutcomeText(f));
      Set(x, "compare_href", Href(md, {Kind::kComparePage, it->id, "", "html"}));
      Append(flagged, std::move(x));
    }
  }
  return flagged;
}

void SetLatest(mu::data& d, const BuildSummary& latest, const Target& md) {
  Set(d, "latest_id", latest.id);
  Set(d, "latest_href", Href(md, {Kind::kBuildPage, latest.id, "", "html"}));
  Set(d, "latest_table1_href", Href(md, {Kind::kTable1Page, latest.id, "", "md"}));
  mu::data plats = List();
  for (const auto& p : latest.platforms) {
    mu::data pd;
    Set(pd, "id", p.id);
    Set(pd, "device", Device(p.vendor, p.device));
    Set(pd, "geomean_train", OptMs(p.geomean_train_ms));
    Set(pd, "geomean_eval", OptMs(p.geomean_eval_ms));
    Set(pd, "train_n", std::to_string(p.geomean_train_n));
    Set(pd, "eval_n", std::to_string(p.geomean_eval_n));
    Set(pd, "status_text", StatusText(p.status_counts));
    Append(plats, std::move(pd));
  }
  Set(d, "latest_platforms", std::move(plats));
}

std::vector<TrendPoint> SuiteTrend(const std::vector<BuildSummary>& history) {
  std::vector<TrendPoint> points;
  for (const auto& b : history) {
    if (b.started_at.empty()) continue;
    for (const auto& p : b.platforms) {
      if (p.geomean_train_ms) points.push_back({b.id, b.started_at, p.id + " train", *p.geomean_train_ms});
      if (p.geomean_eval_ms) points.push_back({b.id, b.started_at, p.id + " eval", *p.geomean_eval_ms});
    }
  }
  return points;
}

// What the retention policy pruned, for the index's note; absent without a policy.
void SetRetention(mu::data& d, const Pruned* pruned) {
  if (!pruned || pruned->policy.empty()) return;
  mu::data r;
  Set(r, "policy", pruned->policy);
  const size_t n = pruned->builds.size();
  Set(r, "count", std::to_string(n) + (n == 1 ? " build" : " builds"));
  Set(r, "range", n == 1 ? pruned->oldest : pruned->oldest + " to " + pruned->newest);
  Set(d, n > 0 ? "pruned_note" : "retention_note", std::move(r));
}

}  // namespace

mu::data IndexPageData(const PageContext& ctx, const std::vector<BuildSummary>& history, const Pruned* pruned) {
  Target md{Kind::kIndexPage, "", "", "md"};
  mu::data d;
  Set(d, "builds", BuildRows(history, md, pruned));
  SetRetention(d, pruned);
  Set(d, "has_builds", !history.empty());
  bool any_compared = false;
  mu::data flagged = FlaggedRows(history, md, pruned, &any_compared);
  Set(d, "has_flagged", !flagged.list_value().empty());
  Set(d, "flagged", std::move(flagged));
  Set(d, "any_compared", any_compared);
  SetReaderLinks(d, md);
  if (!history.empty()) SetLatest(d, history.back(), md);
  std::vector<TrendPoint> points = SuiteTrend(history);
  if (!points.empty()) {
    Set(d, "trend",
        ctx.figures.Place(md, {Kind::kIndexFigure, "", "index-trend", ""},
                          TrendChart(points, "Suite geomean of median step time per platform and mode (eager runs)",
                                     "Geomean of median step time (ms)"),
                          "Suite geomean of eager median step time across builds"));
  }
  return d;
}

}  // namespace torchgauge::reporter
