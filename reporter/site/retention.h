// The site's retention policy (build --max-builds N, --since DATE): keep the
// newest snapshots, prune the older ones, keep the whole history. A pruned
// build's directory (builds/<id>/) and its fingerprint are deleted from the
// site, but the build still counts in every page over the history (the
// index's build list and trend, the model pages' trends, the regressions
// history and feed, the model grid): its summary and flagged changes are kept
// in a small record beside the site (.torchgauge/pruned/<id>.json), so a
// re-render reads that one file instead of loading the build's results
// again. Pages name a pruned build without a link, marked "(pruned)".
//
// The policy only ever prunes the oldest builds (the site's order, by start
// time): --max-builds N keeps the N newest, --since DATE (YYYY-MM-DD, UTC)
// keeps those started on or after DATE; with both, a build is kept only when
// both keep it. The newest build is always kept, so the site always has a
// current snapshot. A kept build's pages never link another build's
// snapshot, so the policy is not part of the builds' fingerprints: changing
// it re-renders nothing but the history pages.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "reporter/pages/pruned.h"
#include "reporter/results/aggregate.h"
#include "reporter/results/build_refs.h"
#include "reporter/alerts/regressions.h"
#include "reporter/site/options.h"

namespace torchgauge::reporter {

// Throws std::runtime_error naming the option when --max-builds is below 1 or
// --since is not a calendar date written YYYY-MM-DD.
void CheckRetention(const SiteOptions& o);
// The policy as options ("" when none).
std::string RetentionPolicy(const SiteOptions& o);
// The UTC calendar date (YYYY-MM-DD) of an RFC 3339 time such as
// "2026-01-02T03:04:05Z" or "...+02:00"; "" when it cannot be read.
std::string UtcDate(const std::string& started_at);
// How many of `refs` (oldest first) the policy prunes: always a prefix, and
// never the newest build. A build without a readable start time counts as
// older than any --since date.
size_t PrunedCount(const std::vector<BuildRef>& refs, const SiteOptions& o);
// The Pruned of the first `count` refs under `o`'s policy.
Pruned DescribePruned(const std::vector<BuildRef>& refs, size_t count, const SiteOptions& o);

// The records kept for pruned builds, and the deletion of their snapshots.
// Records are a cache beside the site like the fingerprints: not published
// content, and not counted as files written.
class PrunedStore {
 public:
  explicit PrunedStore(std::filesystem::path out) : out_(std::move(out)) {}
  // The record of `ref`, if it is its own (id and start time) and was made
  // under fingerprint `fp` (empty: any).
  std::optional<std::pair<BuildSummary, BuildChanges>> Load(const BuildRef& ref, const std::string& fp) const;
  // Writes the record unless it already holds exactly these bytes.
  void Save(const BuildSummary& s, const BuildChanges& c, const std::string& fp) const;
  // Deletes the build's snapshot (builds/<id>/) and its fingerprint;
  // whether there was a snapshot to delete.
  bool RemoveSnapshot(const std::string& id) const;

 private:
  std::filesystem::path out_;
};

}  // namespace torchgauge::reporter
