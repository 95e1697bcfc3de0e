// The metrics a comparison judges, declared once, as data: each metric's
// name, unit, direction, default threshold, how it is judged, how its values
// are read from a run result and how a value is written for a person. The
// comparison (compare.h), the reporter's pages and formats, the export and
// the collector's --metric options all read this table; nothing else
// switches on a metric.
//
// Adding a scalar metric: a row in kMetricTable (metrics.cc), its enum
// value, and the field of the result it reads (core/contract/result.h and
// schemas/run_result.schema.json) with its measurement.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/contract/result.h"

namespace torchgauge::core {

enum class Metric {
  kTime,
  kThroughput,
  kCpuMemory,
  kGpuMemory,
  kTtft,
  kTpot,
  kTokensPerSecond,
  kInstructions,
  kEstimatedCycles,
};

// How a change of the metric is judged (compare.h's header says the rules).
enum class JudgeRule {
  // Timed samples: threshold, Mann-Whitney on processes or samples, the
  // noise band, noisy runs.
  kRankTest,
  // One value per run (peak memory): threshold and an absolute floor.
  kSingleValue,
  // Counted under a simulated CPU (instructions, estimated cycles): nearly
  // deterministic, so no rank test; the threshold, and beyond the spread of
  // the processes' medians on both sides (the band) where there is one.
  kCounted,
};

struct MetricInfo {
  Metric metric;
  const char* name;  // as in JSON, the CLI's --metric and threshold rules
  const char* unit;  // as compare --json's "unit"
  bool lower_is_better;
  // The metric's default relative threshold in percent; null: the
  // comparison's general threshold (--threshold, kDefaultThresholdPercent).
  std::optional<double> default_threshold_percent;
  JudgeRule rule;
  // The run's values: step samples, one peak, per-generation or per-step
  // counts. Empty where the run has none.
  std::vector<double> (*samples)(const RunResult&);
  // One value per worker process (its median); empty for one process and
  // for single-value metrics.
  std::vector<double> (*process_medians)(const RunResult&);
  // A value for a person, with its unit ("12.3 ms", "4.1 MiB", "1.234 G instr").
  std::string (*format)(double);
};

// Every metric, in the order comparisons list them.
const std::vector<MetricInfo>& Metrics();
const MetricInfo& Info(Metric m);

const char* MetricName(Metric m);
std::optional<Metric> MetricFromName(const std::string& name);
// "time, throughput, ..." for error messages and --help.
std::string MetricNames();
bool LowerIsBetter(Metric m);
const char* MetricUnit(Metric m);
std::vector<double> MetricSamples(const RunResult& r, Metric m);
std::vector<double> MetricProcessMedians(const RunResult& r, Metric m);
// The median of MetricSamples; null where the run has none (not measured).
std::optional<double> MetricMedian(const RunResult& r, Metric m);
std::string FormatMetricValue(Metric m, double v);

}  // namespace torchgauge::core
