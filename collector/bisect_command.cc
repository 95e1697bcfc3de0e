#include "collector/bisect_command.h"

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>

#include "core/analysis/bisect.h"
#include "core/contract/alerts_file.h"
#include "core/contract/layout.h"
#include "core/contract/result.h"
#include "core/contract/run_settings.h"
#include "core/io/json_io.h"
#include "core/io/shell.h"
#include "core/stats/mann_whitney.h"

namespace torchgauge::collector {

namespace {

int Shell(const std::string& cmd, const std::filesystem::path& log) {
  const std::string full = "(" + cmd + ") >> " + core::ShellQuote(log.string()) + " 2>&1";
  int status = std::system(full.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::vector<std::string> ReadCandidates(const std::filesystem::path& file, const std::string& good,
                                        const std::string& bad) {
  std::ifstream in(file);
  if (!in) throw std::invalid_argument(file.string() + ": cannot read the candidate list");
  std::vector<std::string> revs;
  std::string line;
  while (std::getline(in, line)) {
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty() || line[0] == '#') continue;
    revs.push_back(line);
  }
  // Accept lists that start with the good revision (git rev-list good^..bad).
  if (!revs.empty() && revs.front() == good) revs.erase(revs.begin());
  if (revs.empty()) throw std::invalid_argument(file.string() + ": no candidate revisions after --good");
  if (revs.back() != bad) {
    throw std::invalid_argument(file.string() + ": the last candidate is '" + revs.back() + "', expected --bad '" +
                                bad + "' (list the revisions after good, oldest first, ending with bad)");
  }
  return revs;
}

// A regex that matches exactly these model ids.
std::string ExactModels(const std::set<std::string>& models) {
  std::string re = "^(";
  bool first = true;
  for (const auto& m : models) {
    if (!first) re += "|";
    first = false;
    for (char c : m) {
      if (std::string(".+()[]{}^$|?*\\").find(c) != std::string::npos) re += '\\';
      re += c;
    }
  }
  return re + ")$";
}

std::string PValue(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", p);
  return buf;
}

enum class StepVerdict { kSame, kDifferent, kUnknown };
const char* Name(StepVerdict v) {
  return v == StepVerdict::kSame ? "same" : v == StepVerdict::kDifferent ? "different" : "unknown";
}

// Same, different or unknown, and why, from one comparison with the good
// endpoint. "Same" needs evidence that a change of the threshold's size
// would have shown: samples enough to reach `alpha` (3 against 3 cannot),
// and a spread of the processes' medians narrower than the threshold.
// A change in percent as the log shows it: whole percent from 10 % on,
// else to two decimals, so that a counted change under 1 % (judged at a
// threshold such as 0.2 %) does not read "0%".
std::string DeltaText(double percent) {
  char buf[32];
  std::snprintf(buf, sizeof buf, std::abs(percent) >= 10 ? "%+.0f%%" : "%+.2f%%", percent);
  return buf;
}

struct Judgement {
  StepVerdict verdict;
  std::string why;
  bool in_band = false;  // unknown because the change lies inside the processes' spread
};
// With `improvement`, "different" is a change for the better, and a status
// that got better (error -> ok), instead of the worse.
Judgement Judge(const core::PlatformComparison& cmp, const std::string& metric, double alpha, bool improvement) {
  const core::Verdict sought = improvement ? core::Verdict::kImprovement : core::Verdict::kRegression;
  std::string unknown;
  bool in_band = false;
  for (const auto& c : cmp.changes) {
    if (!metric.empty() && metric != core::MetricName(c.metric)) continue;
    const std::string what = c.key.model + " " + core::MetricName(c.metric) + " " + DeltaText(c.delta_percent);
    if (c.verdict == sought)
      return {StepVerdict::kDifferent, what + (c.p_value ? ", p " + PValue(*c.p_value) : std::string())};
    if (c.verdict == core::Verdict::kNoise || c.verdict == core::Verdict::kTooFewSamples ||
        c.verdict == core::Verdict::kNoisyRun) {
      if (unknown.empty()) {
        unknown = what + " (" + core::VerdictName(c.verdict) +
                  (c.noise_percent ? ", band " + std::to_string(static_cast<int>(*c.noise_percent + 0.5)) + "%" : "") +
                  ")";
      }
      in_band = in_band || (c.noise_percent && std::abs(c.delta_percent) <= *c.noise_percent);
    } else if (c.p_value && c.n_base > 0 && core::MinAchievablePValue(c.n_base, c.n_new) > alpha) {
      if (unknown.empty())
        unknown = what + " (" + std::to_string(c.n_base) + " against " + std::to_string(c.n_new) +
                  (c.test_unit == core::TestUnit::kProcessMedians ? " processes" : " samples") + " cannot reach alpha)";
    } else if (c.noise_percent && *c.noise_percent > c.threshold_percent) {
      // Under the threshold, but the processes' spread is wider than it: a
      // change of the threshold's size could hide in it.
      if (unknown.empty())
        unknown = what + " (band " + std::to_string(static_cast<int>(*c.noise_percent + 0.5)) +
                  "% is wider than the threshold)";
      in_band = true;
    }
  }
  for (const auto& s : cmp.status_changes) {
    if (s.worse != improvement) {
      return {StepVerdict::kDifferent, s.key.model + " " + s.base_status + " -> " + s.new_status};
    }
  }
  if (!unknown.empty()) return {StepVerdict::kUnknown, unknown, in_band};
  return {StepVerdict::kSame, improvement ? "every compared metric within its threshold, or worse"
                                          : "every compared metric within its threshold, or better"};
}

}  // namespace

void ApplyAlert(BisectCommandOptions& o, const std::string& alert_id, const std::filesystem::path& alerts_file,
                bool keep_selection) {
  if (alerts_file.empty()) throw std::invalid_argument("--alert needs --alerts, the site's alerts.json");
  const core::AlertRecord a = core::FindAlertRecord(core::ReadAlertsFile(alerts_file), alerts_file, alert_id);
  if (a.kind != "regression")
    throw std::invalid_argument("alert " + alert_id + " is an " + a.kind + ": bisect looks for a regression");
  o.alert_id = a.id;
  if (o.good.empty()) o.good = a.base_build;
  if (o.bad.empty()) o.bad = a.build;
  const core::AlertRun& top = a.rows.front();
  if (!keep_selection) {
    o.runs.mode = top.mode;
    o.runs.backend = top.backend;
    o.runs.precision = top.precision;
  }
  if (o.metric.empty()) o.metric = top.metric;
  std::set<std::string> models;
  for (const auto& r : a.rows) {
    if (r.mode == o.runs.mode && r.backend == o.runs.backend && r.precision == o.runs.precision) models.insert(r.model);
  }
  if (models.empty())
    throw std::invalid_argument("alert " + alert_id + " has no run in " + o.runs.mode + "/" + o.runs.backend + "/" +
                                o.runs.precision);
  if (o.runs.model.empty()) o.runs.model = ExactModels(models);
}

std::vector<std::string> CollectArgs(const BisectCommandOptions& o) {
  const int repeat = o.runs.repeat.value_or(core::RunSettings{}.repeat);
  std::vector<std::string> args = {"--model",      o.runs.model, "--mode",      o.runs.mode, "--backend",
                                   o.runs.backend, "--device",   o.runs.device, "--repeat",  std::to_string(repeat)};
  if (!o.runs.precision.empty()) {
    args.push_back("--precision");
    args.push_back(o.runs.precision);
  }
  args.insert(args.end(), o.collect_args.begin(), o.collect_args.end());
  return args;
}

namespace {

// A measurement's size: worker processes x steps per process.
struct StepSize {
  int processes, repeat;
  auto operator<=>(const StepSize&) const = default;
  std::string Text() const { return std::to_string(processes) + " process(es) x " + std::to_string(repeat); }
};

// Measures revisions into the bisect's results tree. The command runs before
// every measurement: the good endpoint is measured again between other
// revisions, and a command may build them all in one tree.
class RevisionMeter {
 public:
  RevisionMeter(const BisectCommandOptions& o, std::filesystem::path results, std::filesystem::path log)
      : o_(o), results_(std::move(results)), log_(std::move(log)) {}

