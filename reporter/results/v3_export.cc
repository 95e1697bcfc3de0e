#include "reporter/results/v3_export.h"

#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/stats/stats.h"
#include "reporter/output/format.h"

using nlohmann::json;

namespace torchgauge::reporter {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// The schema's types, as the JSON the uploader reads them from; kId: a
// positive integer (the uploader needs a workflow and a job id for its path).
enum class T { kString, kUInt, kId, kFloat, kStringArray, kFloatArray, kMap, kArray };

// The uploader's --metadata keys that a record may leave to it.
bool FromMetadata(const std::string& field) {
  for (const char* k : {"repo", "head_branch", "head_sha", "workflow_id", "run_attempt", "job_id"})
    if (field == k) return true;
  return false;
}

const std::vector<std::pair<std::string, T>>& Fields() {
  static const std::vector<std::pair<std::string, T>> kFields = {
      {"timestamp", T::kUInt},
      {"schema_version", T::kString},
      {"name", T::kString},
      {"repo", T::kString},
      {"head_branch", T::kString},
      {"head_sha", T::kString},
      {"workflow_id", T::kId},
      {"run_attempt", T::kId},
      {"job_id", T::kId},
      {"runners", T::kArray},
      {"runners[].name", T::kString},
      {"runners[].type", T::kString},
      {"runners[].cpu_info", T::kString},
      {"runners[].cpu_count", T::kUInt},
      {"runners[].gpu_info", T::kString},
      {"runners[].gpu_count", T::kUInt},
      {"runners[].extra_info", T::kMap},
      {"benchmark.name", T::kString},
      {"benchmark.mode", T::kString},
      {"benchmark.dtype", T::kString},
      {"benchmark.extra_info", T::kMap},
      {"model.name", T::kString},
      {"model.type", T::kString},
      {"model.backend", T::kString},
      {"model.origins", T::kStringArray},
      {"model.extra_info", T::kMap},
      {"inputs", T::kMap},
      {"dependencies", T::kMap},
      {"metric.name", T::kString},
      {"metric.benchmark_values", T::kFloatArray},
      {"metric.target_value", T::kFloat},
      {"metric.extra_info", T::kMap},
  };
  return kFields;
}

bool Is(const json& v, T t) {
  switch (t) {
    case T::kString:
      return v.is_string();
    case T::kUInt:
      return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
    case T::kId:
      return v.is_number_integer() && v.get<int64_t>() > 0;
    case T::kFloat:
      return v.is_number();
    case T::kStringArray:
      if (!v.is_array()) return false;
      for (const auto& x : v)
        if (!x.is_string()) return false;
      return true;
    case T::kFloatArray:
      if (!v.is_array() || v.empty()) return false;
      for (const auto& x : v)
        if (!x.is_number() || !std::isfinite(x.get<double>())) return false;
      return true;
    case T::kMap:
      return v.is_object();
    case T::kArray:
      return v.is_array() && !v.empty();
  }
  return false;
}

// "a.b" in `j`, or null.
const json* At(const json& j, const std::string& path) {
  const json* cur = &j;
  size_t from = 0;
  while (from <= path.size()) {
    const size_t dot = path.find('.', from);
    const std::string key = path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    if (!cur->is_object() || !cur->contains(key)) return nullptr;
    cur = &cur->at(key);
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  return cur;
}

// The runner as the HUD reads it (torchci's benchmarkDataQueryBuilder.ts):
// runners[0].name is its device ("cuda", "rocm", "cpu") and runners[0].type
// its arch, the device model, as test-infra's gather_runners_info.py writes
// them; the host is in extra_info.
json Runner(const core::Manifest& m, const std::string& platform) {
  const bool gpu = m.vendor != "CPU" && !m.vendor.empty();
  const std::string device = !gpu ? "cpu" : m.vendor == "AMD" ? "rocm" : "cuda";
  const std::string cpu_model = m.cpu_model.empty() ? m.device_name : m.cpu_model;
  json extra = {{"platform_id", platform}};
  for (auto [k, v] :
       {std::pair{"hostname", &m.hostname}, {"cpu_model", &cpu_model}, {"driver", &m.driver}, {"os", &m.os}}) {
    if (!v->empty()) extra[k] = *v;
  }
  json r = {{"name", device},
            {"type", gpu ? m.device_name : cpu_model},
            {"cpu_info", m.arch.empty() ? cpu_model : m.arch},  // the schema's "x86_64 or arm"
            {"cpu_count", static_cast<uint64_t>(std::max(m.logical_cores, 0))},
            {"mem_info", ""},
            {"gpu_info", gpu ? m.device_name : ""},
            {"gpu_count", gpu ? 1u : 0u},
            {"gpu_mem_info", ""},
            {"extra_info", extra}};
  // Memory the manifest did not record is left out, never written as 0.
  if (m.cpu_memory_bytes) r["avail_mem_in_gb"] = static_cast<uint64_t>(*m.cpu_memory_bytes / (1ull << 30));
  if (gpu && m.device_memory_bytes)
    r["avail_gpu_mem_in_gb"] = static_cast<uint64_t>(*m.device_memory_bytes / (1ull << 30));
  return r;
}

json Dependencies(const core::Manifest& m) {
  json torch_extra = json::object();
  for (auto [k, v] : {std::pair{"build_version", &m.libtorch_build_version},
                      {"cuda_runtime", &m.cuda_runtime},
                      {"cudnn", &m.cudnn},
                      {"hip_runtime", &m.hip_runtime}}) {
    if (!v->empty()) torch_extra[k] = *v;
  }
  return {{"pytorch",
           {{"repo", "pytorch/pytorch"},
            {"branch", ""},
            {"sha", m.libtorch_git_commit},
            {"version", m.libtorch_version},
            {"extra_info", torch_extra}}},
          {"torchgauge",
           {{"repo", "torchgauge"},
            {"branch", ""},
            {"sha", m.git_sha},
            {"version", m.collector_version},
            {"extra_info", json::object()}}}};
}

// The change and the job: what `ctx` knows, and the torch build's commit
// for head_sha; nothing else (see V3Context).
void AddChange(json& j, const core::Manifest& m, const V3Context& ctx) {
  if (ctx.repo) j["repo"] = *ctx.repo;
  if (ctx.head_branch) j["head_branch"] = *ctx.head_branch;
  const std::string sha = ctx.head_sha.value_or(m.libtorch_git_commit);
  if (!sha.empty()) j["head_sha"] = sha;
  if (ctx.workflow_id) j["workflow_id"] = *ctx.workflow_id;
  if (ctx.run_attempt) j["run_attempt"] = *ctx.run_attempt;
  if (ctx.job_id) j["job_id"] = *ctx.job_id;
}

json Base(const BuildResults& b, const PlatformResults& p, const core::RunResult& r, const V3Context& ctx) {
  const core::Manifest& m = p.manifest;
  json j;
  j["timestamp"] = static_cast<uint64_t>(std::max<int64_t>(UtcSeconds(m.started_at).value_or(0), 0));
  j["schema_version"] = "v3";
  j["name"] = "TorchGauge";
  AddChange(j, m, ctx);
  j["runners"] = json::array({Runner(m, m.platform_id)});
  j["benchmark"] = {{"name", "TorchGauge " + m.suite},
                    {"mode", r.mode == "train" ? "training" : "inference"},
                    {"dtype", HudDtype(r.precision)},
                    {"extra_info",
                     {{"build_id", b.id},
                      {"platform_id", m.platform_id},
                      {"device", r.device},
                      {"precision", r.precision},
                      {"batch_size", std::to_string(r.batch_size)}}}};
  // The HUD's origins are the suites a model comes from (torchbench,
  // huggingface, timm_models); the project's own test models are in none.
  const json origins = r.model.domain == "test" ? json::array() : json::array({"torchbench"});
  j["model"] = {{"name", r.model.id},
                {"type", r.model.domain},
                {"backend", r.backend},
                {"origins", origins},
                {"extra_info", {{"paper_name", r.model.paper_name}, {"task", r.model.task}}}};
  j["inputs"] = json::object();
  j["dependencies"] = Dependencies(m);
  return j;
}

// One record: `value` is what TorchGauge reports for the metric, and the one
// element of benchmark_values, since the HUD shows their mean.
void Add(json& out, json base, const std::string& name, double value, const std::string& unit,
         const char* statistic = "value") {
  base["metric"] = {{"name", name},
                    {"benchmark_values", json::array({value})},
                    {"target_value", 0.0},
                    {"extra_info", {{"unit", unit}, {"statistic", statistic}}}};
  out.push_back(std::move(base));
}

// The median of `samples` (n of them) as a record; none without samples.
void AddMedian(json& out, const json& base, const std::string& name, const std::vector<double>& samples,
               const std::string& unit) {
  if (samples.empty()) return;
  Add(out, base, name, core::Quantile(samples, 0.5), unit, "median");
  out.back()["metric"]["extra_info"]["samples"] = std::to_string(samples.size());
}

// A generative run's generation metrics, named as the HUD's LLM dashboards
// name them: the median TTFT and TPOT, the TPOT p90, tokens per second and
// the key-value cache.
void AddGeneration(json& out, const json& base, const core::Generation& g) {
  auto median = [&](const char* name, double value, const std::vector<double>& samples) {
    if (samples.empty()) return;  // not measured: no record
    Add(out, base, name, value, "ms", "median");
    out.back()["metric"]["extra_info"]["samples"] = std::to_string(samples.size());
  };
  median("ttft_ms", g.ttft_ms, g.ttft_samples_ms);
  median("tpot_ms", g.tpot_median_ms, g.tpot_samples_ms);
  Add(out, base, "p90_tpot_ms", g.tpot_p90_ms, "ms", "p90");
  Add(out, base, "tokens_per_second", g.tokens_per_s, "tokens/s", "median");
  if (g.kv_cache_bytes) Add(out, base, "kv_cache_mb", static_cast<double>(*g.kv_cache_bytes) / kMiB, "MiB");
}

// The step time as TorchGauge reports it: the median of every timed step
// (pooled over the worker processes), with each process's median kept in
// extra_info for a reader who wants the spread.
void AddStepTime(json& out, const json& base, const core::Timing& t) {
  Add(out, base, "step_time_ms", t.median_ms, "ms", "median");
  json& extra = out.back()["metric"]["extra_info"];
  extra["samples"] = std::to_string(t.samples_ms.size());
  if (!t.process_medians_ms.empty()) {
    std::string joined;
    for (double v : t.process_medians_ms) joined += (joined.empty() ? "" : ",") + Num(v, "%.6g");
    extra["process_medians"] = joined;
  }
}

}  // namespace

json V3Records(const BuildResults& b, const V3Context& ctx) {
  json out = json::array();
  for (const auto& p : b.platforms) {
    if (!p.manifest.present) continue;
    for (const auto& r : p.runs) {
      const bool timed = r.timing && !r.timing->samples_ms.empty();
      if (r.status != "ok" || (!timed && !r.counted)) continue;
      const json base = Base(b, p, r, ctx);
      if (timed) AddStepTime(out, base, *r.timing);
      if (timed && r.timing->throughput_per_s)
        Add(out, base, "throughput_samples_per_s", *r.timing->throughput_per_s, "samples/s");
      if (r.counted) {
        AddMedian(out, base, "instructions", core::CountedInstructions(*r.counted), "instructions");
        AddMedian(out, base, "estimated_cycles", core::CountedCycles(*r.counted), "cycles");
      }
      if (r.memory && r.memory->cpu_peak_rss_bytes)
        Add(out, base, "peak_cpu_memory_mb", static_cast<double>(*r.memory->cpu_peak_rss_bytes) / kMiB, "MiB", "peak");
      if (r.memory && r.memory->gpu_peak_allocated_bytes)
        Add(out, base, "peak_gpu_memory_mb", static_cast<double>(*r.memory->gpu_peak_allocated_bytes) / kMiB, "MiB",
            "peak");
      if (r.flops && r.flops->achieved_tflops_analytic)
        Add(out, base, "achieved_tflops", *r.flops->achieved_tflops_analytic, "TFLOP/s");
      if (r.generation) AddGeneration(out, base, *r.generation);
    }
  }
  return out;
}

std::string HudDtype(const std::string& precision) {
  // TF32 is float32 storage with tensor-core matmuls, and autocast is "amp"
  // whatever its lower type: the HUD has no word for either difference, so
  // benchmark.extra_info.precision keeps TorchGauge's.
  if (precision == "fp32" || precision == "tf32") return "float32";
  if (precision == "bf16") return "bfloat16";
  if (precision == "fp16") return "float16";
  if (precision == "amp-bf16" || precision == "amp-fp16") return "amp";
  return "notset";  // "default": the model's own dtype, nothing forced
}

V3Context WithCiEnvironment(V3Context ctx, const std::function<const char*(const char*)>& env) {
  auto id = [&](std::optional<uint64_t>& field, const char* name) {
    const char* v = env(name);
    if (field || !v || !*v) return;
    size_t used = 0;
    unsigned long long n = 0;
    try {
      n = std::stoull(v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != std::string(v).size() || n == 0 || v[0] == '-')
      throw std::invalid_argument(std::string(name) + "='" + v + "': not a positive integer");
    field = n;
  };
  id(ctx.workflow_id, "GITHUB_RUN_ID");
  id(ctx.run_attempt, "GITHUB_RUN_ATTEMPT");
  return ctx;
}

const std::vector<std::string>& V3RequiredFields() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> v;
    for (const auto& [name, type] : Fields()) v.push_back(name);
    return v;
  }();
  return kNames;
}

std::vector<std::string> V3Problems(const json& record) {
  std::vector<std::string> out;
  for (const auto& [name, type] : Fields()) {
    if (name.rfind("runners[].", 0) == 0) {
      const json* runners = At(record, "runners");
      if (!runners || !runners->is_array()) continue;  // reported as "runners"
      for (size_t i = 0; i < runners->size(); ++i) {
        const json* v = At((*runners)[i], name.substr(10));
        if (!v || !Is(*v, type))
          out.push_back("runners[" + std::to_string(i) + "]." + name.substr(10) + ": missing or of the wrong type");
      }
      continue;
    }
    const json* v = At(record, name);
    if (!v && FromMetadata(name)) continue;  // the uploader's --metadata supplies it
    if (!v || !Is(*v, type)) out.push_back(name + ": missing or of the wrong type");
  }
  if (const json* s = At(record, "schema_version"); s && *s != "v3") out.push_back("schema_version: must be \"v3\"");
  return out;
}

}  // namespace torchgauge::reporter
