#include "core/analysis/bisect.h"

#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "core/io/shell.h"

namespace torchgauge::core {

const char* BisectVerdictName(BisectVerdict v) {
  switch (v) {
    case BisectVerdict::kGood:
      return "good";
    case BisectVerdict::kBad:
      return "bad";
    case BisectVerdict::kSkip:
      return "skip";
  }
  return "?";
}

BisectResult Bisect(const std::vector<std::string>& candidates, const BisectJudge& judge,
                    const BisectOptions& options) {
  if (candidates.empty()) throw std::invalid_argument("bisect needs at least one candidate revision");
  BisectResult r;
  std::vector<bool> skipped(candidates.size(), false);
  // Invariant: the first bad revision lies in [lo, hi] and hi is bad.
  std::size_t lo = 0, hi = candidates.size() - 1;
  auto ask = [&](std::size_t i) {
    BisectVerdict v = judge(candidates[i], i);
    ++r.steps;
    return v;
  };
  if (options.verify_bad) {
    BisectVerdict v = ask(hi);
    r.log.push_back({r.steps, hi, candidates[hi], v, lo, hi});
    if (v != BisectVerdict::kBad) {
      r.message = "the bad endpoint " + candidates[hi] + " was judged " + BisectVerdictName(v) + ": nothing to bisect";
      return r;
    }
  }
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    // Skipped revisions are stepped over: try the nearest untested one in [lo, hi).
    std::optional<std::size_t> pick;
    for (std::size_t d = 0; d <= hi - lo && !pick; ++d) {
      if (mid >= lo + d && mid - d < hi && !skipped[mid - d])
        pick = mid - d;
      else if (mid + d < hi && !skipped[mid + d])
        pick = mid + d;
    }
    if (!pick) break;  // everything left before hi is untestable
    const std::size_t i = *pick;
    const BisectVerdict v = ask(i);
    if (v == BisectVerdict::kBad) {
      hi = i;
    } else if (v == BisectVerdict::kGood) {
      lo = i + 1;
    } else {
      skipped[i] = true;
    }
    r.log.push_back({r.steps, i, candidates[i], v, lo, hi});
  }
  r.first_bad_index = hi;
  r.first_bad = candidates[hi];
  for (std::size_t i = hi; i-- > lo && skipped[i];) r.skipped_before.insert(r.skipped_before.begin(), candidates[i]);
  std::ostringstream msg;
  msg << "first bad revision: " << r.first_bad << " (candidate " << hi + 1 << " of " << candidates.size() << ", "
      << r.steps << " step" << (r.steps == 1 ? "" : "s") << ")";
  if (!r.skipped_before.empty()) {
    msg << "; the culprit may also be one of the untestable revisions just before it:";
    for (const auto& s : r.skipped_before) msg << ' ' << s;
  }
  r.message = msg.str();
  return r;
}

std::string LastJudgedGood(const BisectResult& result, const std::string& good) {
  const std::size_t end = result.first_bad_index.value_or(SIZE_MAX);
  std::optional<std::size_t> best;
  std::string out = good;
  for (const auto& s : result.log) {
    if (s.verdict != BisectVerdict::kGood || s.index >= end || (best && s.index < *best)) continue;
    best = s.index;
    out = s.revision;
  }
  return out;
}

std::string FormatRevCommand(const std::string& command_template, const std::string& revision) {
  const std::string quoted = ShellQuote(revision);
  std::string out;
  const std::string token = "{rev}";
  std::size_t pos = 0;
  while (true) {
    const std::size_t at = command_template.find(token, pos);
    if (at == std::string::npos) break;
    out.append(command_template, pos, at - pos);
    out += quoted;
    pos = at + token.size();
  }
  out.append(command_template, pos, std::string::npos);
  return out;
}

std::string FormatBisectLog(const BisectResult& result) {
  std::ostringstream out;
  for (const auto& s : result.log) {
    out << "step " << s.step << ": " << s.revision << " (candidate " << s.index + 1 << ") is "
        << BisectVerdictName(s.verdict) << "; first bad now in candidates " << s.lo + 1 << ".." << s.hi + 1 << "\n";
  }
  out << result.message << "\n";
  return out.str();
}

}  // namespace torchgauge::core
