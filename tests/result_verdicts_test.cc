// One verdict per file: each hostile or malformed result file of the
// reporter's tests (reporter/results/load_test.cc, reporter/site/site_test.cc), planted
// in a copy of the compare golden tree, is fed to the five readers of a
// results tree:
//   torchgauge-report validate, torchgauge-report build,
//   torchgauge-report compare, torchgauge-collect coverage, and
//   core::LoadRunSet (bisect's loader, called in-process).
// All five must accept it, or all five refuse it naming the file and the
// field (or, for a whole-file problem, the reason). They share one reader
// (core/contract/results_tree.h), so this guards against a check living in only one.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/analysis/compare.h"
#include "core/contract/layout.h"
#include "core/io/json_io.h"
#include "core/io/shell.h"

namespace fs = std::filesystem;
using nlohmann::json;
namespace core = torchgauge::core;

namespace {

const std::string kBase = "2.11.0-20261121", kNew = "2.11.0-20261122", kPlatform = "cpu-x86_64-2c";

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
void Write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary | std::ios::trunc) << text; }

struct Case {
  std::string name;
  // Plants the file in the new build's platform directory; returns its path.
  std::function<fs::path(const fs::path& dir)> plant;
  bool refused = true;
  std::string field;    // the field every reader must name ("" for whole-file problems)
  std::string message;  // a part of the message every reader must print
};

fs::path Victim(const fs::path& dir) { return core::RunPath(dir, {"alexnet", "eval", "eager", "fp32"}); }

// Edits the victim run result with `edit`.
std::function<fs::path(const fs::path&)> Edit(std::function<void(json&)> edit) {
  return [edit](const fs::path& dir) {
    fs::path f = Victim(dir);
    json j = json::parse(Read(f));
    edit(j);
    Write(f, j.dump());
    return f;
  };
}
// Adds a file with `body` under runs/.
std::function<fs::path(const fs::path&)> Add(const std::string& name, std::string body) {
  return [name, body](const fs::path& dir) {
    fs::path f = core::RunsDir(dir) / name;
    Write(f, body);
    return f;
  };
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  const std::string evil =
      "<script>alert(\"x\")</script> | ../../etc/passwd ' \" ` *em* [a](javascript:alert(1)) \xC3\xBCn\xC3\xAF "
      "\xE2\x80\xA8";
  cases.push_back({"untouched", [](const fs::path& dir) { return Victim(dir); }, false, "", ""});
  cases.push_back({"hostile strings (site_test)", Edit([evil](json& j) {
                     j["model"]["paper_name"] = evil;
                     j["model"]["task"] = evil;
                     j["status"] = "error";
                     j["reason"] = evil + "\n# heading\n</script><img src=x onerror=alert(1)>";
                   }),
                   false, "", ""});
  cases.push_back({"truncated (load_test, site_test)",
                   [](const fs::path& dir) {
                     fs::path f = Victim(dir);
                     std::string t = Read(f);
                     Write(f, t.substr(0, t.size() / 2));
                     return f;
                   },
                   true, "", "not valid JSON"});
  cases.push_back({"negative median (load_test)", Edit([](json& j) { j["timing"]["median_ms"] = -1; }), true,
                   "timing.median_ms", "must be >= 0"});
  cases.push_back({"negative sample", Edit([](json& j) { j["timing"]["samples_ms"][3] = -5; }), true,
                   "timing.samples_ms[3]", "must be >= 0"});
  cases.push_back(
      {"unknown clock", Edit([](json& j) { j["timing"]["clock"] = "sundial"; }), true, "timing.clock", "steady_clock"});
  cases.push_back({"repetitions 0", Edit([](json& j) { j["timing"]["repetitions"] = 0; }), true, "timing.repetitions",
                   "must be >= 1"});
  cases.push_back({"negative rss", Edit([](json& j) {
                     j["memory"] = {{"cpu_peak_rss_bytes", -1}};
                   }),
                   true, "memory.cpu_peak_rss_bytes", "must be >= 0"});
  cases.push_back({"in another build's directory (load_test)", Edit([](json& j) { j["build_id"] = "other-build"; }),
                   true, "build_id", "does not match its directory"});
  cases.push_back({"climbing model id (load_test)", Edit([](json& j) { j["model"]["id"] = "../../evil"; }), true,
                   "model.id", "not a safe id"});
  cases.push_back({"pwned.json (site_test)",
                   [](const fs::path& dir) {
                     json j = json::parse(Read(Victim(dir)));
                     j["model"]["id"] = "../../../pwned";
                     return Add("pwned.json", j.dump())(dir);
                   },
                   true, "model.id", "not a safe id"});
  cases.push_back({"file name is not its run key",
                   [](const fs::path& dir) { return Add("zzz.eval.eager.fp32.json", Read(Victim(dir)))(dir); }, true,
                   "", "does not match its run key"});
  // site_test's garbage bodies.
  const std::vector<std::pair<std::string, std::string>> garbage = {
      {"", "not valid JSON"},           {"null", "expected a JSON object"},
      {"[]", "expected a JSON object"}, {"42", "expected a JSON object"},
      {"{", "not valid JSON"},          {"\xFF\xFE garbage", "not valid JSON"}};
  for (size_t i = 0; i < garbage.size(); ++i) {
    cases.push_back({"garbage " + std::to_string(i) + " (site_test)",
                     Add("g" + std::to_string(i) + ".json", garbage[i].first), true, "", garbage[i].second});
  }
  cases.push_back({"newer schema (site_test)", Add("g6.json", R"({"schema_version": 99, "kind": "torchgauge.run"})"),
                   true, "schema_version", "newer than this program understands"});
  cases.push_back({"model is a number (site_test)",
                   Add("g7.json", R"({"schema_version": 1, "kind": "torchgauge.run", "model": 3})"), true, "build_id",
                   "missing required field"});
  cases.push_back({"manifest without fields (site_test)",
                   [](const fs::path& dir) {
                     Write(core::ManifestPath(dir), R"({"schema_version": 1})");
                     return core::ManifestPath(dir);
                   },
                   true, "kind", "torchgauge.manifest"});
  cases.push_back({"manifest with 0 cores",
                   [](const fs::path& dir) {
                     json m = json::parse(Read(core::ManifestPath(dir)));
                     m["cpu"]["logical_cores"] = 0;
                     Write(core::ManifestPath(dir), m.dump());
                     return core::ManifestPath(dir);
                   },
                   true, "cpu.logical_cores", "must be an integer >= 1"});
  // The issue's oversized file: valid JSON, 95 MiB, a 20-million-element
  // unknown array. Generated here, never committed.
  cases.push_back({"95 MiB run result",
                   [](const fs::path& dir) {
                     fs::path f = Victim(dir);
                     json j = json::parse(Read(f));
                     std::string text = j.dump();
                     text.pop_back();  // the closing brace
                     std::ofstream out(f, std::ios::binary | std::ios::trunc);
                     out << text << ",\"padding\":[";
                     for (int i = 0; i < 20'000'000; ++i) out << (i ? ",1000" : "1000");
                     out << "]}";
                     return f;
                   },
                   true, "", "cap for a run result file"});
  return cases;
}