  void Note(const std::string& line) const {
    std::cerr << "[bisect] " << line << "\n";
    std::ofstream(log_, std::ios::app) << line << "\n";
  }

  // Measures `rev` into `build_id`; false when it cannot be tested.
  bool Measure(const std::string& rev, const std::string& build_id, StepSize size) const {
    std::cerr << "[bisect] " << rev << ": building/installing\n";
    if (int rc = Shell(core::FormatRevCommand(o_.command, rev), log_); rc != 0) {
      Note(rev + ": command failed (exit " + std::to_string(rc) + "): skipped");
      return false;
    }
    std::string cmd = core::FormatRevCommand(o_.collector, rev) + " run --out " + core::ShellQuote(results_.string()) +
                      " --build-id " + core::ShellQuote(build_id) +
                      " --platform-id bisect --no-summary --no-probe --processes " + std::to_string(size.processes);
    BisectCommandOptions sized = o_;
    sized.runs.repeat = size.repeat;
    // Appended in two steps: GCC 12 reports `" " + std::string` at -O2
    // (-Wstringop-overflow, a false positive fixed in 13).
    for (const auto& a : CollectArgs(sized)) {
      cmd += ' ';
      cmd += core::ShellQuote(a);
    }
    std::cerr << "[bisect] " << rev << ": measuring (" << size.Text() << ")\n";
    if (int rc = Shell(cmd, log_); rc != 0) {
      Note(rev + ": collector failed (exit " + std::to_string(rc) + "): skipped");
      return false;
    }
    return true;
  }

  // The good endpoint, measured once per size; null when it cannot be.
  const core::RunSet* Good(StepSize size) {
    auto it = good_sets_.find(size);
    if (it != good_sets_.end()) return &it->second;
    const std::string id = "good-p" + std::to_string(size.processes) + "-r" + std::to_string(size.repeat);
    if (!Measure(o_.good, id, size)) return nullptr;
    return &good_sets_.emplace(size, Load(id)).first->second;
  }

