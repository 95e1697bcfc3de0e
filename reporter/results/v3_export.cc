#include "reporter/results/v3_export.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "reporter/output/format.h"

using nlohmann::json;

namespace torchgauge::reporter {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// The schema's types, as the JSON the uploader reads them from.
enum class T { kString, kUInt, kFloat, kStringArray, kFloatArray, kMap, kArray };

const std::vector<std::pair<std::string, T>>& Fields() {
  static const std::vector<std::pair<std::string, T>> kFields = {
      {"timestamp", T::kUInt},
      {"schema_version", T::kString},
      {"name", T::kString},
      {"repo", T::kString},
      {"head_branch", T::kString},
      {"head_sha", T::kString},
      {"workflow_id", T::kUInt},
      {"run_attempt", T::kUInt},
      {"job_id", T::kUInt},
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

json Runner(const core::Manifest& m, const std::string& platform) {
  const bool gpu = m.vendor != "CPU" && !m.vendor.empty();
  json extra = {{"platform_id", platform}};
  if (!m.driver.empty()) extra["driver"] = m.driver;
  if (!m.os.empty()) extra["os"] = m.os;
  json r = {{"name", m.hostname},
            {"type", platform},
            {"cpu_info", m.cpu_model},
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

json Base(const BuildResults& b, const PlatformResults& p, const core::RunResult& r) {
  const core::Manifest& m = p.manifest;
  json j;
  j["timestamp"] = static_cast<uint64_t>(std::max<int64_t>(UtcSeconds(m.started_at).value_or(0), 0));
  j["schema_version"] = "v3";
  j["name"] = "TorchGauge";
  j["repo"] = "pytorch/pytorch";
  j["head_branch"] = "";
  j["head_sha"] = m.libtorch_git_commit;
  // Not a GitHub Actions job: the ids are 0, as the schema's defaults are.
  j["workflow_id"] = 0u;
  j["run_attempt"] = 0u;
  j["job_id"] = 0u;
  j["runners"] = json::array({Runner(m, m.platform_id)});
  j["benchmark"] = {{"name", "TorchGauge " + m.suite},
                    {"mode", r.mode == "train" ? "training" : "inference"},
                    {"dtype", r.precision},
                    {"extra_info",
                     {{"build_id", b.id},
                      {"platform_id", m.platform_id},
                      {"device", r.device},
                      {"batch_size", std::to_string(r.batch_size)}}}};
  j["model"] = {{"name", r.model.id},
                {"type", r.model.domain},
                {"backend", r.backend},
                {"origins", json::array({"torchbench"})},
                {"extra_info", {{"paper_name", r.model.paper_name}, {"task", r.model.task}}}};
  j["inputs"] = json::object();
  j["dependencies"] = Dependencies(m);
  return j;
}

void Add(json& out, json base, const std::string& name, const std::vector<double>& values, const std::string& unit) {
  base["metric"] = {
      {"name", name}, {"benchmark_values", values}, {"target_value", 0.0}, {"extra_info", {{"unit", unit}}}};
  out.push_back(std::move(base));
}

// A generative run's generation metrics, named as the HUD's LLM dashboards
// name them: every TTFT and TPOT sample, the TPOT p90, tokens per second and
// the key-value cache.
void AddGeneration(json& out, const json& base, const core::Generation& g) {
  Add(out, base, "ttft_ms", g.ttft_samples_ms, "ms");
  Add(out, base, "tpot_ms", g.tpot_samples_ms, "ms");
  Add(out, base, "p90_tpot_ms", {g.tpot_p90_ms}, "ms");
  Add(out, base, "tokens_per_second", {g.tokens_per_s}, "tokens/s");
  if (g.kv_cache_bytes) Add(out, base, "kv_cache_mb", {static_cast<double>(*g.kv_cache_bytes) / kMiB}, "MiB");
}

}  // namespace

json V3Records(const BuildResults& b) {
  json out = json::array();
  for (const auto& p : b.platforms) {
    if (!p.manifest.present) continue;
    for (const auto& r : p.runs) {
      const bool timed = r.timing && !r.timing->samples_ms.empty();
      if (r.status != "ok" || (!timed && !r.counted)) continue;
      const json base = Base(b, p, r);
      if (timed) Add(out, base, "step_time_ms", r.timing->samples_ms, "ms");
      if (timed && r.timing->throughput_per_s)
        Add(out, base, "throughput_samples_per_s", {*r.timing->throughput_per_s}, "samples/s");
      if (r.counted) {
        Add(out, base, "instructions", core::CountedInstructions(*r.counted), "instructions");
        Add(out, base, "estimated_cycles", core::CountedCycles(*r.counted), "cycles");
      }
      if (r.memory && r.memory->cpu_peak_rss_bytes)
        Add(out, base, "peak_cpu_memory_mb", {static_cast<double>(*r.memory->cpu_peak_rss_bytes) / kMiB}, "MiB");
      if (r.memory && r.memory->gpu_peak_allocated_bytes)
        Add(out, base, "peak_gpu_memory_mb", {static_cast<double>(*r.memory->gpu_peak_allocated_bytes) / kMiB}, "MiB");
      if (r.flops && r.flops->achieved_tflops_analytic)
        Add(out, base, "achieved_tflops", {*r.flops->achieved_tflops_analytic}, "TFLOP/s");
      if (r.generation) AddGeneration(out, base, *r.generation);
    }
  }
  return out;
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
    if (!v || !Is(*v, type)) out.push_back(name + ": missing or of the wrong type");
  }
  if (const json* s = At(record, "schema_version"); s && *s != "v3") out.push_back("schema_version: must be \"v3\"");
  return out;
}

}  // namespace torchgauge::reporter
