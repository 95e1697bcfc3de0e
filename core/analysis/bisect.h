// Binary search for the first bad revision in an ordered candidate list,
// as the paper's CI narrowed a bad nightly to one commit. The search knows
// nothing about building or measuring: a judge callback says whether a
// revision is good or bad (or cannot be tested). The collector's
// `torchgauge-collect bisect` supplies a judge that runs the user's command
// and compares against the good endpoint with core/analysis/compare.h's rules.
//
// Contract: `candidates` are the revisions after the known-good one, oldest
// first, ending with the known-bad one (git rev-list --reverse good..bad).
// The last candidate is assumed bad and is not judged (verify_bad judges
// it first). Then at most ceil(log2 N) judgements find the first bad one.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace torchgauge::core {

enum class BisectVerdict { kGood, kBad, kSkip };  // skip: the revision cannot be tested
const char* BisectVerdictName(BisectVerdict v);

struct BisectStep {
  int step = 0;           // 1-based
  std::size_t index = 0;  // into candidates
  std::string revision;
  BisectVerdict verdict = BisectVerdict::kGood;
  std::size_t lo = 0, hi = 0;  // the range [lo, hi] still holding the first bad one, after this step
};

struct BisectResult {
  std::optional<std::size_t> first_bad_index;
  std::string first_bad;
  int steps = 0;  // judge calls
  std::vector<BisectStep> log;
  std::vector<std::string>
      skipped_before;   // untestable revisions just before first_bad: the culprit may be one of them
  std::string message;  // one human sentence
};

struct BisectOptions {
  bool verify_bad = false;  // judge the last candidate too (fails the search if it is good)
};

using BisectJudge = std::function<BisectVerdict(const std::string& revision, std::size_t index)>;

// Throws std::invalid_argument when candidates is empty.
BisectResult Bisect(const std::vector<std::string>& candidates, const BisectJudge& judge,
                    const BisectOptions& options = {});

// The last revision before the culprit that was judged good: the newest
// candidate before first_bad with a good verdict in the log, else `good` (the
// known-good endpoint, measured as the baseline). Never a revision that was
// skipped or not measured: with r01-r04 skipped and r05 bad, it is `good`.
std::string LastJudgedGood(const BisectResult& result, const std::string& good);

// Replaces every "{rev}" in `command_template` by the revision, single-quoted
// for POSIX sh so that no revision can inject shell syntax.
std::string FormatRevCommand(const std::string& command_template, const std::string& revision);

// A readable multi-line log of the search (one line per step, then the result).
std::string FormatBisectLog(const BisectResult& result);

}  // namespace torchgauge::core
