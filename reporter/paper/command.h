// `torchgauge-report paper`: writes one build's paper kit (paper/kit.h) and
// says what it wrote, what it left out and why, and which PDFs it could not
// render. Exit codes as the other subcommands: 0 ok, 2 bad input (no such
// build or platform, a bad --width) or an output that cannot be written.
#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace torchgauge::reporter {

struct PaperKitOptions;

inline constexpr int kPaperOk = 0;
inline constexpr int kPaperBadInput = 2;

int RunPaperCommand(const PaperKitOptions& options, std::ostream& out, std::ostream& err);

// Adds the `paper` subcommand. Its callback throws CLI::RuntimeError with
// the exit code when it is not 0, as `compare` and `ratio` do.
void AddPaperCommand(CLI::App& app);

}  // namespace torchgauge::reporter
