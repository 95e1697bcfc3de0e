#include "reporter/output/parallel.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace torchgauge::reporter;

TEST_CASE("ParallelFor visits every job once and reports which worker ran it") {
  for (int threads : {1, 3}) {
    std::vector<std::atomic<int>> seen(100);
    std::atomic<int> bad_worker{0};
    ParallelFor(seen.size(), threads, [&](size_t i, int worker) {
      seen[i]++;
      if (worker < 0 || worker >= threads) bad_worker++;
    });
    for (const auto& s : seen) CHECK(s == 1);
    CHECK(bad_worker == 0);
  }
}

TEST_CASE("ParallelFor rethrows the first failure after every thread stopped") {
  std::atomic<int> ran{0};
  CHECK_THROWS_WITH_AS(ParallelFor(1000, 2,
                                   [&](size_t i, int) {
                                     ran++;
                                     if (i == 10) throw std::runtime_error("job 10 failed");
                                     // Jobs take a while, as real ones do: without this the
                                     // other thread could finish all 1000 trivial jobs while
                                     // the exception is still being thrown (it did, 1 run in 4).
                                     std::this_thread::sleep_for(std::chrono::milliseconds(1));
                                   }),
                       "job 10 failed", std::runtime_error);
  CHECK(ran < 500);  // the remaining jobs were not started
}

TEST_CASE("ThreadCount: at least one, no more threads than jobs, at most 16") {
  CHECK(ThreadCount(4, 2) == 2);
  CHECK(ThreadCount(4, 0) == 1);
  CHECK(ThreadCount(100, 1000) == 16);
  CHECK(ThreadCount(0, 1000) >= 1);
  CHECK(ThreadCount(3, 1000) == 3);
}
