#include "reporter/alerts/regressions.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace torchgauge::reporter {

namespace {
constexpr int kCacheVersion = 1;
constexpr const char* kCacheKind = "torchgauge.site.regressions";

FlaggedChange FromMetricChange(const std::string& platform, const std::vector<std::string>& base_builds,
                               const core::MetricChange& ch) {
  FlaggedChange f;
  f.platform = platform;
  f.model = ch.key.model;
  f.mode = ch.key.mode;
  f.backend = ch.key.backend;
  f.precision = ch.key.precision;
  f.metric = core::MetricName(ch.metric);
  f.batch_size = ch.batch_size;
  f.regression = ch.verdict == core::Verdict::kRegression;
  f.base_value = ch.base_value;
  f.new_value = ch.new_value;
  f.ratio = ch.ratio;
  f.threshold_percent = ch.threshold_percent;
  f.p_value = ch.p_value;
  f.noise_percent = ch.noise_percent;
  f.confirmed = ch.confirmed;
  f.seen_in = ch.seen_in;
  f.base_builds = base_builds;
  return f;
}

json OptJson(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
std::optional<double> OptFrom(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<double>();
}

}  // namespace

std::map<std::string, std::string> ManifestIdentity(const core::Manifest& m) {
  std::map<std::string, std::string> id;
  auto put = [&](const char* name, const std::string& v) {
    if (!v.empty()) id[name] = v;
  };
  put("torch version", m.libtorch_version);
  put("torch commit", m.libtorch_git_commit);
  put("torch build", m.libtorch_build_version);
  put("CUDA runtime", m.cuda_runtime);
  put("cuDNN", m.cudnn);
  put("HIP runtime", m.hip_runtime);
  put("collector version", m.collector_version);
  put("collector commit", m.git_sha);
  put("collector compiler", m.collector_compiler);
  put("vendor", m.vendor);
  put("device", m.device_name);
  put("driver", m.driver);
  if (m.device_memory_bytes) put("device memory bytes", std::to_string(*m.device_memory_bytes));
  put("CPU model", m.cpu_model);
  if (m.logical_cores > 0) put("CPU cores", std::to_string(m.logical_cores));
  if (m.torch_threads) put("torch threads", std::to_string(*m.torch_threads));
  if (m.cpu_memory_bytes) put("CPU memory bytes", std::to_string(*m.cpu_memory_bytes));
  put("host", m.hostname);
  put("OS", m.os);
  put("kernel", m.kernel);
  return id;
}

bool BackWithinBand(const FlaggedChange& e, double after) {
  const double band = std::max(e.threshold_percent, e.noise_percent.value_or(0.0)) / 100.0;
  if (e.base_value <= 0) return false;
  const double ratio = after / e.base_value;
  const bool lower_better = core::LowerIsBetter(core::MetricFromName(e.metric).value_or(core::Metric::kTime));
  return lower_better ? ratio < 1.0 + band : ratio > 1.0 - band;
}
bool FlaggedChange::SameRun(const FlaggedChange& o) const {
  return platform == o.platform && model == o.model && mode == o.mode && backend == o.backend &&
         precision == o.precision && metric == o.metric;
}

BuildChanges CollectChanges(const BuildResults& b, const std::string& started_at, const core::Comparison* cmp) {
  BuildChanges out;
  out.build = b.id;
  out.started_at = started_at;
  for (const auto& p : b.platforms) {
    for (const auto& r : p.runs) out.domains.emplace(r.model.id, r.model.domain);
    if (p.manifest.present) out.identities[p.manifest.platform_id] = ManifestIdentity(p.manifest);
  }
  if (!cmp) return out;
  out.persist = cmp->options.persist;
  for (const auto& p : cmp->platforms) {
    for (const auto& ch : p.changes) {
      if (ch.verdict != core::Verdict::kRegression && ch.verdict != core::Verdict::kImprovement) continue;
      out.changes.push_back(FromMetricChange(p.platform_id, p.base_builds, ch));
    }
  }
  return out;
}

json ToJson(const BuildChanges& c) {
  json changes = json::array();
  for (const auto& f : c.changes) {
    changes.push_back({{"platform", f.platform},
                       {"model", f.model},
                       {"mode", f.mode},
                       {"backend", f.backend},
                       {"precision", f.precision},
                       {"metric", f.metric},
                       {"batch_size", f.batch_size},
                       {"verdict", f.regression ? "regression" : "improvement"},
                       {"base_value", f.base_value},
                       {"new_value", f.new_value},
                       {"ratio", f.ratio},
                       {"threshold_percent", f.threshold_percent},
                       {"p_value", OptJson(f.p_value)},
                       {"noise_percent", OptJson(f.noise_percent)},
                       {"confirmed", f.confirmed},
                       {"seen_in", f.seen_in},
                       {"base_builds", f.base_builds}});
  }
  return {{"schema_version", kCacheVersion},
          {"kind", kCacheKind},
          {"build_id", c.build},
          {"started_at", c.started_at},
          {"persist", c.persist},
          {"domains", c.domains},
          {"changes", changes},
          {"identities", c.identities}};
}

BuildChanges BuildChangesFromJson(const json& j) {
  if (j.at("kind").get<std::string>() != kCacheKind || j.at("schema_version").get<int>() != kCacheVersion) {
    throw std::runtime_error("not a regressions cache of this version");
  }
  BuildChanges c;
  c.build = j.at("build_id").get<std::string>();
  c.started_at = j.at("started_at").get<std::string>();
  c.persist = j.at("persist").get<int>();
  c.domains = j.at("domains").get<std::map<std::string, std::string>>();
  if (j.contains("identities"))
    c.identities = j.at("identities").get<std::map<std::string, std::map<std::string, std::string>>>();
  for (const auto& x : j.at("changes")) {
    FlaggedChange f;
    for (auto [field, key] : {std::pair{&f.platform, "platform"},
                              {&f.model, "model"},
                              {&f.mode, "mode"},
                              {&f.backend, "backend"},
                              {&f.precision, "precision"},
                              {&f.metric, "metric"}}) {
      *field = x.at(key).get<std::string>();
    }
    f.batch_size = x.at("batch_size").get<int64_t>();
    f.regression = x.at("verdict").get<std::string>() == "regression";
    f.base_value = x.at("base_value").get<double>();
    f.new_value = x.at("new_value").get<double>();
    f.ratio = x.at("ratio").get<double>();
    f.threshold_percent = x.at("threshold_percent").get<double>();
    f.p_value = OptFrom(x, "p_value");
    f.noise_percent = OptFrom(x, "noise_percent");
    f.confirmed = x.at("confirmed").get<bool>();
    f.seen_in = x.at("seen_in").get<int>();
    f.base_builds = x.at("base_builds").get<std::vector<std::string>>();
    c.changes.push_back(std::move(f));
  }
  return c;
}

const char* StateName(RegressionState s) {
  switch (s) {
    case RegressionState::kOpen:
      return "open";
    case RegressionState::kRecovered:
      return "recovered";
    case RegressionState::kPersisting:
      return "persisting";
  }
  return "open";
}

std::string RegressionEvent::Key() const {
  return build + "/" + change.platform + "/" + change.model + "." + change.mode + "." + change.backend + "." +
         change.precision + "/" + change.metric;
}

namespace {
// The open (not recovered) event of `f`'s run, if any: the newest one.
RegressionEvent* OpenEvent(std::vector<RegressionEvent>& events, const FlaggedChange& f) {
  for (auto it = events.rbegin(); it != events.rend(); ++it) {
    if (it->change.SameRun(f) && it->state != RegressionState::kRecovered) return &*it;
  }
  return nullptr;
}

void SetState(RegressionEvent& e, RegressionState s, const BuildChanges& b) {
  e.state = s;
  e.state_build = b.build;
  e.state_at = b.started_at;
}

void AddRegression(std::vector<RegressionEvent>& events, const FlaggedChange& f, const BuildChanges& b) {
  RegressionEvent* open = OpenEvent(events, f);
  if (!open || open->change.base_builds != f.base_builds) {
    RegressionEvent e;
    e.change = f;
    e.build = b.build;
    e.started_at = b.started_at;
    auto d = b.domains.find(f.model);
    e.domain = d == b.domains.end() ? "" : d->second;
    e.state_build = b.build;
    e.state_at = b.started_at;
    events.push_back(std::move(e));
    open = &events.back();
  }
  // Confirmed by the persistence rule: only a rule of N > 1 builds says more
  // than the comparison of the build itself.
  if (b.persist > 1 && f.confirmed && open->state == RegressionState::kOpen) {
    SetState(*open, RegressionState::kPersisting, b);
  }
}

void AddImprovement(std::vector<RegressionEvent>& events, const FlaggedChange& f, const BuildChanges& b) {
  for (auto& e : events) {
    if (e.state == RegressionState::kRecovered || !e.change.SameRun(f) || e.build == b.build) continue;
    if (!BackWithinBand(e.change, f.new_value)) continue;
    SetState(e, RegressionState::kRecovered, b);
    e.recovered_value = f.new_value;
  }
}
}  // namespace

std::vector<RegressionEvent> TrackRegressions(const std::vector<BuildChanges>& history) {
  std::vector<RegressionEvent> events;
  for (const auto& b : history) {
    for (const auto& f : b.changes) {
      if (f.regression) AddRegression(events, f, b);
    }
    for (const auto& f : b.changes) {
      if (!f.regression) AddImprovement(events, f, b);
    }
  }
  return events;
}

}  // namespace torchgauge::reporter
