#include "core/contract/manifest.h"

#include "core/contract/layout.h"
#include "core/contract/result.h"
#include "core/io/json_fields.h"
#include "core/io/json_io.h"

namespace torchgauge::core {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

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

std::optional<Clocks> ReadClocks(const JsonFields& dev, const char* key) {
  auto c = dev.OptObject(key);
  if (!c) return std::nullopt;
  Clocks out;
  out.sm_clock_mhz = c->GetOpt<double>("sm_clock_mhz");
  out.sm_clock_max_mhz = c->GetOpt<double>("sm_clock_max_mhz");
  out.mem_clock_mhz = c->GetOpt<double>("mem_clock_mhz");
  out.pstate = c->GetOr<std::string>("pstate", "");
  out.power_draw_w = c->GetOpt<double>("power_draw_w");
  out.temperature_c = c->GetOpt<double>("temperature_c");
  out.at = c->GetOr<std::string>("at", "");
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

ShardBlock ReadShardBlock(const JsonFields& s) {
  static constexpr const char* kCostSources[] = {"static", "measured"};
  ShardBlock out;
  out.count = s.AtLeast("count", 1);
  out.index = s.AtLeast("index", 0);
  if (out.index >= out.count) s.Fail("index", "must be less than shard.count");
  out.host = s.Get<std::string>("host");
  out.started_at = s.Get<std::string>("started_at");
  out.finished_at = s.GetOr<std::string>("finished_at", "");
  out.runs_assigned = s.AtLeast<int64_t>("runs_assigned", 0);
  out.device = s.Get<std::string>("device");
  out.cost_source = s.OneOf("cost_source", kCostSources);
  int64_t own = 0;
  for (const JsonFields& f : s.Objects("plan")) {
    PlannedRun r;
    r.run = f.Get<std::string>("run");
    r.batch_size = f.AtLeast<int64_t>("batch_size", 1);
    r.shard = f.AtLeast("shard", 0);
    if (r.shard >= out.count) f.Fail("shard", "must be less than shard.count");
    r.cost = f.AtLeast("cost", 0.0);
    if (r.shard == out.index) ++own;
    out.plan.push_back(std::move(r));
  }
  if (own != out.runs_assigned) {
    s.Fail("runs_assigned",
           std::to_string(out.runs_assigned) + " but shard.plan gives this shard " + std::to_string(own) + " runs");
  }
  return out;
}

std::vector<ShardSummary> ReadShards(const JsonFields& in) {
  std::vector<ShardSummary> out;
  for (const JsonFields& f : in.Objects("shards")) {
    ShardSummary s;
    s.index = f.AtLeast("index", 0);
    if (s.index != static_cast<int>(out.size())) f.Fail("index", "shards must be listed by index, from 0");
    s.host = f.GetOr<std::string>("host", "");
    s.started_at = f.GetOr<std::string>("started_at", "");
    s.finished_at = f.GetOr<std::string>("finished_at", "");
    s.wall_s = f.OptAtLeast("wall_s", 0.0);
    s.runs_assigned = f.AtLeast<int64_t>("runs_assigned", 0);
    s.runs_present = f.AtLeast<int64_t>("runs_present", 0);
    s.runs_missing = f.AtLeast<int64_t>("runs_missing", 0);
    s.planned_cost = f.AtLeast("planned_cost", 0.0);
    out.push_back(std::move(s));
  }
  return out;
}

void ReadLibtorch(const JsonFields& lt, Manifest& m) {
  m.libtorch_version = lt.Get<std::string>("version");
  m.cuda_available = lt.GetOr("cuda_available", false);
  m.cuda_runtime = lt.GetOr<std::string>("cuda_runtime", "");
  m.cudnn = lt.GetOr<std::string>("cudnn", "");
  m.hip_runtime = lt.GetOr<std::string>("hip_runtime", "");
  m.miopen = lt.GetOr<std::string>("miopen", "");
  m.libtorch_git_commit = lt.GetOr<std::string>("git_commit", "");
  m.libtorch_build_version = lt.GetOr<std::string>("build_version", "");
  m.libtorch_cuda_build = lt.GetOr<std::string>("cuda_build", "");
  m.libtorch_hip_build = lt.GetOr<std::string>("hip_build", "");
  if (lt.Has("origin")) {
    const JsonFields origin = lt.Object("origin");
    m.libtorch_origin_kind = origin.GetOr<std::string>("kind", "");
    m.libtorch_origin_path = origin.GetOr<std::string>("path", "");
  }
}

void ReadDevice(const JsonFields& dev, Manifest& m) {
  static constexpr const char* kVendors[] = {"NVIDIA", "AMD", "CPU"};
  m.vendor = dev.OneOf("vendor", kVendors);
  m.device_name = dev.Get<std::string>("name");
  m.compute_capability = dev.GetOr<std::string>("compute_capability", "");
  m.gcn_arch = dev.GetOr<std::string>("gcn_arch", "");
  m.driver = dev.GetOr<std::string>("driver", "");
  m.multiprocessor_count = dev.OptAtLeast<int64_t>("multiprocessor_count", 0);
  m.device_memory_bytes = dev.OptAtLeast<int64_t>("memory_bytes", 0);
  m.clocks_start = ReadClocks(dev, "clocks_start");
  m.clocks_end = ReadClocks(dev, "clocks_end");
}

void ReadCpu(const JsonFields& cpu, Manifest& m) {
  m.cpu_model = cpu.Get<std::string>("model");
  m.logical_cores = cpu.Get<int>("logical_cores");
  if (m.logical_cores < 1) cpu.Fail("logical_cores", "must be an integer >= 1");
  m.torch_threads = cpu.OptAtLeast<int64_t>("torch_threads", 1);
  m.cpu_memory_bytes = cpu.OptAtLeast<int64_t>("memory_bytes", 0);
}

// The suite as the collector recorded it: kept as JSON (its shape belongs
// to the collector's suite parser), but its run settings must pass the one
// RunSettings check, as the suite file itself had to. Its "threads" is the
// collection's --threads, "default" for LibTorch's own (RunSettings' 0).
void ReadSuite(const JsonFields& suite, Manifest& m) {
  m.suite = suite.Get<std::string>("name");
  m.suite_config = suite.raw();
  json settings = suite.raw();
  if (const json* threads = suite.Find("threads"); threads && *threads == "default") settings["threads"] = 0;
  (void)RunSettingsFromJson(JsonFields(settings, suite.file(), suite.path()));
}

// The fields written when the suite ends, and those of a sharded collection.
void ReadEnd(const JsonFields& in, Manifest& m) {
  if (in.Has("requested")) m.requested = in.Object("requested").raw();
  if (in.Find("interrupted")) m.interrupted = in.Get<bool>("interrupted");
  if (auto runs = in.OptObject("runs")) {
    std::map<std::string, int64_t> counts;
    for (const auto& [status, n] : runs->raw().items()) counts[status] = runs->AtLeast<int64_t>(status, 0);
    m.run_counts = std::move(counts);
  }
  if (auto shard = in.OptObject("shard")) m.shard = ReadShardBlock(*shard);
  if (in.Has("shards")) m.shards = ReadShards(in);
}

}  // namespace

json ToJson(const Manifest& m) {
  json j;
  j["schema_version"] = kManifestSchemaVersion;
  j["kind"] = "torchgauge.manifest";
  j["build_id"] = m.build_id;
  j["platform_id"] = m.platform_id;
  j["collector"] = {{"version", m.collector_version}, {"git_sha", m.git_sha}};
  if (!m.collector_compiler.empty()) j["collector"]["compiler"] = m.collector_compiler;
  j["libtorch"] = {{"version", m.libtorch_version},
                   {"cuda_available", m.cuda_available},
                   {"cuda_runtime", NullIfEmpty(m.cuda_runtime)},
                   {"cudnn", NullIfEmpty(m.cudnn)},
                   {"hip_runtime", NullIfEmpty(m.hip_runtime)},
                   {"miopen", NullIfEmpty(m.miopen)}};
  // The build's identity (manifests before it have none of these fields):
  // written where known, so that an older manifest reads back unchanged.
  auto known = [&](const char* key, const std::string& value) {
    if (!value.empty()) j["libtorch"][key] = value;
  };
  known("git_commit", m.libtorch_git_commit);
  known("build_version", m.libtorch_build_version);
  known("cuda_build", m.libtorch_cuda_build);
  known("hip_build", m.libtorch_hip_build);
  if (!m.libtorch_origin_kind.empty()) {
    j["libtorch"]["origin"] = {{"kind", m.libtorch_origin_kind}, {"path", NullIfEmpty(m.libtorch_origin_path)}};
  }
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
  const JsonFields in(j, file);
  Manifest m;
  m.present = true;
  m.build_id = in.Get<std::string>("build_id");
  m.platform_id = in.Get<std::string>("platform_id");
  if (!IsSafeId(m.build_id)) in.Fail("build_id", "not a safe id");
  if (!IsSafeId(m.platform_id)) in.Fail("platform_id", "not a safe id");
  m.started_at = in.Get<std::string>("started_at");
  m.finished_at = in.GetOr<std::string>("finished_at", "");
  const JsonFields col = in.Object("collector");
  m.collector_version = col.Get<std::string>("version");
  m.git_sha = col.Get<std::string>("git_sha");
  m.collector_compiler = col.GetOr<std::string>("compiler", "");
  ReadLibtorch(in.Object("libtorch"), m);
  ReadDevice(in.Object("device"), m);
  ReadCpu(in.Object("cpu"), m);
  if (in.Has("cpu_frequency")) m.cpu_frequency = CpuFrequencyPolicyFromJson(j.at("cpu_frequency"), file);
  if (in.Has("peaks")) m.peaks = ProbeResultFromJson(j.at("peaks"), file);
  const JsonFields host = in.Object("host");
  m.hostname = host.Get<std::string>("hostname");
  m.os = host.Get<std::string>("os");
  m.kernel = host.GetOr<std::string>("kernel", "");
  m.arch = host.GetOr<std::string>("arch", "");
  ReadSuite(in.Object("suite"), m);
  ReadEnd(in, m);
  return m;
}

}  // namespace torchgauge::core
