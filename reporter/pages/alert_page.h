// One page per alert (alerts/<id>.{html,md}): everything the oncall needs
// for one regression in one place (test-infra #4031): its state and triage,
// its runs, their trend around the step, the two builds' identities and
// what changed between their manifests, the steps the change-point search
// found in its runs, the commands that reproduce it and the bisect command
// for its range. The alert comes from alerts/alerts.h with its triage
// (alerts/triage.h); this file only lays it out.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/contract/alerts_file.h"
#include "reporter/output/mustache_fwd.h"
#include "reporter/results/aggregate.h"
#include "reporter/alerts/change_points.h"
#include "reporter/alerts/regressions.h"
#include "reporter/alerts/triage.h"

namespace torchgauge::reporter {

class Figures;
struct Pruned;

// Builds shown on each side of the step in the alert's trend.
inline constexpr int kAlertTrendBuilds = 6;

struct AlertPageInputs {
  const TriagedAlert& alert;
  const std::vector<BuildSummary>& history;  // every build's summary, oldest first
  const std::vector<BuildChanges>& changes;  // every build's cached changes (the identities)
  const std::vector<ChangePoint>& change_points;
  const Pruned* pruned = nullptr;          // the retention policy's pruned builds: their pages are gone
  const core::Culprit* culprit = nullptr;  // what `bisect --alert` found (results/culprits.json), if it ran
};

// The page data for templates/alert.md.mustache. The trend chart is placed
// through `figures` (SVG for the Markdown, embedded spec for the HTML).
mu::data AlertPageData(const AlertPageInputs& in, Figures& figures);

// The two builds' identity rows: every field either build's manifest on
// the alert's platform records, the value on each side ("" where not
// recorded) and whether it changed. Sorted by field name.
struct IdentityRow {
  std::string field, base, now;
  bool changed = false;
};
std::vector<IdentityRow> IdentityDiff(const std::map<std::string, std::string>& base,
                                      const std::map<std::string, std::string>& now);

// The shell commands of the page: collecting the alert's runs under each
// build, comparing them, and bisecting the range (by hand, and with
// `bisect --alert`, which takes the range and runs from the site's
// alerts.json).
std::vector<std::string> ReproduceCommands(const Alert& a, const std::string& device);
// The collector's --device for an alert's platform, from its manifest
// identity (ManifestIdentity): the vendor says whether it has a GPU, since
// a CUDA build of torch on a CPU-only machine still records a CUDA runtime.
// Without a vendor (identities cached before it was recorded), a device
// named like the CPU model is the CPU.
std::string AlertDevice(const std::map<std::string, std::string>& identity);
// A build's start time as the page shows it: "2026-11-28T03:00:00Z" as
// "2026-11-28 03:00" (UTC); a string that is no such time, as it is.
std::string StartedMinute(const std::string& iso);
// With good == bad (both builds ran the same torch), one comment saying that
// bisecting torch cannot find the change.
std::vector<std::string> BisectCommands(const Alert& a, const std::string& good, const std::string& bad,
                                        const std::string& device);

}  // namespace torchgauge::reporter
