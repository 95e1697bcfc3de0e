// The end-to-end CPU smoke run through the real binary: every model, train
// and eval, must end ok (or unsupported with a reason where a mode does not
// exist), with schema-valid output and coverage that the `coverage` command
// can count.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "core/coverage.h"
#include "core/shell.h"

namespace fs = std::filesystem;

namespace {
int RunCmd(const std::string& cmd, std::string* text) {
  auto r = torchgauge::core::RunCapture(cmd, /*merge_stderr=*/true);
  *text += r.output;
  return r.exit_code;
}
}  // namespace

TEST_CASE("the smoke suite runs every model on CPU") {
  const fs::path root = fs::path(TORCHGAUGE_BINARY_DIR) / "test-output" / "smoke";
  fs::remove_all(root);
  const auto t0 = std::chrono::steady_clock::now();
  std::string text;
  int code = RunCmd(std::string(TORCHGAUGE_COLLECT) + " run --suite smoke --device cpu --no-summary --out " +
                        root.string() + " --build-id smoke --platform-id cpu",
                    &text);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << text << "smoke suite wall time: " << seconds << " s\n";
  REQUIRE(code == 0);
  std::vector<std::string> problems;
  auto runs = torchgauge::core::LoadRunsUnder(root, &problems);
  CHECK(problems.empty());
  CHECK(runs.size() >= 2);
  for (const auto& r : runs) {
    INFO(r.model.id, " ", r.mode, ": ", r.status, " ", r.reason.value_or(""));
    if (r.status == "unsupported") {
      CHECK(r.reason.has_value());
      CHECK(!r.reason->empty());
    } else {
      CHECK(r.status == "ok");
    }
  }
  auto cov = torchgauge::core::ComputeCoverage(runs);
  std::cout << "distinct ATen operators in the smoke suite: " << cov.all.size() << "\n";
  std::string vtext;
  CHECK(RunCmd(std::string(TORCHGAUGE_PYTHON) + " " + TORCHGAUGE_SOURCE_DIR + "/tests/validate_schema.py " +
                   root.string(), &vtext) == 0);
  std::cout << vtext;
  std::string ctext;
  CHECK(RunCmd(std::string(TORCHGAUGE_COLLECT) + " coverage " + root.string(), &ctext) == 0);
  std::cout << ctext;
  CHECK(ctext.find("union") != std::string::npos);
}
