#include "reporter/pages/alert_page.h"

#include <doctest/doctest.h>

using namespace torchgauge::reporter;

TEST_CASE("alert page commands: the platform's vendor picks the device; one torch cannot be bisected") {
  // A CUDA wheel of torch on a CPU-only VM records a CUDA runtime: the vendor decides.
  CHECK(AlertDevice({{"vendor", "CPU"}, {"CUDA runtime", "13.0"}}) == "cpu");
  CHECK(AlertDevice({{"vendor", "NVIDIA"}, {"CUDA runtime", "13.0"}}) == "cuda");
  CHECK(AlertDevice({{"vendor", "AMD"}, {"HIP runtime", "7.0"}}) == "cuda");
  CHECK(AlertDevice({{"CUDA runtime", "13.0"}}) == "cuda");  // manifests without a vendor
  CHECK(AlertDevice({}) == "cpu");
  // Cached identities without a vendor: a CPU platform names its CPU as the device.
  CHECK(AlertDevice({{"CUDA runtime", "13.0"}, {"device", "AMD EPYC"}, {"CPU model", "AMD EPYC"}}) == "cpu");
  CHECK(AlertDevice({{"CUDA runtime", "13.0"}, {"device", "NVIDIA H200"}, {"CPU model", "AMD EPYC"}}) == "cuda");

  Alert a;
  a.id = "A-0123456789ab";
  a.platform = "cpu-noise";
  a.base_build = "n8";
  a.build = "n9";
  FlaggedChange row;
  row.platform = a.platform;
  row.model = "squeezenet1_1";
  row.mode = "eval";
  row.backend = "eager";
  row.precision = "default";
  row.metric = "time";
  a.rows.push_back(row);
  const auto same = BisectCommands(a, "5c48869", "5c48869", "cpu");
  REQUIRE(same.size() == 1);
  CHECK(same[0].find("both builds ran the same torch (5c48869)") != std::string::npos);
  const auto two = BisectCommands(a, "5c48869", "d0f2af8", "cpu");
  REQUIRE(two.size() > 1);
  CHECK(two[1].find("bisect --good '5c48869' --bad 'd0f2af8'") != std::string::npos);
  CHECK(two[1].find("--device cpu") != std::string::npos);
  // Issue 60: one candidates.txt for both commands. Without --good/--bad the
  // --alert command took the build ids as endpoints, so the file of torch
  // revisions the first command needs was wrong for it.
  CHECK(two.back().find("bisect --alert " + a.id) != std::string::npos);
  CHECK(two.back().find("--good '5c48869' --bad 'd0f2af8' --candidates candidates.txt") != std::string::npos);
  for (const auto& c : ReproduceCommands(a, "cpu")) {
    if (c.rfind("torchgauge-collect run", 0) == 0) CHECK(c.find("--device cpu") != std::string::npos);
  }
}

TEST_CASE("alert page: builds hours apart are told apart by their start time") {
  CHECK(StartedMinute("2026-11-28T03:00:00Z") == "2026-11-28 03:00");
  CHECK(StartedMinute("2026-11-28T15:42:09.123Z") == "2026-11-28 15:42");
  CHECK(StartedMinute("2026-11-28") == "2026-11-28");
  CHECK(StartedMinute("") == "");
}
