#include "reporter/results/alerts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/io/hash.h"

namespace torchgauge::reporter {

std::string AlertId(const std::string& platform, const std::string& base_build, const std::string& build,
                    bool regression) {
  const std::string hex = core::Fingerprint()
                              .Add("torchgauge alert")
                              .Add(platform)
                              .Add(base_build)
                              .Add(build)
                              .Add(regression ? "regression" : "improvement")
                              .Hex();
  return "A-" + hex.substr(0, 12);
}

namespace {

double Size(const FlaggedChange& f) { return f.ratio > 0 ? std::abs(std::log(f.ratio)) : 0.0; }

std::string RunOf(const FlaggedChange& f) {
  return f.model + "." + f.mode + "." + f.backend + "." + f.precision + "." + std::to_string(f.batch_size);
}

// The event TrackRegressions made of regression row `f` of build `build`.
const RegressionEvent* EventOf(const std::vector<RegressionEvent>& events, const FlaggedChange& f) {
  for (const auto& e : events) {
    if (e.change.SameRun(f) && e.change.base_builds == f.base_builds) return &e;
  }
  return nullptr;
}

void Summarize(Alert& a, const std::vector<RegressionEvent>& events, const BuildChanges& b) {
  const bool has_time = std::any_of(a.rows.begin(), a.rows.end(), [](const auto& f) { return f.metric == "time"; });
  a.geomean_metric = has_time ? "time" : a.rows.front().metric;
  // The geomean's metric first, largest change first; then the other rows.
  std::stable_sort(a.rows.begin(), a.rows.end(), [&](const FlaggedChange& x, const FlaggedChange& y) {
    const bool xm = x.metric == a.geomean_metric, ym = y.metric == a.geomean_metric;
    if (xm != ym) return xm;
    if (Size(x) != Size(y)) return Size(x) > Size(y);
    return std::tie(x.model, x.mode, x.backend, x.precision, x.metric) <
           std::tie(y.model, y.mode, y.backend, y.precision, y.metric);
  });
  std::set<std::string> runs, domains;
  double log_sum = 0;
  for (const auto& f : a.rows) {
    runs.insert(RunOf(f));
    auto d = b.domains.find(f.model);
    if (d != b.domains.end()) domains.insert(d->second);
    if (f.metric != a.geomean_metric || f.ratio <= 0) continue;
    log_sum += std::log(f.ratio);
    ++a.geomean_runs;
  }
  a.runs = static_cast<int>(runs.size());
  a.domains.assign(domains.begin(), domains.end());
  if (a.geomean_runs > 0) a.geomean = std::exp(log_sum / a.geomean_runs);
  if (!a.regression) return;
  a.recovered = true;
  for (const auto& f : a.rows) {
    const RegressionEvent* e = EventOf(events, f);
    if (!e || e->state != RegressionState::kRecovered) {
      a.recovered = false;
      break;
    }
    if (e->state_at >= a.recovered_at) {
      a.recovered_at = e->state_at;
      a.recovered_in = e->state_build;
    }
  }
  if (!a.recovered) a.recovered_in.clear(), a.recovered_at.clear();
}

}  // namespace

std::vector<Alert> GroupAlerts(const std::vector<BuildChanges>& history, const std::vector<RegressionEvent>& events) {
  std::vector<Alert> out;
  for (const auto& b : history) {
    // Regressions first, then by platform and base build: a stable order.
    std::map<std::tuple<bool, std::string, std::string>, Alert> groups;
    for (const auto& f : b.changes) {
      const std::string base = f.base_builds.empty() ? "" : f.base_builds.back();
      Alert& a = groups[{!f.regression, f.platform, base}];
      if (a.id.empty()) {
        a.id = AlertId(f.platform, base, b.build, f.regression);
        a.platform = f.platform;
        a.base_build = base;
        a.build = b.build;
        a.started_at = b.started_at;
        a.regression = f.regression;
      }
      a.rows.push_back(f);
    }
    for (auto& [key, a] : groups) {
      Summarize(a, events, b);
      out.push_back(std::move(a));
    }
  }
  return out;
}

namespace {
// The newest summary of `platform` in `history`, and the build's id.
const PlatformSummary* Newest(const std::vector<BuildSummary>& history, const std::string& platform,
                              std::string* build) {
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    for (const auto& p : it->platforms) {
      if (p.id != platform) continue;
      *build = it->id;
      return &p;
    }
  }
  return nullptr;
}
}  // namespace

void MarkStillPresent(std::vector<Alert>& alerts, const std::vector<BuildSummary>& history) {
  for (auto& a : alerts) {
    if (!a.regression) continue;
    const PlatformSummary* p = Newest(history, a.platform, &a.newest_build);
    if (!p) continue;
    for (const auto& f : a.rows) {
      if (f.metric != "time") continue;
      const std::string config = ConfigLabel(f.mode, f.backend, f.precision, f.batch_size);
      for (const auto& m : p->medians) {
        if (m.model == f.model && m.config == config)
          a.still_present = a.still_present.value_or(false) || !BackWithinBand(f, m.median_ms);
      }
    }
  }
}

const Alert* FindAlert(const std::vector<Alert>& alerts, const std::string& id) {
  for (const auto& a : alerts) {
    if (a.id == id) return &a;
  }
  return nullptr;
}

}  // namespace torchgauge::reporter
