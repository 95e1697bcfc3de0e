// `torchgauge-collect run`: the suite (embedded, --config, then the
// command line's settings), the plan, the manifest, the supervisor and the
// summary.
#include <sys/wait.h>
#include <unistd.h>

#include <iomanip>
#include <iostream>
#include <iterator>
#include <regex>
#include <sstream>

#include "collector/cli.h"
#include "collector/config.h"
#include "collector/counted.h"
#include "collector/environment.h"
#include "collector/manifest_writer.h"
#include "collector/platform/probe.h"
#include "collector/progress.h"
#include "collector/run_spec.h"
#include "collector/shard_command.h"
#include "collector/supervisor.h"
#include "core/contract/layout.h"
#include "core/contract/result.h"
#include "core/contract/run_settings.h"
#include "core/contract/vocabulary.h"
#include "core/io/json_io.h"

namespace torchgauge::collector {

namespace {

struct RunCommandOptions {
  std::string suite_name = "smoke", config_file, out_dir = "results", device = "auto", build_id, platform_id;
  PlanFilters filters;
  SettingsOverrides overrides;
  bool resume = false, retry_failed = false, trace = false, dry_run = false, no_summary = false, no_probe = false;
  double slowdown = 0, jitter = 0;
  int ballast_mib = 0;
  std::string slowdown_model;
  std::string plant_cost;
  ShardOptions shard;
};

// The suite as run: the embedded one, the --config file's fields over it,
// then the command line's settings over the parsed settings.
SuiteConfig LoadSuite(const RunCommandOptions& o) {
  auto suite_json = EmbeddedSuiteJson(o.suite_name);
  std::string source = "embedded suite '" + o.suite_name + "'";
  if (!o.config_file.empty()) {
    suite_json = MergeConfig(suite_json, core::ReadJsonFile(o.config_file, core::JsonKind::kSuiteConfig));
    source = o.config_file;
  }
  auto suite = ParseSuite(suite_json, source);
  ApplyOverrides(o.overrides, suite);
  return suite;
}

// Fills in what every run shares beyond the suite: where results go, the
// trace flag and the test hook.
void Place(std::vector<RunSpec>& plan, const RunCommandOptions& o, const std::string& build_id,
           const std::string& platform_id, const std::filesystem::path& platform_dir) {
  std::optional<std::regex> slow_re;
  if (!o.slowdown_model.empty()) slow_re.emplace(o.slowdown_model);
  for (auto& s : plan) {
    s.build_id = build_id;
    s.platform_id = platform_id;
    s.platform_dir = platform_dir.string();
    s.trace = o.trace;
    if (slow_re && !std::regex_search(s.model, *slow_re)) continue;
    s.slowdown = o.slowdown;
    s.jitter = o.jitter;
    s.ballast_mib = o.ballast_mib;
    s.plant_cost = o.plant_cost;
  }
}

void PrintDryRun(const std::vector<RunSpec>& plan, const std::filesystem::path& platform_dir) {
  for (const auto& s : plan) {
    std::cout << s.model << " " << s.mode << " " << s.backend << " " << s.precision << " bs=" << s.batch_size
              << " device=" << s.device << "\n";
  }
  std::cout << plan.size() << " runs -> " << platform_dir.string() << "\n";
}

std::string HumanBytes(std::optional<int64_t> b) {
  if (!b) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f MiB", static_cast<double>(*b) / (1024.0 * 1024.0));
  return buf;
}

std::string Fixed(double v, int digits, const char* suffix = "") {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v << suffix;
  return s.str();
}

void PrintSummary(const std::vector<core::RunResult>& results) {
  std::printf("\n%-34s %-6s %-11s %-8s %6s %12s %8s %12s %12s  %s\n", "MODEL", "MODE", "BACKEND", "PREC", "BATCH",
              "MEDIAN ms", "CoV", "CPU PEAK", "GPU PEAK", "STATUS");
  for (const auto& r : results) {
    const std::string med = r.timing ? Fixed(r.timing->median_ms, 2) : "-";
    const std::string cov = r.timing ? Fixed(r.timing->cov * 100, 1, "%") : "-";
    std::string status = r.status + NoiseMark(r);
    if (r.status != "ok" && r.reason) status += ": " + r.reason->substr(0, 70);
    std::printf("%-34s %-6s %-11s %-8s %6lld %12s %8s %12s %12s  %s\n", r.model.id.c_str(), r.mode.c_str(),
                r.backend.c_str(), r.precision.c_str(), static_cast<long long>(r.batch_size), med.c_str(), cov.c_str(),
                HumanBytes(r.memory ? r.memory->cpu_peak_rss_bytes : std::nullopt).c_str(),
                HumanBytes(r.memory ? r.memory->gpu_peak_allocated_bytes : std::nullopt).c_str(), status.c_str());
  }
}

// The peaks of an interrupted collection's manifest at `path`, kept by
// --resume so that one collection has one probe; nullopt when there are none.
std::optional<core::ProbeResult> EarlierPeaks(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    auto old = core::ReadJsonFile(path, core::JsonKind::kManifest);
    if (old.contains("peaks") && old["peaks"].is_object()) return core::ProbeResultFromJson(old["peaks"], path);
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// The collection's probe, in a child process like the runs (`probe --out`),
// so that a crash or a hang costs the peaks and nothing else. Sizes come
// from the suite's "probe" object, threads from the run settings. Unset,
// with a warning, when the probe failed.
std::optional<core::ProbeResult> ProbeInChild(const SuiteConfig& suite, const std::string& device,
                                              const std::filesystem::path& platform_dir, int shard_index) {
  const auto& p = suite.probe;
  const auto out = core::WorkDir(platform_dir) / "peaks.json";
  const auto log = core::ProbeLogPath(platform_dir, shard_index);
  std::filesystem::create_directories(out.parent_path());
  std::filesystem::create_directories(log.parent_path());
  std::filesystem::remove(out);
  std::vector<std::string> argv = {std::filesystem::read_symlink("/proc/self/exe").string(),
                                   "probe",
                                   "--device",
                                   device,
                                   "--out",
                                   out.string(),
                                   "--matmul-n",
                                   std::to_string(p.matmul_n),
                                   "--triad-elements",
                                   std::to_string(p.triad_elements),
                                   "--warmup",
                                   std::to_string(p.warmup),
                                   "--repeats",
                                   std::to_string(p.repeats)};
  if (suite.settings.threads > 0) argv.insert(argv.end(), {"--threads", std::to_string(suite.settings.threads)});
  if (!p.kernels) argv.push_back("--no-kernels");
  std::cerr << "torchgauge-collect: probing the platform's peaks (log: " << log.string() << ")\n";
  const auto child = RunChild(argv, log, suite.settings.timeout_s);
  std::optional<core::ProbeResult> peaks;
  if (!child.timed_out && WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0 && std::filesystem::exists(out)) {
    try {
      peaks = core::ProbeResultFromJson(core::ReadJsonFile(out, core::JsonKind::kOther), out);
    } catch (const std::exception& e) {
      std::cerr << "warning: the probe wrote unreadable peaks: " << e.what() << "\n";
    }
  }
  std::filesystem::remove(out);
  if (peaks) {
    std::cerr << FormatProbe(*peaks);
  } else {
    std::cerr << "warning: the probe failed (" << (child.timed_out ? "timeout" : "see " + log.string())
              << "); the manifest records no peaks\n";
  }
  return peaks;
}

int ReportOutcome(const SuiteOutcome& outcome, const std::filesystem::path& platform_dir, bool no_summary) {
  if (!no_summary) PrintSummary(outcome.results);
  std::cerr << "\n";
  for (const auto& [status, n] : outcome.counts) std::cerr << status << ": " << n << "  ";
  if (outcome.skipped) std::cerr << "(kept " << outcome.skipped << " existing)";
  std::cerr << "\nresults: " << platform_dir.string() << "\n";
  int code = 0;
  if (outcome.interrupted) {
    std::cerr << "interrupted: finished results are kept; rerun with --resume to complete the suite\n";
    code = 130;
  }
  // Last, where it is read: a noisy number is never shown as a clean one.
  if (const auto noise = NoiseSummary(outcome.results); !noise.empty()) std::cerr << noise << "\n";
  return code;
}

int RunCommand(const RunCommandOptions& o, const std::vector<std::string>& argv) {
  const std::string dev = ResolveDevice(o.device);
  if (dev == "cuda" && !CudaAvailable()) {
    std::cerr << "warning: --device cuda but LibTorch sees no CUDA/ROCm device: every run will be recorded as "
                 "unsupported\n";
  }
  const SuiteConfig suite = LoadSuite(o);
  std::optional<std::string> valgrind;
  if (suite.settings.measure == "counted") {
    if (dev != "cpu") throw std::invalid_argument("--measure counted: counts a CPU's work; use --device cpu");
    valgrind = ValgrindVersion();
    if (!valgrind && !o.dry_run) {
      throw std::invalid_argument(
          "--measure counted needs Valgrind on PATH (Debian: apt-get install valgrind; ./gauge's bootstrap installs "
          "it)");
    }
  }
  auto plan = BuildPlan(suite, o.filters, dev);
  if (plan.empty()) {
    std::cerr << "error: no model matches the filters (see `torchgauge-collect list`)\n";
    return 2;
  }
  ManifestFacts facts;
  facts.environment = DescribeEnvironment(dev);
  facts.build_id = o.build_id.empty() ? AutoBuildId(facts.environment) : o.build_id;
  facts.platform_id = o.platform_id.empty() ? AutoPlatformId(facts.environment, suite.settings) : o.platform_id;
  const auto platform_dir = core::PlatformDir(o.out_dir, facts.build_id, facts.platform_id);
  Place(plan, o, facts.build_id, facts.platform_id, platform_dir);
  const auto shard = SelectShard(plan, o.shard, dev, facts.build_id, facts.platform_id, o.dry_run);
  if (o.dry_run) {
    PrintDryRun(plan, platform_dir);
    return 0;
  }

  // The manifest: written before the first run and completed at the end.
  const auto manifest_path = core::ManifestPath(platform_dir);
  facts.device = dev;
  facts.clocks_start = ReadClocks(dev);
  facts.started_at = core::NowUtc();
  if (o.resume) facts.started_at = EarlierStartedAt(manifest_path).value_or(facts.started_at);
  facts.suite = &suite;
  facts.filters = o.filters;
  facts.argv = argv;
  facts.config_file = o.config_file;
  facts.suite_name = o.suite_name;
  facts.cpu_frequency = core::ReadCpuFrequencyPolicy();
  if (o.resume) facts.peaks = EarlierPeaks(manifest_path);
  if (!o.no_probe && !facts.peaks) facts.peaks = ProbeInChild(suite, dev, platform_dir, shard ? shard->index : -1);
  WriteRunManifest(facts, manifest_path, shard);

  std::cerr << "torchgauge-collect: " << plan.size() << " runs of suite '" << suite.name << "' on " << dev << " -> "
            << platform_dir.string() << "\n";
  const auto progress = isatty(STDERR_FILENO) == 1 ? MakeTtyProgress(std::cerr) : MakeLineProgress(std::cerr);
  SupervisorOptions options;
  options.platform_dir = platform_dir;
  options.self_exe = std::filesystem::read_symlink("/proc/self/exe");
  options.resume = o.resume;
  options.retry_failed = o.retry_failed;
  options.progress = progress.get();
  options.valgrind_version = valgrind.value_or("");
  const auto outcome = RunPlan(plan, options);

  facts.end = ManifestFacts::End{core::NowUtc(), ReadClocks(dev), outcome.interrupted, outcome.counts};
  WriteRunManifest(facts, manifest_path, shard);
  return ReportOutcome(outcome, platform_dir, o.no_summary);
}

void AddSelectionOptions(CLI::App& sub, RunCommandOptions& o) {
  std::string suites;
  for (const auto& n : EmbeddedSuiteNames()) suites += (suites.empty() ? "" : " | ") + n;
  sub.add_option("--suite", o.suite_name, "Embedded suite: " + suites)->capture_default_str();
  sub.add_option("--config", o.config_file, "JSON suite file overriding the embedded suite's fields");
  sub.add_option("--model", o.filters.model_regex, "Only models whose id matches this regular expression");
  sub.add_option("--domain", o.filters.domains, "Only these domains: " + core::JoinNames(core::kDomains, " "))
      ->check(Choices(core::kDomains));
  sub.add_option("--mode", o.filters.modes, "train | eval (default: the suite's, both)")->check(Choices(core::kModes));
  sub.add_option("--device", o.device, "auto | cpu | cuda (auto: cuda when present)")
      ->check(DeviceChoices())
      ->capture_default_str();
  sub.add_option("--precision", o.filters.precisions, core::JoinNames(core::kPrecisions, " "))
      ->check(Choices(core::kPrecisions));
  sub.add_option("--backend", o.filters.backends,
                 "eager | torchscript (traced forward run by the JIT graph executor) | inductor (TorchInductor "
                 "through AOTInductor; eval) ; cudagraph is recorded as unsupported")
      ->check(Choices(core::kBackends));
  sub.add_option("--batch-size", o.filters.batch_size, "Override every run's batch size")->check(CLI::PositiveNumber);
  sub.add_flag("--include-test-models", o.filters.include_hidden, "Include the harness's hidden test models");
}

// Each given option replaces the suite's value; the ranges are checked once,
// in core::CheckRunSettings, after the suite and these are combined.
void AddSettingsOptions(CLI::App& sub, SettingsOverrides& s) {
  sub.add_option("--warmup", s.warmup, "Warm-up iterations before timing (default: the suite's)");
  sub.add_option("--repeat", s.repeat, "Timed repetitions, one iteration each (default: the suite's)");
  sub.add_option("--processes", s.processes,
                 "Worker processes per run, each doing warm-up and --repeat timed steps; samples are pooled "
                 "(process-to-process noise then shows, as asv and pyperf do)");
  sub.add_option("--profile-iterations", s.profile_iterations, "Iterations in the separate profiling pass (0: none)");
  sub.add_option("--timeout", s.timeout_s, "Per-run timeout in seconds");
  sub.add_option("--seed", s.seed, "Seed for weights and inputs");
  sub.add_option("--threads", s.threads, "Intra-op CPU threads per run (default: LibTorch's choice)");
  sub.add_option("--prompt-tokens", s.prompt_tokens,
                 "Generative models in eval: the prompt's length in tokens (default: the suite's, else 64)");
  sub.add_option("--decode-steps", s.decode_steps,
                 "Generative models in eval: single-token decode steps per generation (default: the suite's, else 16)");
  sub.add_option("--generations", s.generations,
                 "Generative models in eval: timed generations after one untimed (default: the suite's, else 5)");
  sub.add_option("--pairing", s.pairing,
                 "Compiled backends: time eager against the compiled forward in the same worker, 'interleaved' "
                 "(pairs of alternating order, A B B A ..., the default), 'back_to_back' (all eager steps, then all "
                 "compiled) or 'off'")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(core::kPairings), std::end(core::kPairings))));
  sub.add_option("--measure", s.measure,
                 "What the timed steps measure: 'time' (wall time, the default) or 'counted' (each worker under "
                 "Valgrind's Callgrind: instructions and estimated cycles per step, deterministic; one thread, "
                 "AVX2, tens of times slower; docs/counted.md)")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(core::kMeasures), std::end(core::kMeasures))));
  sub.add_option("--cpu-isa", s.cpu_isa,
                 "Cap the instruction set of ATen's and oneDNN's CPU kernels: 'avx2' (what a counted run executes) "
                 "or 'default' (no vector extensions); unset: their own choice. The platform id says so.")
      ->check(CLI::IsMember(std::vector<std::string>{"avx2", "default"}));
}

}  // namespace

