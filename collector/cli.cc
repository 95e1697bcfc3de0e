#include "collector/cli.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "collector/bisect_command.h"
#include "collector/environment.h"
#include "collector/paper_list.h"
#include "collector/platform/probe.h"
#include "collector/shard_command.h"
#include "collector/worker.h"
#include "core/analysis/compare_cli.h"
#include "core/analysis/coverage.h"
#include "core/contract/run_settings.h"
#include "core/contract/version.h"
#include "core/contract/vocabulary.h"
#include "models/workload.h"

namespace torchgauge::collector {

using nlohmann::json;

CLI::IsMember Choices(std::span<const char* const> names) {
  return CLI::IsMember(std::vector<std::string>(names.begin(), names.end()));
}

CLI::IsMember DeviceChoices() { return CLI::IsMember({"auto", "cpu", "cuda"}); }

std::string ResolveDevice(const std::string& requested) { return requested == "auto" ? BestDevice() : requested; }

void Guard(CliState& state, const std::function<int()>& body) {
  try {
    state.exit_code = body();
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    state.exit_code = 2;
  }
}

namespace {

std::string Batches(const models::BatchSizes& b) { return std::to_string(b.train) + "/" + std::to_string(b.eval); }

json ModelJson(const models::ModelInfo& m) {
  return {{"id", m.id},
          {"paper_name", m.paper_name},
          {"domain", core::Name(m.domain)},
          {"task", m.task},
          {"reference", m.reference},
          {"default_batch", {{"train", m.default_batch.train}, {"eval", m.default_batch.eval}}},
          {"cpu_batch", m.cpu_batch ? json{{"train", m.cpu_batch->train}, {"eval", m.cpu_batch->eval}} : json(nullptr)},
          {"smoke_batch", {{"train", m.smoke_batch.train}, {"eval", m.smoke_batch.eval}}},
          {"supports_train", m.supports_train},
          {"supports_eval", m.supports_eval}};
}

// A table cell: a '|' would end the cell, a newline the row.
std::string MarkdownCell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else
      out += c == '\n' ? ' ' : c;
  }
  return out;
}

// The models table of docs/models.md, generated so that it cannot drift from
// the registry (tests/readme_facts_test.py compares the committed copy).
std::string ModelsMarkdown(const std::vector<const models::ModelInfo*>& sorted) {
  std::string out =
      "| domain | model id | paper name | task | batch train/eval (default · CPU · smoke) | reference |\n"
      "|---|---|---|---|---|---|\n";
  for (const auto* m : sorted) {
    const std::string cpu = m->cpu_batch ? Batches(*m->cpu_batch) : "—";
    const std::string modes =
        m->supports_train && m->supports_eval ? "" : (m->supports_train ? " (train only)" : " (eval only)");
    out += "| " + std::string(core::Name(m->domain)) + " | `" + m->id + "` | " + MarkdownCell(m->paper_name) + " | " +
           MarkdownCell(m->task) + modes + " | " + Batches(m->default_batch) + " · " + cpu + " · " +
           Batches(m->smoke_batch) + " | " + MarkdownCell(m->reference) + " |\n";
  }
  return out;
}

