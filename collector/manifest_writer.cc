#include "collector/manifest_writer.h"

#include "collector/environment.h"
#include "core/contract/peaks.h"
#include "core/contract/result.h"
#include "core/io/json_io.h"
#include "core/stats/system_load.h"

namespace torchgauge::collector {

using nlohmann::json;

namespace {

json ManifestJson(const ManifestFacts& f) {
  json m;
  m["schema_version"] = core::kManifestSchemaVersion;
  m["kind"] = "torchgauge.manifest";
  m["build_id"] = f.build_id;
  m["platform_id"] = f.platform_id;
  m["collector"] = CollectorIdentity();
  m["libtorch"] = f.environment.value("libtorch", json());
  m["device"] = f.environment.value("device", json::object());
  m["device"]["clocks_start"] = f.clocks_start;
  m["cpu"] = f.environment.value("cpu", json());
  m["host"] = f.environment.value("host", json());
  m["started_at"] = f.started_at;
  m["finished_at"] = f.end ? json(f.end->finished_at) : json(nullptr);
  if (f.suite) {
    m["suite"] = SuiteToJson(*f.suite);
    const int threads = f.suite->settings.threads;
    m["suite"]["threads"] = threads > 0 ? json(threads) : json("default");
  }
  m["suite"]["device"] = f.device;
  const auto& p = f.filters;
  m["suite"]["filters"] = {{"model", p.model_regex},     {"domains", p.domains},   {"modes", p.modes},
                           {"precisions", p.precisions}, {"backends", p.backends}, {"batch_size", p.batch_size}};
  m["requested"] = {{"argv", f.argv}, {"config_file", f.config_file}, {"suite", f.suite_name}};
  if (f.cpu_frequency) m["cpu_frequency"] = core::ToJson(*f.cpu_frequency);
  if (f.peaks) m["peaks"] = core::ToJson(*f.peaks);
  if (f.end) {
    m["device"]["clocks_end"] = f.end->clocks_end;
    m["interrupted"] = f.end->interrupted;
    m["runs"] = f.end->counts;
  }
  return m;
}

}  // namespace

core::Manifest BuildManifest(const ManifestFacts& f, const std::filesystem::path& path) {
  return core::ManifestFromJson(ManifestJson(f), path);
}

std::optional<std::string> EarlierStartedAt(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    auto old = core::ReadJsonFile(path, core::JsonKind::kManifest);
    if (old.contains("started_at") && old["started_at"].is_string()) return old["started_at"].get<std::string>();
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace torchgauge::collector
