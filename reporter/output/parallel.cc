#include "reporter/output/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace torchgauge::reporter {

int ThreadCount(int requested, std::size_t jobs) {
  int threads = requested > 0 ? requested : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::clamp(threads, 1, 16);
  return static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads), std::max<std::size_t>(jobs, 1)));
}

void ParallelFor(std::size_t n, int threads, const std::function<void(std::size_t, int)>& fn) {
  std::atomic<std::size_t> next{0};
  std::mutex err_mu;
  std::exception_ptr err;
  auto work = [&](int worker) {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i, worker);
      } catch (...) {
        std::lock_guard<std::mutex> lock(err_mu);
        if (!err) err = std::current_exception();
        next = n;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& t : pool) t.join();
  if (err) std::rethrow_exception(err);
}

}  // namespace torchgauge::reporter