int ListModels(bool all, bool as_json, bool as_markdown) {
  json out = json::array();
  if (!as_json && !as_markdown) {
    std::printf("%-34s %-15s %-28s %-34s %-11s %-11s %-9s %s\n", "MODEL", "DOMAIN", "TASK", "PAPER NAME", "BATCH T/E",
                "CPU T/E", "SMOKE", "REFERENCE");
  }
  std::vector<const models::ModelInfo*> sorted;
  for (const auto& m : models::Registry()) sorted.push_back(&m);
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
    return std::tie(a->domain, a->id) < std::tie(b->domain, b->id);
  });
  if (!all) std::erase_if(sorted, [](const auto* m) { return m->hidden; });
  if (as_markdown) {
    std::cout << ModelsMarkdown(sorted);
    return 0;
  }
  for (const auto* mp : sorted) {
    const auto& m = *mp;
    if (as_json) {
      out.push_back(ModelJson(m));
      continue;
    }
    std::string modes =
        m.supports_train && m.supports_eval ? "" : (m.supports_train ? " (train only)" : " (eval only)");
    std::printf("%-34s %-15s %-28s %-34s %-11s %-11s %-9s %s%s\n", m.id.c_str(), core::Name(m.domain), m.task.c_str(),
                m.paper_name.c_str(), Batches(m.default_batch).c_str(),
                Batches(m.cpu_batch.value_or(m.default_batch)).c_str(), Batches(m.smoke_batch).c_str(),
                m.reference.c_str(), modes.c_str());
  }
  if (as_json) std::cout << out.dump(2) << "\n";
  return 0;
}

int PrintCoverage(const std::string& dir, bool list) {
  std::vector<std::string> problems;
  auto runs = core::LoadRunsUnder(dir, &problems);
  for (const auto& p : problems) std::cerr << "warning: skipped " << p << "\n";
  auto cov = core::ComputeCoverage(runs);
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

}  // namespace

// The paper's Table 1 with our state per model; exit 1 when the table and the
// registry disagree (each disagreement on stderr).
int ListPaper(bool as_json) {
  const auto& table = core::EmbeddedPaperTable1();
  if (as_json) {
    std::cout << PaperTableJson(table).dump(2) << "\n";
  } else {
    std::cout << PaperTableText(table);
  }
  const auto problems = PaperTableProblems(table, models::Registry());
  for (const auto& p : problems) std::cerr << "error: models/paper_table1.json: " << p << "\n";
  return problems.empty() ? 0 : 1;
}

void AddListCommand(CLI::App& app, CliState& state) {
  auto* sub = app.add_subcommand("list", "List the models with domain, task, paper name, batch sizes and reference.");
  auto all = std::make_shared<bool>(false), as_json = std::make_shared<bool>(false),
       as_markdown = std::make_shared<bool>(false), paper = std::make_shared<bool>(false);
  sub->add_flag("--all", *all, "Include the harness's hidden test models.");
  auto* json_flag = sub->add_flag("--json", *as_json, "Print JSON.");
  sub->add_flag("--markdown", *as_markdown, "Print the models as a Markdown table (docs/models.md holds it).")
      ->excludes(json_flag);
  sub->add_flag("--paper", *paper,
                "List the paper's Table 1 instead: every model with its domain, task and our state (native, "
                "planned, not possible here, with the reason), and counts per domain.")
      ->excludes(sub->get_option("--all"))
      ->excludes(sub->get_option("--markdown"));
  sub->callback([&state, all, as_json, as_markdown, paper] {
    Guard(state, [&] { return *paper ? ListPaper(*as_json) : ListModels(*all, *as_json, *as_markdown); });
  });
}

void AddEnvCommand(CLI::App& app, CliState& state) {
  auto* sub = app.add_subcommand("env", "Print what the manifest would record about this machine and software.");
  auto device = std::make_shared<std::string>("auto");
  auto get = std::make_shared<std::string>();
  sub->add_option("--device", *device, "auto | cpu | cuda")->check(DeviceChoices());
  sub->add_option("--get", *get, "Print only this top-level string field (build_id, platform_id), for scripts");
  sub->callback([&state, device, get] {
    Guard(state, [&] {
      const std::string dev = ResolveDevice(*device);
      auto env = DescribeEnvironment(dev);
      env["platform_id"] = AutoPlatformId(env);
      env["build_id"] = AutoBuildId(env);
      env["collector"] = CollectorIdentity();
      env["clocks"] = ReadClocks(dev);
      if (!get->empty()) {
        if (!env.contains(*get) || !env.at(*get).is_string()) {
          throw std::invalid_argument("env --get: '" + *get + "' is not a top-level string field");
        }
        std::cout << env.at(*get).get<std::string>() << "\n";
        return 0;
      }
      std::cout << env.dump(2) << "\n";
      return 0;
    });
  });
}

