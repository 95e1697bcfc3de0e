// torchgauge-collect: runs TorchGauge's model suite and writes one JSON
// result per run under results/<build-id>/<platform-id>/. Errors travel to
// here and become a message and an exit code.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <regex>
#include <set>
#include <span>
#include <sstream>

#include "collector/bisect_command.h"
#include "collector/config.h"
#include "collector/environment.h"
#include "collector/run_spec.h"
#include "collector/supervisor.h"
#include "core/coverage.h"
#include "core/json_io.h"
#include "core/layout.h"
#include "core/result.h"
#include "core/version.h"
#include "models/workload.h"

namespace tg = torchgauge;
using nlohmann::json;

namespace {

std::string Batches(const tg::models::BatchSizes& b) {
  return std::to_string(b.train) + "/" + std::to_string(b.eval);
}

int ListModels(bool all, bool as_json) {
  json out = json::array();
  if (!as_json) {
    std::printf("%-34s %-15s %-28s %-34s %-11s %-9s %s\n", "MODEL", "DOMAIN", "TASK", "PAPER NAME", "BATCH T/E",
                "SMOKE", "REFERENCE");
  }
  std::vector<const tg::models::ModelInfo*> sorted;
  for (const auto& m : tg::models::Registry()) sorted.push_back(&m);
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
    return std::tie(a->domain, a->id) < std::tie(b->domain, b->id);
  });
  for (const auto* mp : sorted) {
    const auto& m = *mp;
    if (m.hidden && !all) continue;
    std::string modes = m.supports_train && m.supports_eval ? "" : (m.supports_train ? " (train only)" : " (eval only)");
    if (as_json) {
      out.push_back({{"id", m.id}, {"paper_name", m.paper_name}, {"domain", tg::models::DomainName(m.domain)},
                     {"task", m.task}, {"reference", m.reference},
                     {"default_batch", {{"train", m.default_batch.train}, {"eval", m.default_batch.eval}}},
                     {"smoke_batch", {{"train", m.smoke_batch.train}, {"eval", m.smoke_batch.eval}}},
                     {"supports_train", m.supports_train}, {"supports_eval", m.supports_eval}});
    } else {
      std::printf("%-34s %-15s %-28s %-34s %-11s %-9s %s%s\n", m.id.c_str(), tg::models::DomainName(m.domain),
                  m.task.c_str(), m.paper_name.c_str(), Batches(m.default_batch).c_str(),
                  Batches(m.smoke_batch).c_str(), m.reference.c_str(), modes.c_str());
    }
  }
  if (as_json) std::cout << out.dump(2) << "\n";
  return 0;
}

// A CLI choice check from one of core's name lists.
CLI::IsMember Choices(std::span<const char* const> names) {
  return CLI::IsMember(std::vector<std::string>(names.begin(), names.end()));
}

std::string HumanBytes(std::optional<int64_t> b) {
  if (!b) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f MiB", static_cast<double>(*b) / (1024.0 * 1024.0));
  return buf;
}

int PrintCoverage(const std::string& dir, bool list) {
  std::vector<std::string> problems;
  auto runs = tg::core::LoadRunsUnder(dir, &problems);
  for (const auto& p : problems) std::cerr << "warning: skipped " << p << "\n";
  auto cov = tg::core::ComputeCoverage(runs);
  std::printf("%-16s %10s\n", "DOMAIN", "ATEN OPS");
  for (const auto& [domain, ops] : cov.by_domain) std::printf("%-16s %10zu\n", domain.c_str(), ops.size());
  std::printf("%-16s %10zu\n", "union", cov.all.size());
  std::printf("(%d runs with operator data, %d without: failed, unsupported or not profiled)\n",
              cov.runs_with_operators, cov.runs_without);
  if (list) {
    for (const auto& op : cov.all) std::printf("%s\n", op.c_str());
  }
  return cov.runs_with_operators > 0 ? 0 : 1;
}

