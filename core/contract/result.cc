#include "core/contract/result.h"

#include <chrono>
#include <ctime>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/contract/layout.h"
#include "core/contract/result_migration.h"
#include "core/io/json_fields.h"
#include "core/io/json_io.h"
#include "core/stats/stats.h"

namespace torchgauge::core {

using nlohmann::json;

namespace {

// The reads below check each field's type and range as they read it
// (core/io/json_fields.h), so every reader of results refuses the same files.

ModelIdentity ReadModel(const JsonFields& m) {
  return {m.Get<std::string>("id"), m.Get<std::string>("paper_name"), m.OneOf("domain", kDomains),
          m.Get<std::string>("task"), m.Get<std::string>("reference")};
}

PrecisionFlags ReadPrecisionFlags(const JsonFields& p) {
  PrecisionFlags f;
  f.param_dtype = p.GetOr<std::string>("param_dtype", "");
  f.matmul_allow_tf32 = p.GetOr("matmul_allow_tf32", false);
  f.cudnn_allow_tf32 = p.GetOr("cudnn_allow_tf32", false);
  f.float32_matmul_precision = p.GetOr<std::string>("float32_matmul_precision", "");
  f.cudnn_enabled = p.GetOr("cudnn_enabled", true);
  f.cudnn_benchmark = p.GetOr("cudnn_benchmark", false);
  f.cudnn_deterministic = p.GetOr("cudnn_deterministic", false);
  f.autocast_enabled = p.GetOr("autocast_enabled", false);
  f.autocast_dtype = p.GetOpt<std::string>("autocast_dtype");
  return f;
}

Timing ReadTiming(const JsonFields& t) {
  static constexpr const char* kClocks[] = {"steady_clock", "cuda_event"};
  Timing tm;
  tm.samples_ms = t.EachAtLeast("samples_ms", 0.0);
  if (tm.samples_ms.empty()) t.Fail("samples_ms", "must hold at least one sample");
  tm.median_ms = t.AtLeast("median_ms", 0.0);
  tm.min_ms = t.AtLeast("min_ms", 0.0);
  tm.max_ms = t.AtLeast("max_ms", 0.0);
  tm.mean_ms = t.AtLeast("mean_ms", 0.0);
  tm.stdev_ms = t.AtLeast("stdev_ms", 0.0);
  tm.iqr_ms = t.AtLeast("iqr_ms", 0.0);
  tm.cov = t.AtLeast("cov", 0.0);
  tm.warmup_iterations = t.Get<int>("warmup_iterations");
  tm.repetitions = t.AtLeast("repetitions", 1);
  tm.clock = t.OneOf("clock", kClocks);
  tm.samples_per_step = t.GetOr<int64_t>("samples_per_step", 1);
  tm.throughput_per_s = t.OptAtLeast("throughput_per_s", 0.0);
  if (t.Has("process_medians_ms")) {
    tm.process_medians_ms = t.EachAtLeast("process_medians_ms", 0.0);
    if (tm.process_medians_ms.size() < 2) t.Fail("process_medians_ms", "must hold at least two medians when present");
  }
  tm.backend_setup_ms = t.OptAtLeast("backend_setup_ms", 0.0);
  return tm;
}

Memory ReadMemory(const JsonFields& m) {
  Memory mem;
  mem.cpu_peak_rss_bytes = m.OptAtLeast<int64_t>("cpu_peak_rss_bytes", 0);
  mem.cpu_rss_after_warmup_bytes = m.GetOpt<int64_t>("cpu_rss_after_warmup_bytes");
  mem.cpu_peak_rss_scope = m.GetOpt<std::string>("cpu_peak_rss_scope");
  mem.gpu_peak_allocated_bytes = m.OptAtLeast<int64_t>("gpu_peak_allocated_bytes", 0);
  mem.gpu_peak_reserved_bytes = m.OptAtLeast<int64_t>("gpu_peak_reserved_bytes", 0);
  mem.gpu_allocated_after_warmup_bytes = m.GetOpt<int64_t>("gpu_allocated_after_warmup_bytes");
  return mem;
}

GpuBreakdown ReadGpuBreakdown(const JsonFields& b) {
  GpuBreakdown g;
  g.iterations = b.AtLeast("iterations", 1);
  g.wall_ms = b.AtLeast("wall_ms", 0.0);
  g.active_ms = b.AtLeast("active_ms", 0.0);
  g.data_movement_ms = b.AtLeast("data_movement_ms", 0.0);
  g.idle_ms = b.AtLeast("idle_ms", 0.0);
  for (auto [field, key] : {std::pair{&g.active_fraction, "active_fraction"},
                            {&g.data_movement_fraction, "data_movement_fraction"},
                            {&g.idle_fraction, "idle_fraction"}}) {
    *field = b.Get<double>(key);
    if (!(*field >= 0 && *field <= 1)) b.Fail(key, "must be within [0, 1]");
  }
  g.kernel_count = b.AtLeast("kernel_count", 0.0);
  g.mean_kernel_us = b.GetOpt<double>("mean_kernel_us");
  g.h2d_bytes = b.GetOpt<double>("h2d_bytes");
  g.d2h_bytes = b.GetOpt<double>("d2h_bytes");
  if (b.Has("top_kernels")) {
    for (const JsonFields& k : b.Objects("top_kernels")) {
      g.top_kernels.push_back(
          {k.GetOr<std::string>("name", ""), k.GetOr("total_ms", 0.0), k.GetOr<int64_t>("count", 0)});
      if (!(g.top_kernels.back().total_ms >= 0)) k.Fail("total_ms", "must be >= 0");
    }
  }
  return g;
}

CompileInfo ReadCompile(const JsonFields& c) {
  CompileInfo ci;
  ci.trace_ms = c.OptAtLeast("trace_ms", 0.0);
  ci.convert_ms = c.OptAtLeast("convert_ms", 0.0);
  ci.compile_ms = c.OptAtLeast("compile_ms", 0.0);
  ci.load_ms = c.OptAtLeast("load_ms", 0.0);
  ci.cache_hit = c.GetOr("cache_hit", false);
  ci.cache_key = c.GetOr<std::string>("cache_key", "");
  ci.check = c.GetOr<std::string>("check", "");
  ci.check_error = c.OptAtLeast("check_error", 0.0);
  ci.check_reference_error = c.OptAtLeast("check_reference_error", 0.0);
  return ci;
}

PairedTiming ReadPaired(const JsonFields& in) {
  static constexpr const char* kOrders[] = {"interleaved", "back_to_back"};
  PairedTiming p;
  p.order = in.OneOf("order", kOrders);
  p.eager_samples_ms = in.EachAtLeast("eager_samples_ms", 0.0);
  p.compiled_samples_ms = in.EachAtLeast("compiled_samples_ms", 0.0);
  if (p.eager_samples_ms.empty()) in.Fail("eager_samples_ms", "must hold at least one sample");
  if (p.compiled_samples_ms.empty()) in.Fail("compiled_samples_ms", "must hold at least one sample");
  p.eager_median_ms = in.AtLeast("eager_median_ms", 0.0);
  p.compiled_median_ms = in.AtLeast("compiled_median_ms", 0.0);
  p.speedup = in.AtLeast("speedup", 0.0);
  if (in.Has("process_speedups")) p.process_speedups = in.EachAtLeast("process_speedups", 0.0);
  p.speedup_low = in.OptAtLeast("speedup_low", 0.0);
  p.speedup_high = in.OptAtLeast("speedup_high", 0.0);
  return p;
}

Flops ReadFlops(const JsonFields& f) {
  Flops fl;
  fl.profiler_flops_per_iter = f.OptAtLeast("profiler_flops_per_iter", 0.0);
  fl.profiler_flops_reason = f.GetOpt<std::string>("profiler_flops_reason");
  fl.profiler_counted_ops = f.GetOr<std::vector<std::string>>("profiler_counted_ops", {});
  fl.analytic_flops_per_iter = f.OptAtLeast("analytic_flops_per_iter", 0.0);
  fl.achieved_tflops_profiler = f.OptAtLeast("achieved_tflops_profiler", 0.0);
  fl.achieved_tflops_analytic = f.OptAtLeast("achieved_tflops_analytic", 0.0);
  return fl;
}

Profiling ReadProfiling(const JsonFields& p) {
  Profiling pr;
  pr.iterations = p.GetOr("iterations", 0);
  pr.wall_ms_per_iter = p.GetOr("wall_ms_per_iter", 0.0);
  pr.overhead_ratio = p.GetOpt<double>("overhead_ratio");
  pr.trace_file = p.GetOpt<std::string>("trace_file");
  return pr;
}

// The optional objects of a result: absent or null leave them unset.
void ReadSections(const JsonFields& in, RunResult& r) {
  if (auto s = in.OptObject("settings")) r.settings = RunSettingsFromJson(*s);
  if (auto p = in.OptObject("precision_flags")) r.precision_flags = ReadPrecisionFlags(*p);
  if (auto t = in.OptObject("timing")) r.timing = ReadTiming(*t);
  if (auto m = in.OptObject("memory")) r.memory = ReadMemory(*m);
  if (auto b = in.OptObject("gpu_breakdown")) r.gpu_breakdown = ReadGpuBreakdown(*b);
  if (auto c = in.OptObject("compile")) r.compile = ReadCompile(*c);
  if (auto p = in.OptObject("paired")) r.paired = ReadPaired(*p);
  if (in.Has("host_breakdown")) r.host_breakdown = HostBreakdownFromJson(*in.Find("host_breakdown"), in.file());
  if (in.Has("system_load")) r.system_load = SystemLoadFromJson(*in.Find("system_load"), in.file());
  if (in.Has("generation")) r.generation = GenerationFromJson(*in.Find("generation"), in.file());
  r.generation_reason = in.GetOpt<std::string>("generation_reason");
  r.host_breakdown_reason = in.GetOpt<std::string>("host_breakdown_reason");
  if (in.Has("counted")) r.counted = CountedFromJson(*in.Find("counted"), in.file());
  if (auto f = in.OptObject("flops")) r.flops = ReadFlops(*f);
  if (auto o = in.OptObject("operators")) r.operators = o->Get<std::vector<std::string>>("names");
  if (auto p = in.OptObject("profiling")) r.profiling = ReadProfiling(*p);
}

// A result of the current shape (MigrateRunResult has run).
RunResult ReadRunResult(const json& j, const std::filesystem::path& file) {
  const JsonFields in(j, file);
  RunResult r;
  r.schema_version = in.Get<int>("schema_version");
  r.build_id = in.Get<std::string>("build_id");
  r.platform_id = in.Get<std::string>("platform_id");
  r.model = ReadModel(in.Object("model"));
  r.mode = in.OneOf("mode", kModes);
  r.backend = in.OneOf("backend", kBackends);
  r.precision = in.OneOf("precision", kPrecisions);
  r.batch_size = in.AtLeast<int64_t>("batch_size", 1);
  r.device = in.Get<std::string>("device");
  r.status = in.OneOf("status", kStatuses);
  r.reason = in.GetOpt<std::string>("reason");
  r.signal = in.GetOpt<int>("signal");
  r.started_at = in.Get<std::string>("started_at");
  r.duration_s = in.GetOpt<double>("duration_s");
  ReadSections(in, r);
  // Ids name directories and files: the schema's slug pattern (core/contract/layout.h).
  if (!IsSafeId(r.build_id)) in.Fail("build_id", "not a safe id");
  if (!IsSafeId(r.platform_id)) in.Fail("platform_id", "not a safe id");
  if (!IsSafeId(r.model.id)) in.Fail("model.id", "not a safe id");
  return r;
}

json PrecisionFlagsJson(const PrecisionFlags& p) {
  return {{"param_dtype", p.param_dtype},
          {"matmul_allow_tf32", p.matmul_allow_tf32},
          {"cudnn_allow_tf32", p.cudnn_allow_tf32},
          {"float32_matmul_precision", p.float32_matmul_precision},
          {"cudnn_enabled", p.cudnn_enabled},
          {"cudnn_benchmark", p.cudnn_benchmark},
          {"cudnn_deterministic", p.cudnn_deterministic},
          {"autocast_enabled", p.autocast_enabled},
          {"autocast_dtype", Opt(p.autocast_dtype)}};
}

json TimingJson(const Timing& t) {
  json j = {{"samples_ms", t.samples_ms},
            {"median_ms", t.median_ms},
            {"min_ms", t.min_ms},
            {"max_ms", t.max_ms},
            {"mean_ms", t.mean_ms},
            {"stdev_ms", t.stdev_ms},
            {"iqr_ms", t.iqr_ms},
            {"cov", t.cov},
            {"warmup_iterations", t.warmup_iterations},
            {"repetitions", t.repetitions},
            {"clock", t.clock},
            {"samples_per_step", t.samples_per_step},
            {"throughput_per_s", Opt(t.throughput_per_s)}};
  if (!t.process_medians_ms.empty()) j["process_medians_ms"] = t.process_medians_ms;
  if (t.backend_setup_ms) j["backend_setup_ms"] = *t.backend_setup_ms;
  return j;
}

json MemoryJson(const Memory& m) {
  return {{"cpu_peak_rss_bytes", Opt(m.cpu_peak_rss_bytes)},
          {"cpu_rss_after_warmup_bytes", Opt(m.cpu_rss_after_warmup_bytes)},
          {"cpu_peak_rss_scope", Opt(m.cpu_peak_rss_scope)},
          {"gpu_peak_allocated_bytes", Opt(m.gpu_peak_allocated_bytes)},
          {"gpu_peak_reserved_bytes", Opt(m.gpu_peak_reserved_bytes)},
          {"gpu_allocated_after_warmup_bytes", Opt(m.gpu_allocated_after_warmup_bytes)}};
}

json GpuBreakdownJson(const GpuBreakdown& b) {
  json top = json::array();
  for (const auto& k : b.top_kernels) top.push_back({{"name", k.name}, {"total_ms", k.total_ms}, {"count", k.count}});
  return {{"iterations", b.iterations},
          {"wall_ms", b.wall_ms},
          {"active_ms", b.active_ms},
          {"data_movement_ms", b.data_movement_ms},
          {"idle_ms", b.idle_ms},
          {"active_fraction", b.active_fraction},
          {"data_movement_fraction", b.data_movement_fraction},
          {"idle_fraction", b.idle_fraction},
          {"kernel_count", b.kernel_count},
          {"mean_kernel_us", Opt(b.mean_kernel_us)},
          {"h2d_bytes", Opt(b.h2d_bytes)},
          {"d2h_bytes", Opt(b.d2h_bytes)},
          {"top_kernels", top}};
}

json CompileJson(const CompileInfo& c) {
  return {{"trace_ms", Opt(c.trace_ms)},
          {"convert_ms", Opt(c.convert_ms)},
          {"compile_ms", Opt(c.compile_ms)},
          {"load_ms", Opt(c.load_ms)},
          {"cache_hit", c.cache_hit},
          {"cache_key", c.cache_key},
          {"check", c.check},
          {"check_error", Opt(c.check_error)},
          {"check_reference_error", Opt(c.check_reference_error)}};
}

json PairedJson(const PairedTiming& p) {
  return {{"order", p.order},
          {"eager_samples_ms", p.eager_samples_ms},
          {"compiled_samples_ms", p.compiled_samples_ms},
          {"eager_median_ms", p.eager_median_ms},
          {"compiled_median_ms", p.compiled_median_ms},
          {"speedup", p.speedup},
          {"process_speedups", p.process_speedups},
          {"speedup_low", Opt(p.speedup_low)},
          {"speedup_high", Opt(p.speedup_high)}};
}

json FlopsJson(const Flops& f) {
  return {{"profiler_flops_per_iter", Opt(f.profiler_flops_per_iter)},
          {"profiler_flops_reason", Opt(f.profiler_flops_reason)},
          {"profiler_counted_ops", f.profiler_counted_ops},
          {"analytic_flops_per_iter", Opt(f.analytic_flops_per_iter)},
          {"achieved_tflops_profiler", Opt(f.achieved_tflops_profiler)},
          {"achieved_tflops_analytic", Opt(f.achieved_tflops_analytic)}};
}

json ProfilingJson(const Profiling& p) {
  return {{"iterations", p.iterations},
          {"wall_ms_per_iter", p.wall_ms_per_iter},
          {"overhead_ratio", Opt(p.overhead_ratio)},
          {"trace_file", Opt(p.trace_file)}};
}

// An optional section as its object, or null when unset.
template <typename T, typename F>
json OrNull(const std::optional<T>& v, F to_json) {
  return v ? to_json(*v) : json(nullptr);
}

}  // namespace

std::string NowUtc() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void CheckSchema(const json& j, const std::filesystem::path& file, const char* kind, int supported_version) {
  if (!j.is_object()) throw FileError(file, "", "expected a JSON object");
  const auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer()) {
    throw FileError(file, "schema_version", "missing or not an integer");
  }
  if (!j.contains("kind") || j.at("kind") != kind) {
    throw FileError(file, "kind", std::string("expected \"") + kind + "\"");
  }
  // Compared as written: a version past INT_MAX is newer, not truncated.
  const bool newer = version->is_number_unsigned() ? version->get<uint64_t>() > static_cast<uint64_t>(supported_version)
                                                   : version->get<int64_t>() > supported_version;
  if (newer) {
    throw FileError(file, "schema_version",
                    "version " + version->dump() + " is newer than this program understands (" +
                        std::to_string(supported_version) + "); upgrade TorchGauge to read it");
  }
  if (version->get<int64_t>() < 1) throw FileError(file, "schema_version", "must be >= 1");
}