struct Verdict {
  bool refused = false;
  bool names_file = false, names_field = false, says_why = false;
  std::string text;
};

Verdict FromText(bool refused, const std::string& text, const fs::path& file, const Case& c) {
  Verdict v;
  v.refused = refused;
  v.text = text;
  v.names_file = text.find(file.string()) != std::string::npos;
  v.names_field = c.field.empty() || text.find("field '" + c.field + "'") != std::string::npos;
  v.says_why = c.message.empty() || text.find(c.message) != std::string::npos;
  return v;
}

}  // namespace

TEST_CASE("validate, build, compare, coverage and bisect's loader give one verdict per file") {
  const fs::path work = fs::path(TORCHGAUGE_BINARY_DIR) / "test-output" / "result_verdicts";
  const fs::path golden = fs::path(TORCHGAUGE_SOURCE_DIR) / "tests/data/compare_golden/results";
  const std::string report = TORCHGAUGE_REPORT_EXE, collect = TORCHGAUGE_COLLECT;
  int i = 0;
  for (const Case& c : Cases()) {
    CAPTURE(c.name);
    const fs::path dir = work / std::to_string(i++);
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path results = dir / "results";
    fs::copy(golden, results, fs::copy_options::recursive);
    const fs::path file = c.plant(core::PlatformDir(results, kNew, kPlatform));
    const std::string r = core::ShellQuote(results.string());

    std::vector<std::pair<std::string, Verdict>> verdicts;
    auto v1 = core::RunCapture(report + " validate " + r, true);
    verdicts.push_back({"validate", FromText(v1.exit_code == 1, v1.output, file, c)});
    auto v2 = core::RunCapture(
        report + " build --no-svg --results " + r + " --out " + core::ShellQuote((dir / "site").string()), true);
    CHECK(v2.exit_code == 0);
    verdicts.push_back(
        {"build", FromText(v2.output.find("warning: skipped") != std::string::npos, v2.output, file, c)});
    auto v3 = core::RunCapture(report + " compare --results " + r + " --new " + kNew, true);
    CHECK(v3.exit_code != -1);
    verdicts.push_back({"compare", FromText(v3.exit_code == 2, v3.output, file, c)});
    auto v4 = core::RunCapture(collect + " coverage " + r, true);
    verdicts.push_back(
        {"coverage", FromText(v4.output.find("warning: skipped") != std::string::npos, v4.output, file, c)});
    Verdict v5;
    try {
      (void)core::LoadRunSet(results, kNew, kPlatform);
      v5 = FromText(false, "", file, c);
    } catch (const core::FileError& e) {
      v5 = FromText(true, e.what(), file, c);
      v5.names_field = e.field() == c.field;
      v5.names_file = e.file() == file;
    }
    verdicts.push_back({"bisect's loader", v5});

    for (const auto& entry : verdicts) {
      const auto& tool = entry.first;
      const auto& v = entry.second;
      CAPTURE(tool);
      CAPTURE(v.text.substr(0, 4000));
      CHECK(v.refused == c.refused);
      if (c.refused) {
        CHECK(v.names_file);
        CHECK(v.names_field);
        CHECK(v.says_why);
      }
    }
    fs::remove_all(dir);
  }
}
