#include "core/result.h"

#include <chrono>
#include <ctime>
#include <limits>
#include <span>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "core/json_io.h"
#include "core/layout.h"
#include "core/stats.h"

namespace torchgauge::core {

using nlohmann::json;

namespace {

template <typename T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// Field access that reports the file and the dotted field path on error.
class Reader {
 public:
  Reader(const json& j, const std::filesystem::path& file, std::string path)
      : j_(j), file_(file), path_(std::move(path)) {}

  // One lookup per field: every read below finds its key once (a run file
  // has ~90 fields, and a cold site render reads every run file).
  const json* Find(const char* key) const {
    const auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  bool Has(const char* key) const {
    const json* v = Find(key);
    return v && !v->is_null();
  }
  Reader Child(const char* key) const {
    const json* v = Find(key);
    if (!v || !v->is_object()) Fail(key, "expected an object");
    return Reader(*v, file_, Name(key));
  }
  template <typename T>
  T Get(const char* key) const {
    const json* v = Find(key);
    if (!v) Fail(key, "missing required field");
    return As<T>(*v, key);
  }
  template <typename T>
  T GetOr(const char* key, T fallback) const {
    const json* v = Find(key);
    return v && !v->is_null() ? As<T>(*v, key) : fallback;
  }
  template <typename T>
  std::optional<T> GetOpt(const char* key) const {
    const json* v = Find(key);
    if (!v || v->is_null()) return std::nullopt;
    return As<T>(*v, key);
  }
  std::string OneOf(const char* key, std::span<const char* const> allowed) const {
    auto v = Get<std::string>(key);
    for (const char* a : allowed) {
      if (v == a) return v;
    }
    std::string list;
    for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    Fail(key, "value '" + v + "' is not one of: " + list);
  }
  // nlohmann converts a float (1e30) to an integer with a plain cast,
  // undefined behaviour when out of range (found by the run_result fuzzer).
  template <typename T>
  void CheckInteger(const json& v, const char* key) const {
    if (!v.is_number_integer()) Fail(key, "has the wrong type (" + std::string(v.type_name()) + ")");
    const bool fits =
        v.is_number_unsigned()
            ? v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
            : v.get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                  (std::is_unsigned_v<T> || v.get<int64_t>() <= static_cast<int64_t>(std::numeric_limits<T>::max()));
    if (!fits) Fail(key, "is out of range");
  }
  [[noreturn]] void Fail(const char* key, const std::string& message) const {
    throw FileError(file_, Name(key), message);
  }
  const json& raw() const { return j_; }

 private:
  template <typename T>
  T As(const json& v, const char* key) const {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) CheckInteger<T>(v, key);
    try {
      return v.get<T>();
    } catch (const json::exception&) {
      Fail(key, "has the wrong type (" + std::string(v.type_name()) + ")");
    }
  }
  std::string Name(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  const json& j_;
  const std::filesystem::path& file_;
  std::string path_;
};

void NonNegative(double v, const std::filesystem::path& file, const std::string& field) {
  if (!(v >= 0)) throw FileError(file, field, "must be >= 0");
}
template <typename T>
void NonNegative(const std::optional<T>& v, const std::filesystem::path& file, const std::string& field) {
  if (v) NonNegative(static_cast<double>(*v), file, field);
}

PairedTiming PairedFromJson(const Reader& in) {
  static constexpr const char* kOrders[] = {"interleaved", "back_to_back"};
  PairedTiming p;
  p.order = in.OneOf("order", kOrders);
  p.eager_samples_ms = in.Get<std::vector<double>>("eager_samples_ms");
  p.compiled_samples_ms = in.Get<std::vector<double>>("compiled_samples_ms");
  if (p.eager_samples_ms.empty()) in.Fail("eager_samples_ms", "must hold at least one sample");
  if (p.compiled_samples_ms.empty()) in.Fail("compiled_samples_ms", "must hold at least one sample");
  for (const auto& [list, name] :
       {std::pair{&p.eager_samples_ms, "eager_samples_ms"}, {&p.compiled_samples_ms, "compiled_samples_ms"}}) {
    for (double v : *list) {
      if (!(v >= 0)) in.Fail(name, "must be >= 0");
    }
  }
  p.eager_median_ms = in.Get<double>("eager_median_ms");
  p.compiled_median_ms = in.Get<double>("compiled_median_ms");
  p.speedup = in.Get<double>("speedup");
  p.process_speedups = in.GetOr<std::vector<double>>("process_speedups", {});
  p.speedup_low = in.GetOpt<double>("speedup_low");
  p.speedup_high = in.GetOpt<double>("speedup_high");
  for (const auto& [v, name] : {std::pair{std::optional<double>(p.eager_median_ms), "eager_median_ms"},
                                {std::optional<double>(p.compiled_median_ms), "compiled_median_ms"},
                                {std::optional<double>(p.speedup), "speedup"},
                                {p.speedup_low, "speedup_low"},
                                {p.speedup_high, "speedup_high"}}) {
    if (v && !(*v >= 0)) in.Fail(name, "must be >= 0");
  }
  for (double v : p.process_speedups) {
    if (!(v >= 0)) in.Fail("process_speedups", "must be >= 0");
  }
  return p;
}

// The value ranges of the schema that the field reads above do not enforce.
// They live here, in the parser, so every reader refuses the same files.
void CheckRanges(const RunResult& r, const std::filesystem::path& file) {
  if (r.timing) {
    const auto& t = *r.timing;
    for (size_t i = 0; i < t.samples_ms.size(); ++i) {
      NonNegative(t.samples_ms[i], file, "timing.samples_ms[" + std::to_string(i) + "]");
    }
    NonNegative(t.median_ms, file, "timing.median_ms");
    NonNegative(t.min_ms, file, "timing.min_ms");
    NonNegative(t.max_ms, file, "timing.max_ms");
    NonNegative(t.mean_ms, file, "timing.mean_ms");
    NonNegative(t.stdev_ms, file, "timing.stdev_ms");
    NonNegative(t.iqr_ms, file, "timing.iqr_ms");
    NonNegative(t.cov, file, "timing.cov");
    NonNegative(t.throughput_per_s, file, "timing.throughput_per_s");
    if (t.repetitions < 1) throw FileError(file, "timing.repetitions", "must be >= 1");
    if (t.clock != "steady_clock" && t.clock != "cuda_event") {
      throw FileError(file, "timing.clock", "must be steady_clock or cuda_event");
    }
  }
  if (r.memory) {
    NonNegative(r.memory->cpu_peak_rss_bytes, file, "memory.cpu_peak_rss_bytes");
    NonNegative(r.memory->gpu_peak_allocated_bytes, file, "memory.gpu_peak_allocated_bytes");
    NonNegative(r.memory->gpu_peak_reserved_bytes, file, "memory.gpu_peak_reserved_bytes");
  }
  if (r.gpu_breakdown) {
    const auto& g = *r.gpu_breakdown;
    if (g.iterations < 1) throw FileError(file, "gpu_breakdown.iterations", "must be >= 1");
    NonNegative(g.wall_ms, file, "gpu_breakdown.wall_ms");
    NonNegative(g.active_ms, file, "gpu_breakdown.active_ms");
    NonNegative(g.data_movement_ms, file, "gpu_breakdown.data_movement_ms");
    NonNegative(g.idle_ms, file, "gpu_breakdown.idle_ms");
    NonNegative(g.kernel_count, file, "gpu_breakdown.kernel_count");
    const std::pair<double, const char*> fractions[] = {
        {g.active_fraction, "gpu_breakdown.active_fraction"},
        {g.data_movement_fraction, "gpu_breakdown.data_movement_fraction"},
        {g.idle_fraction, "gpu_breakdown.idle_fraction"}};
    for (const auto& [v, name] : fractions) {
      if (!(v >= 0 && v <= 1)) throw FileError(file, name, "must be within [0, 1]");
    }
    for (size_t i = 0; i < g.top_kernels.size(); ++i) {
      NonNegative(g.top_kernels[i].total_ms, file, "gpu_breakdown.top_kernels[" + std::to_string(i) + "].total_ms");
    }
  }
  if (r.flops) {
    NonNegative(r.flops->profiler_flops_per_iter, file, "flops.profiler_flops_per_iter");
    NonNegative(r.flops->analytic_flops_per_iter, file, "flops.analytic_flops_per_iter");
    NonNegative(r.flops->achieved_tflops_profiler, file, "flops.achieved_tflops_profiler");
    NonNegative(r.flops->achieved_tflops_analytic, file, "flops.achieved_tflops_analytic");
  }
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
  if (!j.contains("schema_version") || !j.at("schema_version").is_number_integer()) {
    throw FileError(file, "schema_version", "missing or not an integer");
  }
  if (!j.contains("kind") || j.at("kind") != kind) {
    throw FileError(file, "kind", std::string("expected \"") + kind + "\"");
  }
  int v = j.at("schema_version").get<int>();
  if (v > supported_version) {
    throw FileError(file, "schema_version",
                    "version " + std::to_string(v) + " is newer than this program understands (" +
                        std::to_string(supported_version) + "); upgrade TorchGauge to read it");
  }
  if (v < 1) throw FileError(file, "schema_version", "must be >= 1");
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
  if (r.precision_flags) {
    const auto& p = *r.precision_flags;
    j["precision_flags"] = {{"param_dtype", p.param_dtype},
                            {"matmul_allow_tf32", p.matmul_allow_tf32},
                            {"cudnn_allow_tf32", p.cudnn_allow_tf32},
                            {"float32_matmul_precision", p.float32_matmul_precision},
                            {"cudnn_enabled", p.cudnn_enabled},
                            {"cudnn_benchmark", p.cudnn_benchmark},
                            {"cudnn_deterministic", p.cudnn_deterministic},
                            {"autocast_enabled", p.autocast_enabled},
                            {"autocast_dtype", Opt(p.autocast_dtype)}};
  } else {
    j["precision_flags"] = nullptr;
  }
  if (r.timing) {
    const auto& t = *r.timing;
    j["timing"] = {{"samples_ms", t.samples_ms},
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
    if (!t.process_medians_ms.empty()) j["timing"]["process_medians_ms"] = t.process_medians_ms;
    if (t.backend_setup_ms) j["timing"]["backend_setup_ms"] = *t.backend_setup_ms;
  } else {
    j["timing"] = nullptr;
  }
  if (r.memory) {
    const auto& m = *r.memory;
    j["memory"] = {{"cpu_peak_rss_bytes", Opt(m.cpu_peak_rss_bytes)},
                   {"cpu_rss_after_warmup_bytes", Opt(m.cpu_rss_after_warmup_bytes)},
                   {"gpu_peak_allocated_bytes", Opt(m.gpu_peak_allocated_bytes)},
                   {"gpu_peak_reserved_bytes", Opt(m.gpu_peak_reserved_bytes)},
                   {"gpu_allocated_after_warmup_bytes", Opt(m.gpu_allocated_after_warmup_bytes)}};
  } else {
    j["memory"] = nullptr;
  }
  if (r.gpu_breakdown) {
    const auto& b = *r.gpu_breakdown;
    json top = json::array();
    for (const auto& k : b.top_kernels) top.push_back({{"name", k.name}, {"total_ms", k.total_ms}, {"count", k.count}});
    j["gpu_breakdown"] = {{"iterations", b.iterations},
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
  } else {
    j["gpu_breakdown"] = nullptr;
  }
  if (r.compile) {
    const auto& c = *r.compile;
    j["compile"] = {{"trace_ms", Opt(c.trace_ms)},
                    {"convert_ms", Opt(c.convert_ms)},
                    {"compile_ms", Opt(c.compile_ms)},
                    {"load_ms", Opt(c.load_ms)},
                    {"cache_hit", c.cache_hit},
                    {"cache_key", c.cache_key},
                    {"check", c.check},
                    {"check_error", Opt(c.check_error)},
                    {"check_reference_error", Opt(c.check_reference_error)}};
  }
  if (r.paired) {
    const auto& p = *r.paired;
    j["paired"] = {{"order", p.order},
                   {"eager_samples_ms", p.eager_samples_ms},
                   {"compiled_samples_ms", p.compiled_samples_ms},
                   {"eager_median_ms", p.eager_median_ms},
                   {"compiled_median_ms", p.compiled_median_ms},
                   {"speedup", p.speedup},
                   {"process_speedups", p.process_speedups},
                   {"speedup_low", Opt(p.speedup_low)},
                   {"speedup_high", Opt(p.speedup_high)}};
  }
  if (r.host_breakdown) j["host_breakdown"] = ToJson(*r.host_breakdown);
  if (r.system_load) j["system_load"] = ToJson(*r.system_load);
  if (r.flops) {
    const auto& f = *r.flops;
    j["flops"] = {{"profiler_flops_per_iter", Opt(f.profiler_flops_per_iter)},
                  {"profiler_counted_ops", f.profiler_counted_ops},
                  {"analytic_flops_per_iter", Opt(f.analytic_flops_per_iter)},
                  {"achieved_tflops_profiler", Opt(f.achieved_tflops_profiler)},
                  {"achieved_tflops_analytic", Opt(f.achieved_tflops_analytic)}};
  } else {
    j["flops"] = nullptr;
  }
  if (r.operators) {
    j["operators"] = {{"count", r.operators->size()}, {"names", *r.operators}};
  } else {
    j["operators"] = nullptr;
  }
  if (r.profiling) {
    const auto& p = *r.profiling;
    j["profiling"] = {{"iterations", p.iterations},
                      {"wall_ms_per_iter", p.wall_ms_per_iter},
                      {"overhead_ratio", Opt(p.overhead_ratio)},
                      {"trace_file", Opt(p.trace_file)}};
  } else {
    j["profiling"] = nullptr;
  }
  return j;
}

RunResult RunResultFromJson(const json& j, const std::filesystem::path& file) {
  CheckSchema(j, file, "torchgauge.run", kRunSchemaVersion);
  Reader in(j, file, "");
  RunResult r;
  r.schema_version = in.Get<int>("schema_version");
  r.build_id = in.Get<std::string>("build_id");
  r.platform_id = in.Get<std::string>("platform_id");
  auto m = in.Child("model");
  r.model = {m.Get<std::string>("id"), m.Get<std::string>("paper_name"), m.OneOf("domain", kDomains),
             m.Get<std::string>("task"), m.Get<std::string>("reference")};
  r.mode = in.OneOf("mode", kModes);
  // "aotinductor" was this backend's name before it ran (results recorded it
  // only as unsupported); such results still load, under the current name.
  if (j.contains("backend") && j.at("backend") == "aotinductor") {
    nlohmann::json renamed = j;
    renamed["backend"] = "inductor";
    return RunResultFromJson(renamed, file);
  }
  r.backend = in.OneOf("backend", kBackends);
  r.precision = in.OneOf("precision", kPrecisions);
  r.batch_size = in.Get<int64_t>("batch_size");
  if (r.batch_size < 1) in.Fail("batch_size", "must be >= 1");
  r.device = in.Get<std::string>("device");
  r.status = in.OneOf("status", kStatuses);
  r.reason = in.GetOpt<std::string>("reason");
  r.signal = in.GetOpt<int>("signal");
  r.started_at = in.Get<std::string>("started_at");
  r.duration_s = in.GetOpt<double>("duration_s");
  if (in.Has("settings")) {
    auto s = in.Child("settings");
    RunSettings rs;
    rs.warmup = s.GetOr<int>("warmup", rs.warmup);
    rs.repeat = s.GetOr<int>("repeat", rs.repeat);
    rs.seed = s.GetOr<uint64_t>("seed", rs.seed);
    rs.timeout_s = s.GetOr<double>("timeout_s", rs.timeout_s);
    rs.profile_iterations = s.GetOr<int>("profile_iterations", rs.profile_iterations);
    rs.smoke = s.GetOr<bool>("smoke", rs.smoke);
    rs.processes = s.GetOr<int>("processes", rs.processes);
    if (rs.processes < 1) s.Fail("processes", "must be >= 1");
    rs.threads = s.GetOr<int>("threads", rs.threads);
    if (rs.threads < 0) s.Fail("threads", "must be >= 0");
    if (s.Has("pairing")) rs.pairing = s.OneOf("pairing", kPairings);
    r.settings = rs;
  }
  if (in.Has("precision_flags")) {
    auto p = in.Child("precision_flags");
    PrecisionFlags f;
    f.param_dtype = p.GetOr<std::string>("param_dtype", "");
    f.matmul_allow_tf32 = p.GetOr<bool>("matmul_allow_tf32", false);
    f.cudnn_allow_tf32 = p.GetOr<bool>("cudnn_allow_tf32", false);
    f.float32_matmul_precision = p.GetOr<std::string>("float32_matmul_precision", "");
    f.cudnn_enabled = p.GetOr<bool>("cudnn_enabled", true);
    f.cudnn_benchmark = p.GetOr<bool>("cudnn_benchmark", false);
    f.cudnn_deterministic = p.GetOr<bool>("cudnn_deterministic", false);
    f.autocast_enabled = p.GetOr<bool>("autocast_enabled", false);
    f.autocast_dtype = p.GetOpt<std::string>("autocast_dtype");
    r.precision_flags = f;
  }
  if (in.Has("timing")) {
    auto t = in.Child("timing");
    Timing tm;
    tm.samples_ms = t.Get<std::vector<double>>("samples_ms");
    if (tm.samples_ms.empty()) t.Fail("samples_ms", "must hold at least one sample");
    tm.median_ms = t.Get<double>("median_ms");
    tm.min_ms = t.Get<double>("min_ms");
    tm.max_ms = t.Get<double>("max_ms");
    tm.mean_ms = t.Get<double>("mean_ms");
    tm.stdev_ms = t.Get<double>("stdev_ms");
    tm.iqr_ms = t.Get<double>("iqr_ms");
    tm.cov = t.Get<double>("cov");
    tm.warmup_iterations = t.Get<int>("warmup_iterations");
    tm.repetitions = t.Get<int>("repetitions");
    tm.clock = t.Get<std::string>("clock");
    tm.samples_per_step = t.GetOr<int64_t>("samples_per_step", 1);
    tm.throughput_per_s = t.GetOpt<double>("throughput_per_s");
    if (t.Has("process_medians_ms")) {
      tm.process_medians_ms = t.Get<std::vector<double>>("process_medians_ms");
      if (tm.process_medians_ms.size() < 2) t.Fail("process_medians_ms", "must hold at least two medians when present");
      for (double v : tm.process_medians_ms) {
        if (!(v >= 0)) t.Fail("process_medians_ms", "must be >= 0");
      }
    }
    tm.backend_setup_ms = t.GetOpt<double>("backend_setup_ms");
    if (tm.backend_setup_ms && !(*tm.backend_setup_ms >= 0)) t.Fail("backend_setup_ms", "must be >= 0");
    r.timing = tm;
  }
  if (in.Has("memory")) {
    auto mm = in.Child("memory");
    Memory mem;
    mem.cpu_peak_rss_bytes = mm.GetOpt<int64_t>("cpu_peak_rss_bytes");
    mem.cpu_rss_after_warmup_bytes = mm.GetOpt<int64_t>("cpu_rss_after_warmup_bytes");
    mem.gpu_peak_allocated_bytes = mm.GetOpt<int64_t>("gpu_peak_allocated_bytes");
    mem.gpu_peak_reserved_bytes = mm.GetOpt<int64_t>("gpu_peak_reserved_bytes");
    mem.gpu_allocated_after_warmup_bytes = mm.GetOpt<int64_t>("gpu_allocated_after_warmup_bytes");
    r.memory = mem;
  }
  if (in.Has("gpu_breakdown")) {
    auto b = in.Child("gpu_breakdown");
    GpuBreakdown g;
    g.iterations = b.Get<int>("iterations");
    g.wall_ms = b.Get<double>("wall_ms");
    g.active_ms = b.Get<double>("active_ms");
    g.data_movement_ms = b.Get<double>("data_movement_ms");
    g.idle_ms = b.Get<double>("idle_ms");
    g.active_fraction = b.Get<double>("active_fraction");
    g.data_movement_fraction = b.Get<double>("data_movement_fraction");
    g.idle_fraction = b.Get<double>("idle_fraction");
    g.kernel_count = b.Get<double>("kernel_count");
    g.mean_kernel_us = b.GetOpt<double>("mean_kernel_us");
    g.h2d_bytes = b.GetOpt<double>("h2d_bytes");
    g.d2h_bytes = b.GetOpt<double>("d2h_bytes");
    if (b.Has("top_kernels")) {
      const json& list = b.raw().at("top_kernels");
      if (!list.is_array()) b.Fail("top_kernels", "must be an array");
      for (size_t i = 0; i < list.size(); ++i) {
        const json& k = list[i];
        const std::string at = "top_kernels[" + std::to_string(i) + "]";
        if (!k.is_object()) b.Fail(at.c_str(), "must be an object");
        KernelTotal kt;
        if (k.contains("name")) {
          if (!k.at("name").is_string()) b.Fail((at + ".name").c_str(), "must be a string");
          kt.name = k.at("name").get<std::string>();
        }
        if (k.contains("total_ms")) {
          if (!k.at("total_ms").is_number()) b.Fail((at + ".total_ms").c_str(), "must be a number");
          kt.total_ms = k.at("total_ms").get<double>();
        }
        if (k.contains("count")) {
          if (!k.at("count").is_number_integer()) b.Fail((at + ".count").c_str(), "must be an integer");
          kt.count = k.at("count").get<int64_t>();
        }
        g.top_kernels.push_back(std::move(kt));
      }
    }
    r.gpu_breakdown = g;
  }
  if (in.Has("compile")) {
    auto c = in.Child("compile");
    CompileInfo ci;
    ci.trace_ms = c.GetOpt<double>("trace_ms");
    ci.convert_ms = c.GetOpt<double>("convert_ms");
    ci.compile_ms = c.GetOpt<double>("compile_ms");
    ci.load_ms = c.GetOpt<double>("load_ms");
    ci.cache_hit = c.GetOr<bool>("cache_hit", false);
    ci.cache_key = c.GetOr<std::string>("cache_key", "");
    ci.check = c.GetOr<std::string>("check", "");
    ci.check_error = c.GetOpt<double>("check_error");
    NonNegative(ci.check_error, file, "compile.check_error");
    ci.check_reference_error = c.GetOpt<double>("check_reference_error");
    NonNegative(ci.check_reference_error, file, "compile.check_reference_error");
    for (const auto& [v, name] : {std::pair{ci.trace_ms, "compile.trace_ms"},
                                  {ci.convert_ms, "compile.convert_ms"},
                                  {ci.compile_ms, "compile.compile_ms"},
                                  {ci.load_ms, "compile.load_ms"}}) {
      NonNegative(v, file, name);
    }
    r.compile = ci;
  }
  if (in.Has("paired")) r.paired = PairedFromJson(in.Child("paired"));
  if (in.Has("host_breakdown")) r.host_breakdown = HostBreakdownFromJson(j.at("host_breakdown"), file);
  if (in.Has("system_load")) r.system_load = SystemLoadFromJson(j.at("system_load"), file);
  if (in.Has("flops")) {
    auto f = in.Child("flops");
    Flops fl;
    fl.profiler_flops_per_iter = f.GetOpt<double>("profiler_flops_per_iter");
    fl.profiler_counted_ops = f.GetOr<std::vector<std::string>>("profiler_counted_ops", {});
    fl.analytic_flops_per_iter = f.GetOpt<double>("analytic_flops_per_iter");
    fl.achieved_tflops_profiler = f.GetOpt<double>("achieved_tflops_profiler");
    fl.achieved_tflops_analytic = f.GetOpt<double>("achieved_tflops_analytic");
    r.flops = fl;
  }
  if (in.Has("operators")) {
    r.operators = in.Child("operators").Get<std::vector<std::string>>("names");
  }
  if (in.Has("profiling")) {
    auto p = in.Child("profiling");
    Profiling pr;
    pr.iterations = p.GetOr<int>("iterations", 0);
    pr.wall_ms_per_iter = p.GetOr<double>("wall_ms_per_iter", 0.0);
    pr.overhead_ratio = p.GetOpt<double>("overhead_ratio");
    pr.trace_file = p.GetOpt<std::string>("trace_file");
    r.profiling = pr;
  }
  // Ids name directories and files: the schema's slug pattern (core/layout.h).
  if (!IsSafeId(r.build_id)) in.Fail("build_id", "not a safe id");
  if (!IsSafeId(r.platform_id)) in.Fail("platform_id", "not a safe id");
  if (!IsSafeId(r.model.id)) in.Fail("model.id", "not a safe id");
  CheckRanges(r, file);
  return r;
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
