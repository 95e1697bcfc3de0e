#include "core/contract/alerts_file.h"

#include <stdexcept>

#include "core/io/json_fields.h"
#include "core/io/json_io.h"

using nlohmann::json;

namespace torchgauge::core {

namespace {
constexpr const char* kCulpritsKind = "torchgauge.culprits";
}  // namespace

json ReadAlertsFile(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec))
    throw FileError(file, "", "not found: render the site first (torchgauge-report build)");
  json j = ReadJsonFile(file);
  if (!j.is_object()) throw FileError(file, "", "must be a JSON object");
  const JsonFields f(j, file);
  CheckVersionedHeader(f, kAlertsFileVersion, kAlertsFileKind);
  for (const char* list : {"alerts", "health"}) {
    const auto* a = f.Find(list);
    if (!a || !a->is_array()) throw FileError(file, list, "must be an array");
    for (size_t i = 0; i < a->size(); ++i) {
      const std::string at = std::string(list) + "[" + std::to_string(i) + "]";
      if (!(*a)[i].is_object()) throw FileError(file, at, "must be an object");
      const JsonFields e((*a)[i], file, at);
      for (const char* k : {"id", "kind", "platform", "build"}) e.Get<std::string>(k);
      if (std::string(list) != "alerts") continue;
      for (const char* k : {"base_build", "state", "page"}) e.Get<std::string>(k);
      e.Get<int>("runs");
      e.Get<double>("geomean");
      const auto* rows = e.Find("rows");
      if (!rows || !rows->is_array() || rows->empty()) throw FileError(file, at + ".rows", "must be a non-empty array");
      for (size_t r = 0; r < rows->size(); ++r) {
        const JsonFields row((*rows)[r], file, at + ".rows[" + std::to_string(r) + "]");
        for (const char* k : {"model", "mode", "backend", "precision", "metric"}) row.Get<std::string>(k);
        row.Get<int64_t>("batch_size");
        row.Get<double>("factor");
      }
    }
  }
  return j;
}

AlertRecord FindAlertRecord(const json& alerts, const std::filesystem::path& file, const std::string& id) {
  for (const auto& a : alerts.at("alerts")) {
    if (a.at("id") != id) continue;
    AlertRecord r{a.at("id"), a.at("kind"), a.at("platform"), a.at("base_build"), a.at("build"), {}};
    for (const auto& row : a.at("rows")) {
      r.rows.push_back({row.at("model"), row.at("mode"), row.at("backend"), row.at("precision"), row.at("metric"),
                        row.at("batch_size").get<int64_t>(), row.at("factor").get<double>()});
    }
    return r;
  }
  throw std::invalid_argument("alert '" + id + "' is not in " + file.string() +
                              " (the site's alerts.json lists every alert of its last render)");
}

std::filesystem::path CulpritsPath(const std::filesystem::path& results_root) { return results_root / "culprits.json"; }

std::map<std::string, Culprit> ReadCulprits(const std::filesystem::path& file) {
  std::map<std::string, Culprit> out;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return out;
  const json j = ReadJsonFile(file);
  if (!j.is_object()) throw FileError(file, "", "must be a JSON object");
  const JsonFields f(j, file);
  CheckVersionedHeader(f, kCulpritsFileVersion, kCulpritsKind);
  const JsonFields alerts = f.Object("alerts");
  for (auto it = alerts.raw().begin(); it != alerts.raw().end(); ++it) {
    const std::string at = "alerts." + it.key();
    if (!it->is_object()) throw FileError(file, at, "must be an object");
    const JsonFields c(*it, file, at);
    Culprit x;
    x.last_good = c.Get<std::string>("last_good");
    x.first_bad = c.GetOr<std::string>("first_bad", "");
    x.skipped_before = c.GetOr<std::vector<std::string>>("skipped_before", {});
    x.found_at = c.GetOr<std::string>("found_at", "");
    x.log = c.GetOr<std::string>("log", "");
    for (const auto& s : c.GetOr<std::vector<std::vector<std::string>>>("steps", {})) {
      if (s.size() != 2) throw FileError(file, at + ".steps", "each step must be [revision, verdict]");
      x.steps.push_back({s[0], s[1]});
    }
    out.emplace(it.key(), std::move(x));
  }
  return out;
}

void WriteCulprit(const std::filesystem::path& file, const std::string& alert_id, const Culprit& c) {
  auto all = ReadCulprits(file);
  all[alert_id] = c;
  json alerts = json::object();
  for (const auto& [id, x] : all) {
    json steps = json::array();
    for (const auto& [rev, verdict] : x.steps) steps.push_back({rev, verdict});
    alerts[id] = {{"last_good", x.last_good},
                  {"first_bad", x.first_bad.empty() ? json(nullptr) : json(x.first_bad)},
                  {"skipped_before", x.skipped_before},
                  {"found_at", x.found_at},
                  {"log", x.log},
                  {"steps", steps}};
  }
  WriteJsonAtomic(file, {{"schema_version", kCulpritsFileVersion}, {"kind", kCulpritsKind}, {"alerts", alerts}});
}

}  // namespace torchgauge::core
