// torchgauge-collect bisect end to end: a fake build command plants a
// slowdown (6x the step time) at a known revision; bisect must name it in
// ceil(log2 N) steps. The threshold is raised to 150% so that drift in a
// loaded test machine between measurements cannot pass for the planted change.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/io/shell.h"

namespace fs = std::filesystem;

TEST_CASE("bisect finds the planted revision") {
  const fs::path work = fs::path(TORCHGAUGE_BINARY_DIR) / "test-output" / "bisect";
  fs::remove_all(work);
  fs::create_directories(work);
  const int n = 16, planted = 11;
  {
    std::ofstream c(work / "candidates.txt");
    for (int i = 1; i <= n; ++i) c << "r" << (i < 10 ? "0" : "") << i << "\n";
  }
  const std::string install = (work / "install").string();
  const std::string cmd = std::string(TORCHGAUGE_COLLECT) + " bisect --good r00 --bad r16 --candidates " +
                          (work / "candidates.txt").string() + " --command 'sh " + TORCHGAUGE_SOURCE_DIR +
                          "/tests/fake_build.sh {rev} " + install + " " + TORCHGAUGE_COLLECT + " " +
                          std::to_string(planted) + "' --collector " + install +
                          "/collector --model '^test_tiny$' --mode train --device cpu --repeat 10 "
                          "--collect-arg --include-test-models --collect-arg --profile-iterations "
                          "--collect-arg 0 --threshold 150 --work-dir " +
                          (work / "w").string();
  auto [code, text] = torchgauge::core::RunCapture(cmd, /*merge_stderr=*/true);
  INFO(text);
  CHECK(code == 0);
  CHECK(text.find("first bad revision: r11") != std::string::npos);
  // ceil(log2 16) = 4 judgements at most (the bad endpoint is not judged).
  int judged = 0;
  for (size_t pos = 0; (pos = text.find(": measuring", pos)) != std::string::npos; ++pos) ++judged;
  CHECK(judged - 1 <= static_cast<int>(std::ceil(std::log2(n))));  // minus the good endpoint
  CHECK(fs::exists(work / "w" / "bisect.log"));
}
