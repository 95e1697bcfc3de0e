#include "reporter/site/cli.h"

#include "core/contract/version.h"
#include "reporter/compare/command.h"
#include "reporter/compare/ratio_command.h"
#include "reporter/paper/command.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <limits>

#include "core/analysis/compare_cli.h"
#include "core/contract/result.h"
#include "core/io/json_io.h"
#include "reporter/output/assets.h"
#include "reporter/output/paths.h"
#include "reporter/results/load.h"
#include "reporter/alerts/tracking.h"
#include "reporter/alerts/triage.h"
#include "reporter/results/v3_export.h"
#include "reporter/site/serve.h"
#include "reporter/site/site.h"

namespace fs = std::filesystem;

namespace torchgauge::reporter {

namespace {
// Runs a subcommand body, turning exceptions into a message and exit code.
template <typename F>
void Guard(CliState& state, F&& body) {
  try {
    body();
  } catch (const StrictError& e) {
    std::cerr << "torchgauge-report: " << e.what() << "\n";
    state.exit_code = 1;
  } catch (const std::exception& e) {
    std::cerr << "torchgauge-report: error: " << e.what() << "\n";
    state.exit_code = 2;
  }
}
}  // namespace

void AddBuildCommand(CLI::App& app, CliState& state) {
  auto opts = std::make_shared<SiteOptions>();
  auto builds = std::make_shared<std::vector<std::string>>();
  auto no_svg = std::make_shared<bool>(false);
  opts->templates = DefaultTemplatesDir();
  opts->static_dir = DefaultStaticDir();
  opts->helper = DefaultHelper();
  opts->python = DefaultPython();
  CLI::App* sub = app.add_subcommand("build", "Render a results tree into a static site (HTML + Markdown twins)");
  sub->add_option("--results", opts->results, "Results tree: <build-id>/<platform-id>/{manifest.json,runs/}")
      ->required();
  sub->add_option("--out", opts->out, "Site output directory")->required();
  sub->add_option("--build", *builds,
                  "Render only these builds (repeatable); other published builds are left untouched");
  sub->add_flag("--strict", opts->strict, "Fail on any unreadable or invalid result instead of skipping it");
  sub->add_flag("--force", opts->force,
                "Render every build; by default a build whose results, dependencies, templates and reporter are "
                "unchanged since it was last rendered is skipped");
  sub->add_option("--site-url", opts->site_url, "Public URL of the site, for absolute links in summary.md");
  sub->add_option("--reference-platform", opts->reference_platform,
                  "Platform the build pages compare the others with (Figure 5; default: the first platform id)");
  sub->add_option("--templates", opts->templates, "Mustache templates directory")->capture_default_str();
  sub->add_option("--static", opts->static_dir, "Directory with torchgauge.css and torchgauge.js")
      ->capture_default_str();
  sub->add_option("--python", opts->python, "Python with vl-convert-python (env TORCHGAUGE_PYTHON)")
      ->capture_default_str();
  sub->add_flag("--no-svg", *no_svg, "Skip SVG rendering of the figures");
  sub->add_flag("--paper-kit", opts->paper_kit,
                "Also write each rendered build's paper kit as builds/<id>/paper-kit-<id>.zip, linked from its page "
                "(vl-convert renders its PDFs: seconds per build)");
  sub->add_option("--threads", opts->threads, "Threads for loading results (0: all cores)");
  sub->add_option("--max-builds", opts->max_builds,
                  "Retention: keep the pages of the N newest builds only and delete the older builds' builds/<id>/; "
                  "every build still counts in the index, trends, regressions history and model grid");
  sub->add_option("--since", opts->since,
                  "Retention: keep the pages of the builds started on or after DATE (YYYY-MM-DD, UTC) only; "
                  "with --max-builds, a build must pass both. The newest build is always kept");
  auto no_compare = std::make_shared<bool>(false);
  sub->add_flag("--no-compare", *no_compare, "Do not compare each build with the previous one on its platform");
  core::AddCompareOptions(*sub, opts->compare_options, {.prefix = "compare-"});
  sub->callback([&state, opts, builds, no_svg, no_compare] {
    Guard(state, [&] {
      opts->builds = std::set<std::string>(builds->begin(), builds->end());
      opts->svg = !*no_svg;
      opts->compare = !*no_compare;
      auto t0 = std::chrono::steady_clock::now();
      SiteReport r = BuildSite(*opts);
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (const auto& p : r.problems) std::cerr << "warning: skipped " << p.ToString() << "\n";
      for (const auto& k : r.skipped) std::cerr << "warning: not produced: " << k << "\n";
      std::cout << "Rendered " << r.builds_rendered << " build(s) in " << s << " s";
      if (r.builds_unchanged > 0)
        std::cout << " (" << r.builds_unchanged << " unchanged build(s) skipped; --force renders them)";
      if (r.builds_pruned > 0) {
        std::cout << " (" << r.builds_pruned << " build(s) pruned by the retention policy";
        if (r.snapshots_deleted > 0) std::cout << ", " << r.snapshots_deleted << " snapshot(s) deleted now";
        std::cout << ")";
      }
      std::cout << ": " << r.files_written << " files written, " << r.files_unchanged << " unchanged, " << r.figures
                << " figures, " << r.svg_rendered << " SVGs.\n"
                << "Site: " << fs::absolute(r.index).lexically_normal().string() << "\n"
                << "Preview: torchgauge-report serve " << opts->out.string() << "\n";
      // Last, so that the whole site is written before a malformed triage
      // file turns into a failing exit code.
      if (!r.triage_problem.empty()) {
        std::cerr << "torchgauge-report: triage not applied: " << r.triage_problem << "\n";
        state.exit_code = kExitTriageMalformed;
      }
    });
  });
}

void AddValidateCommand(CLI::App& app, CliState& state) {
  auto dir = std::make_shared<fs::path>();
  CLI::App* sub =
      app.add_subcommand("validate", "Check a results tree against the result contract; exit 1 on problems");
  sub->add_option("dir", *dir, "Results tree")->required();
  sub->callback([&state, dir] {
    Guard(state, [&] {
      LoadOptions lo;
      LoadedResults loaded = LoadResults(*dir, lo);
      size_t runs = 0, problems = loaded.problems.size();
      for (const auto& p : loaded.problems) std::cout << p.ToString() << "\n";
      for (const auto& b : loaded.builds) {
        for (const auto& p : b.platforms) runs += p.runs.size();
        for (const auto& p : b.problems) std::cout << p.ToString() << "\n";
        problems += b.problems.size();
      }
      std::cout << loaded.builds.size() << " build(s), " << runs << " valid run result(s), " << problems
                << " problem(s)\n";
      if (problems > 0) state.exit_code = 1;
    });
  });
}

void AddServeCommand(CLI::App& app, CliState& state) {
  auto dir = std::make_shared<fs::path>();
  auto port = std::make_shared<int>(8080);
  CLI::App* sub = app.add_subcommand("serve", "Preview a rendered site on http://127.0.0.1:PORT/");
  sub->add_option("dir", *dir, "Site directory (the --out of build)")->required();
  sub->add_option("--port", *port, "Port (0 picks a free one)")->capture_default_str();
  sub->callback([&state, dir, port] {
    Guard(state, [&] {
      if (!fs::is_directory(*dir)) throw std::runtime_error(dir->string() + ": not a directory");
      Serve(*dir, *port, [&](int p) {
        std::cout << "Serving " << dir->string() << " at http://127.0.0.1:" << p << "/ (Ctrl-C to stop)" << std::endl;
      });
    });
  });
}

// torchgauge-report triage ALERT --results DIR --state S [--owner O] [--note N] [--link URL ...]
// Sets one alert's triage in <results>/triage.json (alerts/triage.h). An
// owner or note not given keeps the one recorded; links are added to those
// recorded. The id is checked for its shape, not against the alerts: the
// site warns about an id that names no alert. The read-modify-write holds
// the file's lock (UpdateTriage), so concurrent commands all land.
void AddTriageCommand(CLI::App& app, CliState& state) {
  struct Args {
    std::string id, state;
    fs::path results;
    std::optional<std::string> owner, note;
    std::vector<std::string> links;
  };
  auto a = std::make_shared<Args>();
  CLI::App* sub =
      app.add_subcommand("triage", "Set an alert's triage state, owner, note and links (results/triage.json)");
  sub->add_option("alert", a->id,
                  "Alert id (A-0123456789ab), or a pipeline health alert's (H-...), as the regressions page lists it")
      ->required();
  sub->add_option("--results", a->results, "Results tree whose triage.json to write")->required();
  std::string states;
  for (TriageState s : kTriageStates) {
    if (SettableTriageState(TriageStateName(s))) states += std::string(states.empty() ? "" : ", ") + TriageStateName(s);
  }
  sub->add_option("--state", a->state, "One of: " + states)->required();
  sub->add_option("--owner", a->owner, "Who looks at it");
  sub->add_option("--note", a->note, "What is known");
  sub->add_option("--link", a->links, "A URL to add (repeatable): the culprit, an issue, a revert");
  sub->callback([&state, a] {
    Guard(state, [&] {
      if (!IsTriageId(a->id))
        throw std::runtime_error("'" + a->id + "' is not an alert id (A- or H- and 12 hex digits)");
      const auto s = SettableTriageState(a->state);
      if (!s)
        throw std::runtime_error("--state '" + a->state +
                                 "': not a state that can be set (recovered is set by the reporter)");
      if (!fs::is_directory(a->results)) throw std::runtime_error(a->results.string() + ": not a directory");
      const fs::path file = TriagePath(a->results);
      const TriageEntry e = UpdateTriage(file, a->id, [&](TriageEntry& x) {
        x.state = *s;
        if (a->owner) x.owner = *a->owner;
        if (a->note) x.note = *a->note;
        for (const auto& l : a->links) {
          if (std::find(x.links.begin(), x.links.end(), l) == x.links.end()) x.links.push_back(l);
        }
        x.updated_at = core::NowUtc();
      });
      std::cout << a->id << ": " << TriageStateName(e.state) << " (" << file.string() << ")\n";
    });
  });
}

// torchgauge-report track --results DIR --site DIR --out DIR [--repo OWNER/NAME] [--build ID]
//   [--platform P ...] [--site-url URL] [--record] [--fail-on-health BUILD] [--fail-on-regression BUILD]
// The nightly's comment on each platform's tracking issue (alerts/tracking.h):
// reads the rendered site's alerts.json and <results>/tracking.json, writes
// <out>/<platform>.md for every platform with alerts that are new or changed,
// and <out>/gh-commands.sh, the gh commands that post them. --record marks
// them posted in tracking.json (after the commands ran). --fail-on-health
// exits 4 when a health alert names that build and is not acknowledged
// (its triage state untriaged or investigating). --fail-on-regression exits
// 1 (before 4) when a regression alert was raised in that build's night
// (alerts.json's raised_in) and is untriaged or investigating, and lists
// them in <out>/raised.md: the nightly's verdict is the alerts' (issue 60).
void AddTrackCommand(CLI::App& app, CliState& state) {
  struct Args {
    fs::path results, site, out;
    std::string repo, build, site_url, health_build, regression_build;
    std::vector<std::string> platforms;
    bool record = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand(
      "track",
      "Write tonight's comment for each platform's tracking issue (new and changed alerts) and its gh commands");
  sub->add_option("--results", a->results, "Results tree (its tracking.json says what was posted)")->required();
  sub->add_option("--site", a->site, "Rendered site (its alerts.json)")->required();
  sub->add_option("--out", a->out, "Folder for <platform>.md and gh-commands.sh")->required();
  sub->add_option("--repo", a->repo, "GitHub repository OWNER/NAME (default: $TORCHGAUGE_TRACKING_REPO when run)");
  sub->add_option("--build", a->build, "The night's build id, for the comment's heading");
  sub->add_option("--platform", a->platforms, "Only these platforms (repeatable)");
  sub->add_option("--site-url", a->site_url, "Public URL of the site, for absolute links");
  sub->add_flag("--record", a->record, "Mark the comments posted in tracking.json (run after gh-commands.sh)");
  sub->add_option("--fail-on-health", a->health_build,
                  "Exit 4 when a pipeline health alert that is untriaged or investigating names this build");
  sub->add_option("--fail-on-regression", a->regression_build,
                  "Exit 1 when a regression alert raised in this build's night is untriaged or investigating");
  sub->callback([&state, a] {
    Guard(state, [&] {
      if (!fs::is_directory(a->results)) throw std::runtime_error(a->results.string() + ": not a directory");
      const nlohmann::json alerts = core::ReadAlertsFile(a->site / SitePath({Kind::kAlertsData, "", "", ""}));
      if (a->site_url.empty())
        std::cerr << "warning: no --site-url: the comments cannot link the alerts' pages (a link relative to the "
                     "site is broken on GitHub), so they name them unlinked\n";
      const fs::path ledger_file = TrackingPath(a->results);
      TrackingLedger ledger = ReadTracking(ledger_file);
      const auto comments = ComposeTrackingComments(alerts, ledger, a->site_url, a->build, a->platforms);
      fs::create_directories(a->out);
      for (const auto& c : comments) {
        if (c.markdown.empty()) {
          std::cout << c.platform << ": nothing new or changed\n";
          continue;
        }
        core::WriteFileAtomic(a->out / (c.platform + ".md"), c.markdown);
        std::cout << c.platform << ": " << c.fresh << " new, " << c.changed << " changed, " << c.health
                  << " health alert(s) -> " << (a->out / (c.platform + ".md")).string() << "\n";
      }
      core::WriteFileAtomic(a->out / "gh-commands.sh", GhCommands(comments, a->repo, a->out));
      std::cout << "gh commands: " << (a->out / "gh-commands.sh").string() << "\n";
      if (a->record) {
        const std::string now = core::NowUtc();
        for (const auto& c : comments) RecordPosted(ledger, c, now);
        WriteTracking(ledger_file, ledger);
        std::cout << "recorded as posted in " << ledger_file.string() << "\n";
      }
      if (!a->health_build.empty()) {
        int n = 0;
        for (const auto& h : alerts["health"]) n += h["build"] == a->health_build && HealthOpen(h);
        if (n > 0) {
          std::cout << n << " pipeline health alert(s) in build " << a->health_build << "\n";
          state.exit_code = 4;
        }
      }
      if (!a->regression_build.empty()) {
        const std::string raised = RaisedRegressions(alerts, a->regression_build, a->site_url);
        core::WriteFileAtomic(a->out / "raised.md", raised);
        if (!raised.empty()) {
          std::cout << "regression alert(s) raised in build " << a->regression_build << ": "
                    << (a->out / "raised.md").string() << "\n";
          state.exit_code = 1;
        }
      }
    });
  });
}

// torchgauge-report export-v3 --results DIR [--build ID ...] --out FILE
//   [--repo R] [--head-branch B] [--head-sha S] [--workflow-id N] [--run-attempt N] [--job-id N]
// Every ok run of the builds as PyTorch OSS benchmark database v3 records
// (results/v3_export.h), one JSON array, written atomically. The change and
// the job come from the options, then GitHub Actions' environment; what
// neither gives is left to the uploader's --metadata.
void AddV3ContextOptions(CLI::App* sub, V3Context& ctx) {
  const auto positive = CLI::Range(uint64_t{1}, std::numeric_limits<uint64_t>::max());
  sub->add_option("--repo", ctx.repo, "Repository of the change under test (owner/name)");
  sub->add_option("--head-branch", ctx.head_branch, "Branch of the change under test");
  sub->add_option("--head-sha", ctx.head_sha, "Commit under test (default: the torch build's commit)");
  sub->add_option("--workflow-id", ctx.workflow_id, "CI workflow run id (default: $GITHUB_RUN_ID)")->check(positive);
  sub->add_option("--run-attempt", ctx.run_attempt, "CI run attempt (default: $GITHUB_RUN_ATTEMPT)")->check(positive);
  sub->add_option("--job-id", ctx.job_id, "CI job id (GitHub Actions has it in no variable)")->check(positive);
}

void AddExportV3Command(CLI::App& app, CliState& state) {
  auto results = std::make_shared<fs::path>();
  auto out = std::make_shared<fs::path>();
  auto builds = std::make_shared<std::vector<std::string>>();
  auto ctx = std::make_shared<V3Context>();
  CLI::App* sub = app.add_subcommand(
      "export-v3", "Write results as PyTorch OSS benchmark database v3 records (JSON array) for the HUD");
  sub->add_option("--results", *results, "Results tree")->required();
  sub->add_option("--build", *builds, "Only these builds (repeatable; default: every build)");
  sub->add_option("--out", *out, "JSON file to write")->required();
  AddV3ContextOptions(sub, *ctx);
  sub->callback([&state, results, out, builds, ctx] {
    Guard(state, [&] {
      const V3Context full = WithCiEnvironment(*ctx, [](const char* k) { return std::getenv(k); });
      LoadOptions lo;
      lo.only_builds = std::set<std::string>(builds->begin(), builds->end());
      const LoadedResults loaded = LoadResults(*results, lo);
      for (const auto& b : *builds) {
        if (std::none_of(loaded.builds.begin(), loaded.builds.end(), [&](const BuildResults& x) { return x.id == b; }))
          throw std::runtime_error("--build '" + b + "': no such build under " + results->string());
      }
      nlohmann::json all = nlohmann::json::array();
      for (const auto& b : loaded.builds) {
        for (auto& r : V3Records(b, full)) all.push_back(std::move(r));
      }
      core::WriteJsonAtomic(*out, all);
      std::cout << all.size() << " v3 record(s) from " << loaded.builds.size() << " build(s) written to "
                << out->string() << "\n";
    });
  });
}

std::unique_ptr<CLI::App> MakeApp(CliState& state) {
  auto app = std::make_unique<CLI::App>(
      "torchgauge-report: TorchGauge results -> static site with the paper's figures and tables", "torchgauge-report");
  app->require_subcommand(1);
  app->set_version_flag("--version", std::string(core::Version()) + " (" + core::GitSha() + ")");
  AddBuildCommand(*app, state);
  AddValidateCommand(*app, state);
  AddServeCommand(*app, state);
  AddTriageCommand(*app, state);
  AddExportV3Command(*app, state);
  AddTrackCommand(*app, state);
  AddCompareCommand(*app);
  AddRatioCommand(*app);
  AddPaperCommand(*app);
  return app;
}

int RunCli(int argc, char** argv) {
  CliState state;
  auto app = MakeApp(state);
  try {
    app->parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    // `compare` reports its verdict (0 none, 1 regression, 2 bad input) this way.
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    int rc = app->exit(e);
    return rc == 0 ? 0 : 2;
  }
  return state.exit_code;
}

}  // namespace torchgauge::reporter
