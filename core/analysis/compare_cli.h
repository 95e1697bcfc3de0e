// The comparison options on a command line (CLI11), declared once for every
// command that compares: `torchgauge-report compare`, the site's comparison
// in `torchgauge-report build` (as --compare-*) and `torchgauge-collect
// bisect`. Header-only, so that each binary uses it with its own CLI11 and
// the collector does not link the reporter; core itself does not use CLI11.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/analysis/compare.h"

namespace torchgauge::core {

struct CompareFlagSet {
  // "--threshold" or, with prefix "compare-", "--compare-threshold".
  std::string prefix;
  // --window and --persist: for commands that compare with a build history.
  bool history = true;
};

// Binds --threshold, --threshold-for (parsed into o.rules), --alpha and, with
// set.history, --window, --persist and --max-noisy-percent to `o`; o's
// values are the defaults.
inline void AddCompareOptions(CLI::App& cmd, CompareOptions& o, const CompareFlagSet& set = {}) {
  const std::string p = "--" + set.prefix;
  cmd.add_option(p + "threshold", o.threshold_percent, "Relative threshold in percent")->capture_default_str();
  const CLI::Validator rule(
      [](std::string& spec) -> std::string {
        try {
          ParseThresholdRule(spec);
          return "";
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      },
      "METRIC:REGEX=PCT");
  cmd.add_option_function<std::vector<std::string>>(
         p + "threshold-for",
         [&o](const std::vector<std::string>& specs) {
           for (const auto& s : specs) o.rules.push_back(ParseThresholdRule(s));
         },
         "Per metric and model pattern: 'metric:regex=pct' (metric: " + MetricNames() +
             " or *); repeatable, the last match wins")
      ->check(rule);
  cmd.add_option(p + "alpha", o.alpha, "Significance level of the Mann-Whitney U test")->capture_default_str();
  if (!set.history) return;
  cmd.add_option(p + "window", o.window,
                 "Baseline = median of the per-build medians of N builds; the test pools their samples")
      ->capture_default_str();
  cmd.add_option(p + "persist", o.persist,
                 "Confirm a regression only when N consecutive builds show it against the same baseline")
      ->capture_default_str();
  cmd.add_option(p + "max-noisy-percent", o.max_noisy_percent,
                 "Without a regression, more than this share of noisy runs makes the verdict inconclusive")
      ->capture_default_str();
}

}  // namespace torchgauge::core
