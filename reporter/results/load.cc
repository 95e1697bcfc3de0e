#include "reporter/results/load.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include <nlohmann/json.hpp>

#include "core/contract/layout.h"
#include "core/io/hash.h"
#include "core/io/json_io.h"
#include "reporter/output/parallel.h"

namespace fs = std::filesystem;

namespace torchgauge::reporter {

size_t LoadedResults::ProblemCount() const {
  size_t n = problems.size();
  for (const auto& b : builds) n += b.problems.size();
  return n;
}

namespace {

std::string JoinMessages(const std::vector<Problem>& problems) {
  std::string out = std::to_string(problems.size()) + " problem(s) in the results (--strict):";
  for (const auto& p : problems) out += "\n  " + p.ToString();
  return out;
}

struct RunJob {
  fs::path file;
  size_t build = 0, platform = 0;
  core::RunFileOutcome outcome;
};

void AddStat(core::Fingerprint& f, const fs::path& file) {
  f.Add(file.filename().string());
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    f.Add(int64_t{-1}).Add(int64_t{errno});
    return;
  }
  f.Add(static_cast<int64_t>(st.st_size)).Add(static_cast<int64_t>(st.st_ino));
  f.Add(static_cast<int64_t>(st.st_mtim.tv_sec)).Add(static_cast<int64_t>(st.st_mtim.tv_nsec));
}

}  // namespace

StrictError::StrictError(std::vector<Problem> problems)
    : std::runtime_error(JoinMessages(problems)), problems_(std::move(problems)) {}

std::string InputFingerprint(const fs::path& root, const std::string& build_id) {
  core::Fingerprint f;
  f.Add(build_id);
  std::vector<Problem> problems;
  for (const auto& pid : ListPlatformIds(root, build_id, &problems)) {
    fs::path dir = core::PlatformDir(root, build_id, pid);
    f.Add(pid);
    AddStat(f, core::ManifestPath(dir));
    std::vector<fs::path> files = ListRunFiles(dir);
    f.Add(static_cast<int64_t>(files.size()));
    for (const auto& file : files) AddStat(f, file);
  }
  // Unsafe names are reported on the build page, so they are inputs too.
  for (const auto& p : problems) f.Add(p.file);
  return f.Hex();
}

LoadedResults LoadResults(const fs::path& root, const LoadOptions& options) {
  return LoadResults(core::ScanTree(root, options.only_builds), options);
}

LoadedResults LoadResults(const core::TreeScan& scan, const LoadOptions& options) {
  LoadedResults out;
  out.problems = scan.problems;
  std::vector<RunJob> jobs;
  for (const auto& tb : scan.builds) {
    if (!options.only_builds.empty() && !options.only_builds.count(tb.id)) continue;
    BuildResults b;
    b.id = tb.id;
    b.started_at = tb.started_at;
    b.problems = tb.problems;
    for (const auto& tp : tb.platforms) {
      for (auto& f : ListRunFiles(tp.dir)) jobs.push_back({f, out.builds.size(), b.platforms.size(), {}});
      b.platforms.push_back(core::BeginPlatform(tb, tp));
    }
    out.builds.push_back(std::move(b));
  }

  // Parse in parallel; each job writes only its own slot.
  ParallelFor(jobs.size(), ThreadCount(options.threads, jobs.size()), [&](size_t i, int) {
    RunJob& job = jobs[i];
    const auto& b = out.builds[job.build];
    job.outcome = core::LoadRunFileOutcome(job.file, b.id, b.platforms[job.platform].manifest.platform_id);
  });

  for (auto& job : jobs) {
    auto& p = out.builds[job.build].platforms[job.platform];
    if (job.outcome.run) p.runs.push_back(std::move(*job.outcome.run));
    if (job.outcome.problem) p.problems.push_back(std::move(*job.outcome.problem));
  }
  for (auto& b : out.builds) {
    for (auto& p : b.platforms) {
      core::FinishPlatform(p);
      b.problems.insert(b.problems.end(), p.problems.begin(), p.problems.end());
    }
    std::sort(b.problems.begin(), b.problems.end());
  }
  if (options.strict && out.ProblemCount() > 0) {
    std::vector<Problem> all = out.problems;
    for (const auto& b : out.builds) all.insert(all.end(), b.problems.begin(), b.problems.end());
    throw StrictError(std::move(all));
  }
  return out;
}

}  // namespace torchgauge::reporter
