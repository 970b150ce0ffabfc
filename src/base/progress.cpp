#include "mhaq/base/progress.hpp"

#include <cstdio>
#include <cstdlib>

namespace mhaq {

Progress::Progress(std::ostream& out, double after, double every)
    : out_(out), after_(after), every_(every), start_(std::chrono::steady_clock::now()) {}

double Progress::after_from_env(double fallback) {
  const char* s = std::getenv("MHAQ_PROGRESS_AFTER");
  if (!s || !*s) return fallback;
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  return (end && *end == '\0' && v >= 0) ? v : fallback;
}

double Progress::elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

void Progress::phase(const std::string& name) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    phase_ = name;
  }
  maybe_line(true);
}

void Progress::plan(long queries, long pairs) {
  queries_ = 0;
  pairs_ = 0;
  query_total_ = queries;
  pair_total_ = pairs;
}

void Progress::answered(long n) {
  queries_ += n;
  maybe_line(false);
}

void Progress::fitted(long n) {
  pairs_ += n;
  maybe_line(false);
}

void Progress::maybe_line(bool forced) {
  const double t = elapsed();
  if (t < after_) return;
  if (!forced && t - last_.load() < every_) return;
  // a worker that finds another one writing skips its line
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) {
    if (!forced) return;
    lock.lock();
  }
  if (!forced && t - last_.load() < every_) return;
  last_ = t;
  char head[64];
  std::snprintf(head, sizeof head, "mhaq: %.1f s, ", t);
  std::string line = std::string(head) + "phase " + phase_ + ", queries answered " + std::to_string(queries_.load());
  if (query_total_ > 0) line += " of " + std::to_string(query_total_.load());
  line += ", pairs fitted " + std::to_string(pairs_.load());
  if (pair_total_ > 0) line += " of " + std::to_string(pair_total_.load());
  out_ << line << "\n";
  out_.flush();
}

}  // namespace mhaq
