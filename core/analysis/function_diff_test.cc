#include <doctest/doctest.h>

#include <filesystem>

#include "core/analysis/function_diff.h"

using namespace torchgauge::core;

TEST_CASE("the functions that moved: largest first, until 80 % of the change; JIT code as one row") {
  const FunctionCosts base = {{"libtorch_cpu.so\tat::native::add_kernel", 1000},
                              {"libtorch_cpu.so\tc10::Dispatcher::call", 500},
                              {"???\t0x0000000004000000", 300},
                              {"???\t0x0000000004001000", 100},
                              {"libc.so.6\tmemcpy", 200}};
  FunctionCosts now = base;
  now["libtorch_cpu.so\tat::native::add_kernel"] += 60;
  now["collector\ttorchgauge_planted_cost"] = 300;  // new
  now["???\t0x0000000004001000"] += 40;
  now["libc.so.6\tmemcpy"] -= 10;
  const FunctionDiff d = DiffFunctions(base, now);
  CHECK(d.new_total - d.base_total == 390);
  // 300 of +390 is 77 %, under 80 %: the next largest joins (add_kernel, 92 % then).
  REQUIRE(d.top.size() == 2);
  CHECK(d.top[0].function == "torchgauge_planted_cost");
  CHECK(d.top[0].object == "collector");
  CHECK(d.top[0].share == doctest::Approx(300.0 / 390));
  CHECK(d.top[1].function == "at::native::add_kernel");
  CHECK(d.covered == doctest::Approx(360.0 / 390));
  // With everything asked for, the JIT code is one row of +40 and memcpy's
  // drop (against the change's direction) is not listed.
  const FunctionDiff all = DiffFunctions(base, now, 1.0, 100);
  REQUIRE(all.top.size() == 3);
  CHECK(all.top[2].function == kJitCode);
  CHECK(all.top[2].object.empty());
  CHECK(all.top[2].base == 400);
  CHECK(all.top[2].delta == 40);
  CHECK(DiffFunctions(base, base).top.empty());
}

TEST_CASE("a profile file is read whether gzip or plain; a missing one is named") {
  const auto fixture = std::filesystem::path(TORCHGAUGE_SOURCE_DIR) / "tests/data/callgrind/small.out";
  CHECK(ReadProfile(fixture).at("libtorch_cpu.so\tat::native::add_kernel") == 1120);
  CHECK_THROWS_WITH_AS(ReadProfile("/nonexistent/p.callgrind.gz"), doctest::Contains("/nonexistent/p.callgrind.gz"),
                       std::runtime_error);
}
