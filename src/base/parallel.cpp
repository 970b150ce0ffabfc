#include "mhaq/base/parallel.hpp"

#include <flint/flint.h>

#include <atomic>
#include <exception>
#include <thread>
#include <vector>

#include "mhaq/base/precision.hpp"

namespace mhaq {

int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

void parallel_for(std::size_t begin, std::size_t end, int threads, const std::function<void(std::size_t)>& fn) {
  if (end <= begin) return;
  const std::size_t n = end - begin;
  const std::size_t t = threads < 1 ? 1 : std::min<std::size_t>(static_cast<std::size_t>(threads), n);
  std::vector<std::exception_ptr> err(n);
  if (t == 1) {
    for (std::size_t i = 0; i < n; ++i) fn(begin + i);  // the first failure is the lowest index
  } else {
    const long prec = working_precision();
    std::atomic<std::size_t> next{0};
    // Items above the lowest failing index so far are skipped: the error
    // rethrown is still the lowest failing index's (every item below it runs).
    std::atomic<std::size_t> first_fail{n};
    auto worker = [&] {
      {
        PrecisionScope scope(prec);
        for (std::size_t i; (i = next.fetch_add(1)) < n;) {
          if (i > first_fail.load()) continue;
          try {
            fn(begin + i);
          } catch (...) {
            err[i] = std::current_exception();
            for (std::size_t f = first_fail.load(); i < f && !first_fail.compare_exchange_weak(f, i);) {
            }
          }
        }
      }
      flint_cleanup();
    };
    std::vector<std::thread> pool;
    for (std::size_t k = 0; k < t; ++k) pool.emplace_back(worker);
    for (auto& th : pool) th.join();
  }
  for (auto& e : err)
    if (e) std::rethrow_exception(e);
}

}  // namespace mhaq
