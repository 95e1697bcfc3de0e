#include "reporter/site/history.h"

#include <algorithm>
#include <set>

namespace torchgauge::reporter {

RecentRuns::RecentRuns(const core::TreeScan& scan, const core::CompareOptions& options, int threads,
                       const std::vector<BuildRef>& refs)
    : scan_(scan), options_(options), threads_(threads), refs_(refs) {
  keep_ = static_cast<size_t>(options.window + options.persist);
}

void RecentRuns::Add(size_t index, const BuildResults& b) {
  auto& sets = sets_[index];
  for (const auto& p : b.platforms) {
    if (p.manifest.present) sets.insert_or_assign(p.manifest.platform_id, core::MakeRunSet(b.id, p));
  }
  for (auto* m : {&sets_, &loaded_}) {
    while (!m->empty() && m->begin()->first + keep_ < index + 1) m->erase(m->begin());
  }
}

// The earlier run sets of `platform` the comparison of build `index` uses,
// oldest first.
std::vector<const core::RunSet*> RecentRuns::Baselines(size_t index, const std::string& platform) {
  const size_t need = static_cast<size_t>(options_.window + options_.persist - 1);
  std::vector<const core::RunSet*> history;
  for (size_t j = index; j-- > 0 && history.size() < need;) {
    if (!refs_[j].platforms.count(platform)) continue;
    if (const core::RunSet* s = Get(j, platform)) history.push_back(s);
  }
  std::reverse(history.begin(), history.end());
  return history;
}

std::optional<core::Comparison> RecentRuns::Compare(size_t index) {
  auto cur = sets_.find(index);
  if (cur == sets_.end()) return std::nullopt;
  core::Comparison c;
  c.new_build = refs_[index].id;
  c.options = options_;
  for (const auto& [platform, set] : cur->second) {
    std::vector<const core::RunSet*> history = Baselines(index, platform);
    if (history.empty()) continue;
    history.push_back(&set);
    c.platforms.push_back(core::CompareWithHistory(history, options_));
  }
  if (c.platforms.empty()) return std::nullopt;
  const auto& bb = c.platforms.front().base_builds;
  c.base_label = bb.size() == 1 ? bb.front() : "median of " + bb.front() + ".." + bb.back();
  return c;
}

const core::RunSet* RecentRuns::Get(size_t index, const std::string& platform) {
  auto it = sets_.find(index);
  if (it != sets_.end()) return Find(it->second, platform);
  it = loaded_.find(index);
  if (it != loaded_.end()) return Find(it->second, platform);
  // Not streamed in this run (an incremental render): load it quietly.
  LoadOptions lo;
  lo.only_builds = {refs_[index].id};
  lo.threads = threads_;
  it = loaded_.emplace(index, Sets()).first;
  for (const auto& b : LoadResults(scan_, lo).builds) {
    for (const auto& p : b.platforms) {
      if (p.manifest.present) it->second.insert_or_assign(p.manifest.platform_id, core::MakeRunSet(b.id, p));
    }
  }
  return Find(it->second, platform);
}

const core::RunSet* RecentRuns::Find(const Sets& m, const std::string& platform) {
  auto it = m.find(platform);
  return it == m.end() ? nullptr : &it->second;
}

std::vector<size_t> Dependencies(const std::vector<BuildRef>& refs, size_t i, int trend_builds, bool compare,
                                 const core::CompareOptions& options) {
  std::set<size_t> deps;
  const size_t trend = static_cast<size_t>(std::max(trend_builds, 1));
  for (size_t j = i + 1 > trend ? i + 1 - trend : 0; j < i; ++j) deps.insert(j);
  if (compare) {
    const size_t need = static_cast<size_t>(options.window + options.persist - 1);
    for (const auto& platform : refs[i].platforms) {
      size_t found = 0;
      for (size_t j = i; j-- > 0 && found < need;) {
        if (refs[j].platforms.count(platform)) {
          deps.insert(j);
          ++found;
        }
      }
    }
  }
  return {deps.begin(), deps.end()};
}

}  // namespace torchgauge::reporter
