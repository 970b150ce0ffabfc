// Exact linear solves over Q(tau): the choice of method, the counters, and
// the entry points (qtau_solve.hpp). The methods live in the qtau_*.cpp files
// listed in qtau_solve_internal.hpp.
#include "mhaq/arith/qtau_solve.hpp"

#include <atomic>

#include "mhaq/base/error.hpp"
#include "qtau_solve_internal.hpp"

namespace mhaq {

namespace qtau_detail {
Counters g_stats;
}  // namespace qtau_detail

using qtau_detail::bump;
using qtau_detail::g_stats;
using qtau_detail::Mode;
using qtau_detail::now_ns;

// ------------------------------------------------------------ selection, stats
namespace {
std::atomic<ExactSolveObserver> g_observer{nullptr};
std::atomic<void*> g_observer_ctx{nullptr};
}  // namespace

const char* exact_solver_name(ExactSolver s) {
  switch (s) {
    case ExactSolver::fflu: return "fflu";
    case ExactSolver::modular: return "modular";
    case ExactSolver::sparse: return "sparse";
  }
  return "?";
}
ExactSolver parse_exact_solver(const std::string& s) {
  if (s == "fflu") return ExactSolver::fflu;
  if (s == "modular") return ExactSolver::modular;
  if (s == "sparse") return ExactSolver::sparse;
  throw Error(ErrorKind::usage, "unknown exact solver \"" + s + "\" (expected fflu, modular or sparse)");
}

ExactSolveStats exact_solve_stats() {
  ExactSolveStats s;
  s.calls = g_stats.calls.load();
  s.modular_calls = g_stats.modular_calls.load();
  s.modular_ok = g_stats.modular_ok.load();
  s.sparse_ok = g_stats.sparse_ok.load();
  s.sparse_gave_up = g_stats.sparse_gave_up.load();
  s.fallback_singular = g_stats.fallback_singular.load();
  s.fallback_other = g_stats.fallback_other.load();
  s.primes = g_stats.primes.load();
  s.point_doublings = g_stats.point_doublings.load();
  s.verify_failures = g_stats.verify_failures.load();
  s.nanoseconds = g_stats.ns.load();
  s.verify_nanoseconds = g_stats.verify_ns.load();
  return s;
}
void reset_exact_solve_stats() {
  for (auto* c : {&g_stats.calls, &g_stats.modular_calls, &g_stats.modular_ok, &g_stats.sparse_ok, &g_stats.sparse_gave_up,
                  &g_stats.fallback_singular, &g_stats.fallback_other,
                  &g_stats.primes, &g_stats.point_doublings, &g_stats.verify_failures})
    c->store(0);
  g_stats.ns.store(0);
  g_stats.verify_ns.store(0);
}
void set_exact_solve_observer(ExactSolveObserver fn, void* ctx) {
  g_observer_ctx.store(ctx);
  g_observer.store(fn);
}

bool qtau_solve(ExactSolver s, Mat<QTau>& X, const Mat<QTau>& A, const Mat<QTau>& B) {
  if (A.rows() != A.cols() || B.rows() != A.rows()) throw_internal("qtau_solve: shape mismatch");
  if (ExactSolveObserver obs = g_observer.load()) obs(A, B, g_observer_ctx.load());
  bump(g_stats.calls);
  const std::int64_t t0 = now_ns();
  bool ok;
  if (A.rows() == 0) {
    X = Mat<QTau>(0, B.cols());
    ok = true;
  } else {
    switch (s) {
      case ExactSolver::fflu: ok = qtau_detail::solve_fflu(X, A, B); break;
      case ExactSolver::modular: ok = qtau_detail::solve_modular(Mode::dense, X, A, B); break;
      case ExactSolver::sparse: ok = qtau_detail::solve_modular(Mode::sparse, X, A, B); break;
      default: throw_internal("qtau_solve: unknown solver");
    }
  }
  g_stats.ns.fetch_add(now_ns() - t0, std::memory_order_relaxed);
  return ok;
}

bool qtau_rational_interpolate(ExactSolver s, const std::vector<QTau>& f, int H, std::vector<QTau>& N, std::vector<QTau>& Q) {
  const int n = 2 * H + 1;
  if (H < 1 || static_cast<int>(f.size()) != n) throw_internal("qtau_rational_interpolate: need 2H+1 samples");
  Mat<QTau> A(n, n), rhs(n, 1), x;
  for (int k = 0; k < n; ++k) {
    long km = 1;
    for (int m = 0; m <= H; ++m) {
      A(k, m) = QTau(Rational(km));
      if (m >= 1) A(k, H + m) = -(f[k] * QTau(Rational(km)));
      km *= k;
    }
    rhs(k, 0) = f[k];
  }
  if (!qtau_solve(s, x, A, rhs)) return false;
  N.clear();
  Q.assign(1, QTau(Rational(1)));
  for (int m = 0; m <= H; ++m) N.push_back(x(m, 0));
  for (int m = 1; m <= H; ++m) Q.push_back(x(H + m, 0));
  return true;
}

}  // namespace mhaq
