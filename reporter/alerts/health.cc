#include "reporter/alerts/health.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/io/hash.h"
#include "reporter/output/format.h"

namespace torchgauge::reporter {

namespace {

// The manifest fields that say which machine a platform id ran on
// (ManifestIdentity's names); the host name is left out: runners of one
// pool share a platform id.
constexpr const char* kMachineFields[] = {"CPU model",           "CPU cores", "CPU memory bytes", "device",
                                          "device memory bytes", "driver",    "torch threads"};

std::string HealthId(const std::string& kind, const std::string& platform, const std::string& build) {
  return "H-" + core::Fingerprint().Add("torchgauge health").Add(kind).Add(platform).Add(build).Hex().substr(0, 12);
}

HealthAlert Make(const std::string& kind, const std::string& platform, const BuildChanges* before,
                 const BuildChanges& b, std::string detail) {
  return {HealthId(kind, platform, b.build),
          kind,
          platform,
          before ? before->build : "",
          b.build,
          b.started_at,
          std::move(detail)};
}

std::string MachineChange(const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b) {
  std::string out;
  for (const char* f : kMachineFields) {
    auto x = a.find(f), y = b.find(f);
    const std::string va = x == a.end() ? "not recorded" : x->second, vb = y == b.end() ? "not recorded" : y->second;
    if (va == vb) continue;
    out += (out.empty() ? "" : "; ") + std::string(f) + ": " + va + " \xE2\x86\x92 " + vb;
  }
  return out;
}

void CheckPlatformPairs(const std::vector<BuildChanges>& changes, const HealthOptions& o,
                        std::vector<HealthAlert>& out) {
  std::map<std::string, const BuildChanges*> last;  // platform -> its previous build
  for (const auto& b : changes) {
    for (const auto& [platform, identity] : b.identities) {
      auto it = last.find(platform);
      if (it != last.end()) {
        const BuildChanges& prev = *it->second;
        const auto t0 = UtcSeconds(prev.started_at), t1 = UtcSeconds(b.started_at);
        if (t0 && t1 && (*t1 - *t0) / 3600.0 > o.max_gap_hours) {
          out.push_back(Make("missing", platform, &prev, b,
                             "no build for " + Num((*t1 - *t0) / 3600.0, "%.0f") + " h (the schedule allows " +
                                 Num(o.max_gap_hours, "%.0f") + " h) between " + prev.build + " and " + b.build));
        }
        auto p = prev.identities.find(platform);
        if (p != prev.identities.end() && !p->second.empty() && !identity.empty()) {
          const std::string moved = MachineChange(p->second, identity);
          if (!moved.empty())
            out.push_back(Make("machine", platform, &prev, b, "the platform id now names another machine: " + moved));
        }
      }
      last[platform] = &b;
    }
  }
}

// A platform whose newest build is more than the gap rule older than the
// newest build of any platform: it stopped while others go on. The gap rule
// above needs a build after the gap, so it never sees this. Dated by the
// first build (of another platform) past the rule after the silent
// platform's last one, so the alert keeps its id while the platform stays
// silent; its detail names the newest build. Judged against the results,
// not the clock, so a render stays byte-stable.
void CheckSilentPlatforms(const std::vector<BuildChanges>& changes, const HealthOptions& o,
                          std::vector<HealthAlert>& out) {
  std::map<std::string, const BuildChanges*> last;  // platform -> its newest build
  const BuildChanges* newest = nullptr;
  for (const auto& b : changes) {
    if (b.identities.empty() || !UtcSeconds(b.started_at)) continue;
    for (const auto& entry : b.identities) last[entry.first] = &b;
    newest = &b;
  }
  if (!newest) return;
  const auto hours = [](const BuildChanges& a, const BuildChanges& b) {
    return (*UtcSeconds(b.started_at) - *UtcSeconds(a.started_at)) / 3600.0;
  };
  for (const auto& [platform, last_build] : last) {
    // A copy: clang 14 cannot capture a structured binding in a lambda.
    const BuildChanges* b = last_build;
    if (hours(*b, *newest) <= o.max_gap_hours) continue;
    const auto past = std::find_if(changes.begin(), changes.end(), [&](const BuildChanges& x) {
      return !x.identities.empty() && UtcSeconds(x.started_at) && hours(*b, x) > o.max_gap_hours;
    });
    out.push_back(Make("silent", platform, b, *past,
                       "no build of " + platform + " since " + b->build + " (" + b->started_at + "): " +
                           Num(hours(*b, *newest), "%.0f") + " h before the newest build of another platform, " +
                           newest->build + " (the schedule allows " + Num(o.max_gap_hours, "%.0f") + " h)"));
  }
}

// Runs of a platform's previous build (ok or not) of which the next build
// has no result at all: the pipeline stopped running them, or they left the
// suite. A run that ran and failed is not one: the comparison reports it as
// a status change. One alert per build and platform, naming the first few.
void CheckVanishedRuns(const std::vector<BuildSummary>& history, std::vector<HealthAlert>& out) {
  constexpr size_t kListed = 5;
  std::map<std::string, std::pair<const BuildSummary*, const PlatformSummary*>> last;  // platform -> previous
  for (const auto& b : history) {
    for (const auto& p : b.platforms) {
      auto it = last.find(p.id);
      if (it != last.end()) {
        std::set<std::pair<std::string, std::string>> now(p.not_ok.begin(), p.not_ok.end());
        for (const auto& m : p.medians) now.insert({m.model, m.config});
        const PlatformSummary& before_p = *it->second.second;
        std::vector<std::pair<std::string, std::string>> before_runs = before_p.not_ok;
        for (const auto& m : before_p.medians) before_runs.push_back({m.model, m.config});
        std::sort(before_runs.begin(), before_runs.end());
        std::vector<std::string> gone;
        for (const auto& [model, config] : before_runs) {
          if (!now.count({model, config})) gone.push_back(model + " " + config);
        }
        if (!gone.empty()) {
          std::string listed;
          for (size_t i = 0; i < gone.size() && i < kListed; ++i) listed += (i ? ", " : "") + gone[i];
          if (gone.size() > kListed) listed += ", and " + std::to_string(gone.size() - kListed) + " more";
          BuildChanges before, now_build;
          before.build = it->second.first->id;
          now_build.build = b.id;
          now_build.started_at = b.started_at;
          out.push_back(Make("vanished", p.id, &before, now_build,
                             std::to_string(gone.size()) + " run(s) of " + before.build + " have no result in " + b.id +
                                 ": " + listed));
        }
      }
      last[p.id] = {&b, &p};
    }
  }
}

}  // namespace

std::vector<HealthAlert> CheckHealth(const std::vector<BuildChanges>& changes, const std::vector<BuildSummary>& history,
                                     const HealthOptions& o) {
  std::vector<HealthAlert> out;
  CheckPlatformPairs(changes, o, out);
  CheckSilentPlatforms(changes, o, out);
  CheckVanishedRuns(history, out);
  for (size_t i = 0; i < history.size(); ++i) {
    for (const auto& p : history[i].platforms) {
      if (p.medians.empty()) continue;
      int noisy = 0;
      for (const auto& m : p.medians) noisy += m.noisy;
      const double share = 100.0 * noisy / static_cast<double>(p.medians.size());
      if (share <= o.max_noisy_percent) continue;
      BuildChanges b;
      b.build = history[i].id;
      b.started_at = history[i].started_at;
      out.push_back(Make("noisy", p.id, nullptr, b,
                         std::to_string(noisy) + " of " + std::to_string(p.medians.size()) + " runs noisy (" +
                             Num(share, "%.0f") + "%, above " + Num(o.max_noisy_percent, "%.0f") + "%)"));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const HealthAlert& a, const HealthAlert& b) {
    return std::tie(a.started_at, a.build, a.platform, a.kind) < std::tie(b.started_at, b.build, b.platform, b.kind);
  });
  return out;
}

}  // namespace torchgauge::reporter
