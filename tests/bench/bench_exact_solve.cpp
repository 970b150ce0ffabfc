// Benchmark: exact recoveries (learn<QTau> on a ModelOracle<QTau>, single
// thread) with each exact solver, side by side in one run, on the real pair
// systems of the query schedule. Per run: total time, time answering queries
// (the oracle), time inside the exact solve (and its exact check), the rest
// (roots by Newton polygon + exact substitution, residues, labelling, final
// solves, self-check). The self-check re-evaluates every answer exactly; its
// cost is measured separately as the time to evaluate every query again.
//   usage: bench_exact_solve [all|d6|d8|d12|CASE|h0:d:H:H0:seed|proto:CASE ...] [--replay] [--no-fflu]
//   CASE = d:H:seed, e.g. 8:4:3; h0:d:H:H0:seed runs with only the bound H0
//   known (--max-heads); proto:CASE times the prototypes of qtau_solve.hpp
//   (roots check, residues, self-check) against today's code paths on that case.  --replay also re-solves every recorded pair
//   system of d6 cases (and the first d8 case) with each method, for per-pair
//   ratios.  --no-fflu skips the (slow) reference runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mhaq/arith/solve/qtau_solve.hpp"
#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/recover.hpp"

using namespace mhaq;

// Exact equality of Q(tau) elements, for comparisons in this file (the
// learner itself has only Field<QTau>::equal).
namespace mhaq {
inline bool operator==(const QTau& a, const QTau& b) { return QTauAccess::equal(a, b); }
}  // namespace mhaq

namespace {
using Clock = std::chrono::steady_clock;
double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Forwards to the model oracle and times the answers.
class TimedOracle final : public Oracle<QTau> {
 public:
  explicit TimedOracle(Oracle<QTau>& o) : o_(o) {}
  int dim() const override { return o_.dim(); }
  const Field<QTau>& field() const override { return o_.field(); }
  double seconds = 0;

