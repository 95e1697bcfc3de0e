#include "core/stats/counted.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/io/json_fields.h"
#include "core/stats/stats.h"

namespace torchgauge::core {

using nlohmann::json;

CountedStep StepFromEvents(const std::map<std::string, int64_t>& events) {
  auto get = [&](const char* name) {
    auto it = events.find(name);
    if (it == events.end()) {
      throw std::invalid_argument(std::string("Callgrind event ") + name +
                                  " missing (the counted measurement needs --cache-sim=yes)");
    }
    return it->second;
  };
  CountedStep s;
  s.instructions = get("Ir");
  s.data_reads = get("Dr");
  s.data_writes = get("Dw");
  s.l1_misses = get("I1mr") + get("D1mr") + get("D1mw");
  s.ll_misses = get("ILmr") + get("DLmr") + get("DLmw");
  const int64_t accesses = s.instructions + s.data_reads + s.data_writes;
  s.est_cycles = (accesses - s.l1_misses) + 5 * (s.l1_misses - s.ll_misses) + 35 * s.ll_misses;
  return s;
}

namespace {

std::vector<std::string> Words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

std::map<std::string, int64_t> ReadCallgrindTotals(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": cannot read the Callgrind output");
  std::vector<std::string> events, totals, summary;
  for (std::string line; std::getline(in, line);) {
    if (StartsWith(line, "events:")) events = Words(line.substr(7));
    if (StartsWith(line, "totals:")) totals = Words(line.substr(7));
    if (StartsWith(line, "summary:")) summary = Words(line.substr(8));
  }
  const std::vector<std::string>& values = totals.empty() ? summary : totals;
  if (events.empty() || values.empty()) {
    throw std::runtime_error(file.string() + ": no \"events:\" and \"totals:\" lines (not a Callgrind output?)");
  }
  std::map<std::string, int64_t> out;
  // Callgrind leaves out trailing zero counts.
  for (size_t i = 0; i < events.size(); ++i) out[events[i]] = i < values.size() ? std::stoll(values[i]) : 0;
  return out;
}

namespace {

// Callgrind's name compression: "(12) name" defines id 12, "(12)" refers to it.
class NameTable {
 public:
  std::string Resolve(const std::string& spec) {
    if (spec.empty() || spec[0] != '(') return spec;
    const auto close = spec.find(')');
    if (close == std::string::npos) return spec;
    const std::string id = spec.substr(1, close - 1);
    if (close + 1 < spec.size()) {
      names_[id] = spec.substr(spec.find_first_not_of(' ', close + 1));
      return names_[id];
    }
    auto it = names_.find(id);
    return it == names_.end() ? spec : it->second;
  }

