// The breadth check: the ci suite (collector/suites/ci.json: every registered
// model, train and eval, eager, at its smoke batch sizes) through the real
// binary, one worker process per run. Every run must end ok, or unsupported
// with a reason. Ok includes finite numbers: the collector fails a run whose
// parameters after the train steps, or whose eval output, hold NaN or
// infinity (collector/worker.cc), the check that 53 per-model "smoke" parity
// tests made until 2026-11-29, each paying its own process and model build
// beside this suite's. Every listed model must have run; the results must count
// operators for every domain. It prints the distinct ATen operators per domain
// and in the union (the coverage figure the paper's Table 1 page reports).
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "core/analysis/coverage.h"
#include "core/io/json_io.h"
#include "core/io/shell.h"

namespace fs = std::filesystem;

TEST_CASE("the ci suite runs every model, train and eval, and counts their operators") {
  const fs::path root = fs::path(TORCHGAUGE_BINARY_DIR) / "test-output" / "ci-suite";
  fs::remove_all(root);
  const std::string collect = TORCHGAUGE_COLLECT;
  auto listed = torchgauge::core::RunCapture(collect + " list --json", /*merge_stderr=*/false);
  REQUIRE(listed.exit_code == 0);
  std::set<std::string> models;
  for (const auto& m : nlohmann::json::parse(listed.output)) models.insert(m.at("id").get<std::string>());
  // The suite's own exclusions (each explained in its description).
  const auto suite =
      torchgauge::core::ReadJsonFile(fs::path(TORCHGAUGE_SOURCE_DIR) / "collector" / "suites" / "ci.json");
  for (const auto& id : suite.at("exclude")) models.erase(id.get<std::string>());
  REQUIRE(models.size() >= 50);
  const auto t0 = std::chrono::steady_clock::now();
  auto run = torchgauge::core::RunCapture(
      collect + " run --suite ci --device cpu --no-summary --out " + root.string() + " --build-id ci --platform-id cpu",
      /*merge_stderr=*/true);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << run.output << "ci suite: " << models.size() << " models in " << seconds << " s\n";
  REQUIRE(run.exit_code == 0);

  std::vector<std::string> problems;
  const auto runs = torchgauge::core::LoadRunsUnder(root, &problems);
  CHECK(problems.empty());
  std::set<std::string> ran;
  std::map<std::string, int> status_count;
  for (const auto& r : runs) {
    INFO(r.model.id, " ", r.mode, ": ", r.status, " ", r.reason.value_or(""));
    ran.insert(r.model.id);
    ++status_count[r.status];
    if (r.status == "unsupported") {
      CHECK(r.reason.has_value());
      CHECK(!r.reason->empty());
    } else {
      CHECK(r.status == "ok");
    }
  }
  for (const auto& id : models) CHECK_MESSAGE(ran.count(id), "model not run by the ci suite: ", id);
  CHECK(runs.size() == 2 * models.size());
  for (const auto& [status, n] : status_count) std::cout << status << ": " << n << " runs\n";

  const auto cov = torchgauge::core::ComputeCoverage(runs);
  std::cout << "distinct ATen operators (overloads included) per domain:\n";
  for (const auto& [domain, ops] : cov.by_domain) {
    std::cout << "  " << domain << ": " << ops.size() << " (" << cov.models_by_domain.at(domain).size() << " models)\n";
  }
  std::cout << "  union: " << cov.all.size() << " (" << cov.all_models.size() << " models)\n";
  for (const char* domain : {"vision", "nlp", "recommendation", "rl", "speech", "other"}) {
    CHECK_MESSAGE(cov.by_domain.count(domain), "no operator data for domain ", domain);
  }
  CHECK(cov.all_models.size() == models.size());
}
