// The regressions history of the whole site: every change that the
// comparison rules (core/analysis/compare.h, the rules of `torchgauge-report compare`)
// counted as a regression, and its state since.
//
// Nothing here compares samples. Each build's comparison is the one the site
// already runs (site/history.h); what it flagged is kept per build in
// builds/<id>/data/regressions.json (BuildChanges), so a new build adds its
// rows and the states of older regressions follow from the later builds'
// cached rows, without comparing any build again. TrackRegressions then
// walks the cached rows oldest first:
//  - a regression row starts an event, unless an event of the same platform,
//    run key and metric is already open against the same baseline (a
//    persistence streak: with --compare-persist N each build of the streak
//    is flagged against the build before it);
//  - persisting: a row of the event is confirmed by the persistence rule
//    (every build of an N-build streak regressed, N > 1). With N = 1 the
//    rule confirms nothing beyond the build itself, so events stay open;
//  - recovered: a later build's comparison flags an improvement of the same
//    run key and metric that brings the value back within the event's own
//    band (the larger of the threshold and the noise band the comparison
//    applied) of the value before the regression.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/analysis/compare.h"
#include "reporter/results/load.h"

namespace torchgauge::reporter {

// One regression or improvement a build's comparison flagged.
struct FlaggedChange {
  std::string platform, model, mode, backend, precision, metric;
  int64_t batch_size = 1;
  bool regression = true;  // false: an improvement
  double base_value = 0, new_value = 0, ratio = 1, threshold_percent = 0;
  std::optional<double> p_value, noise_percent;
  bool confirmed = true;
  int seen_in = 1;
  std::vector<std::string> base_builds;        // the comparison's baseline window, oldest first
  bool SameRun(const FlaggedChange& o) const;  // platform, run key and metric
};

// What one build's comparison flagged, and the domains of its models (for
// the pages' domain filter and the model grid), as cached in its data dir.
struct BuildChanges {
  std::string build, started_at;
  int persist = 1;                             // the comparison's --compare-persist
  std::map<std::string, std::string> domains;  // model id -> domain
  std::vector<FlaggedChange> changes;
  // Per platform, what its manifest says the build and the machine were
  // (ManifestIdentity), for the alert pages' "what changed" and the health
  // checks. Empty in a cache written before it existed.
  std::map<std::string, std::map<std::string, std::string>> identities;
};
// The manifest's identity fields that a change of build or machine moves,
// by a reader's name ("torch version", "CPU model", ...); unrecorded ones
// are left out, never written as "" or 0.
std::map<std::string, std::string> ManifestIdentity(const core::Manifest& m);
// `cmp` may be null (the build was not compared).
BuildChanges CollectChanges(const BuildResults& b, const std::string& started_at, const core::Comparison* cmp);
nlohmann::json ToJson(const BuildChanges& c);
// Throws on a malformed cache (the caller then recomputes from results).
BuildChanges BuildChangesFromJson(const nlohmann::json& j);

// Whether `after` is back within `e`'s band of the value before it: the
// larger of the threshold and the noise band the comparison applied (the
// recovery rule, and the alerts' "still present" one).
bool BackWithinBand(const FlaggedChange& e, double after);

enum class RegressionState { kOpen, kRecovered, kPersisting };
const char* StateName(RegressionState s);  // open | recovered | persisting

struct RegressionEvent {
  FlaggedChange change;           // the first row: its before, after, factor, p-value, band
  std::string build, started_at;  // the build that first flagged it
  std::string domain;
  RegressionState state = RegressionState::kOpen;
  std::string state_build, state_at;      // where the state last changed (the first build while open)
  std::optional<double> recovered_value;  // the value that came back
  // A stable id: the build and the run key (platform, model, mode,
  // backend, precision) and metric; never changes once published.
  std::string Key() const;
};

// Every regression event in `history` (oldest first), oldest first.
std::vector<RegressionEvent> TrackRegressions(const std::vector<BuildChanges>& history);

}  // namespace torchgauge::reporter
