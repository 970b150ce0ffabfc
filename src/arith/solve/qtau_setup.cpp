// A Q(tau) system in stored form: each entry as a scalar times shared primitive
// polynomials, and the degree bounds the modular solvers start from.
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

namespace {
// p = c q for the primitive q (positive leading coefficient)? Then c is
// lead(p) / lead(q), and c is set to it.
bool multiple_of(const fmpz_poly_t p, const fmpz_poly_t q, fmpz_t c) {
  const slong len = fmpz_poly_length(p);
  if (fmpz_poly_length(q) != len || !fmpz_divisible(p->coeffs + len - 1, q->coeffs + len - 1)) return false;
  fmpz_divexact(c, p->coeffs + len - 1, q->coeffs + len - 1);
  Fmpz t;
  for (slong i = 0; i + 1 < len; ++i) {
    fmpz_mul(t.v, c, q->coeffs + i);
    if (!fmpz_equal(t.v, p->coeffs + i)) return false;
  }
  return true;
}

int intern(Setup& S, const fmpz_poly_t p, fmpz_t c) {
  // p = c * P[index]
  const slong len = fmpz_poly_length(p);
  if (len == 0) { fmpz_zero(c); return -1; }
  if (len == 1) { fmpz_poly_get_coeff_fmpz(c, p, 0); return 0; }
  // a multiple of a stored polynomial (a pair row's entries -k^m f(k) and
  // f(k) share f(k)'s numerator and denominator): c without a content
  for (size_t s = 1; s < S.P.size(); ++s)
    if (multiple_of(p, S.P[s].p, c)) return static_cast<int>(s);
  _fmpz_vec_content(c, p->coeffs, len);
  if (fmpz_sgn(p->coeffs + len - 1) < 0) fmpz_neg(c, c);
  // (no stored polynomial is this one's primitive part: the loop above found none)
  FmpzPoly prim;
  fmpz_poly_scalar_divexact_fmpz(prim.p, p, c);
  S.P.push_back(prim);
  S.is_den.push_back(0);
  return static_cast<int>(S.P.size() - 1);
}
}  // namespace

void build_setup(Setup& S, const Mat<QTau>& A, const Mat<QTau>& B) {
  S.n = A.rows();
  S.k = B.cols();
  S.P.assign(1, FmpzPoly());
  fmpz_poly_one(S.P[0].p);
  S.is_den.assign(1, 0);
  S.terms.assign(static_cast<size_t>(S.n) * (S.n + S.k), Term());
  long cramer = 0;
  for (int i = 0; i < S.n; ++i) {
    long row_num = 0;  // max deg num in the row
    std::vector<int> dens;
    long den_deg = 0;  // degree of the product of the distinct denominators (>= the row lcm)
    for (int j = 0; j < S.n + S.k; ++j) {
      const QTau& e = j < S.n ? A(i, j) : B(i, j - S.n);
      Term& t = S.terms[static_cast<size_t>(i) * (S.n + S.k) + j];
      t.num = intern(S, QTauAccess::raw(e)->num, t.cn.v);
      if (t.num < 0) continue;
      t.den = intern(S, QTauAccess::raw(e)->den, t.cd.v);
      S.is_den[t.den] = 1;
      const long dn = fmpz_poly_degree(QTauAccess::raw(e)->num), dd = fmpz_poly_degree(QTauAccess::raw(e)->den);
      S.max_total_degree = std::max(S.max_total_degree, dn + dd);
      row_num = std::max(row_num, dn - dd);
      if (std::find(dens.begin(), dens.end(), t.den) == dens.end()) {
        dens.push_back(t.den);
        den_deg += dd;
      }
    }
    cramer += std::max(0L, row_num + den_deg);
  }
  // Cramer: each solution entry is det_j / det of the cleared matrix, whose
  // row i has degree <= row_num + den_deg.
  S.cramer_bound = 2 * cramer;
}

}  // namespace mhaq::qtau_detail
