// Benchmark of the run's speed as ratios (tests/bench/speed.sh prints them
// beside the mpmath reference): one JSON line per case with the median wall
// time of complete recoveries (oracle, learner, self-check, judge), and the
// median processor time of the process over those runs (cpu_seconds: less
// sensitive to other jobs on a shared machine; the runs are single-threaded).
//   mpfr_d12_H4_256          MPFR, d = 12, H = 4, 256 bits, paper schedule
//   mpfr_d12_H4_256_no_est   the same without the first-order error estimate
//   ball_d8_H4_256, ball_d24_H4_256
//   usage: bench_speed [SEED] [REPEATS]
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mhaq/run/recover.hpp"

using namespace mhaq;

static void bench(const char* name, Arith a, int d, int H, long bits, bool estimate, std::uint64_t seed, int reps) {
  GenerateOptions g = default_generate(a);
  g.d = d;
  g.heads = H;
  g.seed = seed;
  const Model m = generate_model(g);
  RecoverOptions o;
  o.arith = a;
  o.bits = bits;
  o.seed = seed;
  o.error_estimate = estimate;
  std::vector<double> t, cpu;
  nlohmann::json r;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    r = recover(m, o);
    cpu.push_back(static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  std::sort(cpu.begin(), cpu.end());
  nlohmann::json out{{"case", name}, {"d", d}, {"H", H}, {"bits", bits}, {"seed", seed}, {"status", r["status"]},
                     {"queries", r["queries"]}, {"max_length", r["max_length"]}, {"seconds", t[t.size() / 2]}, {"cpu_seconds", cpu[cpu.size() / 2]}};
  for (const char* k : {"max_rel_error", "kappa_estimate", "max_radius"})
    if (r.contains(k)) out[k] = r[k];
  std::printf("%s\n", out.dump().c_str());
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  const std::uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1;
  const int reps = std::max(1, argc > 2 ? std::atoi(argv[2]) : 3);
  bench("mpfr_d12_H4_256", Arith::mpfr, 12, 4, 256, true, seed, reps);
  bench("mpfr_d12_H4_256_no_est", Arith::mpfr, 12, 4, 256, false, seed, reps);
  bench("ball_d8_H4_256", Arith::ball, 8, 4, 256, true, seed, reps);
  bench("ball_d24_H4_256", Arith::ball, 24, 4, 256, true, seed, reps);
  return 0;
}
