#include "reporter/site/retention.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/io/json_io.h"
#include "reporter/output/format.h"
#include "reporter/output/paths.h"
#include "reporter/output/writer.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace torchgauge::reporter {

namespace {

bool IsLeap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// Whether `s` is exactly YYYY-MM-DD naming a day of the Gregorian calendar.
bool IsDate(const std::string& s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  const int y = std::stoi(s.substr(0, 4)), m = std::stoi(s.substr(5, 2)), d = std::stoi(s.substr(8, 2));
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1) return false;
  return d <= kDays[m - 1] + (m == 2 && IsLeap(y) ? 1 : 0);
}

}  // namespace

void CheckRetention(const SiteOptions& o) {
  if (o.max_builds && *o.max_builds < 1) {
    throw std::runtime_error("--max-builds " + std::to_string(*o.max_builds) +
                             ": must be at least 1 (the number of newest builds whose pages the site keeps)");
  }
  if (o.since && !IsDate(*o.since)) {
    throw std::runtime_error("--since '" + *o.since + "': not a date; write it YYYY-MM-DD (UTC), e.g. 2026-01-31");
  }
}

std::string RetentionPolicy(const SiteOptions& o) {
  std::string p;
  if (o.max_builds) p = "--max-builds " + std::to_string(*o.max_builds);
  if (o.since) {
    if (!p.empty()) p += ' ';
    p += "--since " + *o.since;
  }
  return p;
}

std::string UtcDate(const std::string& started_at) {
  const std::optional<int64_t> seconds = UtcSeconds(started_at);
  if (!seconds) return "";
  const std::time_t utc = static_cast<std::time_t>(*seconds);
  std::tm out{};
  gmtime_r(&utc, &out);
  char buf[48];  // room for any int in each field, so no output can be cut (-Wformat-truncation)
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", out.tm_year + 1900, out.tm_mon + 1, out.tm_mday);
  return buf;
}

size_t PrunedCount(const std::vector<BuildRef>& refs, const SiteOptions& o) {
  if (refs.empty()) return 0;
  size_t count = 0;
  if (o.max_builds && refs.size() > static_cast<size_t>(*o.max_builds)) count = refs.size() - *o.max_builds;
  if (o.since) {
    size_t before = 0;  // the leading builds started before the date
    while (before < refs.size() && UtcDate(refs[before].started_at) < *o.since) ++before;
    count = std::max(count, before);
  }
  return std::min(count, refs.size() - 1);
}

Pruned DescribePruned(const std::vector<BuildRef>& refs, size_t count, const SiteOptions& o) {
  Pruned p;
  p.policy = RetentionPolicy(o);
  for (size_t i = 0; i < count && i < refs.size(); ++i) p.builds.insert(refs[i].id);
  if (count > 0) {
    p.oldest = refs.front().id;
    p.newest = refs[std::min(count, refs.size()) - 1].id;
  }
  return p;
}

std::optional<std::pair<BuildSummary, BuildChanges>> PrunedStore::Load(const BuildRef& ref,
                                                                       const std::string& fp) const {
  const fs::path file = out_ / SitePath({Kind::kPrunedRecord, ref.id, "", ""});
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  try {
    const json j = core::ReadJsonFile(file);
    if (!fp.empty() && j.at("fingerprint").get<std::string>() != fp) return std::nullopt;
    BuildSummary s = BuildSummaryFromJson(j.at("summary"));
    BuildChanges c = BuildChangesFromJson(j.at("changes"));
    if (s.id != ref.id || s.started_at != ref.started_at || c.build != ref.id || c.started_at != ref.started_at) {
      return std::nullopt;
    }
    return std::pair(std::move(s), std::move(c));
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged record: the caller recomputes it
  }
}

void PrunedStore::Save(const BuildSummary& s, const BuildChanges& c, const std::string& fp) const {
  const json j = {{"fingerprint", fp}, {"summary", ToJson(s)}, {"changes", ToJson(c)}};
  const std::string text = j.dump(0, ' ', false, json::error_handler_t::replace) + "\n";
  const fs::path file = out_ / SitePath({Kind::kPrunedRecord, s.id, "", ""});
  std::error_code ec;
  if (fs::exists(file, ec)) {
    try {
      if (ReadText(file) == text) return;
    } catch (const std::exception&) {
    }
  }
  fs::create_directories(file.parent_path(), ec);
  core::WriteFileAtomic(file, text);
}

bool PrunedStore::RemoveSnapshot(const std::string& id) const {
  std::error_code ec;
  fs::remove(out_ / SitePath({Kind::kFingerprint, id, "", ""}), ec);
  const fs::path dir = out_ / SitePath({Kind::kBuildDir, id, "", ""});
  if (!fs::exists(dir, ec)) return false;
  fs::remove_all(dir, ec);
  if (ec) throw std::runtime_error(dir.string() + ": could not delete the pruned build's pages: " + ec.message());
  return true;
}

}  // namespace torchgauge::reporter
