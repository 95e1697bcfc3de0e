#include "core/manifest.h"

#include <cmath>

#include "core/json_io.h"
#include "core/layout.h"
#include "core/result.h"

namespace torchgauge::core {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json NullIfEmpty(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }
template <typename T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json ClocksJson(const std::optional<Clocks>& c) {
  if (!c) return nullptr;
  return {{"sm_clock_mhz", Opt(c->sm_clock_mhz)},
          {"sm_clock_max_mhz", Opt(c->sm_clock_max_mhz)},
          {"mem_clock_mhz", Opt(c->mem_clock_mhz)},
          {"pstate", NullIfEmpty(c->pstate)},
          {"power_draw_w", Opt(c->power_draw_w)},
          {"temperature_c", Opt(c->temperature_c)},
          {"at", NullIfEmpty(c->at)}};
}

// One object of the manifest, with the dotted path of its fields for errors.
class Fields {
 public:
  Fields(const json& j, const fs::path& file, std::string path) : j_(j), file_(file), path_(std::move(path)) {}

  bool Has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  [[noreturn]] void Fail(const char* key, const std::string& message) const {
    throw FileError(file_, Name(key), message);
  }
  Fields Object(const char* key) const {
    if (!j_.contains(key)) Fail(key, "missing required field");
    if (!j_.at(key).is_object()) Fail(key, "must be an object");
    return Fields(j_.at(key), file_, Name(key));
  }
  std::optional<Fields> OptObject(const char* key) const {
    if (!Has(key)) return std::nullopt;
    return Object(key);
  }
  // Required strings must be present and non-null; optional ones may be null.
  std::string Str(const char* key, bool required) const {
    if (!Has(key)) {
      if (required) Fail(key, "missing required field");
      return "";
    }
    if (!j_.at(key).is_string()) Fail(key, "must be a string");
    return j_.at(key).get<std::string>();
  }
  std::optional<int64_t> Int(const char* key, int64_t min) const {
    if (!Has(key)) return std::nullopt;
    const json& v = j_.at(key);
    if (!v.is_number_integer()) Fail(key, "must be an integer");
    // JSON numbers >= 0 parse as unsigned: check the range before converting.
    const bool too_big = v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
    if (too_big || v.get<int64_t>() < min) {
      Fail(key, "must be an integer >= " + std::to_string(min));
    }
    return v.get<int64_t>();
  }
  std::optional<double> Num(const char* key) const {
    if (!Has(key)) return std::nullopt;
    if (!j_.at(key).is_number()) Fail(key, "must be a number");
    return j_.at(key).get<double>();
  }
  bool Bool(const char* key) const {
    if (!Has(key)) return false;
    if (!j_.at(key).is_boolean()) Fail(key, "must be a boolean");
    return j_.at(key).get<bool>();
  }
  const json& raw() const { return j_; }