void AddRunCommand(CLI::App& app, CliState& state) {
  auto* sub = app.add_subcommand("run", "Run a suite (default: smoke) and write results/<build-id>/<platform-id>/.");
  auto o = std::make_shared<RunCommandOptions>();
  AddSelectionOptions(*sub, *o);
  AddSettingsOptions(*sub, o->overrides);
  sub->add_option("--out", o->out_dir, "Results root")->capture_default_str();
  sub->add_option("--build-id", o->build_id, "Build id (default: <libtorch version>[-cuXYZ]-<UTC date>)");
  sub->add_option("--platform-id", o->platform_id, "Platform id (default: derived from the device)");
  sub->add_flag("--resume", o->resume, "Skip runs that already have a result");
  sub->add_flag("--retry-failed", o->retry_failed, "With --resume, re-run results that are not ok or unsupported");
  sub->add_flag("--trace", o->trace, "Write the profiling pass's Chrome trace next to the results");
  sub->add_flag("--dry-run", o->dry_run, "Print the plan and exit");
  sub->add_flag("--no-summary", o->no_summary, "Do not print the summary table");
  AddShardOptions(*sub, o->shard);
  sub->add_flag("--no-probe", o->no_probe,
                "Do not measure the platform's peaks before the runs (the manifest then has none: not probed)");
  sub->add_option("--slowdown", o->slowdown, "Testing: sleep this fraction of each step's time (plants a regression)")
      ->group("");
  sub->add_option("--jitter", o->jitter,
                  "Testing: sleep a random fraction in [0, J) of each step's time (plants noise)")
      ->group("");
  sub->add_option("--ballast-mib", o->ballast_mib,
                  "Testing: hold this many MiB, touched, through the timed steps (plants a memory change)")
      ->check(CLI::Range(0, 1 << 20))
      ->group("");
  sub->add_option("--slowdown-model", o->slowdown_model,
                  "Testing: regex of models that --slowdown, --jitter, --ballast-mib and --plant-cost apply to")
      ->group("");
  sub->add_option("--plant-cost", o->plant_cost,
                  "Testing: OP=N, N iterations of a fixed loop before each call of the ATen CPU kernel OP "
                  "(aten::relu or aten::addmm): a known instruction cost")
      ->group("");
  sub->callback([&state, o] { Guard(state, [&] { return RunCommand(*o, state.argv); }); });
}

}  // namespace torchgauge::collector
