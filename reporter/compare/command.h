// `torchgauge-report compare`: compares a new build with a baseline
// (core/analysis/compare.h) and writes the Markdown / JSON / HTML reports
// (reporter/compare/report.h). Exit codes for CI: 0 nothing regressed,
// 1 a confirmed regression or a run that stopped working, 2 bad input,
// 3 no regression but it cannot say that nothing regressed (inconclusive or
// cannot tell: the JSON's "outcome").
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/compare.h"

namespace CLI {
class App;
}

namespace torchgauge::reporter {

inline constexpr int kCompareOk = 0;
inline constexpr int kCompareRegressed = 1;
inline constexpr int kCompareBadInput = 2;
// No regression, but too many runs were noisy to say so (Comparison::Inconclusive),
// or their counts cannot reach alpha (Comparison::CannotTell). One code for
// both, since 4 is the nightly's pipeline health alert; the JSON's "outcome"
// (inconclusive | cannot_tell) tells them apart.
inline constexpr int kCompareInconclusive = 3;

struct CompareCommandOptions {
  std::string results = "results";
  std::optional<std::string> base;
  std::string new_build;
  std::optional<std::string> platform;
  core::CompareOptions compare;  // threshold, rules, alpha, window, persist
  std::string site_url;
  std::string markdown, json, html;  // output files; empty: not written
};

// Runs the comparison and writes the reports. Prints the title (and the
// Markdown when no output file is given) to `out`, errors to `err`.
// Returns the exit code.
int RunCompareCommand(const CompareCommandOptions& options, std::ostream& out, std::ostream& err);

// Adds the `compare` subcommand. Its callback throws CLI::RuntimeError with
// the exit code when it is not 0, so main's usual
// `catch (const CLI::ParseError& e) { return app.exit(e); }` returns it.
void AddCompareCommand(CLI::App& app);

}  // namespace torchgauge::reporter