json ToJson(const RunResult& r) {
  json j;
  j["schema_version"] = r.schema_version;
  j["kind"] = "torchgauge.run";
  j["build_id"] = r.build_id;
  j["platform_id"] = r.platform_id;
  j["model"] = {{"id", r.model.id},
                {"paper_name", r.model.paper_name},
                {"domain", r.model.domain},
                {"task", r.model.task},
                {"reference", r.model.reference}};
  j["mode"] = r.mode;
  j["backend"] = r.backend;
  j["precision"] = r.precision;
  j["batch_size"] = r.batch_size;
  j["device"] = r.device;
  j["status"] = r.status;
  j["reason"] = Opt(r.reason);
  j["signal"] = Opt(r.signal);
  j["started_at"] = r.started_at;
  j["duration_s"] = Opt(r.duration_s);
  if (r.settings) j["settings"] = ToJson(*r.settings);
  j["precision_flags"] = OrNull(r.precision_flags, PrecisionFlagsJson);
  j["timing"] = OrNull(r.timing, TimingJson);
  j["memory"] = OrNull(r.memory, MemoryJson);
  j["gpu_breakdown"] = OrNull(r.gpu_breakdown, GpuBreakdownJson);
  // The sections added later are left out when unset, not written as null.
  if (r.compile) j["compile"] = CompileJson(*r.compile);
  if (r.paired) j["paired"] = PairedJson(*r.paired);
  if (r.host_breakdown) j["host_breakdown"] = ToJson(*r.host_breakdown);
  if (r.system_load) j["system_load"] = ToJson(*r.system_load);
  if (r.generation) j["generation"] = ToJson(*r.generation);
  if (r.generation_reason) j["generation_reason"] = *r.generation_reason;
  if (r.host_breakdown_reason) j["host_breakdown_reason"] = *r.host_breakdown_reason;
  if (r.counted) j["counted"] = ToJson(*r.counted);
  j["flops"] = OrNull(r.flops, FlopsJson);
  j["operators"] = r.operators ? json{{"count", r.operators->size()}, {"names", *r.operators}} : json(nullptr);
  j["profiling"] = OrNull(r.profiling, ProfilingJson);
  return j;
}