 private:
  std::string Name(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  const json& j_;
  const fs::path& file_;
  std::string path_;
};

std::optional<Clocks> ParseClocks(const Fields& dev, const char* key) {
  auto c = dev.OptObject(key);
  if (!c) return std::nullopt;
  Clocks out;
  out.sm_clock_mhz = c->Num("sm_clock_mhz");
  out.sm_clock_max_mhz = c->Num("sm_clock_max_mhz");
  out.mem_clock_mhz = c->Num("mem_clock_mhz");
  out.pstate = c->Str("pstate", false);
  out.power_draw_w = c->Num("power_draw_w");
  out.temperature_c = c->Num("temperature_c");
  out.at = c->Str("at", false);
  return out;
}

json ShardJson(const ShardBlock& s) {
  json plan = json::array();
  for (const auto& r : s.plan) {
    plan.push_back({{"run", r.run}, {"batch_size", r.batch_size}, {"shard", r.shard}, {"cost", r.cost}});
  }
  return {{"index", s.index},
          {"count", s.count},
          {"host", s.host},
          {"started_at", s.started_at},
          {"finished_at", NullIfEmpty(s.finished_at)},
          {"runs_assigned", s.runs_assigned},
          {"device", s.device},
          {"cost_source", s.cost_source},
          {"plan", std::move(plan)}};
}

json ShardsJson(const std::vector<ShardSummary>& shards) {
  json out = json::array();
  for (const auto& s : shards) {
    out.push_back({{"index", s.index},
                   {"host", NullIfEmpty(s.host)},
                   {"started_at", NullIfEmpty(s.started_at)},
                   {"finished_at", NullIfEmpty(s.finished_at)},
                   {"wall_s", Opt(s.wall_s)},
                   {"runs_assigned", s.runs_assigned},
                   {"runs_present", s.runs_present},
                   {"runs_missing", s.runs_missing},
                   {"planned_cost", s.planned_cost}});
  }
  return out;
}

int64_t RequiredInt(const Fields& f, const char* key, int64_t min) {
  auto v = f.Int(key, min);
  if (!v) f.Fail(key, "missing required field");
  return *v;
}

int32_t SmallInt(const Fields& f, const char* key, int64_t min) {
  const int64_t v = RequiredInt(f, key, min);
  if (v > INT32_MAX) f.Fail(key, "too large");
  return static_cast<int32_t>(v);
}

double NonNegative(const Fields& f, const char* key) {
  auto v = f.Num(key);
  if (!v) f.Fail(key, "missing required field");
  if (!(*v >= 0) || !std::isfinite(*v)) f.Fail(key, "must be a finite number >= 0");
  return *v;
}

ShardBlock ParseShardBlock(const json& j, const fs::path& file) {
  const Fields s(j, file, "shard");
  ShardBlock out;
  out.count = SmallInt(s, "count", 1);
  out.index = SmallInt(s, "index", 0);
  if (out.index >= out.count) s.Fail("index", "must be less than shard.count");
  out.host = s.Str("host", true);
  out.started_at = s.Str("started_at", true);
  out.finished_at = s.Str("finished_at", false);
  out.runs_assigned = RequiredInt(s, "runs_assigned", 0);
  out.device = s.Str("device", true);
  out.cost_source = s.Str("cost_source", true);
  if (out.cost_source != "static" && out.cost_source != "measured") s.Fail("cost_source", "must be static or measured");
  if (!j.contains("plan") || !j.at("plan").is_array()) s.Fail("plan", "must be an array");
  int64_t own = 0;
  for (std::size_t i = 0; i < j.at("plan").size(); ++i) {
    const json& e = j.at("plan").at(i);
    const std::string where = "shard.plan[" + std::to_string(i) + "]";
    if (!e.is_object()) throw FileError(file, where, "must be an object");
    const Fields f(e, file, where);
    PlannedRun r;
    r.run = f.Str("run", true);
    r.batch_size = RequiredInt(f, "batch_size", 1);
    r.shard = SmallInt(f, "shard", 0);
    if (r.shard >= out.count) f.Fail("shard", "must be less than shard.count");
    r.cost = NonNegative(f, "cost");
    if (r.shard == out.index) ++own;
    out.plan.push_back(std::move(r));
  }
  if (own != out.runs_assigned) {
    s.Fail("runs_assigned",
           std::to_string(out.runs_assigned) + " but shard.plan gives this shard " + std::to_string(own) + " runs");
  }
  return out;
}

std::vector<ShardSummary> ParseShards(const json& j, const fs::path& file) {
  std::vector<ShardSummary> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const json& e = j.at(i);
    const std::string where = "shards[" + std::to_string(i) + "]";
    if (!e.is_object()) throw FileError(file, where, "must be an object");
    const Fields f(e, file, where);
    ShardSummary s;
    s.index = SmallInt(f, "index", 0);
    if (s.index != static_cast<int>(i)) f.Fail("index", "shards must be listed by index, from 0");
    s.host = f.Str("host", false);
    s.started_at = f.Str("started_at", false);
    s.finished_at = f.Str("finished_at", false);
    s.wall_s = f.Num("wall_s");
    if (s.wall_s && (!(*s.wall_s >= 0) || !std::isfinite(*s.wall_s))) f.Fail("wall_s", "must be >= 0");
    s.runs_assigned = RequiredInt(f, "runs_assigned", 0);
    s.runs_present = RequiredInt(f, "runs_present", 0);
    s.runs_missing = RequiredInt(f, "runs_missing", 0);
    s.planned_cost = NonNegative(f, "planned_cost");
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

json ToJson(const Manifest& m) {
  json j;
  j["schema_version"] = kManifestSchemaVersion;
  j["kind"] = "torchgauge.manifest";
  j["build_id"] = m.build_id;
  j["platform_id"] = m.platform_id;
  j["collector"] = {{"version", m.collector_version}, {"git_sha", m.git_sha}};
  j["libtorch"] = {{"version", m.libtorch_version},
                   {"cuda_available", m.cuda_available},
                   {"cuda_runtime", NullIfEmpty(m.cuda_runtime)},
                   {"cudnn", NullIfEmpty(m.cudnn)},
                   {"hip_runtime", NullIfEmpty(m.hip_runtime)},
                   {"miopen", NullIfEmpty(m.miopen)}};
  json dev = {{"vendor", m.vendor},
              {"name", m.device_name},
              {"compute_capability", NullIfEmpty(m.compute_capability)},
              {"gcn_arch", NullIfEmpty(m.gcn_arch)},
              {"multiprocessor_count", Opt(m.multiprocessor_count)},
              {"memory_bytes", Opt(m.device_memory_bytes)},
              {"driver", NullIfEmpty(m.driver)},
              {"clocks_start", ClocksJson(m.clocks_start)}};
  const bool finished = !m.finished_at.empty();
  if (finished) dev["clocks_end"] = ClocksJson(m.clocks_end);
  j["device"] = std::move(dev);
  j["cpu"] = {{"model", m.cpu_model},
              {"logical_cores", m.logical_cores},
              {"torch_threads", Opt(m.torch_threads)},
              {"memory_bytes", Opt(m.cpu_memory_bytes)}};
  if (m.cpu_frequency) j["cpu_frequency"] = ToJson(*m.cpu_frequency);
  if (m.peaks) j["peaks"] = ToJson(*m.peaks);
  j["host"] = {
      {"hostname", m.hostname}, {"os", m.os}, {"kernel", NullIfEmpty(m.kernel)}, {"arch", NullIfEmpty(m.arch)}};
  j["started_at"] = m.started_at;
  j["finished_at"] = NullIfEmpty(m.finished_at);
  json suite = m.suite_config.is_object() ? m.suite_config : json::object();
  suite["name"] = m.suite;
  j["suite"] = std::move(suite);
  if (!m.requested.is_null()) j["requested"] = m.requested;
  if (finished) j["interrupted"] = m.interrupted;
  if (m.run_counts) j["runs"] = *m.run_counts;
  if (m.shard) j["shard"] = ShardJson(*m.shard);
  if (m.shards) j["shards"] = ShardsJson(*m.shards);
  return j;
}

Manifest ManifestFromJson(const json& j, const fs::path& file) {
  CheckSchema(j, file, "torchgauge.manifest", kManifestSchemaVersion);
  Fields in(j, file, "");
  Manifest m;
  m.present = true;
  m.build_id = in.Str("build_id", true);
  m.platform_id = in.Str("platform_id", true);
  if (!IsSafeId(m.build_id)) in.Fail("build_id", "not a safe id");
  if (!IsSafeId(m.platform_id)) in.Fail("platform_id", "not a safe id");
  m.started_at = in.Str("started_at", true);
  m.finished_at = in.Str("finished_at", false);

  const Fields col = in.Object("collector");
  m.collector_version = col.Str("version", true);
  m.git_sha = col.Str("git_sha", true);

  const Fields lt = in.Object("libtorch");
  m.libtorch_version = lt.Str("version", true);
  m.cuda_available = lt.Bool("cuda_available");
  m.cuda_runtime = lt.Str("cuda_runtime", false);
  m.cudnn = lt.Str("cudnn", false);
  m.hip_runtime = lt.Str("hip_runtime", false);
  m.miopen = lt.Str("miopen", false);

  const Fields dev = in.Object("device");
  m.vendor = dev.Str("vendor", true);
  if (m.vendor != "NVIDIA" && m.vendor != "AMD" && m.vendor != "CPU") dev.Fail("vendor", "must be NVIDIA, AMD or CPU");
  m.device_name = dev.Str("name", true);
  m.compute_capability = dev.Str("compute_capability", false);
  m.gcn_arch = dev.Str("gcn_arch", false);
  m.driver = dev.Str("driver", false);
  m.multiprocessor_count = dev.Int("multiprocessor_count", 0);
  m.device_memory_bytes = dev.Int("memory_bytes", 0);
  m.clocks_start = ParseClocks(dev, "clocks_start");
  m.clocks_end = ParseClocks(dev, "clocks_end");

  const Fields cpu = in.Object("cpu");
  m.cpu_model = cpu.Str("model", true);
  auto cores = cpu.Int("logical_cores", 1);
  if (!cores || *cores > INT32_MAX) cpu.Fail("logical_cores", "must be an integer >= 1");
  m.logical_cores = static_cast<int>(*cores);
  m.torch_threads = cpu.Int("torch_threads", 1);
  m.cpu_memory_bytes = cpu.Int("memory_bytes", 0);

  if (in.Has("cpu_frequency")) m.cpu_frequency = CpuFrequencyPolicyFromJson(j.at("cpu_frequency"), file);
  if (in.Has("peaks")) m.peaks = ProbeResultFromJson(j.at("peaks"), file);

  const Fields host = in.Object("host");
  m.hostname = host.Str("hostname", true);
  m.os = host.Str("os", true);
  m.kernel = host.Str("kernel", false);
  m.arch = host.Str("arch", false);

  const Fields suite = in.Object("suite");
  m.suite = suite.Str("name", true);
  m.suite_config = suite.raw();

  if (in.Has("requested")) {
    if (!j.at("requested").is_object()) in.Fail("requested", "must be an object");
    m.requested = j.at("requested");
  }
  if (j.contains("interrupted")) {
    if (!j.at("interrupted").is_boolean()) in.Fail("interrupted", "must be a boolean");
    m.interrupted = j.at("interrupted").get<bool>();
  }
  if (in.Has("runs")) {
    const Fields runs = in.Object("runs");
    std::map<std::string, int64_t> counts;
    for (const auto& [status, n] : j.at("runs").items()) {
      auto count = runs.Int(status.c_str(), 0);
      if (!count) runs.Fail(status.c_str(), "must be an integer >= 0");
      counts[status] = *count;
    }
    m.run_counts = std::move(counts);
  }
  if (in.Has("shard")) {
    if (!j.at("shard").is_object()) in.Fail("shard", "must be an object");
    m.shard = ParseShardBlock(j.at("shard"), file);
  }
  if (in.Has("shards")) {
    if (!j.at("shards").is_array()) in.Fail("shards", "must be an array");
    m.shards = ParseShards(j.at("shards"), file);
  }
  return m;
}

}  // namespace torchgauge::core
