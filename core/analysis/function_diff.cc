#include "core/analysis/function_diff.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace torchgauge::core {

namespace {

// The whole file, inflated where it is gzip (zlib reads plain files as they are).
std::string ReadMaybeGzip(const std::filesystem::path& file) {
  gzFile in = gzopen(file.c_str(), "rb");
  if (!in) throw std::runtime_error(file.string() + ": cannot read the Callgrind profile");
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(in, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  const bool failed = n < 0;
  gzclose(in);
  if (failed) throw std::runtime_error(file.string() + ": the Callgrind profile is corrupt");
  return out;
}

// Callgrind names code it found no symbol for by its address, in object "???".
bool IsJit(const std::string& object, const std::string& function) {
  return object == "???" && function.rfind("0x", 0) == 0;
}

// Folds JIT code into one entry, keyed as the diff reports it.
std::map<std::string, int64_t> Grouped(const FunctionCosts& costs) {
  std::map<std::string, int64_t> out;
  for (const auto& [key, ir] : costs) {
    const auto tab = key.find('\t');
    const std::string object = key.substr(0, tab), function = key.substr(tab + 1);
    out[IsJit(object, function) ? std::string("\t") + kJitCode : key] += ir;
  }
  return out;
}

}  // namespace

FunctionCosts ReadProfile(const std::filesystem::path& file) {
  std::istringstream in(ReadMaybeGzip(file));
  try {
    return ReadCallgrindFunctions(in);
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

FunctionDiff DiffFunctions(const FunctionCosts& base, const FunctionCosts& now, double cover, std::size_t max_rows) {
  const auto a = Grouped(base), b = Grouped(now);
  std::map<std::string, FunctionShift> shifts;
  FunctionDiff d;
  for (const auto& [key, ir] : a) {
    shifts[key].base = ir;
    d.base_total += ir;
  }
  for (const auto& [key, ir] : b) {
    shifts[key].now = ir;
    d.new_total += ir;
  }
  const int64_t total = d.new_total - d.base_total;
  if (total == 0) return d;
  std::vector<FunctionShift> moving;
  for (auto& [key, s] : shifts) {
    s.delta = s.now - s.base;
    if ((s.delta > 0) != (total > 0) || s.delta == 0) continue;
    const auto tab = key.find('\t');
    s.object = key.substr(0, tab);
    s.function = key.substr(tab + 1);
    s.share = static_cast<double>(s.delta) / static_cast<double>(total);
    moving.push_back(s);
  }
  std::sort(moving.begin(), moving.end(), [](const FunctionShift& x, const FunctionShift& y) {
    return std::llabs(x.delta) != std::llabs(y.delta) ? std::llabs(x.delta) > std::llabs(y.delta)
                                                      : x.function < y.function;
  });
  for (const auto& s : moving) {
    if (d.covered >= cover || d.top.size() >= max_rows) break;
    d.top.push_back(s);
    d.covered += s.share;
  }
  return d;
}

nlohmann::json ToJson(const FunctionDiff& d) {
  nlohmann::json top = nlohmann::json::array();
  for (const auto& s : d.top) {
    top.push_back({{"object", s.object},
                   {"function", s.function},
                   {"base", s.base},
                   {"new", s.now},
                   {"delta", s.delta},
                   {"share", s.share}});
  }
  return {{"base_total", d.base_total}, {"new_total", d.new_total}, {"covered", d.covered}, {"top", top}};
}

}  // namespace torchgauge::core