void AddCoverageCommand(CLI::App& app, CliState& state) {
  auto* sub = app.add_subcommand("coverage", "Print the distinct ATen operators exercised per domain and in total.");
  auto dir = std::make_shared<std::string>();
  auto list = std::make_shared<bool>(false);
  sub->add_option("results", *dir, "A results tree, build or platform directory")->required();
  sub->add_flag("--list", *list, "Also list the operators");
  sub->callback([&state, dir, list] { Guard(state, [&] { return PrintCoverage(*dir, *list); }); });
}

void AddBisectCommand(CLI::App& app, CliState& state) {
  auto* sub = app.add_subcommand(
      "bisect", "Binary-search an ordered list of revisions for the first one that regressed the selected runs.");
  auto o = std::make_shared<BisectCommandOptions>();
  auto alert = std::make_shared<std::string>();
  auto alerts_file = std::make_shared<std::filesystem::path>();
  sub->add_option("--good", o->good, "Known-good revision (default with --alert: the alert's baseline build)");
  sub->add_option("--bad", o->bad, "Known-bad revision (default with --alert: the alert's build)");
  sub->add_option("--alert", *alert,
                  "Bisect this alert (A-0123456789ab): its range and runs from --alerts, the culprit recorded with "
                  "--results");
  sub->add_option("--alerts", *alerts_file, "The site's alerts.json (written by torchgauge-report build)");
  sub->add_option("--results", o->results_root,
                  "With --alert: the results tree whose culprits.json records the culprit");
  sub->add_option("--candidates", o->candidates_file,
                  "File: revisions after --good, oldest first, ending with --bad (git rev-list --reverse good..bad)")
      ->required();
  sub->add_option("--command", o->command, "Shell command that builds or installs a revision; {rev} is replaced")
      ->required();
  sub->add_option("--collector", o->collector, "Collector to measure with ({rev} allowed; default: this binary)");
  sub->add_option("--model", o->runs.model, "Regex of the affected models (default with --alert: the alert's)");
  auto* mode =
      sub->add_option("--mode", o->runs.mode, "train | eval")->check(Choices(core::kModes))->capture_default_str();
  auto* precision = sub->add_option("--precision", o->runs.precision, "Precision of the affected runs")
                        ->check(Choices(core::kPrecisions));
  auto* backend = sub->add_option("--backend", o->runs.backend, "Backend of the affected runs")
                      ->check(Choices(core::kBackends))
                      ->capture_default_str();
  sub->add_option("--device", o->runs.device, "auto | cpu | cuda")->check(DeviceChoices())->capture_default_str();
  sub->add_option("--repeat", o->runs.repeat, "Timed repetitions per process")
      ->default_str(std::to_string(core::RunSettings{}.repeat));
  sub->add_option("--processes", o->processes, "Worker processes per measurement at first")->capture_default_str();
  sub->add_option("--max-processes", o->max_processes,
                  "An unknown verdict (over the threshold, not significant) measures again with twice the processes, "
                  "up to this; then the revision is skipped")
      ->capture_default_str();
  sub->add_option("--collect-arg", o->collect_args, "Extra argument for `run`, repeatable");
  sub->add_option("--work-dir", o->work_dir, "Where each step's results and bisect.log go")->capture_default_str();
  core::AddCompareOptions(*sub, o->compare, {.prefix = "", .history = false});
  sub->add_flag("--verify-bad", o->verify_bad, "Also measure --bad instead of assuming it is bad");
  sub->add_option("--metric", o->metric,
                  "Judge only this metric (default: every compared one; with --alert: the alert's)")
      ->check([](const std::string& m) {
        return core::MetricFromName(m) ? std::string() : "unknown metric '" + m + "' (" + core::MetricNames() + ")";
      });
  sub->add_flag("--improvement", o->improvement,
                "Look for the first revision that improved on --good (faster, smaller) instead of the first that "
                "regressed: a release history's improvements");
  sub->callback([&state, o, alert, alerts_file, mode, precision, backend] {
    Guard(state, [&] {
      if (o->collector.empty()) o->collector = std::filesystem::read_symlink("/proc/self/exe").string();
      if (!alert->empty()) {
        ApplyAlert(*o, *alert, *alerts_file, mode->count() + precision->count() + backend->count() > 0);
      } else if (!o->results_root.empty() || !alerts_file->empty()) {
        throw std::invalid_argument("--alerts and --results go with --alert");
      }
      return RunBisect(*o);
    });
  });
}

