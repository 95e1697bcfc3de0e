// Pipeline health: alerts about the benchmark pipeline itself rather than
// the build under test (issue 37, item 5), so that a nightly that stopped,
// or a runner silently moved to other hardware (pytorch #188336), is seen:
//  - missing: consecutive builds on a platform started more than
//    `max_gap_hours` apart (the schedule's interval and its slack: a
//    nightly's 24 h with 12 h to spare); one alert per gap;
//  - silent: a platform whose newest build is more than `max_gap_hours`
//    older than the newest build of another platform: it stopped while the
//    others go on (issue 60). One alert, dated by the first build past the
//    rule, so its id stays while the platform stays silent;
//  - machine: the manifests of consecutive builds on one platform id name
//    another machine (CPU model, cores or memory, device, its memory,
//    driver, torch threads); one alert per change, listing the fields;
//  - vanished: runs of a platform's previous build that have no result at
//    all in the next one: the pipeline stopped running them, or they left
//    the suite (one alert per build and platform, naming them). A run that
//    ran and failed is the comparison's status change, not this;
//  - noisy: more than `max_noisy_percent` of a build's runs on a platform
//    were noisy (core::RunNoise), so its comparison says little.
// They read the per-build caches the regressions page reads (the
// identities of alerts/regressions.h and the summaries' medians): no
// result file is read again. A build missing at the end of the history
// of every platform (nothing since) depends on the time of rendering, so it
// is not judged here: a render would change with the clock.
#pragma once

#include <string>
#include <vector>

#include "reporter/results/aggregate.h"
#include "reporter/alerts/regressions.h"

namespace torchgauge::reporter {

struct HealthOptions {
  double max_gap_hours = 36;
  double max_noisy_percent = 25;  // the comparison's --max-noisy-percent
};

struct HealthAlert {
  std::string id;    // "H-" and 12 hex digits of kind, platform and build: stable
  std::string kind;  // missing | silent | machine | vanished | noisy
  std::string platform, build_before, build, started_at;
  std::string detail;  // what was found, in words
};

// Oldest first. `changes` and `history` are the site's, oldest first.
std::vector<HealthAlert> CheckHealth(const std::vector<BuildChanges>& changes, const std::vector<BuildSummary>& history,
                                     const HealthOptions& o = {});

}  // namespace torchgauge::reporter
