#include "core/stats/intervals.h"

#include <algorithm>

namespace torchgauge::core {

std::vector<Interval> UnionClipped(std::vector<Interval> intervals, int64_t lo, int64_t hi) {
  std::vector<Interval> clipped;
  for (auto iv : intervals) {
    iv.start = std::max(iv.start, lo);
    iv.end = std::min(iv.end, hi);
    if (iv.end > iv.start) clipped.push_back(iv);
  }
  std::sort(clipped.begin(), clipped.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const auto& iv : clipped) {
    if (!out.empty() && iv.start <= out.back().end) {
      out.back().end = std::max(out.back().end, iv.end);
    } else {
      out.push_back(iv);
    }
  }
  return out;
}

int64_t TotalLength(const std::vector<Interval>& set) {
  int64_t total = 0;
  for (const auto& iv : set) total += iv.end - iv.start;
  return total;
}

int64_t LengthNotCovered(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  int64_t covered = 0;
  size_t j = 0;
  for (const auto& x : a) {
    while (j < b.size() && b[j].end <= x.start) ++j;
    for (size_t k = j; k < b.size() && b[k].start < x.end; ++k) {
      covered += std::min(x.end, b[k].end) - std::max(x.start, b[k].start);
    }
  }
  return TotalLength(a) - covered;
}

}  // namespace torchgauge::core