  core::RunSet Load(const std::string& build_id) const { return core::LoadRunSet(results_, build_id, "bisect"); }

 private:
  const BisectCommandOptions& o_;
  std::filesystem::path results_, log_;
  std::map<StepSize, core::RunSet> good_sets_;
};

// Writes the bisection's answer for --alert into the results' culprits file.
void RecordCulprit(const BisectCommandOptions& o, const core::BisectResult& result, const std::filesystem::path& log) {
  core::Culprit c;
  c.first_bad = result.first_bad_index ? result.first_bad : "";
  // Only a revision judged good: skipped ones just before the culprit are
  // listed in skipped_before, never called good.
  c.last_good = core::LastJudgedGood(result, o.good);
  c.skipped_before = result.skipped_before;
  c.found_at = core::NowUtc();
  c.log = log.string();
  for (const auto& s : result.log) c.steps.push_back({s.revision, core::BisectVerdictName(s.verdict)});
  const auto file = core::CulpritsPath(o.results_root);
  core::WriteCulprit(file, o.alert_id, c);
  std::cout << "culprit of alert " << o.alert_id << " recorded in " << file.string() << "\n";
}

}  // namespace

int RunBisect(const BisectCommandOptions& o) {
  if (o.good.empty() || o.bad.empty()) throw std::invalid_argument("give --good and --bad, or --alert");
  if (o.runs.model.empty()) throw std::invalid_argument("give --model, or --alert");
  if (o.processes < 1 || o.max_processes < o.processes)
    throw std::invalid_argument("--processes must be >= 1 and at most --max-processes");
  const auto revs = ReadCandidates(o.candidates_file, o.good, o.bad);
  o.compare.Validate();
  std::filesystem::create_directories(o.work_dir);
  const auto log = core::BisectLogPath(o.work_dir);
  std::ofstream(log, std::ios::trunc) << "torchgauge bisect: good " << o.good << ", bad " << o.bad << ", "
                                      << revs.size() << " candidates"
                                      << (o.metric.empty() ? "" : ", metric " + o.metric)
                                      << (o.improvement ? ", looking for an improvement" : "")
                                      << (o.alert_id.empty() ? "" : ", alert " + o.alert_id) << "\n";
  RevisionMeter meter(o, core::BisectResultsRoot(o.work_dir), log);
  const StepSize first{o.processes, o.runs.repeat.value_or(core::RunSettings{}.repeat)};
  if (!meter.Good(first)) {
    std::cerr << "error: the good revision '" << o.good << "' could not be measured; see " << log.string() << "\n";
    return 2;
  }

  core::CompareOptions options = o.compare;
  options.judge_noisy_runs = true;  // a step is judged by its samples; unknown runs more of them
  int unknowns = 0;
  auto judge = [&](const std::string& rev, std::size_t index) {
    for (StepSize size = first;;) {
      const core::RunSet* good = meter.Good(size);
      const std::string build_id =
          "rev-" + std::to_string(index) + "-p" + std::to_string(size.processes) + "-r" + std::to_string(size.repeat);
      if (!good || !meter.Measure(rev, build_id, size)) return core::BisectVerdict::kSkip;
      const auto cmp = core::CompareRunSets({good}, meter.Load(build_id), options);
      const auto [verdict, why, in_band] = Judge(cmp, o.metric, options.alpha, o.improvement);
      meter.Note(rev + " (" + size.Text() + "): " + Name(verdict) + ": " + why);
      if (verdict == StepVerdict::kDifferent) return core::BisectVerdict::kBad;
      if (verdict == StepVerdict::kSame) return core::BisectVerdict::kGood;
      ++unknowns;
      if (size.processes * 2 > o.max_processes) {
        meter.Note(rev + ": still unknown at --max-processes " + std::to_string(o.max_processes) + ": skipped");
        return core::BisectVerdict::kSkip;
      }
      // More processes give the test more samples; a change inside the
      // processes' spread also needs steadier process medians: more steps each.
      size = {size.processes * 2, in_band ? size.repeat * 2 : size.repeat};
      meter.Note(rev + ": unknown, measuring it and the good endpoint again with " + size.Text());
    }
  };

  core::BisectOptions bo;
  bo.verify_bad = o.verify_bad;
  const auto result = core::Bisect(revs, judge, bo);
  const std::string text = core::FormatBisectLog(result);
  std::ofstream(log, std::ios::app) << text;
  std::cout << text;
  std::cout << "log: " << log.string() << "\n";
  if (unknowns > 0) std::cout << unknowns << " measurement(s) were unknown and were repeated with more processes\n";
  if (!o.alert_id.empty() && !o.results_root.empty()) RecordCulprit(o, result, log);
  if (!result.first_bad_index) return 1;
  std::cout << "first bad revision: " << result.first_bad << (o.improvement ? " (the first that improved)" : "")
            << "\n";
  return 0;
}

}  // namespace torchgauge::collector