RunResult RunResultFromJson(const json& j, const std::filesystem::path& file) {
  CheckSchema(j, file, "torchgauge.run", kRunSchemaVersion);
  if (auto current = MigrateRunResult(j)) return ReadRunResult(*current, file);
  return ReadRunResult(j, file);
}

void SummarizeTiming(Timing& t) {
  const Summary s = Summarize(t.samples_ms);
  t.median_ms = s.median;
  t.min_ms = s.min;
  t.max_ms = s.max;
  t.mean_ms = s.mean;
  t.stdev_ms = s.stdev;
  t.iqr_ms = s.iqr;
  t.cov = s.cov;
  t.throughput_per_s.reset();
  if (s.median > 0) t.throughput_per_s = static_cast<double>(t.samples_per_step) / (s.median / 1e3);
}

void DeriveRates(RunResult& r) {
  if (!r.timing) return;
  const double median_ms = r.timing->median_ms;
  if (r.flops) {
    r.flops->achieved_tflops_analytic.reset();
    r.flops->achieved_tflops_profiler.reset();
    if (median_ms > 0) {
      const double seconds = median_ms / 1e3;
      if (r.flops->analytic_flops_per_iter)
        r.flops->achieved_tflops_analytic = *r.flops->analytic_flops_per_iter / seconds / 1e12;
      if (r.flops->profiler_flops_per_iter)
        r.flops->achieved_tflops_profiler = *r.flops->profiler_flops_per_iter / seconds / 1e12;
    }
  }
  if (r.profiling) {
    r.profiling->overhead_ratio.reset();
    if (median_ms > 0) r.profiling->overhead_ratio = r.profiling->wall_ms_per_iter / median_ms;
  }
}