void AddProbeCommand(CLI::App& app, CliState& state) {
  auto* sub = app.add_subcommand("probe",
                                 "Measure the platform's peaks attainable through LibTorch (matmul FLOP/s per "
                                 "precision, triad bandwidth; on CUDA also the project's own kernels).");
  auto o = std::make_shared<ProbeOptions>();
  auto device = std::make_shared<std::string>("auto");
  auto out = std::make_shared<std::string>();
  auto threads = std::make_shared<int>(0);
  auto no_kernels = std::make_shared<bool>(false);
  sub->add_option("--device", *device, "auto | cpu | cuda")->check(DeviceChoices())->capture_default_str();
  sub->add_option("--out", *out, "Also write the peaks JSON (the manifest's \"peaks\") to this file");
  sub->add_option("--matmul-n", o->matmul_n, "Square matmul size (0: 2048 on CPU, 8192 on GPU)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--triad-elements", o->triad_elements, "Floats per triad array (0: 4x the last-level cache)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--warmup", o->warmup, "Untimed calls before each figure")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--repeats", o->repeats, "Timed calls per figure; the best is kept")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--threads", *threads, "LibTorch intra-op threads (default: LibTorch's choice)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--no-kernels", *no_kernels, "On CUDA, leave out the project's own kernels");
  sub->callback([&state, o, device, out, threads, no_kernels] {
    Guard(state, [&] {
      if (*threads > 0) at::set_num_threads(*threads);
      o->device = ResolveDevice(*device);
      o->kernels = !*no_kernels;
      return ProbeCommand(*o, *out);
    });
  });
}

void AddWorkerCommand(CLI::App& app, CliState& state) {
  auto* sub = app.add_subcommand("worker", "Internal: measure one run (started by `run`).");
  sub->group("");
  auto spec = std::make_shared<std::string>();
  sub->add_option("--spec", *spec)->required();
  sub->callback([&state, spec] { Guard(state, [&] { return WorkerMain(*spec); }); });
}

std::unique_ptr<CLI::App> MakeApp(CliState& state) {
  auto app = std::make_unique<CLI::App>(
      "torchgauge-collect: measure TorchGauge's LibTorch model suite (time, host and GPU breakdowns, memory, "
      "FLOPs, ATen coverage, system load), one child process and one JSON result per run, and the platform's "
      "peaks.",
      "torchgauge-collect");
  app->require_subcommand(1);
  app->set_version_flag("--version", std::string(core::Version()) + " (" + core::GitSha() + ")");
  AddListCommand(*app, state);
  AddEnvCommand(*app, state);
  AddRunCommand(*app, state);
  AddCoverageCommand(*app, state);
  AddProbeCommand(*app, state);
  AddBisectCommand(*app, state);
  AddMergeCommand(*app, state);
  AddPoolCommand(*app, state);
  AddWorkerCommand(*app, state);
  return app;
}

int RunCli(int argc, char** argv) {
  CliState state;
  state.argv.assign(argv + 1, argv + argc);
  auto app = MakeApp(state);
  try {
    app->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app->exit(e);
  }
  return state.exit_code;
}

}  // namespace torchgauge::collector
