#include "mhaq/base/progress.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

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
    phase_start_ = elapsed();
    phase_queries_ = queries_.load();
    phase_pairs_ = pairs_.load();
    pair_ranks_ = 1;
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

void Progress::expect(double seconds) { expected_ = seconds > 0 ? seconds : 0; }
void Progress::share_pairs(int ranks) { pair_ranks_ = ranks > 1 ? ranks : 1; }

namespace {
std::string seconds_text(double s) {
  char b[48];
  if (s < 120) std::snprintf(b, sizeof b, "%.0f s", s);
  else if (s < 7200) std::snprintf(b, sizeof b, "%.1f min", s / 60);
  else std::snprintf(b, sizeof b, "%.1f h", s / 3600);
  return b;
}
}  // namespace

// The phase's time left at its rate so far, from the counter it moves
// (queries, else pairs), once it has counted some; and the run's by expect().
std::string Progress::estimates(double t) const {
  std::string out;
  const double in_phase = t - phase_start_;
  const long dq = queries_.load() - phase_queries_, dp = pairs_.load() - phase_pairs_;
  auto left = [&](long done, double total, long now) {
    if (done <= 0 || total <= static_cast<double>(now) || in_phase <= 0) return;
    out += ", about " + seconds_text(in_phase / static_cast<double>(done) * (total - static_cast<double>(now))) + " left in this phase";
  };
  if (dq > 0) left(dq, static_cast<double>(query_total_.load()), queries_.load());
  else if (dp > 0) left(dp, static_cast<double>(phase_pairs_) + static_cast<double>(pair_total_.load() - phase_pairs_) / pair_ranks_.load(), pairs_.load());
  const double e = expected_.load();
  if (e > 0) out += t < e ? ", about " + seconds_text(e - t) + " left in the run by the cost model" : ", past the cost model's " + seconds_text(e) + " for the run";
  return out;
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
  line += estimates(t);
  out_ << line << "\n";
  out_.flush();
}

}  // namespace mhaq
