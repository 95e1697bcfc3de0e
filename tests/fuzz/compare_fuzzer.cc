// Fuzzes what `torchgauge-report compare` reads and what it does with it:
// its --threshold-for rules and the run results of two builds. The input is
//   <rules, one per line>
//   %%
//   <the baseline build's run result>
//   %%
//   <the new build's run result>
// Rules go through core::ParseThresholdRule (what the CLI calls) and
// CompareOptions::Validate; results through core::RunResultFromJson. Whatever
// both accept is compared by core::CompareWithHistory, the code behind
// `compare` and the site, and rendered by the Markdown, HTML and JSON
// reports. It runs in memory: reading the files from a tree is the
// run_result and manifest targets' job, and a tree per input made this one
// about a hundred times slower.
//
// Contract beyond "no crash, no sanitizer report": refusals are
// std::invalid_argument (rules) and core::FileError (results); once both
// are accepted, comparing and rendering throw nothing.
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/analysis/compare.h"
#include "core/io/json_io.h"
#include "reporter/compare/report.h"
#include "tests/fuzz/fuzz_util.h"

namespace core = torchgauge::core;
namespace reporter = torchgauge::reporter;
using nlohmann::json;
using torchgauge::fuzz::ContractBroken;

namespace {

constexpr std::string_view kSeparator = "\n%%\n";

json Manifest(const std::string& build, const std::string& started_at) {
  return {{"schema_version", 1},
          {"kind", "torchgauge.manifest"},
          {"build_id", build},
          {"platform_id", "p"},
          {"collector", {{"version", "0.1.0"}, {"git_sha", "abc123def456"}}},
          {"libtorch", {{"version", "2.11.0"}}},
          {"device", {{"vendor", "CPU"}, {"name", "cpu"}}},
          {"cpu", {{"model", "cpu"}, {"logical_cores", 2}}},
          {"host", {{"hostname", "h"}, {"os", "linux"}}},
          {"started_at", started_at},
          {"suite", {{"name", "smoke"}}}};
}

std::vector<std::string_view> Split(std::string_view in) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t at; parts.size() < 2 && (at = in.find(kSeparator, start)) != std::string_view::npos;) {
    parts.push_back(in.substr(start, at - start));
    start = at + kSeparator.size();
  }
  parts.push_back(in.substr(start));
  return parts;
}

// The rules as the CLI takes them; false when one is refused.
bool ParseRules(std::string_view text, core::CompareOptions& o) {
  std::istringstream rules{std::string(text)};
  try {
    for (std::string line; std::getline(rules, line);) o.rules.push_back(core::ParseThresholdRule(line));
    o.Validate();
  } catch (const std::invalid_argument&) {
    return false;
  } catch (const std::exception& e) {
    ContractBroken(std::string("a threshold rule was refused with something other than invalid_argument: ") + e.what());
  }
  return true;
}

// One build's run set from one result; false when the result is refused.
bool ParseRun(std::string_view text, const std::string& build, const std::string& started_at, core::RunSet& set) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return false;
  set.build_id = build;
  set.platform_id = "p";
  set.manifest = Manifest(build, started_at);
  try {
    core::RunResult r = core::RunResultFromJson(j, build + "/p/runs/r.json");
    set.runs.emplace(core::RunKey{r.model.id, r.mode, r.backend, r.precision}, std::move(r));
  } catch (const core::FileError&) {
    return false;
  } catch (const std::exception& e) {
    ContractBroken(std::string("RunResultFromJson threw something other than FileError: ") + e.what());
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = Split({reinterpret_cast<const char*>(data), size});
  if (parts.size() != 3) return 0;  // not the framing: nothing for the compare path to read
  core::CompareOptions options;
  core::RunSet base, next;
  if (!ParseRules(parts[0], options) || !ParseRun(parts[1], "b1", "2026-01-01T00:00:00Z", base) ||
      !ParseRun(parts[2], "b2", "2026-01-02T00:00:00Z", next)) {
    return 0;
  }
  try {
    core::Comparison c;
    c.new_build = "b2";
    c.base_label = "b1";
    c.options = options;
    c.platforms.push_back(core::CompareWithHistory({&base, &next}, options));
    reporter::ReportOptions ro;
    ro.site_url = "https://example.org/tg";
    (void)reporter::RenderCompareMarkdown(c, ro);
    (void)reporter::RenderCompareHtml(c, ro);
    (void)core::ToJson(c).dump();
    (void)c.HasRegression();
  } catch (const std::exception& e) {
    ContractBroken(std::string("comparing two accepted results threw: ") + e.what());
  }
  return 0;
}
