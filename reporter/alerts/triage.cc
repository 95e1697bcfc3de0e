#include "reporter/alerts/triage.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/io/json_fields.h"
#include "core/io/json_io.h"

using nlohmann::json;

namespace torchgauge::reporter {

namespace {
constexpr const char* kKind = "torchgauge.triage";
// Written names, in kTriageStates order (recovered last: never written).
constexpr const char* kSettable[] = {"untriaged", "investigating", "fixed",          "backed-out",
                                     "wont-fix",  "expected",      "infra-or-noise", "improvement"};
// The entry fields this version reads; any other is kept in TriageEntry::extra.
constexpr const char* kKnownFields[] = {"state", "owner", "note", "links", "updated_at"};

// "<prefix>" and 12 lower-case hex digits.
bool IsPrefixedId(const std::string& id, const char* prefix) {
  if (id.size() != 14 || id.rfind(prefix, 0) != 0) return false;
  for (size_t i = 2; i < id.size(); ++i) {
    if (!std::isxdigit(static_cast<unsigned char>(id[i])) || std::isupper(static_cast<unsigned char>(id[i])))
      return false;
  }
  return true;
}

TriageEntry ReadEntry(const json& j, const std::filesystem::path& file, const std::string& id) {
  const core::JsonFields a(j, file, "alerts." + id);
  TriageEntry e;
  e.state = *SettableTriageState(a.OneOf("state", kSettable));
  e.owner = a.GetOr<std::string>("owner", "");
  e.note = a.GetOr<std::string>("note", "");
  e.links = a.GetOr<std::vector<std::string>>("links", {});
  e.updated_at = a.GetOr<std::string>("updated_at", "");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::none_of(std::begin(kKnownFields), std::end(kKnownFields), [&](const char* k) { return it.key() == k; }))
      e.extra[it.key()] = *it;
  }
  return e;
}
}  // namespace

const char* TriageStateName(TriageState s) {
  if (s == TriageState::kRecovered) return "recovered";
  return kSettable[static_cast<int>(s)];
}

const char* TriageStateLabel(TriageState s) {
  switch (s) {
    case TriageState::kBackedOut:
      return "backed out";
    case TriageState::kWontFix:
      return "won't fix";
    case TriageState::kInfraOrNoise:
      return "infra or noise";
    default:
      return TriageStateName(s);
  }
}

std::optional<TriageState> SettableTriageState(const std::string& name) {
  for (size_t i = 0; i < std::size(kSettable); ++i) {
    if (name == kSettable[i]) return static_cast<TriageState>(i);
  }
  return std::nullopt;
}

const TriageEntry* TriageFile::Find(const std::string& id) const {
  auto it = alerts.find(id);
  return it == alerts.end() ? nullptr : &it->second;
}

std::filesystem::path TriagePath(const std::filesystem::path& results_root) { return results_root / "triage.json"; }

TriageFile ReadTriage(const std::filesystem::path& file) {
  TriageFile t;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return t;
  const json j = core::ReadJsonFile(file);
  if (!j.is_object()) throw core::FileError(file, "", "must be a JSON object");
  const core::JsonFields f(j, file);
  core::CheckVersionedHeader(f, kTriageSchemaVersion, kKind);
  const core::JsonFields alerts = f.Object("alerts");
  for (auto it = alerts.raw().begin(); it != alerts.raw().end(); ++it) {
    const std::string& id = it.key();
    if (!IsTriageId(id)) throw core::FileError(file, "alerts." + id, "is not an alert id (A- or H- and 12 hex digits)");
    if (!it->is_object()) throw core::FileError(file, "alerts." + id, "must be an object");
    t.alerts.emplace(id, ReadEntry(*it, file, id));
  }
  return t;
}

json ToJson(const TriageFile& t) {
  json alerts = json::object();
  for (const auto& [id, e] : t.alerts) {
    json entry = e.extra.is_object() ? e.extra : json::object();
    entry.update({{"state", TriageStateName(e.state)},
                  {"owner", e.owner},
                  {"note", e.note},
                  {"links", e.links},
                  {"updated_at", e.updated_at}});
    alerts[id] = std::move(entry);
  }
  return {{"schema_version", kTriageSchemaVersion}, {"kind", kKind}, {"alerts", alerts}};
}

void WriteTriage(const std::filesystem::path& file, const TriageFile& t) { core::WriteJsonAtomic(file, ToJson(t)); }

TriageLock::TriageLock(const std::filesystem::path& triage_file) {
  const std::filesystem::path lock = triage_file.string() + ".lock";
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw core::FileError(lock, "", std::string("cannot open the lock file: ") + std::strerror(errno));
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd_);
    throw core::FileError(lock, "", std::string("cannot lock: ") + std::strerror(err));
  }
}

TriageLock::~TriageLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

TriageEntry UpdateTriage(const std::filesystem::path& file, const std::string& id,
                         const std::function<void(TriageEntry&)>& change) {
  TriageLock lock(file);
  TriageFile t = ReadTriage(file);
  TriageEntry& e = t.alerts[id];
  change(e);
  WriteTriage(file, t);
  return e;
}

TriageState EffectiveState(const Alert& a, const TriageEntry* entry) {
  const bool open = !entry || entry->state == TriageState::kUntriaged || entry->state == TriageState::kInvestigating;
  if (a.regression && a.recovered && open) return TriageState::kRecovered;
  if (entry) return entry->state;
  return a.regression ? TriageState::kUntriaged : TriageState::kImprovement;
}

std::vector<TriagedAlert> ApplyTriage(std::vector<Alert> alerts, const TriageFile& triage) {
  std::vector<TriagedAlert> out;
  out.reserve(alerts.size());
  for (auto& a : alerts) {
    TriagedAlert t;
    const TriageEntry* e = triage.Find(a.id);
    t.state = EffectiveState(a, e);
    if (e) t.entry = *e;
    t.alert = std::move(a);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<std::string> UnknownTriageIds(const std::vector<TriagedAlert>& alerts, const TriageFile& triage) {
  std::vector<std::string> out;
  for (const auto& entry : triage.alerts) {
    const std::string& id = entry.first;  // not a structured binding: clang < 16 cannot capture one
    if (std::none_of(alerts.begin(), alerts.end(), [&](const TriagedAlert& t) { return t.alert.id == id; }))
      out.push_back(id);
  }
  return out;
}

const TriagedAlert* AlertOfEvent(const std::vector<TriagedAlert>& alerts, const RegressionEvent& e) {
  for (const auto& t : alerts) {
    if (!t.alert.regression || t.alert.build != e.build || t.alert.platform != e.change.platform) continue;
    for (const auto& f : t.alert.rows) {
      if (f.SameRun(e.change) && f.base_builds == e.change.base_builds) return &t;
    }
  }
  return nullptr;
}

bool IsAlertId(const std::string& id) { return IsPrefixedId(id, "A-"); }

bool IsTriageId(const std::string& id) { return IsPrefixedId(id, "A-") || IsPrefixedId(id, "H-"); }

}  // namespace torchgauge::reporter
