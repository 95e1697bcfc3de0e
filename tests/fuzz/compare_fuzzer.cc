// Fuzzes what `torchgauge-report compare` reads: its --threshold-for rules
// and the run files of two builds. The input is
//   <rules, one per line>
//   %%
//   <the baseline build's run file>
//   %%
//   <the new build's run file>
// which becomes a two-build results tree (fixed, valid manifests) under the
// scratch directory; reporter::RunCompareCommand then loads it through
// core::CompareBuilds, compares, and renders the Markdown report, exactly as
// the command does. Contract beyond "no crash, no sanitizer report": the
// exit code is one of the three documented ones.
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_io.h"
#include "reporter/compare_command.h"
#include "tests/fuzz/fuzz_util.h"

namespace fs = std::filesystem;
namespace core = torchgauge::core;
namespace reporter = torchgauge::reporter;
using nlohmann::json;

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

// The results tree, made once: b1 is the older build (the baseline).
const fs::path& Results() {
  static const fs::path root = [] {
    fs::path r = torchgauge::fuzz::ScratchDir() / "results";
    for (const auto& [build, at] : {std::pair{"b1", "2026-01-01T00:00:00Z"}, {"b2", "2026-01-02T00:00:00Z"}}) {
      fs::create_directories(r / build / "p" / "runs");
      core::WriteJsonAtomic(r / build / "p" / "manifest.json", Manifest(build, at));
    }
    return r;
  }();
  return root;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t at; parts.size() < 2 && (at = in.find(kSeparator, start)) != std::string_view::npos;) {
    parts.push_back(in.substr(start, at - start));
    start = at + kSeparator.size();
  }
  parts.push_back(in.substr(start));
  if (parts.size() != 3) return 0;  // not the framing: nothing for the compare path to read

  reporter::CompareCommandOptions o;
  std::istringstream rules{std::string(parts[0])};
  for (std::string line; std::getline(rules, line);) o.threshold_for.push_back(line);
  o.results = Results().string();
  o.new_build = "b2";
  o.site_url = "https://example.org/tg";
  for (int side = 1; side <= 2; ++side) {
    const auto& text = parts[side];
    torchgauge::fuzz::WriteBytes(Results() / ("b" + std::to_string(side)) / "p" / "runs" / "r.json",
                                 reinterpret_cast<const uint8_t*>(text.data()), text.size());
  }
  std::ostringstream out, err;
  const int code = reporter::RunCompareCommand(o, out, err);
  if (code != reporter::kCompareOk && code != reporter::kCompareRegressed && code != reporter::kCompareBadInput) {
    torchgauge::fuzz::ContractBroken("compare returned exit code " + std::to_string(code));
  }
  return 0;
}
