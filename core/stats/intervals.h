// Interval arithmetic on profiler timelines (nanoseconds), shared by the GPU
// breakdown (device activities) and the host breakdown (CPU operator events).
#pragma once

#include <cstdint>
#include <vector>

namespace torchgauge::core {

struct Interval {
  int64_t start = 0, end = 0;
};

// Sorted, disjoint union of intervals clipped to [lo, hi].
std::vector<Interval> UnionClipped(std::vector<Interval> intervals, int64_t lo, int64_t hi);
// Total length of a sorted disjoint set.
int64_t TotalLength(const std::vector<Interval>& set);
// Length of `a` not covered by `b` (both sorted and disjoint).
int64_t LengthNotCovered(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace torchgauge::core
