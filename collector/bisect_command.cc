#include "collector/bisect_command.h"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "core/analysis/bisect.h"
#include "core/contract/layout.h"
#include "core/contract/run_settings.h"
#include "core/io/json_io.h"
#include "core/io/shell.h"

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

}  // namespace

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

int RunBisect(const BisectCommandOptions& o) {
  const auto revs = ReadCandidates(o.candidates_file, o.good, o.bad);
  o.compare.Validate();
  std::filesystem::create_directories(o.work_dir);
  const auto results = core::BisectResultsRoot(o.work_dir);
  const auto log = core::BisectLogPath(o.work_dir);
  const auto collect_args = CollectArgs(o);
  std::ofstream(log, std::ios::trunc) << "torchgauge bisect: good " << o.good << ", bad " << o.bad << ", "
                                      << revs.size() << " candidates\n";

  // Measures one revision into build id rev-<n>; false when it cannot be tested.
  auto measure = [&](const std::string& rev, const std::string& build_id) -> bool {
    std::cerr << "[bisect] " << rev << ": building/installing\n";
    if (int rc = Shell(core::FormatRevCommand(o.command, rev), log); rc != 0) {
      std::cerr << "[bisect] " << rev << ": command failed (exit " << rc << "): skipped\n";
      return false;
    }
    std::string collector = core::FormatRevCommand(o.collector, rev);
    std::string cmd = collector + " run --out " + core::ShellQuote(results.string()) + " --build-id " +
                      core::ShellQuote(build_id) + " --platform-id bisect --no-summary --no-probe";
    // Appended in two steps: GCC 12 reports `" " + std::string` at -O2
    // (-Wstringop-overflow, a false positive fixed in 13).
    for (const auto& a : collect_args) {
      cmd += ' ';
      cmd += core::ShellQuote(a);
    }
    std::cerr << "[bisect] " << rev << ": measuring\n";
    if (int rc = Shell(cmd, log); rc != 0) {
      std::cerr << "[bisect] " << rev << ": collector failed (exit " << rc << "): skipped\n";
      return false;
    }
    return true;
  };

  if (!measure(o.good, "good")) {
    std::cerr << "error: the good revision '" << o.good << "' could not be measured; see " << log.string() << "\n";
    return 2;
  }
  const auto good_set = core::LoadRunSet(results, "good", "bisect");

  int noisy_steps = 0;
  auto judge = [&](const std::string& rev, std::size_t index) {
    const std::string build_id = "rev-" + std::to_string(index);
    if (!measure(rev, build_id)) return core::BisectVerdict::kSkip;
    const auto set = core::LoadRunSet(results, build_id, "bisect");
    // Each step must be good or bad, so noisy runs are judged too (the
    // nightly report would only flag them); the log names them.
    core::CompareOptions options = o.compare;
    options.judge_noisy_runs = true;
    const auto cmp = core::CompareRunSets({&good_set}, set, options);
    bool bad = false;
    std::string noisy;
    for (const auto& c : cmp.changes) {
      bad = bad || c.verdict == core::Verdict::kRegression;
      if (c.noisy && noisy.empty()) noisy = *c.noisy;
    }
    for (const auto& s : cmp.status_changes) bad = bad || s.worse;
    const std::string verdict =
        std::string(bad ? "bad" : "good") + (noisy.empty() ? "" : " (judged on noisy runs: " + noisy + ")");
    if (!noisy.empty()) ++noisy_steps;
    std::cerr << "[bisect] " << rev << ": " << verdict << "\n";
    std::ofstream(log, std::ios::app) << rev << ": " << verdict << "\n";
    return bad ? core::BisectVerdict::kBad : core::BisectVerdict::kGood;
  };

  core::BisectOptions bo;
  bo.verify_bad = o.verify_bad;
  const auto result = core::Bisect(revs, judge, bo);
  const std::string text = core::FormatBisectLog(result);
  std::ofstream(log, std::ios::app) << text;
  std::cout << text;
  std::cout << "log: " << log.string() << "\n";
  if (noisy_steps > 0) {
    std::cout << "warning: " << noisy_steps << " step(s) were judged on noisy runs (see the log); confirm the result "
              << "on a quieter machine\n";
  }
  if (!result.first_bad_index) return 1;
  std::cout << "first bad revision: " << result.first_bad << "\n";
  return 0;
}

}  // namespace torchgauge::collector
