// Benchmark: wall time of complete recoveries (oracle + learner + comparison),
// printed as one JSON line per case. tests/bench/run.sh compares it with the
// mpmath baseline side by side in the same run.
//   usage: bench_recover [SEED] [REPEATS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mhaq/run/record_json.hpp"
#include "mhaq/run/recover.hpp"

using namespace mhaq;

static void bench(const char* name, Arith a, int d, int H, long bits, std::uint64_t seed, int reps) {
  GenerateOptions g = default_generate(a);
  g.d = d;
  g.heads = H;
  g.seed = seed;
  const Model m = generate_model(g);
  RecoverOptions o;
  o.arith = a;
  o.bits = bits;
  o.seed = seed;
  double best = 1e300;
  nlohmann::json r;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    r = record_json(recover(m, o));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best) best = s;
  }
  nlohmann::json out{{"case", name}, {"arith", arith_name(a)}, {"d", d}, {"H", H}, {"bits", bits}, {"seed", seed},
                     {"status", r["status"]}, {"queries", r["queries"]}, {"max_length", r["max_length"]}, {"seconds", best}};
  for (const char* k : {"max_rel_error", "exact_match", "contains_truth", "max_radius"})
    if (r.contains(k)) out[k] = r[k];
  std::printf("%s\n", out.dump().c_str());
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  const std::uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
  bench("mpfr_d12_H4_256", Arith::mpfr, 12, 4, 256, seed, reps);
  bench("exact_d4_H3", Arith::exact, 4, 3, 0, seed, reps);
  bench("ball_d12_H4_256", Arith::ball, 12, 4, 256, seed, reps);
  return 0;
}
