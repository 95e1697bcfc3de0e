// The triage of alerts (alerts/alerts.h): a state, an owner, a note and
// links per alert id, kept in one versioned file in the results tree,
// <results>/triage.json (schemas/triage.schema.json), so that a team keeps
// them in git beside the results they are about. The reporter reads it on
// every render; `torchgauge-report triage` is its only writer (atomic, so a
// killed command leaves the old file or the new one, and under a lock, so
// two commands at once both land: UpdateTriage). Fields of an entry that
// this version does not know (an "assignee" a team added) are kept as read.
// Health alerts (alerts/health.h, H- ids) are triaged the same way.
//
// The states are Perfherder's and LNT's, cut to what a benchmark team
// decides: untriaged, investigating, fixed, backed-out, wont-fix, expected,
// infra-or-noise, improvement. One more, recovered, is never written: it is
// what an untriaged or investigating regression alert becomes by itself
// when every run of it came back within its band (EffectiveState).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reporter/alerts/alerts.h"

namespace torchgauge::reporter {

enum class TriageState {
  kUntriaged,
  kInvestigating,
  kFixed,
  kBackedOut,
  kWontFix,
  kExpected,
  kInfraOrNoise,
  kImprovement,
  kRecovered,  // computed, never written
};
inline constexpr TriageState kTriageStates[] = {
    TriageState::kUntriaged,    TriageState::kInvestigating, TriageState::kFixed,
    TriageState::kBackedOut,    TriageState::kWontFix,       TriageState::kExpected,
    TriageState::kInfraOrNoise, TriageState::kImprovement,   TriageState::kRecovered};
// untriaged | investigating | fixed | backed-out | wont-fix | expected | infra-or-noise | improvement | recovered
const char* TriageStateName(TriageState s);
// For readers: "won't fix", "infra or noise", "backed out", ...
const char* TriageStateLabel(TriageState s);
// The states a person may set (every one but recovered); nullopt otherwise.
std::optional<TriageState> SettableTriageState(const std::string& name);

struct TriageEntry {
  TriageState state = TriageState::kUntriaged;
  std::string owner, note;
  std::vector<std::string> links;
  std::string updated_at;  // UTC, when the command last wrote the entry
  // The entry's fields this version does not know, written back as read.
  nlohmann::json extra = nlohmann::json::object();
};

inline constexpr int kTriageSchemaVersion = 1;

struct TriageFile {
  std::map<std::string, TriageEntry> alerts;  // by alert id
  const TriageEntry* Find(const std::string& id) const;
};

// <results>/triage.json.
std::filesystem::path TriagePath(const std::filesystem::path& results_root);
// An absent file is an empty triage. Throws core::FileError naming the file
// and the field for a malformed one, and refuses a newer schema_version.
TriageFile ReadTriage(const std::filesystem::path& file);
nlohmann::json ToJson(const TriageFile& t);
// Atomic (core::WriteJsonAtomic).
void WriteTriage(const std::filesystem::path& file, const TriageFile& t);

// An exclusive flock on `<triage file>.lock`, held for its lifetime. The
// lock is on a sibling file, not triage.json itself, because the atomic
// write replaces triage.json's inode: a lock on the old inode would not
// exclude a command that opened the new one.
class TriageLock {
 public:
  explicit TriageLock(const std::filesystem::path& triage_file);  // blocks; throws core::FileError
  ~TriageLock();
  TriageLock(const TriageLock&) = delete;
  TriageLock& operator=(const TriageLock&) = delete;

 private:
  int fd_ = -1;
};
// Read, change entry `id` (created untriaged when absent) and write, under a
// TriageLock: the one read-modify-write of the file. Returns the entry written.
TriageEntry UpdateTriage(const std::filesystem::path& file, const std::string& id,
                         const std::function<void(TriageEntry&)>& change);

// `build` exits with this when <results>/triage.json is malformed: the site
// was still written in full (with the last good triage), and a nightly goes
// on to compare before it reports it (docs/alerts.md).
inline constexpr int kExitTriageMalformed = 5;

// The state an alert shows: the triage entry's, except that an untriaged or
// investigating regression whose runs all recovered shows recovered;
// without an entry, recovered, untriaged (a regression) or improvement.
TriageState EffectiveState(const Alert& a, const TriageEntry* entry);

// An alert with its triage applied: what every page shows.
struct TriagedAlert {
  Alert alert;
  TriageState state = TriageState::kUntriaged;  // EffectiveState
  std::optional<TriageEntry> entry;             // the file's entry, if any
};
std::vector<TriagedAlert> ApplyTriage(std::vector<Alert> alerts, const TriageFile& triage);
// The ids of `triage` that name no alert of `alerts` (a typo, or an alert of
// builds no longer in the results), sorted.
std::vector<std::string> UnknownTriageIds(const std::vector<TriagedAlert>& alerts, const TriageFile& triage);
// The alert of regression event `e` (its build, platform and run), or null.
const TriagedAlert* AlertOfEvent(const std::vector<TriagedAlert>& alerts, const RegressionEvent& e);

// Whether `id` has the shape AlertId gives ("A-" and 12 hex digits).
bool IsAlertId(const std::string& id);
// An id triage.json may hold: an alert's, or a health alert's ("H-" and 12 hex digits).
bool IsTriageId(const std::string& id);

}  // namespace torchgauge::reporter
