// Benchmark of the run's speed as ratios (tests/bench/speed.sh prints them
// beside the mpmath reference): one JSON line per case with the median wall
// time of complete recoveries (oracle, learner, self-check, judge; the two
// cases of a ratio measured in turn after one untimed run each), and the
// median processor time of the process over those runs (cpu_seconds: less
// sensitive to other jobs on a shared machine; the runs are single-threaded).
//   mpfr_d12_H4_256          MPFR, d = 12, H = 4, 256 bits, paper schedule
//   mpfr_d12_H4_256_no_est   the same without the first-order error estimate
//   ball_d8_H4_256, ball_d24_H4_256          ball, H = 4, 256 bits, 1 thread
//   ball_d8_H4_256_t2, ball_d24_H4_256_t2    the same on 2 threads (cpu_seconds
//                                            then sums both threads)
//   usage: bench_speed [SEED] [REPEATS] [ball]   (ball: the ball cases only)
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mhaq/run/record_json.hpp"
#include "mhaq/run/recover.hpp"

using namespace mhaq;

// One case's model and options.
struct Case {
  const char* name;
  Model model;
  RecoverOptions o;
  int d, H;
  long bits;
  int threads;
  std::vector<double> t, cpu;
  nlohmann::json last;
};

static Case make_case(const char* name, Arith a, int d, int H, long bits, bool estimate, std::uint64_t seed, int threads = 1) {
  GenerateOptions g = default_generate(a);
  g.d = d;
  g.heads = H;
  g.seed = seed;
  Case c{name, generate_model(g), RecoverOptions{}, d, H, bits, threads, {}, {}, {}};
  c.o.threads = threads;
  c.o.arith = a;
  c.o.bits = bits;
  c.o.seed = seed;
  c.o.error_estimate = estimate;
  return c;
}

static void run_once(Case& c) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  c.last = record_json(recover(c.model, c.o));
  c.cpu.push_back(static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
  c.t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

static void report(Case& c, std::uint64_t seed) {
  std::sort(c.t.begin(), c.t.end());
  std::sort(c.cpu.begin(), c.cpu.end());
  const nlohmann::json& r = c.last;
  nlohmann::json out{{"case", c.name}, {"d", c.d}, {"H", c.H}, {"bits", c.bits}, {"threads", c.threads}, {"seed", seed}, {"status", r["status"]},
                     {"queries", r["queries"]}, {"max_length", r["max_length"]}, {"seconds", c.t[c.t.size() / 2]}, {"cpu_seconds", c.cpu[c.cpu.size() / 2]}};
  for (const char* k : {"max_rel_error", "kappa_estimate", "max_radius"})
    if (r.contains(k)) out[k] = r[k];
  std::printf("%s\n", out.dump().c_str());
  std::fflush(stdout);
}

// The cases of a group run in turn, repetition by repetition, after one
// untimed run of each (the first run of a process pays for one-time setup:
// allocator arenas, the libraries' constant caches): so the MPFR run with
// and without the estimate see the same load.
static void bench_group(std::vector<Case> cases, std::uint64_t seed, int reps) {
  for (Case& c : cases) {
    run_once(c);
    c.t.clear();
    c.cpu.clear();
  }
  for (int i = 0; i < reps; ++i)
    for (Case& c : cases) run_once(c);
  for (Case& c : cases) report(c, seed);
}

int main(int argc, char** argv) {
  const std::uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1;
  const int reps = std::max(1, argc > 2 ? std::atoi(argv[2]) : 3);
  const bool ball_only = argc > 3 && std::string(argv[3]) == "ball";
  if (!ball_only)
    bench_group({make_case("mpfr_d12_H4_256", Arith::mpfr, 12, 4, 256, true, seed), make_case("mpfr_d12_H4_256_no_est", Arith::mpfr, 12, 4, 256, false, seed)},
                seed, reps);
  bench_group({make_case("ball_d8_H4_256", Arith::ball, 8, 4, 256, true, seed), make_case("ball_d24_H4_256", Arith::ball, 24, 4, 256, true, seed),
               make_case("ball_d8_H4_256_t2", Arith::ball, 8, 4, 256, true, seed, 2), make_case("ball_d24_H4_256_t2", Arith::ball, 24, 4, 256, true, seed, 2)},
              seed, reps);
  return 0;
}
