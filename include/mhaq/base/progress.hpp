// Progress lines for long runs. A run that lasts longer than `after` seconds
// writes, to the stream it is given (the program passes standard error, never
// standard output, whose bytes stay those of the result), one line when a
// phase starts and at most one line every `every` seconds within a phase:
// the phase, the queries answered and the pairs fitted so far, and, once a
// phase has counted some of its queries or pairs, the time it has left at
// its rate so far; with expect(), also the time the whole run has left by
// the cost model. Counting is safe from worker threads; the lines never
// change a result.
#pragma once
#include <atomic>
#include <chrono>
#include <mutex>
#include <ostream>
#include <string>

namespace mhaq {

class Progress {
 public:
  Progress(std::ostream& out, double after = 10.0, double every = 5.0);
  // The threshold from MHAQ_PROGRESS_AFTER (seconds, e.g. 0 for every phase
  // line of a short run), else `fallback`; a malformed value is the fallback.
  static double after_from_env(double fallback = 10.0);
  void phase(const std::string& name);     // a new phase starts (a line once past `after`)
  void plan(long queries, long pairs);     // a run's totals; its counts start at 0
  void answered(long n = 1);               // queries answered
  void fitted(long n = 1);                 // pairs fitted
  void expect(double seconds);             // the whole run's predicted wall time (NaN or <= 0: none)
  // This process fits 1/ranks of the phase's pairs from here on (a run across
  // MPI ranks) and counts only its own: the estimate is for its share.
  void share_pairs(int ranks);
 private:
  void maybe_line(bool forced);
  double elapsed() const;
  std::string estimates(double t) const;
  std::ostream& out_;
  const double after_, every_;
  const std::chrono::steady_clock::time_point start_;
  std::atomic<long> queries_{0}, pairs_{0}, query_total_{0}, pair_total_{0};
  std::atomic<double> last_{-1e300};
  std::atomic<double> expected_{0};
  // at the phase's start (guarded by mu_): its time, and the counts then
  double phase_start_ = 0;
  long phase_queries_ = 0, phase_pairs_ = 0;
  std::atomic<int> pair_ranks_{1};
  std::mutex mu_;  // one writer at a time; guards phase_
  std::string phase_;
};

}  // namespace mhaq
