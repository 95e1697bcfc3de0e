// `torchgauge-report ratio`: two platforms of one build compared, for an
// issue (the build page's Figure 5 section as a standalone table). The
// computation is results/platform_ratio.h's, the same as the page's. Exit codes as
// the other subcommands: 0 ok, 2 bad input (no such build or platform, an
// unreadable tree) or an output that cannot be written.
#pragma once

#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace torchgauge::reporter {

struct PlatformRatios;

inline constexpr int kRatioOk = 0;
inline constexpr int kRatioBadInput = 2;

struct RatioCommandOptions {
  std::string results = "results";
  std::string build;
  std::string a, b;      // reference and compared platform: the ratio is b / a
  std::string markdown;  // output file; empty: Markdown to `out` (unless json)
  bool json = false;     // the comparison as JSON on `out`
};

// The Markdown table (GitHub-flavoured; every value escaped).
std::string RenderRatioMarkdown(const PlatformRatios& r, const std::string& build);

// Loads the build, compares the platforms and writes the outputs. Prints
// the Markdown (or, with --markdown, its title; with --json, the JSON) to
// `out`, errors to `err`. Returns the exit code.
int RunRatioCommand(const RatioCommandOptions& options, std::ostream& out, std::ostream& err);

// Adds the `ratio` subcommand. Its callback throws CLI::RuntimeError with
// the exit code when it is not 0, as `compare` does.
void AddRatioCommand(CLI::App& app);

}  // namespace torchgauge::reporter
