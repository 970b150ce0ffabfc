#include "mhaq/arith/qtau_solve.hpp"

#include <flint/fmpz_poly_mat.h>

#include <atomic>

#include "mhaq/arith/qtau_access.hpp"

namespace mhaq {

namespace {
std::atomic<int> g_solver{static_cast<int>(ExactSolver::fflu)};

struct PolyMat {
  fmpz_poly_mat_t m;
  PolyMat(long r, long c) { fmpz_poly_mat_init(m, r, c); }
  ~PolyMat() { fmpz_poly_mat_clear(m); }
  PolyMat(const PolyMat&) = delete;
  PolyMat& operator=(const PolyMat&) = delete;
};
struct Poly {
  fmpz_poly_t p;
  Poly() { fmpz_poly_init(p); }
  ~Poly() { fmpz_poly_clear(p); }
  Poly(const Poly&) = delete;
  Poly& operator=(const Poly&) = delete;
};

bool solve_fflu(Mat<QTau>& X, const Mat<QTau>& A, const Mat<QTau>& B) {
  // Clear denominators row by row, then fraction-free LU over Z[tau]
  // (FLINT fmpz_poly_mat_solve_fflu): exact, and far cheaper than Gaussian
  // elimination with a gcd after every field operation.
  const int n = A.rows(), k = B.cols();
  PolyMat a(n, n), b(n, k), x(n, k);
  Poly lcm, t, den;
  for (int i = 0; i < n; ++i) {
    fmpz_poly_one(lcm.p);
    for (int j = 0; j < n; ++j) fmpz_poly_lcm(lcm.p, lcm.p, QTauAccess::raw(A(i, j))->den);
    for (int j = 0; j < k; ++j) fmpz_poly_lcm(lcm.p, lcm.p, QTauAccess::raw(B(i, j))->den);
    for (int j = 0; j < n + k; ++j) {
      const QTau& e = j < n ? A(i, j) : B(i, j - n);
      fmpz_poly_div(t.p, lcm.p, QTauAccess::raw(e)->den);
      fmpz_poly_mul(j < n ? fmpz_poly_mat_entry(a.m, i, j) : fmpz_poly_mat_entry(b.m, i, j - n), t.p, QTauAccess::raw(e)->num);
    }
  }
  if (!fmpz_poly_mat_solve_fflu(x.m, den.p, a.m, b.m)) return false;
  X = Mat<QTau>(n, k);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) {
      fmpz_poly_q_struct* v = QTauAccess::raw(X(i, j));
      fmpz_poly_set(v->num, fmpz_poly_mat_entry(x.m, i, j));
      fmpz_poly_set(v->den, den.p);
      fmpz_poly_q_canonicalise(v);
    }
  return true;
}
}  // namespace

const char* exact_solver_name(ExactSolver) { return "fflu"; }
ExactSolver parse_exact_solver(const std::string& s) {
  if (s == "fflu") return ExactSolver::fflu;
  throw Error(ErrorKind::usage, "unknown exact solver \"" + s + "\" (expected fflu)");
}
void set_exact_solver(ExactSolver s) { g_solver = static_cast<int>(s); }
ExactSolver current_exact_solver() { return static_cast<ExactSolver>(g_solver.load()); }

bool qtau_solve(ExactSolver, Mat<QTau>& X, const Mat<QTau>& A, const Mat<QTau>& B) { return solve_fflu(X, A, B); }

}  // namespace mhaq
