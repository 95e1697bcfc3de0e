// Two small documents that carry an alert between the reporter and the
// collector, so that each program reads the other's output through the
// contract and links nothing of it:
//  - the site's alerts.json (schemas/alerts.schema.json): every alert and
//    health alert with its triage state, written by `torchgauge-report
//    build` (reporter/alerts/tracking.h), read by `torchgauge-report track`
//    and by `torchgauge-collect bisect --alert`, which takes an alert's build
//    range and runs from it;
//  - the results tree's culprits.json (schemas/culprits.schema.json): what
//    `bisect --alert` found for each alert, written by the collector beside
//    triage.json and shown by the reporter on the alert's page.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace torchgauge::core {

inline constexpr int kAlertsFileVersion = 1;
inline constexpr const char* kAlertsFileKind = "torchgauge.alerts";

// Reads an alerts.json and checks its kind, version and each entry's
// required fields; throws FileError naming the file and the field.
nlohmann::json ReadAlertsFile(const std::filesystem::path& file);

// One flagged run of an alert: what `torchgauge-collect run` selects.
struct AlertRun {
  std::string model, mode, backend, precision, metric;
  int64_t batch_size = 1;
  double factor = 1;
};
struct AlertRecord {
  std::string id, kind, platform, base_build, build;  // the range (base_build, build]
  std::vector<AlertRun> rows;                         // largest change first
};
// The alert `id` of a ReadAlertsFile document; throws std::invalid_argument
// naming the id and the file when there is none.
AlertRecord FindAlertRecord(const nlohmann::json& alerts, const std::filesystem::path& file, const std::string& id);

inline constexpr int kCulpritsFileVersion = 1;
struct Culprit {
  std::string last_good, first_bad;                        // first_bad empty: not found
  std::vector<std::string> skipped_before;                 // untestable revisions just before first_bad
  std::string found_at;                                    // UTC
  std::string log;                                         // the bisect log's path, as written
  std::vector<std::pair<std::string, std::string>> steps;  // (revision, verdict) in order
};
// <results>/culprits.json.
std::filesystem::path CulpritsPath(const std::filesystem::path& results_root);
// By alert id. An absent file is empty; a malformed one throws FileError.
std::map<std::string, Culprit> ReadCulprits(const std::filesystem::path& file);
// Adds or replaces one alert's culprit; atomic.
void WriteCulprit(const std::filesystem::path& file, const std::string& alert_id, const Culprit& c);

}  // namespace torchgauge::core
