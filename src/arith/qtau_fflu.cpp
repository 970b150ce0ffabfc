// The reference exact solver: fraction-free LU over Z[tau] (FLINT).
#include "qtau_solve_internal.hpp"

#include <flint/fmpq.h>
#include <flint/fmpz_poly_mat.h>
#include <flint/nmod_vec.h>
#include <flint/ulong_extras.h>

#include <algorithm>
#include <utility>

#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/base/error.hpp"

namespace mhaq::qtau_detail {

using flint::FmpzPolyMat;

bool solve_fflu(Mat<QTau>& X, const Mat<QTau>& A, const Mat<QTau>& B) {
  // Clear denominators row by row, then fraction-free LU over Z[tau]
  // (FLINT fmpz_poly_mat_solve_fflu).
  const int n = A.rows(), k = B.cols();
  FmpzPolyMat a(n, n), b(n, k), x(n, k);
  FmpzPoly lcm, t, den;
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
  if (!fmpz_poly_mat_solve_fflu(x.m, den.p, a.m, b.m)) {
    X = Mat<QTau>();
    return false;
  }
  X = Mat<QTau>(n, k);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) {
      fmpz_poly_set(QTauAccess::raw(X(i, j))->num, fmpz_poly_mat_entry(x.m, i, j));
      fmpz_poly_set(QTauAccess::raw(X(i, j))->den, den.p);
      fmpz_poly_q_canonicalise(QTauAccess::raw(X(i, j)));
    }
  return true;
}

}  // namespace mhaq::qtau_detail
