// Quoting for /bin/sh: the one place commands that reach a shell (bisection
// steps, the vl-convert helper, parity reference scripts) quote arguments;
// and the one helper that runs a command and captures what it prints.
#pragma once

#include <string>

namespace torchgauge::core {

// Wraps `s` in single quotes, writing each ' as '\'' so the shell reads the
// bytes back unchanged whatever they contain.
std::string ShellQuote(const std::string& s);

struct CommandOutput {
  int exit_code = -1;  // -1: the command could not start or did not exit normally
  std::string output;  // stdout, and stderr too with merge_stderr
};
// Runs `command` through /bin/sh and waits for it.
CommandOutput RunCapture(const std::string& command, bool merge_stderr = false);

}  // namespace torchgauge::core
