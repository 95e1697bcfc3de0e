#include "reporter/alerts/alerts.h"

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
// mode/backend/precision/bsN (ConfigLabel) back into a row's fields.
bool SetConfig(FlaggedChange& f, const std::string& label) {
  const size_t a = label.find('/'), c = label.rfind("/bs");
  if (a == std::string::npos || c == std::string::npos || c <= a) return false;
  const size_t b = label.rfind('/', c - 1);
  if (b == std::string::npos || b <= a) return false;
  f.mode = label.substr(0, a);
  f.backend = label.substr(a + 1, b - a - 1);
  f.precision = label.substr(b + 1, c - b - 1);
  try {
    f.batch_size = std::stoll(label.substr(c + 3));
  } catch (const std::exception&) {
    return false;
  }
  return ConfigLabel(f.mode, f.backend, f.precision, f.batch_size) == label;
}

bool IsTime(const FlaggedChange& f) { return f.metric == "time" || f.metric == "throughput"; }

// The comparison's row of the same run, metric and direction in `b`, or null.
const FlaggedChange* ComparisonRow(const BuildChanges* b, const FlaggedChange& f, const std::string& metric) {
  if (!b) return nullptr;
  for (const auto& x : b->changes) {
    if (x.platform == f.platform && x.model == f.model && x.mode == f.mode && x.backend == f.backend &&
        x.precision == f.precision && x.batch_size == f.batch_size && x.metric == metric &&
        x.regression == f.regression)
      return &x;
  }
  return nullptr;
}

struct Raised {
  const HistoryChange* h = nullptr;
  std::string raised_in, recovered_in, recovered_at;
};
using RowKey = std::tuple<std::string, std::string, std::string, std::string>;  // platform, model, config, build
}  // namespace

namespace {

// The rows alerts are grouped from, per build: the history search's time
// rows and the comparison's other ones (BuildAlerts' rules).
class AlertRows {
 public:
  AlertRows(const std::vector<BuildChanges>& changes, const std::vector<BuildSummary>& history)
      : history_(history) {
    for (const auto& b : changes) by_build_[b.build] = &b;
    for (size_t i = 0; i < history.size(); ++i) index_[history[i].id] = i;
  }

  // The comparison's rows: all but time, and time where the history search
  // could not judge the run that night (too young a history to know its noise).
  void AddComparison(const std::vector<BuildChanges>& changes) {
    for (const auto& c : changes) {
      auto at = index_.find(c.build);
      for (const auto& f : c.changes) {
        const bool young = IsTime(f) && at != index_.end() &&
                           !HistoryCanJudge(history_, f.platform, f.model,
                                            ConfigLabel(f.mode, f.backend, f.precision, f.batch_size), at->second);
        if (!IsTime(f) || young) Entry(c.build, c.started_at).changes.push_back(f);
      }
    }
  }

  // A row per raised change, with the comparison's test where it flagged
  // the same run at that build (and its throughput row).
  void AddHistory(const std::vector<HistoryChange>& found) {
    for (const auto& h : found) {
      const OnlineChange& c = h.change;
      const BuildSummary& at = history_[c.at];
      FlaggedChange f;
      f.platform = h.platform;
      f.model = h.model;
      if (!SetConfig(f, h.config)) continue;
      f.metric = "time";
      f.regression = c.after > c.before;
      f.base_value = c.before;
      f.new_value = c.after;
      f.ratio = c.Factor();
      f.threshold_percent = 7;
      f.seen_in = static_cast<int>(c.raised - c.at + 1);
      f.base_builds = {history_[c.before_build].id};
      auto b = by_build_.find(at.id);
      const BuildChanges* cmp = b == by_build_.end() ? nullptr : b->second;
      BuildChanges& e = Entry(at.id, at.started_at);
      if (const FlaggedChange* x = ComparisonRow(cmp, f, "time")) {
        f.p_value = x->p_value;
        f.noise_percent = x->noise_percent;
        f.threshold_percent = x->threshold_percent;
      }
      e.changes.push_back(f);
      if (const FlaggedChange* x = ComparisonRow(cmp, f, "throughput")) {
        FlaggedChange tp = *x;
        tp.base_builds = f.base_builds;  // the alert's range is the history's
        e.changes.push_back(tp);
      }
      Raised r{&h, history_[c.raised].id, "", ""};
      if (c.recovered_at) r.recovered_in = history_[*c.recovered_at].id, r.recovered_at = history_[*c.recovered_at].started_at;
      raised_[{h.platform, h.model, h.config, at.id}] = r;
    }
  }

