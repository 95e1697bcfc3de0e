#include "reporter/results/aggregate.h"

#include "core/analysis/coverage.h"
#include "core/analysis/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/contract/vocabulary.h"
#include "core/stats/stats.h"

using nlohmann::json;

namespace torchgauge::reporter {

const PaperRow* PaperTable2::Find(const std::string& domain) const {
  for (const auto& r : rows) {
    if (r.domain == domain) return &r;
  }
  return nullptr;
}

std::string DomainLabel(const std::string& domain, const PaperTable2& paper) {
  const PaperRow* p = paper.Find(domain);
  return p ? p->label : domain;
}

PaperTable2 PaperTable2FromJson(const json& j) {
  PaperTable2 t;
  t.citation = j.at("citation").get<std::string>();
  for (const auto& r : j.at("rows")) {
    PaperRow p;
    p.domain = r.at("domain").get<std::string>();
    p.label = r.at("label").get<std::string>();
    const auto& tr = r.at("train");
    const auto& ev = r.at("inference");
    p.train_active = tr.at("gpu_active_pct").get<double>();
    p.train_movement = tr.at("data_movement_pct").get<double>();
    p.train_idle = tr.at("gpu_idle_pct").get<double>();
    p.eval_active = ev.at("gpu_active_pct").get<double>();
    p.eval_movement = ev.at("data_movement_pct").get<double>();
    p.eval_idle = ev.at("gpu_idle_pct").get<double>();
    t.rows.push_back(p);
  }
  return t;
}

std::string ConfigLabel(const std::string& mode, const std::string& backend, const std::string& precision,
                        int64_t batch) {
  return mode + "/" + backend + "/" + precision + "/bs" + std::to_string(batch);
}
std::string ConfigLabel(const core::RunResult& r) { return ConfigLabel(r.mode, r.backend, r.precision, r.batch_size); }

std::optional<double> Tflops(const core::RunResult& r) {
  if (!r.flops) return std::nullopt;
  return r.flops->achieved_tflops_profiler ? r.flops->achieved_tflops_profiler : r.flops->achieved_tflops_analytic;
}

namespace {
bool Ok(const core::RunResult& r) { return r.status == "ok" && r.timing && r.timing->median_ms > 0; }
}  // namespace

const char* BreakdownSourceId(BreakdownSource s) {
  switch (s) {
    case BreakdownSource::kGpu:
      return "gpu";
    case BreakdownSource::kHost:
      return "host";
    case BreakdownSource::kNone:
      break;
  }
  return "none";
}

BreakdownPartNames PartNames(BreakdownSource s) {
  if (s == BreakdownSource::kHost) {
    return {"host (CPU) time: compute / data movement / outside operators", "compute", "data movement",
            "outside operators"};
  }
  return {"GPU time: active / data movement / idle", "active", "data movement", "idle"};
}

BreakdownSource PickBreakdownSource(const std::vector<const core::RunResult*>& runs) {
  bool host = false;
  for (const auto* r : runs) {
    if (r->gpu_breakdown) return BreakdownSource::kGpu;
    if (r->host_breakdown) host = true;
  }
  return host ? BreakdownSource::kHost : BreakdownSource::kNone;
}

std::optional<BreakdownParts> PartsOf(const core::RunResult& r, BreakdownSource source) {
  if (source == BreakdownSource::kGpu && r.gpu_breakdown) {
    const auto& g = *r.gpu_breakdown;
    return BreakdownParts{g.active_fraction, g.data_movement_fraction, g.idle_fraction};
  }
  if (source == BreakdownSource::kHost && r.host_breakdown) {
    const auto& h = *r.host_breakdown;
    return BreakdownParts{h.compute_fraction, h.data_movement_fraction, h.outside_operators_fraction};
  }
  return std::nullopt;
}

HostBreakdownNote HostNote(const std::vector<const core::RunResult*>& runs) {
  HostBreakdownNote note;
  std::set<std::string> ops;
  std::vector<double> overheads;
  for (const auto* r : runs) {
    if (!r->host_breakdown) continue;
    ops.insert(r->host_breakdown->data_movement_ops.begin(), r->host_breakdown->data_movement_ops.end());
    if (r->host_breakdown->profiler_overhead_per_op_us)
      overheads.push_back(*r->host_breakdown->profiler_overhead_per_op_us);
  }
  note.data_movement_ops.assign(ops.begin(), ops.end());
  note.overhead_runs = static_cast<int>(overheads.size());
  if (!overheads.empty()) note.profiler_overhead_per_op_us = core::Quantile(overheads, 0.5);
  return note;
}

std::optional<core::NoiseVerdict> NoisyVerdict(const core::RunResult& r) {
  if (!Ok(r)) return std::nullopt;
  core::NoiseVerdict v = core::RunNoise(r);
  if (!v.noisy) return std::nullopt;
  return v;
}

std::string NoisySides(const core::RunResult& a, const std::string& a_name, const core::RunResult& b,
                       const std::string& b_name) {
  std::string out;
  for (const auto& [r, name] : {std::pair{&a, &a_name}, std::pair{&b, &b_name}}) {
    if (auto v = NoisyVerdict(*r)) out += (out.empty() ? "" : "; ") + *name + " run noisy: " + v->reason;
  }
  return out;
}

PeakShare PeakShareOf(const core::RunResult& r, const Manifest& m) {
  PeakShare s;
  std::optional<double> rate;
  if (r.flops && r.flops->achieved_tflops_analytic) {
    rate = r.flops->achieved_tflops_analytic;
    s.basis = "analytic";
  } else if (r.flops && r.flops->achieved_tflops_profiler) {
    rate = r.flops->achieved_tflops_profiler;
    s.basis = "profiler";
  }
  if (!m.peaks) {
    s.why_not = "not probed";
  } else if (!rate) {
    s.why_not = "no FLOP count";
  } else {
    const bool tf32 =
        r.precision_flags && (r.precision_flags->matmul_allow_tf32 || r.precision_flags->cudnn_allow_tf32);
    s.percent = core::PercentOfPeak(*m.peaks, r.precision, rate, tf32);
    if (!s.percent) {
      s.why_not = "no " + r.precision + " peak";
    } else if (*s.percent > 100) {
      // A peak below what a model achieved is no peak: it was probed under
      // load, or the probe's kernel is not the fastest (a 2-thread probe on
      // a busy 2-core machine measured 64 GFLOP/s where one thread gave 103).
      // Withheld, with the figure it would have been.
      char buf[160];
      std::snprintf(buf, sizeof buf, "withheld: the probed peak is below this run's rate (%.0f %%)", *s.percent);
      s.why_not = buf;
      s.percent.reset();
    }
  }
  return s;
}

std::vector<PeakSummary> SummarizePeakShares(const std::vector<const core::RunResult*>& runs, const Manifest& m) {
  // A train step and an eval step, two backends, or an analytic count and the
  // profiler's are different figures: each (mode, backend, basis) is its own row.
  using Kind = std::tuple<std::string, std::string, std::string>;
  std::map<std::string, std::map<Kind, std::vector<double>>> by_domain;
  for (const auto* r : runs) {
    if (!Ok(*r)) continue;
    const PeakShare share = PeakShareOf(*r, m);
    if (!share.percent) continue;
    const Kind kind{r->mode, r->backend, share.basis};
    by_domain[r->model.domain][kind].push_back(*share.percent);
    by_domain["all"][kind].push_back(*share.percent);
  }
  // The paper's domain order (as Table 2), then any other domain, then the suite.
  std::vector<std::string> order(std::begin(core::kDomains), std::end(core::kDomains));
  for (const auto& [domain, kinds] : by_domain) {
    if (domain != "all" && std::find(order.begin(), order.end(), domain) == order.end()) order.push_back(domain);
  }
  order.push_back("all");
  std::vector<PeakSummary> out;
  for (const auto& domain : order) {
    auto it = by_domain.find(domain);
    if (it == by_domain.end()) continue;
    for (const auto& [kind, v] : it->second) {
      const auto& [mode, backend, basis] = kind;
      out.push_back({domain, mode, backend, basis, static_cast<int>(v.size()), core::Quantile(v, 0.5),
                     *std::max_element(v.begin(), v.end())});
    }
  }
  return out;
}

std::vector<BreakdownBar> BreakdownBars(const std::vector<const core::RunResult*>& runs, const std::string& mode,
                                        BreakdownSource source) {
  std::vector<const core::RunResult*> picked;
  std::map<std::string, int> per_model;
  for (const auto* r : runs) {
    if (r->mode == mode && r->backend == "eager" && r->status == "ok" && PartsOf(*r, source)) {
      picked.push_back(r);
      per_model[r->model.id]++;
    }
  }
  std::vector<BreakdownBar> bars;
  for (const auto* r : picked) {
    const BreakdownParts g = *PartsOf(*r, source);
    BreakdownBar b;
    b.model = r->model.id;
    b.noisy = NoisyVerdict(*r).has_value();
    b.domain = r->model.domain;
    b.label = per_model[r->model.id] > 1
                  ? r->model.id + " (" + r->precision + ", bs" + std::to_string(r->batch_size) + ")"
                  : r->model.id;
    // Normalise so each bar is exactly 100% even if the parts do not add up.
    double sum = g.first + g.second + g.third;
    if (sum > 0) {
      b.active = g.first / sum;
      b.movement = g.second / sum;
      b.idle = g.third / sum;
    }
    bars.push_back(b);
  }
  std::sort(bars.begin(), bars.end(), [](const BreakdownBar& a, const BreakdownBar& b) {
    if (a.active != b.active) return a.active > b.active;
    return a.label < b.label;
  });
  return bars;
}

std::vector<DomainBreakdown> DomainMeans(const std::vector<const core::RunResult*>& runs, const std::string& mode,
                                         const PaperTable2& paper, BreakdownSource source) {
  // domain -> model -> (sum of fractions, count)
  struct Acc {
    double a = 0, m = 0, i = 0;
    int n = 0, noisy = 0;
  };
  std::map<std::string, std::map<std::string, Acc>> acc;
  for (const auto* r : runs) {
    if (r->mode != mode || r->backend != "eager" || r->status != "ok") continue;
    const auto parts = PartsOf(*r, source);
    if (!parts) continue;
    auto& x = acc[r->model.domain][r->model.id];
    x.a += parts->first;
    x.m += parts->second;
    x.i += parts->third;
    x.n++;
    x.noisy += NoisyVerdict(*r).has_value();
  }
  std::vector<DomainBreakdown> out;
  // The paper's domain order first, then any other domain alphabetically.
  std::vector<std::string> order;
  for (const auto& row : paper.rows) order.push_back(row.domain);
  for (const auto& [d, _] : acc) {
    if (std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
  }
  for (const auto& d : order) {
    DomainBreakdown db;
    db.domain = d;
    db.paper = paper.Find(d);
    auto it = acc.find(d);
    if (it != acc.end()) {
      for (const auto& [model, x] : it->second) {
        db.active += x.a / x.n;
        db.movement += x.m / x.n;
        db.idle += x.i / x.n;
        db.noisy_runs += x.noisy;
        db.models++;
      }
      db.active /= db.models;
      db.movement /= db.models;
      db.idle /= db.models;
    }
    out.push_back(db);
  }
  return out;
}

std::optional<double> SuiteGeomean(const std::vector<const core::RunResult*>& runs, const std::string& mode, int* n) {
  std::vector<double> v;
  for (const auto* r : runs) {
    if (r->mode == mode && r->backend == "eager" && Ok(*r)) v.push_back(r->timing->median_ms);
  }
  if (n) *n = static_cast<int>(v.size());
  if (v.empty()) return std::nullopt;
  return core::GeoMean(v);
}

std::vector<CoverageRow> ApiCoverage(const std::vector<const core::RunResult*>& runs) {
  const core::Coverage c = core::ComputeCoverage(runs);
  std::vector<CoverageRow> out;
  for (const auto& [d, s] : c.by_domain) {
    out.push_back({d, static_cast<int>(c.models_by_domain.at(d).size()), s.size()});
  }
  if (!c.by_domain.empty()) out.push_back({"all", static_cast<int>(c.all_models.size()), c.all.size()});
  return out;
}

namespace {

// The ok eager runs, by what a backend's run is compared on: model, mode,
// precision and batch size. Figures 3/4 and the HUD metrics pair runs through it.
class EagerIndex {
 public:
  explicit EagerIndex(const std::vector<const core::RunResult*>& runs) {
    for (const auto* r : runs) {
      if (r->backend == "eager" && Ok(*r)) by_key_[Key(*r)] = r;
    }
  }
  // The eager counterpart of `r`; null when eager has no ok run for it.
  const core::RunResult* Find(const core::RunResult& r) const {
    auto it = by_key_.find(Key(r));
    return it == by_key_.end() ? nullptr : it->second;
  }

 private:
  using K = std::tuple<std::string, std::string, std::string, int64_t>;
  static K Key(const core::RunResult& r) { return {r.model.id, r.mode, r.precision, r.batch_size}; }
  std::map<K, const core::RunResult*> by_key_;
};

// num's peak over den's, for one Memory field; nullopt unless both measured it
// and den's is positive.
std::optional<double> MemoryRatio(const core::RunResult& num, const core::RunResult& den,
                                  std::optional<int64_t> core::Memory::*field) {
  if (!num.memory || !den.memory) return std::nullopt;
  const auto& n = (*num.memory).*field;
  const auto& d = (*den.memory).*field;
  if (!n || !d || *d <= 0) return std::nullopt;
  return static_cast<double>(*n) / static_cast<double>(*d);
}

}  // namespace

std::vector<BackendRatio> BackendRatios(const std::vector<const core::RunResult*>& runs) {
  const EagerIndex eager(runs);
  std::vector<BackendRatio> out;
  for (const auto* r : runs) {
    if (r->backend == "eager" || !Ok(*r)) continue;
    const auto* found = eager.Find(*r);
    if (!found) continue;
    const auto& e = *found;
    BackendRatio br;
    br.model = r->model.id;
    br.mode = r->mode;
    br.precision = r->precision;
    br.backend = r->backend;
    br.eager_ms = e.timing->median_ms;
    br.backend_ms = r->timing->median_ms;
    br.ratio = r->timing->median_ms / e.timing->median_ms;
    br.cpu_memory_ratio = MemoryRatio(*r, e, &core::Memory::cpu_peak_rss_bytes);
    br.gpu_memory_ratio = MemoryRatio(*r, e, &core::Memory::gpu_peak_allocated_bytes);
    br.backend_setup_ms = r->timing->backend_setup_ms;
    br.noisy = NoisySides(e, "eager", *r, r->backend);
    if (r->paired) br.paired = &*r->paired;
    out.push_back(std::move(br));
  }
  std::sort(out.begin(), out.end(), [](const BackendRatio& a, const BackendRatio& b) {
    return std::tie(a.mode, a.backend, a.model, a.precision) < std::tie(b.mode, b.backend, b.model, b.precision);
  });
  return out;
}

std::vector<BackendSummary> SummarizeBackends(const std::vector<BackendRatio>& ratios) {
  struct Acc {
    std::vector<double> time, cpu, gpu;
    int noisy = 0;
  };
  std::map<std::pair<std::string, std::string>, Acc> acc;
  for (const auto& r : ratios) {
    auto& a = acc[{r.backend, r.mode}];
    if (r.ratio > 0) a.time.push_back(r.ratio);
    if (r.ratio > 0 && !r.noisy.empty()) a.noisy++;
    if (r.cpu_memory_ratio && *r.cpu_memory_ratio > 0) a.cpu.push_back(*r.cpu_memory_ratio);
    if (r.gpu_memory_ratio && *r.gpu_memory_ratio > 0) a.gpu.push_back(*r.gpu_memory_ratio);
  }
  std::vector<BackendSummary> out;
  for (const auto& [key, a] : acc) {
    if (a.time.empty()) continue;
    BackendSummary s;
    s.backend = key.first;
    s.mode = key.second;
    s.pairs = static_cast<int>(a.time.size());
    s.noisy = a.noisy;
    s.time_geomean = core::GeoMean(a.time);
    if (!a.cpu.empty()) s.cpu_memory_geomean = core::GeoMean(a.cpu);
    if (!a.gpu.empty()) s.gpu_memory_geomean = core::GeoMean(a.gpu);
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

// The first line of a failure's message, as the HUD groups failures.
std::string FailureCause(const core::RunResult& r) {
  std::string why = r.reason.value_or(r.status);
  why = why.substr(0, why.find('\n'));
  if (why.size() > 160) why = why.substr(0, 157) + "...";
  return r.status + ": " + why;
}

double CompileSeconds(const core::RunResult& r) {
  if (r.compile) {
    const auto& c = *r.compile;
    return (c.trace_ms.value_or(0) + c.convert_ms.value_or(0) + c.compile_ms.value_or(0) + c.load_ms.value_or(0)) /
           1000.0;
  }
  return r.timing->backend_setup_ms.value_or(0) / 1000.0;
}

// The HUD's memory compression ratio: eager peak / compiled peak, GPU where
// both measured it, else CPU.
std::optional<double> Compression(const core::RunResult& eager, const core::RunResult& compiled) {
  for (auto field : {&core::Memory::gpu_peak_allocated_bytes, &core::Memory::cpu_peak_rss_bytes}) {
    auto c = MemoryRatio(eager, compiled, field);
    if (c && *c > 0) return c;
  }
  return std::nullopt;
}

}  // namespace

std::string PairedVerdict(const core::PairedTiming& p) {
  if (!p.speedup_low || !p.speedup_high) return "one process: no interval";
  if (*p.speedup_low <= 1.0 && *p.speedup_high >= 1.0) return "within noise";
  return p.speedup > 1.0 ? "faster" : "slower";
}

std::vector<CompilerMetrics> HudCompilerMetrics(const std::vector<const core::RunResult*>& runs) {
  const EagerIndex eager(runs);
  struct Acc {
    CompilerMetrics m;
    std::vector<double> speedups, compile_s, load_s, compression;
    std::map<std::string, int> causes;
  };
  std::map<std::pair<std::string, std::string>, Acc> acc;
  for (const auto* r : runs) {
    if (r->backend == "eager") continue;
    const auto* e = eager.Find(*r);
    if (!e) continue;  // eager did not run: the HUD leaves the model out
    Acc& a = acc[{r->backend, r->mode}];
    a.m.attempted++;
    if (!Ok(*r)) {
      a.causes[FailureCause(*r)]++;
      continue;
    }
    a.m.passed++;
    const double speedup = r->paired ? r->paired->speedup : e->timing->median_ms / r->timing->median_ms;
    if (speedup > 0) a.speedups.push_back(speedup);
    if (speedup < kHudSlowSpeedup) a.m.slow++;
    if (r->compile || r->timing->backend_setup_ms) {
      (r->compile && r->compile->cache_hit ? a.load_s : a.compile_s).push_back(CompileSeconds(*r));
    }
    if (auto c = Compression(*e, *r)) {
      a.compression.push_back(*c);
      if (*c < kHudPoorCompression) a.m.poor_compression++;
    }
  }
  std::vector<CompilerMetrics> out;
  for (auto& [key, a] : acc) {
    a.m.backend = key.first;
    a.m.mode = key.second;
    if (!a.speedups.empty()) a.m.geomean_speedup = core::GeoMean(a.speedups);
    if (!a.compile_s.empty()) a.m.mean_compile_s = core::Summarize(a.compile_s).mean;
    if (!a.load_s.empty()) a.m.mean_load_s = core::Summarize(a.load_s).mean;
    a.m.compiles = static_cast<int>(a.compile_s.size());
    a.m.cache_hits = static_cast<int>(a.load_s.size());
    if (!a.compression.empty()) a.m.compression_geomean = core::GeoMean(a.compression);
    a.m.failure_causes.assign(a.causes.begin(), a.causes.end());
    std::stable_sort(a.m.failure_causes.begin(), a.m.failure_causes.end(),
                     [](const auto& x, const auto& y) { return x.second > y.second; });
    out.push_back(std::move(a.m));
  }
  return out;
}

namespace {

// Every run with figures is judged; the warning counts them all.
void JudgeNoise(PlatformView& pv) {
  std::vector<core::NoiseVerdict> verdicts;
  for (const auto* r : pv.runs) {
    if (!Ok(*r)) continue;
    verdicts.push_back(core::RunNoise(*r));
    if (verdicts.back().noisy) pv.noisy_runs++;
  }
  pv.noise_warning = core::NoiseWarning(verdicts);
}

}  // namespace

std::vector<GenerationRow> GenerationRows(const std::vector<const core::RunResult*>& runs) {
  std::vector<GenerationRow> rows;
  for (const auto* r : runs) {
    if (r->status != "ok" || (!r->generation && !r->generation_reason)) continue;
    GenerationRow row;
    row.model = r->model.id;
    row.mode = r->mode;
    row.backend = r->backend;
    row.precision = r->precision;
    row.batch_size = r->batch_size;
    if (r->generation) row.generation = &*r->generation;
    if (!r->generation) row.reason = r->generation_reason.value_or("");
    row.noisy = NoisyVerdict(*r).has_value();
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const GenerationRow& a, const GenerationRow& b) {
    return std::tie(a.model, a.mode, a.backend, a.precision) < std::tie(b.model, b.mode, b.backend, b.precision);
  });
  return rows;
}

namespace {

PlatformView ViewPlatform(const PlatformResults& p, const PaperTable2& paper, std::set<std::string>* models) {
  PlatformView pv;
  pv.id = p.manifest.platform_id;
  pv.manifest = &p.manifest;
  pv.problems = p.problems;
  for (const auto& r : p.runs) {
    pv.runs.push_back(&r);
    pv.status_counts[r.status]++;
    if (r.status != "ok") pv.failures.push_back(&r);
    if (r.gpu_breakdown) pv.has_gpu_breakdown = true;
    models->insert(r.model.id);
  }
  pv.breakdown_source = PickBreakdownSource(pv.runs);
  pv.figure1_train = BreakdownBars(pv.runs, "train", pv.breakdown_source);
  pv.figure2_eval = BreakdownBars(pv.runs, "eval", pv.breakdown_source);
  pv.table2_train = DomainMeans(pv.runs, "train", paper, pv.breakdown_source);
  pv.table2_eval = DomainMeans(pv.runs, "eval", paper, pv.breakdown_source);
  pv.coverage = ApiCoverage(pv.runs);
  pv.geomean_train_ms = SuiteGeomean(pv.runs, "train", &pv.geomean_train_n);
  pv.geomean_eval_ms = SuiteGeomean(pv.runs, "eval", &pv.geomean_eval_n);
  pv.backend_ratios = BackendRatios(pv.runs);
  pv.backend_summaries = SummarizeBackends(pv.backend_ratios);
  pv.compiler_metrics = HudCompilerMetrics(pv.runs);
  if (pv.breakdown_source == BreakdownSource::kHost) pv.host_note = HostNote(pv.runs);
  pv.peak_summaries = SummarizePeakShares(pv.runs, p.manifest);
  pv.generation = GenerationRows(pv.runs);
  JudgeNoise(pv);
  return pv;
}

// Figure 5, generalized: every other platform against the reference.
void ComparePlatformsOf(BuildView& v, const std::optional<std::string>& wanted) {
  if (v.platforms.size() < 2) return;
  std::set<std::string> ids;
  for (const auto& p : v.platforms) ids.insert(p.id);
  ReferenceChoice choice = ChooseReference(ids, wanted);
  v.reference_platform = choice.id;
  v.reference_note = choice.note;
  const auto ref =
      std::find_if(v.platforms.begin(), v.platforms.end(), [&](const PlatformView& p) { return p.id == choice.id; });
  std::vector<const PlatformView*> others;
  for (const auto& p : v.platforms) {
    if (&p != &*ref) others.push_back(&p);
  }
  std::sort(others.begin(), others.end(), [](const PlatformView* a, const PlatformView* b) { return a->id < b->id; });
  for (const auto* p : others) {
    v.platform_ratios.push_back(ComparePlatforms(*ref->manifest, ref->runs, *p->manifest, p->runs));
  }
}

}  // namespace

BuildView AggregateBuild(const BuildResults& build, const PaperTable2& paper,
                         const std::optional<std::string>& reference) {
  BuildView v;
  v.id = build.id;
  v.started_at = build.started_at;
  v.problems = build.problems;
  std::set<std::string> models;
  for (const auto& p : build.platforms) v.platforms.push_back(ViewPlatform(p, paper, &models));
  v.models.assign(models.begin(), models.end());
  ComparePlatformsOf(v, reference);
  return v;
}

BuildSummary Summarize(const BuildView& view) {
  BuildSummary s;
  s.id = view.id;
  s.started_at = view.started_at;
  s.problems = static_cast<int>(view.problems.size());
  for (const auto& p : view.platforms) {
    PlatformSummary ps;
    ps.id = p.id;
    ps.vendor = p.manifest->vendor;
    ps.device = p.manifest->device_name;
    ps.status_counts = p.status_counts;
    ps.geomean_train_ms = p.geomean_train_ms;
    ps.geomean_eval_ms = p.geomean_eval_ms;
    ps.geomean_train_n = p.geomean_train_n;
    ps.geomean_eval_n = p.geomean_eval_n;
    for (const auto* r : p.runs) {
      s.runs++;
      if (r->status != "ok") {
        ps.not_ok.push_back({r->model.id, ConfigLabel(*r)});
        continue;
      }
      s.ok++;
      if (Ok(*r)) {
        const auto [level, se] = ProcessLevel(*r);
        ps.medians.push_back({r->model.id, ConfigLabel(*r), r->timing->median_ms, core::RunNoise(*r).noisy, level, se});
      }
      const auto ir = core::MetricMedian(*r, core::Metric::kInstructions);
      const auto cycles = core::MetricMedian(*r, core::Metric::kEstimatedCycles);
      if (ir && cycles) {
        ps.counts.push_back({r->model.id, ConfigLabel(*r), *ir, *cycles});
      }
    }
    s.platforms.push_back(std::move(ps));
  }
  return s;
}

std::pair<double, double> ProcessLevel(const core::RunResult& r) {
  return r.timing ? ProcessLevel(r.timing->process_medians_ms) : std::pair<double, double>{0, 0};
}

std::pair<double, double> ProcessLevel(const std::vector<double>& process_medians_ms) {
  std::vector<double> logs;
  for (double m : process_medians_ms) {
    if (!(m > 0)) return {0, 0};
    logs.push_back(std::log(m));
  }
  if (logs.size() < 2) return {0, 0};
  const double n = static_cast<double>(logs.size());
  double mean = 0;
  for (double l : logs) mean += l / n;
  double ss = 0;
  for (double l : logs) ss += (l - mean) * (l - mean);
  return {std::exp(mean), std::sqrt(ss / (n - 1)) / std::sqrt(n)};
}

namespace {
// 2: adds "flagged" (the comparison with the previous build). An older cache
// is stale and recomputed from the results.
// 3: a noisy median carries a fourth element, 1; 4: adds "not_ok"; 5: "flagged"
// counts runs, not metrics, and carries the platform's outcome; 6: adds
// "counts" (counted runs), and "ok" counts an ok run without a timed median;
// 7: a median of a run of two or more processes carries its level and the
// level's standard error (ConfigMedian), after a noisy flag of 0 or 1.
constexpr int kSummaryVersion = 7;
json OptNum(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
std::optional<double> GetOptNum(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<double>();
}
}  // namespace

json ToJson(const BuildSummary& s) {
  json j = {{"kind", "torchgauge.build_summary"},
            {"summary_version", kSummaryVersion},
            {"id", s.id},
            {"started_at", s.started_at},
            {"problems", s.problems},
            {"runs", s.runs},
            {"ok", s.ok}};
  json plats = json::array();
  for (const auto& p : s.platforms) {
    json med = json::array();
    for (const auto& m : p.medians) {
      if (m.level_ms > 0) {
        med.push_back({m.model, m.config, m.median_ms, m.noisy ? 1 : 0, m.level_ms, m.level_se});
      } else {
        med.push_back(m.noisy ? json({m.model, m.config, m.median_ms, 1}) : json({m.model, m.config, m.median_ms}));
      }
    }
    json counts = json::array();
    for (const auto& c : p.counts) counts.push_back({c.model, c.config, c.instructions, c.est_cycles});
    plats.push_back({{"id", p.id},
                     {"vendor", p.vendor},
                     {"device", p.device},
                     {"status_counts", p.status_counts},
                     {"geomean_train_ms", OptNum(p.geomean_train_ms)},
                     {"geomean_eval_ms", OptNum(p.geomean_eval_ms)},
                     {"geomean_train_n", p.geomean_train_n},
                     {"geomean_eval_n", p.geomean_eval_n},
                     {"medians", med},
                     {"counts", counts},
                     {"not_ok", p.not_ok}});
  }
  j["platforms"] = plats;
  json flagged = json::array();
  for (const auto& f : s.flagged) {
    flagged.push_back({{"platform", f.platform},
                       {"baseline", f.baseline},
                       {"regressions", f.regressions},
                       {"confirmed", f.confirmed},
                       {"improvements", f.improvements},
                       {"status_changes", f.status_changes},
                       {"outcome", f.outcome},
                       {"compared_runs", f.compared_runs},
                       {"noisy_runs", f.noisy_runs},
                       {"untestable_runs", f.untestable_runs}});
  }
  j["flagged"] = flagged;
  return j;
}

BuildSummary BuildSummaryFromJson(const json& j) {
  if (j.value("kind", "") != "torchgauge.build_summary" || j.value("summary_version", 0) != kSummaryVersion) {
    throw std::runtime_error("not a build summary of version " + std::to_string(kSummaryVersion));
  }
  BuildSummary s;
  s.id = j.at("id").get<std::string>();
  s.started_at = j.at("started_at").get<std::string>();
  s.problems = j.at("problems").get<int>();
  s.runs = j.at("runs").get<int>();
  s.ok = j.at("ok").get<int>();
  for (const auto& p : j.at("platforms")) {
    PlatformSummary ps;
    ps.id = p.at("id").get<std::string>();
    ps.vendor = p.at("vendor").get<std::string>();
    ps.device = p.at("device").get<std::string>();
    ps.status_counts = p.at("status_counts").get<std::map<std::string, int>>();
    ps.geomean_train_ms = GetOptNum(p, "geomean_train_ms");
    ps.geomean_eval_ms = GetOptNum(p, "geomean_eval_ms");
    ps.geomean_train_n = p.at("geomean_train_n").get<int>();
    ps.geomean_eval_n = p.at("geomean_eval_n").get<int>();
    for (const auto& m : p.at("medians")) {
      ps.medians.push_back({m.at(0).get<std::string>(), m.at(1).get<std::string>(), m.at(2).get<double>(),
                            m.size() > 3 && m.at(3) == 1, m.size() > 5 ? m.at(4).get<double>() : 0.0,
                            m.size() > 5 ? m.at(5).get<double>() : 0.0});
    }
    for (const auto& c : p.at("counts")) {
      ps.counts.push_back(
          {c.at(0).get<std::string>(), c.at(1).get<std::string>(), c.at(2).get<double>(), c.at(3).get<double>()});
    }
    ps.not_ok = p.at("not_ok").get<std::vector<std::pair<std::string, std::string>>>();
    s.platforms.push_back(std::move(ps));
  }
  for (const auto& f : j.at("flagged")) {
    s.flagged.push_back({f.at("platform").get<std::string>(), f.at("baseline").get<std::string>(),
                         f.at("regressions").get<int>(), f.at("confirmed").get<int>(), f.at("improvements").get<int>(),
                         f.at("status_changes").get<int>(), f.at("outcome").get<std::string>(),
                         f.at("compared_runs").get<int>(), f.at("noisy_runs").get<int>(),
                         f.at("untestable_runs").get<int>()});
  }
  return s;
}

}  // namespace torchgauge::reporter