namespace {
// The CoV a run's noise is judged on: the jitter within a worker process.
// Pooled over several processes, the CoV would also hold the spread between
// processes, which the comparison already weighs (its noise band comes from
// process_medians_ms); so each sample is taken relative to its own process's
// median (the pool holds the processes' samples in run order, equal counts).
std::optional<double> WithinProcessCov(const Timing& t) {
  const size_t n = t.samples_ms.size(), p = t.process_medians_ms.size();
  if (n < 2) return std::nullopt;
  if (p < 2 || n % p != 0) return t.cov;
  const size_t per = n / p;
  if (per < 2) return std::nullopt;
  std::vector<double> relative;
  relative.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const double m = t.process_medians_ms[i / per];
    if (!(m > 0)) return t.cov;
    relative.push_back(t.samples_ms[i] / m);
  }
  return Summarize(relative).cov;
}
}  // namespace

NoiseVerdict RunNoise(const RunResult& r, const NoiseThresholds& thresholds) {
  std::optional<double> cov;
  if (r.timing) cov = WithinProcessCov(*r.timing);
  return ClassifyNoise(cov, r.system_load, thresholds);
}

void SummarizePaired(PairedTiming& p) {
  if (p.eager_samples_ms.empty() || p.compiled_samples_ms.empty()) {
    throw std::invalid_argument("SummarizePaired: no eager or no compiled samples");
  }
  p.eager_median_ms = Summarize(p.eager_samples_ms).median;
  p.compiled_median_ms = Summarize(p.compiled_samples_ms).median;
  if (!(p.compiled_median_ms > 0)) throw std::invalid_argument("SummarizePaired: the compiled median is 0");
  p.speedup = p.eager_median_ms / p.compiled_median_ms;
}

