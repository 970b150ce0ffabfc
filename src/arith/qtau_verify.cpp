// The exact check of a candidate solution in Z[tau], and the canonical form
// of the result.
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

void mul_sparse_aware(fmpz_poly_t out, const fmpz_poly_t a, const fmpz_poly_t b) {
  const slong la = fmpz_poly_length(a), lb = fmpz_poly_length(b);
  if (la == 0 || lb == 0) {
    fmpz_poly_zero(out);
    return;
  }
  std::vector<slong> ia, ib;
  for (slong i = 0; i < la; ++i)
    if (!fmpz_is_zero(a->coeffs + i)) ia.push_back(i);
  for (slong i = 0; i < lb; ++i)
    if (!fmpz_is_zero(b->coeffs + i)) ib.push_back(i);
  if (static_cast<slong>(ia.size() * ib.size()) > 2 * (la + lb)) {
    fmpz_poly_mul(out, a, b);
    return;
  }
  FmpzPoly r;
  fmpz_poly_fit_length(r.p, la + lb - 1);
  _fmpz_vec_zero(r.p->coeffs, la + lb - 1);
  for (slong i : ia)
    for (slong j : ib) fmpz_addmul(r.p->coeffs + i + j, a->coeffs + i, b->coeffs + j);
  _fmpz_poly_set_length(r.p, la + lb - 1);
  _fmpz_poly_normalise(r.p);
  fmpz_poly_swap(out, r.p);
}

bool verify_exact(const Setup& S, const FmpzPoly& betaZ, const std::vector<FmpzPoly>& alphaZ) {
  const int n = S.n, k = S.k;
  FmpzPoly ell, cof, G, acc, prod, negb;
  fmpz_poly_neg(negb.p, betaZ.p);
  Fmpz Lint, sc;
  for (int i = 0; i < n; ++i) {
    // row lcm: integer part and polynomial part
    fmpz_one(Lint.v);
    std::vector<int> dens;
    for (int j = 0; j < n + k; ++j) {
      const Term& T = S.at(i, j);
      if (T.num < 0) continue;
      fmpz_lcm(Lint.v, Lint.v, T.cd.v);
      if (std::find(dens.begin(), dens.end(), T.den) == dens.end()) dens.push_back(T.den);
    }
    std::sort(dens.begin(), dens.end());
    fmpz_poly_one(ell.p);
    for (int d : dens)
      if (d > 0) fmpz_poly_lcm(ell.p, ell.p, S.P[d].p);
    for (int c = 0; c < k; ++c) {
      fmpz_poly_zero(acc.p);
      // groups keyed by (den, num)
      std::vector<std::pair<int, int>> keys;
      for (int j = 0; j <= n; ++j) {
        const Term& T = j < n ? S.at(i, j) : S.at(i, n + c);
        if (T.num < 0) continue;
        if (std::find(keys.begin(), keys.end(), std::make_pair(T.den, T.num)) == keys.end()) keys.push_back({T.den, T.num});
      }
      std::sort(keys.begin(), keys.end());
      for (size_t g = 0; g < keys.size();) {
        const int den = keys[g].first;
        FmpzPoly inner;
        for (; g < keys.size() && keys[g].first == den; ++g) {
          const int num = keys[g].second;
          fmpz_poly_zero(G.p);
          for (int j = 0; j <= n; ++j) {
            const Term& T = j < n ? S.at(i, j) : S.at(i, n + c);
            if (T.num != num || T.den != den) continue;
            const fmpz_poly_struct* x = j < n ? alphaZ[static_cast<size_t>(j) * k + c].p : negb.p;
            fmpz_divexact(sc.v, Lint.v, T.cd.v);
            fmpz_mul(sc.v, sc.v, T.cn.v);
            fmpz_poly_scalar_addmul_fmpz(G.p, x, sc.v);
          }
          if (num > 0) {
            mul_sparse_aware(prod.p, S.P[num].p, G.p);
            fmpz_poly_add(inner.p, inner.p, prod.p);
          } else {
            fmpz_poly_add(inner.p, inner.p, G.p);
          }
        }
        if (den == 0) {
          mul_sparse_aware(prod.p, ell.p, inner.p);
          fmpz_poly_add(acc.p, acc.p, prod.p);
        } else if (dens.size() == 1 || (dens.size() == 2 && dens[0] == 0 && fmpz_poly_equal(ell.p, S.P[den].p))) {
          fmpz_poly_add(acc.p, acc.p, inner.p);  // ell / P[den] = 1
        } else {
          fmpz_poly_div(cof.p, ell.p, S.P[den].p);
          mul_sparse_aware(prod.p, cof.p, inner.p);
          fmpz_poly_add(acc.p, acc.p, prod.p);
        }
      }
      if (!fmpz_poly_is_zero(acc.p)) return false;
    }
  }
  return true;
}

void set_canonical(QTau& x, const fmpz_poly_t num, const fmpz_poly_t den) {
  fmpz_poly_q_struct* r = QTauAccess::raw(x);
  if (fmpz_poly_is_zero(num)) {
    fmpz_poly_zero(r->num);
    fmpz_poly_one(r->den);
    return;
  }
  const slong dl = fmpz_poly_length(den);
  bool monomial = true;
  for (slong i = 0; i + 1 < dl && monomial; ++i) monomial = fmpz_is_zero(den->coeffs + i);
  if (!monomial) {
    fmpz_poly_set(r->num, num);
    fmpz_poly_set(r->den, den);
    fmpz_poly_q_canonicalise(r);
    return;
  }
  // den = c tau^e: cancel the common power of tau and the integer content
  slong v = 0;
  while (fmpz_is_zero(num->coeffs + v)) ++v;
  const slong e = dl - 1, s = std::min(v, e);
  Fmpz g;
  _fmpz_vec_content(g.v, num->coeffs, fmpz_poly_length(num));
  fmpz_gcd(g.v, g.v, den->coeffs + e);
  if (fmpz_sgn(den->coeffs + e) < 0) fmpz_neg(g.v, g.v);
  fmpz_poly_shift_right(r->num, num, s);
  fmpz_poly_scalar_divexact_fmpz(r->num, r->num, g.v);
  fmpz_poly_zero(r->den);
  Fmpz c;
  fmpz_divexact(c.v, den->coeffs + e, g.v);
  fmpz_poly_set_coeff_fmpz(r->den, e - s, c.v);
}

}  // namespace mhaq::qtau_detail
