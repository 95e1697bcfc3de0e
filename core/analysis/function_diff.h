// The functions that moved: for a counted change between two builds, the
// per-function difference of their runs' Callgrind profiles (the median
// step's, core/stats/counted.h), and the functions that account for most of
// the change. Code that a JIT generated at run time (oneDNN's kernels) has
// no symbols: Callgrind names it by address in no object ("???"), and it is
// grouped into one row, so that a reader sees how much of a change it is.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/stats/counted.h"

namespace torchgauge::core {

inline constexpr const char* kJitCode = "JIT-generated code (no symbols)";

struct FunctionShift {
  std::string object;    // the shared library's file name; "" for JIT code
  std::string function;  // demangled, as Callgrind names it; kJitCode for JIT code
  int64_t base = 0, now = 0;
  int64_t delta = 0;  // now - base (instructions)
  double share = 0;   // delta / the profiles' total change
};

struct FunctionDiff {
  int64_t base_total = 0, new_total = 0;
  // The functions moving in the change's direction, largest first, until
  // they account for `cover` of the total change (at most `max_rows`).
  std::vector<FunctionShift> top;
  double covered = 0;  // the share of the change that `top` accounts for
};

// Self cost per function of a profile file, gzip or plain. Throws
// std::runtime_error naming the file when it cannot be read.
FunctionCosts ReadProfile(const std::filesystem::path& file);

FunctionDiff DiffFunctions(const FunctionCosts& base, const FunctionCosts& now, double cover = 0.8,
                           std::size_t max_rows = 12);

nlohmann::json ToJson(const FunctionDiff& d);

}  // namespace torchgauge::core