  // The builds with rows, in the history's order (a comparison's build the
  // summaries lack last).
  std::vector<BuildChanges> Ordered() {
    std::vector<BuildChanges> out;
    for (const auto& s : history_) {
      if (auto it = rows_.find(s.id); it != rows_.end()) out.push_back(std::move(it->second)), rows_.erase(it);
    }
    for (auto& [id, b] : rows_) out.push_back(std::move(b));
    rows_.clear();
    return out;
  }

  const std::map<RowKey, Raised>& raised() const { return raised_; }

 private:
  BuildChanges& Entry(const std::string& build, const std::string& started_at) {
    BuildChanges& e = rows_[build];
    if (e.build.empty()) {
      e.build = build;
      e.started_at = started_at;
      if (auto it = by_build_.find(build); it != by_build_.end()) e.domains = it->second->domains;
    }
    return e;
  }

  const std::vector<BuildSummary>& history_;
  std::map<std::string, const BuildChanges*> by_build_;
  std::map<std::string, size_t> index_;  // build id -> index into history
  std::map<std::string, BuildChanges> rows_;
  std::map<RowKey, Raised> raised_;
};

// An alert's history parts: the night first raised, recovered (every run:
// the series' rule for history rows, the event's for the comparison's),
// still present.
void Settle(Alert& a, const std::map<RowKey, Raised>& raised, const std::vector<RegressionEvent>& events) {
  bool all_recovered = a.regression, any_present = false;
  std::string recovered_in, recovered_at;
  for (const auto& f : a.rows) {
    if (f.metric == "throughput") continue;
    const std::string config = ConfigLabel(f.mode, f.backend, f.precision, f.batch_size);
    auto it = f.metric == "time" ? raised.find({f.platform, f.model, config, a.build}) : raised.end();
    if (it == raised.end()) {
      const RegressionEvent* e = EventOf(events, f);
      all_recovered = all_recovered && e && e->state == RegressionState::kRecovered;
      continue;
    }
    ++a.history_runs;
    if (a.raised_in.empty() || it->second.raised_in < a.raised_in) a.raised_in = it->second.raised_in;
    const OnlineChange& c = it->second.h->change;
    any_present = any_present || c.still_present;
    if (!c.recovered_at) {
      all_recovered = false;
    } else if (it->second.recovered_at >= recovered_at) {
      recovered_at = it->second.recovered_at;
      recovered_in = it->second.recovered_in;
    }
  }
  if (a.history_runs == 0 || !a.regression) return;
  a.recovered = all_recovered;
  a.recovered_in = all_recovered ? recovered_in : "";
  a.recovered_at = all_recovered ? recovered_at : "";
  a.still_present = any_present;
}

// The regression alert whose time row of run (model, config) on `a`'s
// platform recovered at `a`'s build; "" when none.
std::string RevertedBy(const std::vector<Alert>& alerts, const Alert& a, const FlaggedChange& f) {
  const std::string config = ConfigLabel(f.mode, f.backend, f.precision, f.batch_size);
  std::string of;
  for (const auto& r : alerts) {
    if (!r.regression || r.platform != a.platform || r.recovered_in != a.build) continue;
    for (const auto& g : r.rows) {
      if (g.metric == "time" && g.model == f.model && ConfigLabel(g.mode, g.backend, g.precision, g.batch_size) == config)
        of = r.id;
    }
  }
  return of;
}

// An improvement whose every history run reverts the same regression alert.
void LinkReverts(std::vector<Alert>& alerts) {
  for (auto& a : alerts) {
    if (a.regression || a.history_runs == 0) continue;
    std::string target;
    bool all = true;
    for (const auto& f : a.rows) {
      if (f.metric != "time") continue;
      const std::string of = RevertedBy(alerts, a, f);
      if (of.empty() || (!target.empty() && of != target)) all = false;
      target = of;
    }
    if (all && !target.empty()) a.reverts = target;
  }
}

}  // namespace

std::vector<Alert> BuildAlerts(const std::vector<BuildChanges>& changes, const std::vector<RegressionEvent>& events,
                               const std::vector<BuildSummary>& history, const std::vector<HistoryChange>& found) {
  AlertRows rows(changes, history);
  rows.AddComparison(changes);
  rows.AddHistory(found);
  std::vector<Alert> alerts = GroupAlerts(rows.Ordered(), events);
  for (auto& a : alerts) Settle(a, rows.raised(), events);
  LinkReverts(alerts);
  for (auto& a : alerts) {
    for (const auto& b : alerts) {
      if (b.platform != a.platform && b.base_build == a.base_build && b.build == a.build &&
          b.regression == a.regression)
        a.related.push_back(b.id);
    }
  }
  return alerts;
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
    if (!p || a.history_runs > 0) continue;  // the history's judgement stands
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
