// The float judge's share of a run (proofs/40): the same MPFR run three
// ways, interleaved in one process so that they share the machine's state:
//   none         no judge (no first-order estimate, no replay)
//   first order  the estimate alone, the judge before its replay in balls
//   certified    the estimate and the replay in balls (the program's default)
// and the judge's share of the run, (t - t_none) / t, before and after, from
// the medians. Built, not run by ctest.
//   usage: bench_judge [d] [H] [bits] [reps] [seed]   (default 12 4 256 15 1)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "mhaq/model/model.hpp"
#include "mhaq/run/judge.hpp"
#include "mhaq/run/recover.hpp"

using namespace mhaq;

namespace {
double seconds(const Model& m, RecoverOptions o) {
  const auto t0 = std::chrono::steady_clock::now();
  const RecoverResult r = recover_run(m, o);
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (r.status() != Status::ok && r.status() != Status::unable) std::fprintf(stderr, "bench_judge: status %s\n", status_name(r.status()));
  return t;
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  const int d = argc > 1 ? std::atoi(argv[1]) : 12, H = argc > 2 ? std::atoi(argv[2]) : 4;
  const long bits = argc > 3 ? std::atol(argv[3]) : 256;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 15;
  const long seed = argc > 5 ? std::atol(argv[5]) : 1;
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = d;
  g.heads = H;
  g.seed = static_cast<std::uint64_t>(seed);
  const Model m = generate_model(g);
  RecoverOptions base;
  base.arith = Arith::mpfr;
  base.bits = bits;
  base.seed = static_cast<std::uint64_t>(seed);
  base.threads = 1;
  RecoverOptions none = base, first = base, full = base;
  none.error_estimate = false;
  first.judge_replay = false;
  {
    const RecoverResult r = recover_run(m, full);
    std::printf("d=%d H=%d mpfr %ld bits, seed %ld: status %s, certified %s, first order %s, route %s at %ld bits\n", d, H, bits, seed,
                status_name(r.status()), r.judge.certified_error_decimal.value_or("none").c_str(), r.judge.error_estimate_decimal.value_or("none").c_str(),
                r.judge.judge_route.value_or("-").c_str(), r.judge.judge_bits.value_or(0));
  }
  std::vector<double> tn, tf, tc;
  for (int i = 0; i < reps; ++i) {
    tn.push_back(seconds(m, none));
    tf.push_back(seconds(m, first));
    tc.push_back(seconds(m, full));
  }
  const double n = median(tn), f = median(tf), c = median(tc);
  std::printf("medians of %d: none %.4f s, first order %.4f s, certified %.4f s\n", reps, n, f, c);
  std::printf("run ratios: first order / none %.3f, certified / none %.3f, certified / first order %.3f\n", f / n, c / n, c / f);
  std::printf("the judge's share of the run: before (first order) %.1f%%, after (certified) %.1f%%\n", 100 * (f - n) / f, 100 * (c - n) / c);
  return 0;
}