void PrintSummary(const std::vector<tg::core::RunResult>& results) {
  std::printf("\n%-34s %-6s %-11s %-8s %6s %12s %8s %12s %12s  %s\n", "MODEL", "MODE", "BACKEND", "PREC", "BATCH", "MEDIAN ms",
              "CoV", "CPU PEAK", "GPU PEAK", "STATUS");
  for (const auto& r : results) {
    std::string med = r.timing ? (std::ostringstream() << std::fixed << std::setprecision(2) << r.timing->median_ms).str() : "-";
    std::string cov = r.timing ? (std::ostringstream() << std::fixed << std::setprecision(1) << r.timing->cov * 100 << "%").str() : "-";
    std::string status = r.status;
    if (r.status != "ok" && r.reason) status += ": " + r.reason->substr(0, 70);
    std::printf("%-34s %-6s %-11s %-8s %6lld %12s %8s %12s %12s  %s\n", r.model.id.c_str(), r.mode.c_str(),
                r.backend.c_str(), r.precision.c_str(), static_cast<long long>(r.batch_size), med.c_str(), cov.c_str(),
                HumanBytes(r.memory ? r.memory->cpu_peak_rss_bytes : std::nullopt).c_str(),
                HumanBytes(r.memory ? r.memory->gpu_peak_allocated_bytes : std::nullopt).c_str(), status.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"torchgauge-collect: measure TorchGauge's LibTorch model suite (time, GPU breakdown, memory, FLOPs, "
               "ATen coverage), one child process and one JSON result per run."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(tg::core::Version()) + " (" + tg::core::GitSha() + ")");

  auto* list = app.add_subcommand("list", "List the models with domain, task, paper name, batch sizes and reference.");
  bool list_all = false, list_json = false;
  list->add_flag("--all", list_all, "Include the harness's hidden test models.");
  list->add_flag("--json", list_json, "Print JSON.");

  auto* env_cmd = app.add_subcommand("env", "Print what the manifest would record about this machine and software.");
  std::string env_device = "auto";
  env_cmd->add_option("--device", env_device, "auto | cpu | cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));

  auto* run = app.add_subcommand("run", "Run a suite (default: smoke) and write results/<build-id>/<platform-id>/.");
  std::string suite_name = "smoke", config_file, out_dir = "results", device = "auto", build_id, platform_id;
  tg::collector::PlanFilters filters;
  std::vector<std::string> modes, precisions, backends, domains;
  std::optional<int> warmup, repeat, processes, profile_iters;
  std::optional<double> timeout_s;
  std::optional<uint64_t> seed;
  bool resume = false, retry_failed = false, trace = false, dry_run = false, quiet_summary = false;
  double slowdown = 0;
  std::string slowdown_model;
  int threads = 0;
  run->add_option("--suite", suite_name, "Embedded suite: smoke | full")->capture_default_str();
  run->add_option("--config", config_file, "JSON suite file overriding the embedded suite's fields");
  run->add_option("--model", filters.model_regex, "Only models whose id matches this regular expression");
  run->add_option("--domain", domains, "Only these domains: vision nlp recommendation rl speech other");
  run->add_option("--mode", modes, "train | eval (default: the suite's, both)")->check(Choices(tg::core::kModes));
  run->add_option("--device", device, "auto | cpu | cuda (auto: cuda when present)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  run->add_option("--precision", precisions, "fp32 tf32 default bf16 fp16 amp-bf16 amp-fp16")
      ->check(Choices(tg::core::kPrecisions));
  run->add_option("--backend", backends,
                  "eager | torchscript (traced forward run by the JIT graph executor); cudagraph and aotinductor are "
                  "recorded as unsupported")
      ->check(Choices(tg::core::kBackends));
  run->add_option("--batch-size", filters.batch_size, "Override every run's batch size")->check(CLI::PositiveNumber);
  run->add_option("--warmup", warmup, "Warm-up iterations before timing")->check(CLI::NonNegativeNumber);
  run->add_option("--repeat", repeat, "Timed repetitions (one iteration each)")->check(CLI::PositiveNumber);
  run->add_option("--processes", processes,
                  "Worker processes per run, each doing warm-up and --repeat timed steps; samples are pooled "
                  "(process-to-process noise then shows, as asv and pyperf do)")
      ->check(CLI::Range(1, 100));
  run->add_option("--profile-iterations", profile_iters, "Iterations in the separate profiling pass (0: none)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--timeout", timeout_s, "Per-run timeout in seconds")->check(CLI::PositiveNumber);
  run->add_option("--seed", seed, "Seed for weights and inputs");
  run->add_option("--out", out_dir, "Results root")->capture_default_str();
  run->add_option("--build-id", build_id, "Build id (default: <libtorch version>[-cuXYZ]-<UTC date>)");
  run->add_option("--platform-id", platform_id, "Platform id (default: derived from the device)");
  run->add_option("--threads", threads, "Intra-op CPU threads per run (default: LibTorch's choice)")
      ->check(CLI::NonNegativeNumber);
  run->add_flag("--resume", resume, "Skip runs that already have a result");
  run->add_flag("--retry-failed", retry_failed, "With --resume, re-run results that are not ok or unsupported");
  run->add_flag("--trace", trace, "Write the profiling pass's Chrome trace next to the results");
  run->add_flag("--include-test-models", filters.include_hidden, "Include the harness's hidden test models");
  run->add_flag("--dry-run", dry_run, "Print the plan and exit");
  run->add_flag("--no-summary", quiet_summary, "Do not print the summary table");
  run->add_option("--slowdown", slowdown, "Testing: sleep this fraction of each step's time (plants a regression)")
      ->group("");
  run->add_option("--slowdown-model", slowdown_model, "Testing: regex of models that --slowdown applies to")->group("");

  auto* coverage = app.add_subcommand("coverage", "Print the distinct ATen operators exercised per domain and in total.");
  std::string coverage_dir;
  bool coverage_list = false;
  coverage->add_option("results", coverage_dir, "A results tree, build or platform directory")->required();
  coverage->add_flag("--list", coverage_list, "Also list the operators");

  auto* bisect = app.add_subcommand(
      "bisect", "Binary-search an ordered list of revisions for the first one that regressed the selected runs.");
  tg::collector::BisectCommandOptions bis;
  std::vector<std::string> threshold_rules;
  bisect->add_option("--good", bis.good, "Known-good revision")->required();
  bisect->add_option("--bad", bis.bad, "Known-bad revision")->required();
  bisect->add_option("--candidates", bis.candidates_file,
                     "File: revisions after --good, oldest first, ending with --bad (git rev-list --reverse good..bad)")
      ->required();
  bisect->add_option("--command", bis.command, "Shell command that builds or installs a revision; {rev} is replaced")
      ->required();
  bisect->add_option("--collector", bis.collector,
                     "Collector to measure with ({rev} allowed; default: this binary)");
  std::string bisect_model, bisect_mode = "train", bisect_precision, bisect_device = "auto", bisect_backend = "eager";
  int bisect_repeat = 10;
  bisect->add_option("--model", bisect_model, "Regex of the affected models")->required();
  bisect->add_option("--mode", bisect_mode, "train | eval")->check(Choices(tg::core::kModes))->capture_default_str();
  bisect->add_option("--precision", bisect_precision, "Precision of the affected runs");
  bisect->add_option("--backend", bisect_backend, "Backend of the affected runs")
      ->check(Choices(tg::core::kBackends))
      ->capture_default_str();
  bisect->add_option("--device", bisect_device, "auto | cpu | cuda")->capture_default_str();
  bisect->add_option("--repeat", bisect_repeat, "Timed repetitions per measurement")->capture_default_str();
  bisect->add_option("--collect-arg", bis.collect_args, "Extra argument for `run`, repeatable");
  bisect->add_option("--work-dir", bis.work_dir, "Where each step's results and bisect.log go")
      ->default_val("bisect-work");
  bisect->add_option("--threshold", bis.compare.threshold_percent, "Relative threshold in percent")
      ->capture_default_str();
  bisect->add_option("--threshold-for", threshold_rules, "'metric:regex=pct', repeatable");
  bisect->add_option("--alpha", bis.compare.alpha, "Significance level")->capture_default_str();
  bisect->add_flag("--verify-bad", bis.verify_bad, "Also measure --bad instead of assuming it is bad");

  auto* worker = app.add_subcommand("worker", "Internal: measure one run (started by `run`).");
  worker->group("");
  std::string spec_file;
  worker->add_option("--spec", spec_file)->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  try {
    if (*worker) return tg::collector::WorkerMain(spec_file);
    if (*list) return ListModels(list_all, list_json);
    if (*coverage) return PrintCoverage(coverage_dir, coverage_list);
    if (*bisect) {
      if (bis.collector.empty()) bis.collector = std::filesystem::read_symlink("/proc/self/exe").string();
      for (const auto& r : threshold_rules) bis.compare.rules.push_back(tg::core::ParseThresholdRule(r));
      std::vector<std::string> args = {"--model", bisect_model, "--mode", bisect_mode, "--backend", bisect_backend,
                                       "--device", bisect_device, "--repeat", std::to_string(bisect_repeat)};
      if (!bisect_precision.empty()) {
        args.push_back("--precision");
        args.push_back(bisect_precision);
      }
      args.insert(args.end(), bis.collect_args.begin(), bis.collect_args.end());
      bis.collect_args = args;
      return tg::collector::RunBisect(bis);
    }
    if (*env_cmd) {
      std::string dev = env_device == "auto" ? tg::collector::BestDevice() : env_device;
      auto env = tg::collector::DescribeEnvironment(dev);
      env["platform_id"] = tg::collector::AutoPlatformId(env);
      env["build_id"] = tg::collector::AutoBuildId(env);
      env["collector"] = {{"version", tg::core::Version()}, {"git_sha", tg::core::GitSha()}};
      env["clocks"] = tg::collector::ReadClocks(dev);
      std::cout << env.dump(2) << "\n";
      return 0;
    }

    // run
    const std::string dev = device == "auto" ? tg::collector::BestDevice() : device;
    if (dev == "cuda" && !tg::collector::CudaAvailable()) {
      std::cerr << "warning: --device cuda but LibTorch sees no CUDA/ROCm device: every run will be recorded as "
                   "unsupported\n";
    }
    json suite_json = tg::collector::EmbeddedSuiteJson(suite_name);
    std::string source = "embedded suite '" + suite_name + "'";
    if (!config_file.empty()) {
      suite_json = tg::collector::MergeConfig(suite_json, tg::core::ReadJsonFile(config_file));
      source = config_file;
    }
    if (warmup) suite_json["warmup"] = *warmup;
    if (repeat) suite_json["repeat"] = *repeat;
    if (processes) suite_json["processes"] = *processes;
    if (profile_iters) suite_json["profile_iterations"] = *profile_iters;
    if (timeout_s) suite_json["timeout_s"] = *timeout_s;
    if (seed) suite_json["seed"] = *seed;
    auto suite = tg::collector::ParseSuite(suite_json, source);
    filters.modes = modes;
    filters.precisions = precisions;
    filters.backends = backends;
    filters.domains = domains;
    auto plan = tg::collector::BuildPlan(suite, filters, dev);
    if (plan.empty()) {
      std::cerr << "error: no model matches the filters (see `torchgauge-collect list`)\n";
      return 2;
    }

    auto env = tg::collector::DescribeEnvironment(dev);
    if (build_id.empty()) build_id = tg::collector::AutoBuildId(env);
    if (platform_id.empty()) platform_id = tg::collector::AutoPlatformId(env);
    const auto platform_dir = tg::core::PlatformDir(out_dir, build_id, platform_id);
    std::optional<std::regex> slow_re;
    if (!slowdown_model.empty()) slow_re.emplace(slowdown_model);
    for (auto& s : plan) {
      s.build_id = build_id;
      s.platform_id = platform_id;
      s.platform_dir = platform_dir.string();
      s.trace = trace;
      s.threads = threads;
      if (slowdown > 0 && (!slow_re || std::regex_search(s.model, *slow_re))) s.slowdown = slowdown;
    }
    if (dry_run) {
      for (const auto& s : plan) {
        std::cout << s.model << " " << s.mode << " " << s.backend << " " << s.precision << " bs=" << s.batch_size
                  << " device=" << s.device << "\n";
      }
      std::cout << plan.size() << " runs -> " << platform_dir.string() << "\n";
      return 0;
    }

    // Manifest: written before the first run and completed at the end.
    const auto manifest_path = tg::core::ManifestPath(platform_dir);
    json manifest;
    manifest["schema_version"] = tg::core::kManifestSchemaVersion;
    manifest["kind"] = "torchgauge.manifest";
    manifest["build_id"] = build_id;
    manifest["platform_id"] = platform_id;
    manifest["collector"] = {{"version", tg::core::Version()}, {"git_sha", tg::core::GitSha()}};
    manifest["libtorch"] = env["libtorch"];
    manifest["device"] = env["device"];
    manifest["device"]["clocks_start"] = tg::collector::ReadClocks(dev);
    manifest["cpu"] = env["cpu"];
    manifest["host"] = env["host"];
    manifest["started_at"] = tg::core::NowUtc();
    if (resume && std::filesystem::exists(manifest_path)) {
      try {
        auto old = tg::core::ReadJsonFile(manifest_path);
        if (old.contains("started_at")) manifest["started_at"] = old["started_at"];
      } catch (const std::exception&) {
      }
    }
    manifest["finished_at"] = nullptr;
    manifest["suite"] = tg::collector::SuiteToJson(suite);
    manifest["suite"]["device"] = dev;
    manifest["suite"]["threads"] = threads > 0 ? json(threads) : json("default");
    manifest["suite"]["filters"] = {{"model", filters.model_regex}, {"domains", domains}, {"modes", modes},
                                    {"precisions", precisions}, {"backends", backends},
                                    {"batch_size", filters.batch_size}};
    std::vector<std::string> args(argv + 1, argv + argc);
    manifest["requested"] = {{"argv", args}, {"config_file", config_file}, {"suite", suite_name}};
    tg::core::WriteJsonAtomic(manifest_path, manifest);

    std::cerr << "torchgauge-collect: " << plan.size() << " runs of suite '" << suite.name << "' on " << dev
              << " -> " << platform_dir.string() << "\n";
    tg::collector::SupervisorOptions options;
    options.platform_dir = platform_dir;
    options.self_exe = std::filesystem::read_symlink("/proc/self/exe");
    options.resume = resume;
    options.retry_failed = retry_failed;
    options.progress_tty = isatty(STDERR_FILENO) == 1;
    auto outcome = tg::collector::RunPlan(plan, options);

    manifest["finished_at"] = tg::core::NowUtc();
    manifest["device"]["clocks_end"] = tg::collector::ReadClocks(dev);
    manifest["interrupted"] = outcome.interrupted;
    manifest["runs"] = outcome.counts;
    tg::core::WriteJsonAtomic(manifest_path, manifest);

    if (!quiet_summary) PrintSummary(outcome.results);
    std::cerr << "\n";
    for (const auto& [status, n] : outcome.counts) std::cerr << status << ": " << n << "  ";
    if (outcome.skipped) std::cerr << "(kept " << outcome.skipped << " existing)";
    std::cerr << "\nresults: " << platform_dir.string() << "\n";
    if (outcome.interrupted) {
      std::cerr << "interrupted: finished results are kept; rerun with --resume to complete the suite\n";
      return 130;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
