// The torchgauge-report command line (CLI11). Each subcommand is added by one
// function, so another component adds its own (e.g. compare) with one call in
// MakeApp. Errors travel here as exceptions and leave as a message and an
// exit code: 0 ok, 1 problems found (validate, --strict), 2 usage or I/O error,
// 5 (`build`) the site was written but <results>/triage.json is malformed.
#pragma once

#include <memory>

#include <CLI/CLI.hpp>

namespace torchgauge::reporter {

struct CliState {
  int exit_code = 0;
};

void AddBuildCommand(CLI::App& app, CliState& state);
void AddValidateCommand(CLI::App& app, CliState& state);
void AddServeCommand(CLI::App& app, CliState& state);
void AddTriageCommand(CLI::App& app, CliState& state);
void AddExportV3Command(CLI::App& app, CliState& state);
void AddTrackCommand(CLI::App& app, CliState& state);

// The whole command line with every subcommand registered.
std::unique_ptr<CLI::App> MakeApp(CliState& state);
int RunCli(int argc, char** argv);

}  // namespace torchgauge::reporter
