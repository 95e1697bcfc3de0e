// The torchgauge-collect command line (CLI11), shaped like the reporter's
// (reporter/site/cli.h): each subcommand is added by one function that binds its
// options and sets a callback; main only calls RunCli. Errors travel here as
// exceptions and leave as "error: ..." and exit code 2; `run` returns 130
// when interrupted, `bisect` 1 when no bad revision was found.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace torchgauge::collector {

struct CliState {
  int exit_code = 0;
  std::vector<std::string> argv;  // the command line after the program name, for the manifest
};

void AddListCommand(CLI::App& app, CliState& state);
void AddEnvCommand(CLI::App& app, CliState& state);
void AddRunCommand(CLI::App& app, CliState& state);  // collector/run_command.cc
void AddCoverageCommand(CLI::App& app, CliState& state);
void AddProbeCommand(CLI::App& app, CliState& state);  // collector/platform/probe.h does the measuring
void AddBisectCommand(CLI::App& app, CliState& state);
void AddWorkerCommand(CLI::App& app, CliState& state);

// The whole command line with every subcommand registered.
std::unique_ptr<CLI::App> MakeApp(CliState& state);
int RunCli(int argc, char** argv);

// Helpers for the subcommands' option declarations and callbacks.
CLI::IsMember Choices(std::span<const char* const> names);  // one of core's name lists
CLI::IsMember DeviceChoices();                              // auto | cpu | cuda
// "auto" becomes cuda when LibTorch sees a device, else cpu.
std::string ResolveDevice(const std::string& requested);
// Runs a subcommand body; an exception becomes "error: ..." and exit code 2.
void Guard(CliState& state, const std::function<int()>& body);

}  // namespace torchgauge::collector