 private:
  std::map<std::string, std::string> names_;
};

std::string BaseName(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool IsCostLine(const std::string& line) {
  return !line.empty() &&
         (std::isdigit(static_cast<unsigned char>(line[0])) || line[0] == '+' || line[0] == '-' || line[0] == '*');
}

}  // namespace

FunctionCosts ReadCallgrindFunctions(std::istream& in, const std::string& event) {
  FunctionCosts out;
  NameTable objects, functions;
  std::string object = "???", function;
  size_t positions = 1, column = std::string::npos;
  bool after_calls = false;  // the next cost line is a call's inclusive cost
  for (std::string line; std::getline(in, line);) {
    if (IsCostLine(line)) {
      if (after_calls) {
        after_calls = false;
        continue;
      }
      if (column == std::string::npos || function.empty()) continue;
      const auto words = Words(line);
      if (positions + column < words.size()) out[object + "\t" + function] += std::stoll(words[positions + column]);
    } else if (StartsWith(line, "positions:")) {
      positions = Words(line.substr(10)).size();
    } else if (StartsWith(line, "events:")) {
      const auto names = Words(line.substr(7));
      const auto it = std::find(names.begin(), names.end(), event);
      if (it == names.end()) throw std::invalid_argument("Callgrind profile has no event " + event);
      column = static_cast<size_t>(it - names.begin());
    } else if (StartsWith(line, "ob=")) {
      object = BaseName(objects.Resolve(line.substr(3)));
    } else if (StartsWith(line, "cob=")) {
      objects.Resolve(line.substr(4));  // defines a name only
    } else if (StartsWith(line, "fn=")) {
      function = functions.Resolve(line.substr(3));
    } else if (StartsWith(line, "cfn=") || StartsWith(line, "cfi=") || StartsWith(line, "cfl=")) {
      if (line[2] == 'n') functions.Resolve(line.substr(4));
    } else if (StartsWith(line, "calls=")) {
      after_calls = true;
    }
  }
  return out;
}

// ---------------------------------------------------------------- the result's "counted"

std::vector<double> CountedInstructions(const Counted& c) {
  std::vector<double> out;
  for (const auto& s : c.steps) out.push_back(static_cast<double>(s.instructions));
  return out;
}

std::vector<double> CountedCycles(const Counted& c) {
  std::vector<double> out;
  for (const auto& s : c.steps) out.push_back(static_cast<double>(s.est_cycles));
  return out;
}

json ToJson(const Counted& c) {
  json steps = json::array();
  for (const auto& s : c.steps) {
    steps.push_back({{"instructions", s.instructions},
                     {"data_reads", s.data_reads},
                     {"data_writes", s.data_writes},
                     {"l1_misses", s.l1_misses},
                     {"ll_misses", s.ll_misses},
                     {"est_cycles", s.est_cycles}});
  }
  json j = {{"tool", c.tool},
            {"valgrind_version", c.valgrind_version},
            {"options", c.options},
            {"cache_model", c.cache_model},
            {"cycles_formula", c.cycles_formula},
            {"cpu_capability", c.cpu_capability},
            {"steps", steps},
            {"profile_file", c.profile_file ? json(*c.profile_file) : json(nullptr)}};
  if (!c.process_median_instructions.empty()) {
    j["process_median_instructions"] = c.process_median_instructions;
    j["process_median_est_cycles"] = c.process_median_est_cycles;
  }
  return j;
}

Counted CountedFromJson(const json& j, const std::filesystem::path& file) {
  const JsonFields in(j, file, "counted");
  Counted c;
  c.tool = in.Get<std::string>("tool");
  c.valgrind_version = in.Get<std::string>("valgrind_version");
  c.options = in.Get<std::vector<std::string>>("options");
  c.cache_model = in.Get<std::string>("cache_model");
  c.cycles_formula = in.Get<std::string>("cycles_formula");
  c.cpu_capability = in.Get<std::string>("cpu_capability");
  for (const JsonFields& s : in.Objects("steps")) {
    CountedStep step;
    step.instructions = s.AtLeast<int64_t>("instructions", 0);
    step.data_reads = s.AtLeast<int64_t>("data_reads", 0);
    step.data_writes = s.AtLeast<int64_t>("data_writes", 0);
    step.l1_misses = s.AtLeast<int64_t>("l1_misses", 0);
    step.ll_misses = s.AtLeast<int64_t>("ll_misses", 0);
    step.est_cycles = s.AtLeast<int64_t>("est_cycles", 0);
    c.steps.push_back(step);
  }
  if (c.steps.empty()) in.Fail("steps", "must hold at least one counted step");
  if (in.Has("process_median_instructions")) {
    c.process_median_instructions = in.EachAtLeast("process_median_instructions", 0.0);
    c.process_median_est_cycles = in.EachAtLeast("process_median_est_cycles", 0.0);
    if (c.process_median_instructions.size() < 2 ||
        c.process_median_instructions.size() != c.process_median_est_cycles.size()) {
      in.Fail("process_median_instructions", "must hold one median per process (at least two), as the cycles do");
    }
  }
  c.profile_file = in.GetOpt<std::string>("profile_file");
  return c;
}

Counted PoolCounted(const std::vector<Counted>& processes) {
  if (processes.empty()) throw std::invalid_argument("PoolCounted: no process counts");
  Counted out = processes.front();
  if (processes.size() == 1) return out;
  out.steps.clear();
  for (const auto& p : processes) {
    if (p.steps.empty()) throw std::invalid_argument("PoolCounted: a process has no counted step");
    out.steps.insert(out.steps.end(), p.steps.begin(), p.steps.end());
    out.process_median_instructions.push_back(Quantile(CountedInstructions(p), 0.5));
    out.process_median_est_cycles.push_back(Quantile(CountedCycles(p), 0.5));
  }
  return out;
}

}  // namespace torchgauge::core
