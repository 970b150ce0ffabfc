// Benchmark of exact mode at scale (not run by ctest): exact recoveries through
// recover() (cost guard, repairs, self-check and the comparison with the truth
// included), the default solver beside the fraction-free LU in the same run.
//   usage: bench_exact_scale [d6] [d8] [d12] [threads] [--no-fflu] [--seeds N] [--fflu-seeds K]
//     d6       d=6 H=3, seeds 1..N (N = 5), sparse and fflu, single thread
//     d8       d=8 H=4, seeds 1..N
//     d12      d=12 H=4, seed 1 (sparse only unless --fflu12)
//     threads  d=6 H=3 at 1 and 2 threads: speedup, and byte-identical JSON
//   --fflu-seeds K runs the (slow) fflu reference on the first K seeds only.
// Prints one line per run and a summary per case: medians and the median of
// the per-seed ratios fflu / sparse; statuses and repairs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mhaq/run/record_json.hpp"
#include "mhaq/run/recover.hpp"

using namespace mhaq;

namespace {
using Clock = std::chrono::steady_clock;

struct Run {
  double seconds = 0;
  nlohmann::json r;
};

Run run(int d, int H, std::uint64_t seed, ExactSolver s, int threads) {
  GenerateOptions g;
  g.d = d;
  g.heads = H;
  g.seed = seed;
  const Model m = generate_model(g);
  RecoverOptions o;
  o.seed = seed;
  o.exact_solver = s;
  o.threads = threads;
  const auto t0 = Clock::now();
  Run out;
  out.r = record_json(recover(m, o));
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void line(const char* tag, int d, int H, std::uint64_t seed, const char* solver, const Run& x) {
  std::printf("%s d=%d H=%d seed=%llu %-6s %8.2f s  status %-10s repairs %d  max degree %.0f\n", tag, d, H, static_cast<unsigned long long>(seed),
              solver, x.seconds, x.r.value("status", "?").c_str(), x.r.value("repairs", 0),
              x.r.contains("exact_cost") ? x.r["exact_cost"]["max_answer_degree"].get<double>() : 0.0);
  std::fflush(stdout);
}

void compare(int d, int H, int seeds, bool fflu_all, int fflu_seeds) {
  std::vector<double> ts, tf, ratio;
  int ok = 0, repaired = 0;
  for (int s = 1; s <= seeds; ++s) {
    const Run a = run(d, H, static_cast<std::uint64_t>(s), ExactSolver::sparse, 1);
    line("run", d, H, static_cast<std::uint64_t>(s), "sparse", a);
    ts.push_back(a.seconds);
    ok += a.r["status"] == "ok";
    repaired += a.r.value("repairs", 0) > 0;
    const bool fflu = fflu_all && s <= fflu_seeds;
    if (fflu) {
      const Run b = run(d, H, static_cast<std::uint64_t>(s), ExactSolver::fflu, 1);
      line("run", d, H, static_cast<std::uint64_t>(s), "fflu", b);
      tf.push_back(b.seconds);
      ratio.push_back(b.seconds / a.seconds);
      nlohmann::json x = a.r, y = b.r;
      x.erase("exact_solver");
      y.erase("exact_solver");
      if (x.dump() != y.dump()) std::printf("  RESULTS DIFFER between sparse and fflu at seed %d\n", s);
    }
  }
  std::printf("summary d=%d H=%d: %d seeds, %d ok (%d repaired); sparse median %.2f s", d, H, seeds, ok, repaired, median(ts));
  if (!tf.empty())
    std::printf(", fflu median %.2f s over %zu seeds, median ratio fflu/sparse x%.1f", median(tf), tf.size(), median(ratio));
  std::printf("\n\n");
  std::fflush(stdout);
}

void threads_case(int seeds) {
  std::vector<double> speed;
  bool same = true;
  for (int s = 1; s <= seeds; ++s) {
    const Run a = run(6, 3, static_cast<std::uint64_t>(s), ExactSolver::sparse, 1);
    const Run b = run(6, 3, static_cast<std::uint64_t>(s), ExactSolver::sparse, 2);
    same = same && a.r.dump() == b.r.dump();
    speed.push_back(a.seconds / b.seconds);
    std::printf("threads d=6 H=3 seed=%d: 1 thread %.2f s, 2 threads %.2f s, speedup x%.2f, identical %s\n", s, a.seconds, b.seconds,
                a.seconds / b.seconds, a.r.dump() == b.r.dump() ? "yes" : "NO");
    std::fflush(stdout);
  }
  std::printf("summary threads d=6 H=3: median speedup x%.2f on 2 threads, output byte-identical: %s\n\n", median(speed), same ? "yes" : "NO");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> cases;
  bool fflu = true, fflu12 = false;
  int seeds = 5, fflu_seeds = 1000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-fflu") fflu = false;
    else if (a == "--fflu12") fflu12 = true;
    else if (a == "--seeds" && i + 1 < argc) seeds = std::atoi(argv[++i]);
    else if (a == "--fflu-seeds" && i + 1 < argc) fflu_seeds = std::atoi(argv[++i]);
    else cases.push_back(a);
  }
  if (cases.empty()) cases = {"d6", "d8", "d12", "threads"};
  for (const auto& c : cases) {
    if (c == "d6") compare(6, 3, seeds, fflu, fflu_seeds);
    else if (c == "d8") compare(8, 4, seeds, fflu, fflu_seeds);
    else if (c == "d12") compare(12, 4, 1, fflu12, 1);
    else if (c == "threads") threads_case(seeds);
    else std::fprintf(stderr, "unknown case %s\n", c.c_str());
  }
  return 0;
}