namespace {

// Pools the processes' paired passes: the samples are concatenated, each
// process's own ratio is kept, and the speedup is their median with their
// range as its interval (drift between processes stays out of the ratios).
std::optional<PairedTiming> PoolPaired(const std::vector<RunResult>& processes) {
  if (!processes.front().paired) return std::nullopt;
  PairedTiming out;
  out.order = processes.front().paired->order;
  for (const auto& r : processes) {
    if (!r.paired) throw std::invalid_argument("PoolProcesses: a process result has no paired pass");
    const auto& p = *r.paired;
    out.eager_samples_ms.insert(out.eager_samples_ms.end(), p.eager_samples_ms.begin(), p.eager_samples_ms.end());
    out.compiled_samples_ms.insert(out.compiled_samples_ms.end(), p.compiled_samples_ms.begin(),
                                   p.compiled_samples_ms.end());
    out.process_speedups.push_back(p.speedup);
  }
  SummarizePaired(out);  // the pooled samples' medians
  const Summary ratios = Summarize(out.process_speedups);
  out.speedup = ratios.median;  // the processes' median ratio, not the pooled medians' ratio
  out.speedup_low = ratios.min;
  out.speedup_high = ratios.max;
  return out;
}

}  // namespace

RunResult PoolProcesses(const std::vector<RunResult>& processes) {
  if (processes.empty()) throw std::invalid_argument("PoolProcesses: no process results");
  RunResult out = processes.front();
  if (processes.size() == 1) return out;
  if (out.settings) out.settings->processes = static_cast<int>(processes.size());
  if (out.timing) {
    Timing& t = *out.timing;
    t.samples_ms.clear();
    t.process_medians_ms.clear();
    for (const auto& p : processes) {
      if (!p.timing) throw std::invalid_argument("PoolProcesses: a process result has no timing");
      t.samples_ms.insert(t.samples_ms.end(), p.timing->samples_ms.begin(), p.timing->samples_ms.end());
      t.process_medians_ms.push_back(p.timing->median_ms);
    }
    t.repetitions = static_cast<int>(t.samples_ms.size());
    SummarizeTiming(t);
    DeriveRates(out);
  }
  out.paired = PoolPaired(processes);
  if (out.generation) {
    std::vector<Generation> generations;
    for (const auto& p : processes) {
      if (!p.generation) throw std::invalid_argument("PoolProcesses: a process result has no generation");
      generations.push_back(*p.generation);
    }
    out.generation = PoolGenerations(generations);
  }
  if (out.counted) {
    std::vector<Counted> counts;
    for (const auto& p : processes) {
      if (!p.counted) throw std::invalid_argument("PoolProcesses: a process result has no counted steps");
      counts.push_back(*p.counted);
    }
    out.counted = PoolCounted(counts);
  }
  if (out.memory) {
    for (const auto& p : processes) {
      if (p.memory && p.memory->cpu_peak_rss_bytes &&
          (!out.memory->cpu_peak_rss_bytes || *p.memory->cpu_peak_rss_bytes > *out.memory->cpu_peak_rss_bytes)) {
        out.memory->cpu_peak_rss_bytes = p.memory->cpu_peak_rss_bytes;
      }
    }
  }
  // The pool is as trustworthy as its worst window: the system_load kept is
  // the process whose timing pass shared the machine with the most other
  // CPU use (steal included, as ClassifyNoise counts it), so a pooled run is
  // judged busy when any of its processes was. Processes without one are
  // passed over; none with one leaves it unset.
  out.system_load.reset();
  for (const auto& p : processes) {
    if (!p.system_load) continue;
    auto other = [](const SystemLoad& l) { return l.outside_cpu_cores + l.steal_cores.value_or(0.0); };
    if (!out.system_load || other(*p.system_load) > other(*out.system_load)) out.system_load = p.system_load;
  }
  double duration = 0;
  bool have_duration = false;
  for (const auto& p : processes) {
    if (p.duration_s) {
      duration += *p.duration_s;
      have_duration = true;
    }
  }
  if (have_duration) out.duration_s = duration;
  return out;
}

}  // namespace torchgauge::core