 private:
  QTau answer(const Query& q) override {
    const auto t0 = Clock::now();
    QTau r = o_.query(q);
    seconds += secs(t0, Clock::now());
    return r;
  }
  Oracle<QTau>& o_;
};

struct Systems {
  std::vector<Mat<QTau>> A, B;
};
void record(const Mat<QTau>& A, const Mat<QTau>& B, void* ctx) {
  auto* s = static_cast<Systems*>(ctx);
  s->A.push_back(A);
  s->B.push_back(B);
}

struct RunStats {
  std::string status;
  double total = 0, oracle = 0, solve = 0, verify = 0;
  long pairs = 0, fallbacks = 0, primes = 0, doublings = 0;
  bool match = false;
};

RunStats run_once(const Model& m, const Model& canon, const LearnOptions& lo, ExactSolver s, Systems* rec) {
  OracleStack<QTau> inner = OracleStack<QTau>::model(m, lo.tokens.den, {}, s);
  TimedOracle o(inner.top());
  reset_exact_solve_stats();
  if (rec) set_exact_solve_observer(record, rec);
  RunStats r;
  const auto t0 = Clock::now();
  try {
    const LearnResult<QTau> res = learn<QTau>(o, lo);
    r.total = secs(t0, Clock::now());
    r.status = "ok";
    r.match = exact_heads_match(res.heads, canon);
  } catch (const Error& e) {
    r.total = secs(t0, Clock::now());
    r.status = std::string(kind_name(e.kind())) + ": " + e.what();
  }
  set_exact_solve_observer(nullptr, nullptr);
  const ExactSolveStats st = exact_solve_stats();
  r.oracle = o.seconds;
  r.solve = static_cast<double>(st.nanoseconds) * 1e-9;
  r.verify = static_cast<double>(st.verify_nanoseconds) * 1e-9;
  r.pairs = st.calls;
  r.fallbacks = st.fallback_singular + st.fallback_other;
  r.primes = st.primes;
  r.doublings = st.point_doublings;
  return r;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

const ExactSolver kMethods[] = {ExactSolver::fflu, ExactSolver::modular, ExactSolver::sparse};
constexpr int kM = 3;

struct Summary {
  std::vector<double> total[kM], solve[kM];
};

// Returns false for a degenerate draw (reported, skipped).
bool bench_case(int d, int H, std::uint64_t seed, bool replay, bool with_fflu, Summary& sum) {
  GenerateOptions g = default_generate(Arith::exact);
  g.d = d;
  g.heads = H;
  g.seed = seed;
  const Model m = generate_model(g);
  const Model canon = m.canonical();
  LearnOptions lo;
  lo.H = static_cast<int>(canon.heads.size());
  lo.seed = learner_seed(seed);
  lo.tokens = default_tokens(Arith::exact);
  lo.threads = 1;
  // The sparse run goes first: a degenerate draw is then found cheaply.
  Systems sys;
  RunStats r[kM];
  r[2] = run_once(m, canon, lo, ExactSolver::sparse, replay ? &sys : nullptr);
  if (r[2].status != "ok") {
    std::printf("d=%d H=%d seed=%llu: %s (skipped; sparse run %.2f s)\n", d, H, static_cast<unsigned long long>(seed), r[2].status.c_str(),
                r[2].total);
    std::fflush(stdout);
    return false;
  }
  r[1] = run_once(m, canon, lo, ExactSolver::modular, nullptr);
  if (with_fflu) r[0] = run_once(m, canon, lo, ExactSolver::fflu, nullptr);
  // self-check cost: every query evaluated once more, exactly
  const Plan plan = learner_plan(d, lo);
  const auto qs = plan.queries();
  OracleStack<QTau> probe_stack = OracleStack<QTau>::model(m, lo.tokens.den);
  Oracle<QTau>& probe = probe_stack.top();
  const auto t0 = Clock::now();
  for (const auto& q : qs) (void)evaluate_exact(canon, q, QTauAccess::L(probe.field()));
  const double selfcheck = secs(t0, Clock::now());
  std::printf("d=%d H=%d seed=%llu: %ld pair solves, L=%ld, %zu queries\n", d, H, static_cast<unsigned long long>(seed), r[2].pairs,
              QTauAccess::L(probe.field()), qs.size());
  for (int i = with_fflu ? 0 : 1; i < kM; ++i) {
    const RunStats& x = r[i];
    std::printf("  %-8s total %8.3f s | solve %8.3f s (%7.2f ms/pair, exact check %.3f s) | oracle %.3f s | self-check ~%.3f s | rest %.3f s | "
                "match %s, fallbacks %ld, primes %ld",
                exact_solver_name(kMethods[i]), x.total, x.solve, 1e3 * x.solve / x.pairs, x.verify, x.oracle, selfcheck,
                x.total - x.oracle - x.solve - selfcheck, x.status == "ok" && x.match ? "yes" : "NO", x.fallbacks, x.primes);
    if (i > 0 && with_fflu) std::printf(" | vs fflu: total %.2fx, solve %.1fx", r[0].total / x.total, r[0].solve / x.solve);
    if (i == 2) std::printf(" | vs modular: total %.2fx, solve %.1fx", r[1].total / x.total, r[1].solve / x.solve);
    std::printf("\n");
    sum.total[i].push_back(x.total);
    sum.solve[i].push_back(x.solve);
  }
  std::fflush(stdout);
  if (replay && !sys.A.empty()) {
    std::vector<double> ratio[kM];
    double tt[kM] = {0, 0, 0};
    bool all_equal = true;
    for (size_t i = 0; i < sys.A.size(); ++i) {
      Mat<QTau> X[kM];
      bool ok[kM];
      double t[kM];
      for (int mth = with_fflu ? 0 : 1; mth < kM; ++mth) {
        const auto s0 = Clock::now();
        ok[mth] = qtau_solve(kMethods[mth], X[mth], sys.A[i], sys.B[i]);
        t[mth] = secs(s0, Clock::now());
        tt[mth] += t[mth];
      }
      for (int mth = with_fflu ? 0 : 1; mth + 1 < kM; ++mth) {
        ratio[mth].push_back(t[mth] / t[2]);
        bool eq = ok[mth] == ok[2];
        for (int rr = 0; eq && ok[2] && rr < X[2].rows(); ++rr) eq = X[mth](rr, 0) == X[2](rr, 0);
        all_equal = all_equal && eq;
      }
    }
    std::printf("  replay of %zu pair systems:", sys.A.size());
    for (int mth = with_fflu ? 0 : 1; mth < kM; ++mth) std::printf(" %s %.3f s;", exact_solver_name(kMethods[mth]), tt[mth]);
    for (int mth = with_fflu ? 0 : 1; mth + 1 < kM; ++mth) {
      std::sort(ratio[mth].begin(), ratio[mth].end());
      std::printf(" per-pair %s/sparse min %.1fx median %.1fx max %.1fx;", exact_solver_name(kMethods[mth]), ratio[mth].front(),
                  median(ratio[mth]), ratio[mth].back());
    }
    std::printf(" all equal %s\n", all_equal ? "yes" : "NO");
    std::fflush(stdout);
  }
  return true;
}

void report(const char* name, const Summary& s) {
  std::printf("== %s: medians over %zu runs:", name, s.total[2].size());
  for (int i = 0; i < kM; ++i)
    if (!s.total[i].empty()) std::printf(" %s total %.3f s (solve %.3f s);", exact_solver_name(kMethods[i]), median(s.total[i]), median(s.solve[i]));
  if (!s.total[0].empty())
    std::printf(" ratio of medians fflu/sparse: total %.2fx, solve %.1fx", median(s.total[0]) / median(s.total[2]),
                median(s.solve[0]) / median(s.solve[2]));
  std::printf("\n");
  std::fflush(stdout);
}

void series(const char* name, int d, int H, int want, bool replay, int replay_count, bool with_fflu) {
  Summary s;
  int got = 0;
  for (std::uint64_t seed = 1; got < want && seed < 50; ++seed)
    if (bench_case(d, H, seed, replay && got < replay_count, with_fflu, s)) ++got;
  report(name, s);
}

// --max-heads runs (claim 3): the learner also fits type-(m, m) functions with
// m below the head count, whose solutions are not sparse.
void bench_h0(int d, int H, int H0, std::uint64_t seed) {
  GenerateOptions g = default_generate(Arith::exact);
  g.d = d;
  g.heads = H;
  g.seed = seed;
  const Model m = generate_model(g);
  const Model canon = m.canonical();
  LearnOptions lo;
  lo.H = H0;
  lo.heads_is_bound = true;
  lo.seed = learner_seed(seed);
  lo.tokens = default_tokens(Arith::exact);
  lo.threads = 1;
  std::printf("max-heads run d=%d H=%d H0=%d seed=%llu:\n", d, H, H0, static_cast<unsigned long long>(seed));
  for (ExactSolver s : kMethods) {
    const RunStats r = run_once(m, canon, lo, s, nullptr);
    const ExactSolveStats st = exact_solve_stats();
    std::printf("  %-8s %s total %.3f s, solve %.3f s over %ld solves (sparse found %ld, gave up %ld), match %s\n", exact_solver_name(s),
                r.status.c_str(), r.total, r.solve, r.pairs, st.sparse_ok, st.sparse_gave_up, r.match ? "yes" : "NO");
    std::fflush(stdout);
  }
}

// ---- prototypes for the other hot paths (qtau_solve.hpp), on the real data
// of one recovery: the roots check and residues of every pair fit, and the
// exact self-check (and the oracle's sum of heads), each timed against the
// code path the learner uses today, with exact equality of the results.
void bench_prototypes(int d, int H, std::uint64_t seed) {
  GenerateOptions g = default_generate(Arith::exact);
  g.d = d;
  g.heads = H;
  g.seed = seed;
  const Model m = generate_model(g);
  const Model canon = m.canonical();
  LearnOptions lo;
  lo.H = static_cast<int>(canon.heads.size());
  lo.seed = learner_seed(seed);
  lo.tokens = default_tokens(Arith::exact);
  lo.threads = 1;
  Systems sys;
  const RunStats r = run_once(m, canon, lo, ExactSolver::sparse, &sys);
  std::printf("prototypes on d=%d H=%d seed=%llu (%s):\n", d, H, static_cast<unsigned long long>(seed), r.status.c_str());
  if (r.status != "ok") return;
  OracleStack<QTau> oracle_stack = OracleStack<QTau>::model(m, lo.tokens.den);
  Oracle<QTau>& oracle = oracle_stack.top();
  const Field<QTau>& F = oracle.field();
  // roots check and residues
  double t_old = 0, t_new = 0, t_newton = 0;
  bool same = true;
  for (size_t i = 0; i < sys.A.size(); ++i) {
    Mat<QTau> X;
    if (!qtau_solve(ExactSolver::sparse, X, sys.A[i], sys.B[i])) continue;
    const int h = (X.rows() - 1) / 2;
    std::vector<QTau> N, Q{QTau(Rational(1))};
    for (int k = 0; k <= h; ++k) N.push_back(X(k, 0));
    for (int k = 1; k <= h; ++k) Q.push_back(X(h + k, 0));
    const std::vector<QTau> dQ = poly_derivative(F, Q);
    auto a0 = Clock::now();
    const std::vector<QTau> roots = F.real_roots(Q).roots;  // Newton polygon + exact substitution (today)
    auto a1 = Clock::now();
    t_newton += secs(a0, a1);
    std::vector<QTau> c_old, c_new;
    a0 = Clock::now();
    for (const QTau& rho : roots) {
      same = same && QTauAccess::is_zero(poly_eval(Q, rho));
      const QTau rr = QTau(Rational(-1)) / rho;
      c_old.push_back(rr * poly_eval(N, rho) / poly_eval(dQ, rho));
    }
    a1 = Clock::now();
    for (const QTau& rho : roots) {
      same = same && QTauAccess::is_zero(qtau_poly_eval(Q, rho));
      const QTau rr = qtau_div(QTau(Rational(-1)), rho);
      c_new.push_back(qtau_div(qtau_mul(rr, qtau_poly_eval(N, rho)), qtau_poly_eval(dQ, rho)));
    }
    const auto a2 = Clock::now();
    t_old += secs(a0, a1);
    t_new += secs(a1, a2);
    same = same && c_old == c_new;
  }
  std::printf("  pair fits: real_roots (today, incl. its substitution check) %.3f s; substitution check + residues: "
              "fmpz_poly_q Horner/division %.3f s, Laurent prototypes %.3f s (%.1fx), equal %s\n",
              t_newton, t_old, t_new, t_old / t_new, same ? "yes" : "NO");
  // self-check and the oracle's sum over heads
  const Plan plan = learner_plan(d, lo);
  const auto qs = plan.queries();
  std::vector<QTau> ans;
  for (const auto& q : qs) ans.push_back(oracle.query(q));
  double s_old = 0, s_new = 0;
  bool ok_old = true, ok_new = true, ok_reject = true;
  for (size_t qi = 0; qi < qs.size(); ++qi) {
    const Query& q = qs[qi];
    auto b0 = Clock::now();
    ok_old = ok_old && evaluate_exact(canon, q, QTauAccess::L(F)) == ans[qi];
    auto b1 = Clock::now();
    // per head: num_h = sum_i count_i (v_h . x_i) tau^{n_i}, den_h = sum_i count_i tau^{n_i},
    // n_i = L (s_i - s_max), s_i = x_i^T W_h x_N (the attention formula, exact in Q)
    std::vector<QTau> nu, de;
    for (const auto& hd : canon.heads) {
      const QVec Wx = matvec(hd.W, q.back().token);
      std::vector<Rational> sc;
      Rational smax;
      for (size_t i = 0; i < q.size(); ++i) {
        sc.push_back(dot(q[i].token, Wx));
        if (i == 0 || sc[i] > smax) smax = sc[i];
      }
      std::vector<std::pair<long, Rational>> tn, td;
      for (size_t i = 0; i < q.size(); ++i) {
        const long e = ((sc[i] - smax) * Rational(QTauAccess::L(F))).to_long();
        const Rational cnt(q[i].count);
        tn.push_back({e, cnt * dot(hd.v, q[i].token)});
        td.push_back({e, cnt});
      }
      nu.push_back(qtau_laurent(tn));
      de.push_back(qtau_laurent(td));
    }
    const bool eq = qtau_fraction_sum_equals(nu, de, ans[qi]);
    auto b2 = Clock::now();
    // must also reject a wrong answer
    ok_reject = ok_reject && !qtau_fraction_sum_equals(nu, de, ans[qi] + QTau(Rational(1, 1024)));
    ok_new = ok_new && eq;
    s_old += secs(b0, b1);
    s_new += secs(b1, b2);
  }
  std::printf("  self-check of %zu answers: evaluate_exact == answer %.3f s (all equal %s); Laurent terms + cross-multiplied "
              "equality %.3f s (%.1fx, all equal %s, perturbed answers all rejected %s)\n",
              qs.size(), s_old, ok_old ? "yes" : "NO", s_new, s_old / s_new, ok_new ? "yes" : "NO", ok_reject ? "yes" : "NO");
  std::fflush(stdout);
}
}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> what;
  bool replay = false, with_fflu = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--replay") replay = true;
    else if (a == "--no-fflu") with_fflu = false;
    else what.push_back(a);
  }
  if (what.empty()) what.push_back("all");
  std::printf("bench_exact_solve: single thread, default exact model and tokens; seconds are wall time on this machine, ratios are what count\n");
  for (const auto& w : what) {
    if (w == "all" || w == "d6") series("d=6 H=3", 6, 3, 5, replay, 5, with_fflu);
    if (w == "all" || w == "d8") series("d=8 H=4", 8, 4, 5, replay, 1, with_fflu);
    if (w == "all" || w == "d12") series("d=12 H=4", 12, 4, 1, false, 0, with_fflu);
    int d, H;
    unsigned long long seed;
    int H0;
    if (std::sscanf(w.c_str(), "h0:%d:%d:%d:%llu", &d, &H, &H0, &seed) == 4) {
      bench_h0(d, H, H0, seed);
      continue;
    }
    if (std::sscanf(w.c_str(), "proto:%d:%d:%llu", &d, &H, &seed) == 3) {
      bench_prototypes(d, H, seed);
      continue;
    }
    if (std::sscanf(w.c_str(), "%d:%d:%llu", &d, &H, &seed) == 3) {
      Summary s;
      bench_case(d, H, seed, replay, with_fflu, s);
    }
  }
  return 0;
}
