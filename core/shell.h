// Quoting for /bin/sh: the one place commands that reach a shell (bisection
// steps, the vl-convert helper, parity reference scripts) quote arguments.
#pragma once

#include <string>

namespace torchgauge::core {

// Wraps `s` in single quotes, writing each ' as '\'' so the shell reads the
// bytes back unchanged whatever they contain.
std::string ShellQuote(const std::string& s);

}  // namespace torchgauge::core
