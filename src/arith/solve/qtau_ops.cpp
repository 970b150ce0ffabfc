// Fast exact Q(tau) operations (qtau_solve.hpp): Laurent elements combined
// by integer polynomial shifts, fractions by cross-multiplication.
#include <flint/fmpq.h>
#include <flint/fmpz.h>
#include <flint/fmpz_poly.h>

#include <algorithm>
#include <utility>

#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/arith/ratio_sum.hpp"
#include "mhaq/base/error.hpp"
#include "qtau_solve_internal.hpp"

namespace mhaq {

using qtau_detail::Fmpz;
using qtau_detail::FmpzPoly;
using qtau_detail::mul_sparse_aware;
using qtau_detail::set_canonical;

namespace {
// P / (D tau^s) with P in Z[tau], D > 0, s >= 0.
struct Laurent {
  FmpzPoly P;
  Fmpz D;
  slong s = 0;
};

// x as a Laurent element, if its denominator is c * tau^s.
bool as_laurent(const QTau& x, Laurent& out) {
  const fmpz_poly_struct* den = QTauAccess::raw(x)->den;
  const slong dl = fmpz_poly_length(den);
  for (slong i = 0; i + 1 < dl; ++i)
    if (!fmpz_is_zero(den->coeffs + i)) return false;
  fmpz_poly_set(out.P.p, QTauAccess::raw(x)->num);
  fmpz_set(out.D.v, den->coeffs + dl - 1);  // positive in canonical form
  out.s = dl - 1;
  return true;
}

// Canonical QTau of a Laurent element.
void from_laurent(QTau& x, const Laurent& l) {
  FmpzPoly den;
  fmpz_poly_set_coeff_fmpz(den.p, l.s, l.D.v);
  set_canonical(x, l.P.p, den.p);
}

// acc += y (exact; common denominator lcm, common shift max).
void laurent_add(Laurent& acc, const Laurent& y) {
  if (fmpz_poly_is_zero(y.P.p)) return;
  if (fmpz_poly_is_zero(acc.P.p)) {
    acc = y;
    return;
  }
  Fmpz L, fa, fy;
  fmpz_lcm(L.v, acc.D.v, y.D.v);
  fmpz_divexact(fa.v, L.v, acc.D.v);
  fmpz_divexact(fy.v, L.v, y.D.v);
  const slong s = std::max(acc.s, y.s);
  FmpzPoly t;
  fmpz_poly_scalar_mul_fmpz(acc.P.p, acc.P.p, fa.v);
  fmpz_poly_shift_left(acc.P.p, acc.P.p, s - acc.s);
  fmpz_poly_scalar_mul_fmpz(t.p, y.P.p, fy.v);
  fmpz_poly_shift_left(t.p, t.p, s - y.s);
  fmpz_poly_add(acc.P.p, acc.P.p, t.p);
  fmpz_set(acc.D.v, L.v);
  acc.s = s;
}

// y *= (u / v) tau^e, v > 0.
void laurent_scale(Laurent& y, const fmpz_t u, const fmpz_t v, slong e) {
  fmpz_poly_scalar_mul_fmpz(y.P.p, y.P.p, u);
  fmpz_mul(y.D.v, y.D.v, v);
  y.s -= e;
  if (y.s < 0) {
    fmpz_poly_shift_left(y.P.p, y.P.p, -y.s);
    y.s = 0;
  }
}

// x = (u / v) tau^e exactly? (canonical form: one of num, den is a constant)
bool as_monomial(const QTau& x, Fmpz& u, Fmpz& v, slong& e) {
  const fmpz_poly_struct* num = QTauAccess::raw(x)->num;
  const fmpz_poly_struct* den = QTauAccess::raw(x)->den;
  const slong nl = fmpz_poly_length(num), dl = fmpz_poly_length(den);
  if (nl == 0) return false;
  for (slong i = 0; i + 1 < nl; ++i)
    if (!fmpz_is_zero(num->coeffs + i)) return false;
  for (slong i = 0; i + 1 < dl; ++i)
    if (!fmpz_is_zero(den->coeffs + i)) return false;
  fmpz_set(u.v, num->coeffs + nl - 1);
  fmpz_set(v.v, den->coeffs + dl - 1);
  e = (nl - 1) - (dl - 1);
  return true;
}
}  // namespace

QTau qtau_laurent(const std::vector<std::pair<long, Rational>>& terms) {
  QTau out;
  if (terms.empty()) return out;
  Laurent l;
  fmpz_one(l.D.v);
  long lo = 0;
  for (const auto& t : terms) {
    fmpz_lcm(l.D.v, l.D.v, fmpq_denref(t.second.raw()));
    lo = std::min(lo, t.first);
  }
  l.s = -lo;
  Fmpz c, prev;
  for (const auto& t : terms) {
    fmpz_divexact(c.v, l.D.v, fmpq_denref(t.second.raw()));
    fmpz_mul(c.v, c.v, fmpq_numref(t.second.raw()));
    fmpz_poly_get_coeff_fmpz(prev.v, l.P.p, t.first + l.s);
    fmpz_add(c.v, c.v, prev.v);
    fmpz_poly_set_coeff_fmpz(l.P.p, t.first + l.s, c.v);
  }
  from_laurent(out, l);
  return out;
}

QTau qtau_poly_eval(const std::vector<QTau>& c, const QTau& x) {
  if (c.empty()) return QTau();
  Fmpz u, v;
  slong e = 0;
  std::vector<Laurent> lc(c.size());
  bool fast = as_monomial(x, u, v, e);
  for (size_t m = 0; fast && m < c.size(); ++m) fast = as_laurent(c[m], lc[m]);
  if (!fast) {
    QTau acc = c.back();
    for (size_t m = c.size() - 1; m-- > 0;) acc = acc * x + c[m];
    return acc;
  }
  // sum_m c_m (u/v)^m tau^{m e}
  Laurent acc;
  fmpz_one(acc.D.v);
  Fmpz um, vm;
  fmpz_one(um.v);
  fmpz_one(vm.v);
  for (size_t m = 0; m < c.size(); ++m) {
    if (m > 0) {
      fmpz_mul(um.v, um.v, u.v);
      fmpz_mul(vm.v, vm.v, v.v);
    }
    laurent_scale(lc[m], um.v, vm.v, static_cast<slong>(m) * e);
    laurent_add(acc, lc[m]);
  }
  QTau out;
  from_laurent(out, acc);
  return out;
}

QTau qtau_mul(const QTau& a, const QTau& b) {
  Fmpz u, v;
  slong e = 0;
  Laurent l;
  for (int side = 0; side < 2; ++side) {
    const QTau& m = side ? a : b;
    const QTau& o = side ? b : a;
    if (as_monomial(m, u, v, e) && as_laurent(o, l)) {
      laurent_scale(l, u.v, v.v, e);
      QTau out;
      from_laurent(out, l);
      return out;
    }
  }
  QTau out;
  fmpz_poly_q_mul(QTauAccess::raw(out), QTauAccess::raw(a), QTauAccess::raw(b));
  return out;
}

QTau qtau_div(const QTau& a, const QTau& b) {
  if (QTauAccess::is_zero(b)) throw_internal("Q(tau) division by zero");
  Laurent la, lb;
  if (!QTauAccess::is_zero(a) && as_laurent(a, la) && as_laurent(b, lb)) {
    // a = tau^va A' / (alpha tau^i), b = tau^vb B' / (beta tau^j), A'(0), B'(0) != 0
    const fmpz_poly_struct *A = la.P.p, *Bp = lb.P.p;
    slong va = 0, vb = 0;
    while (fmpz_is_zero(A->coeffs + va)) ++va;
    while (fmpz_is_zero(Bp->coeffs + vb)) ++vb;
    const slong len = A->length - va;
    bool prop = len == Bp->length - vb;
    const fmpz* ha = A->coeffs + A->length - 1;
    const fmpz* hb = Bp->coeffs + Bp->length - 1;
    Fmpz x, y;
    for (slong i = 0; prop && i < len; ++i) {  // hb A' == ha B'
      fmpz_mul(x.v, hb, A->coeffs + va + i);
      fmpz_mul(y.v, ha, Bp->coeffs + vb + i);
      prop = fmpz_equal(x.v, y.v);
    }
    if (prop) {
      // a / b = (ha beta) / (hb alpha) tau^{va - i - vb + j}
      Fmpz n, d, g;
      fmpz_mul(n.v, ha, lb.D.v);
      fmpz_mul(d.v, hb, la.D.v);
      if (fmpz_sgn(d.v) < 0) {
        fmpz_neg(n.v, n.v);
        fmpz_neg(d.v, d.v);
      }
      fmpz_gcd(g.v, n.v, d.v);
      fmpz_divexact(n.v, n.v, g.v);
      fmpz_divexact(d.v, d.v, g.v);
      const slong e = va - la.s - vb + lb.s;
      QTau out;
      fmpz_poly_zero(QTauAccess::raw(out)->num);
      fmpz_poly_zero(QTauAccess::raw(out)->den);
      fmpz_poly_set_coeff_fmpz(QTauAccess::raw(out)->num, std::max<slong>(e, 0), n.v);
      fmpz_poly_set_coeff_fmpz(QTauAccess::raw(out)->den, std::max<slong>(-e, 0), d.v);
      return out;
    }
  }
  QTau out;
  fmpz_poly_q_div(QTauAccess::raw(out), QTauAccess::raw(a), QTauAccess::raw(b));
  return out;
}

namespace {
// Numerator and denominator of sum_h num[h]/den[h] as integer polynomials,
// without any gcd: x_h = (a_h d_h) / (b_h c_h) for num = a/b, den = c/d.
void fraction_sum_parts(const std::vector<QTau>& num, const std::vector<QTau>& den, FmpzPoly& top, FmpzPoly& bottom) {
  const size_t H = num.size();
  if (den.size() != H) throw_internal("qtau_fraction_sum_equals: size mismatch");
  std::vector<FmpzPoly> nu(H), de(H);
  for (size_t h = 0; h < H; ++h) {
    if (QTauAccess::is_zero(den[h])) throw_internal("Q(tau) division by zero");
    mul_sparse_aware(nu[h].p, QTauAccess::raw(num[h])->num, QTauAccess::raw(den[h])->den);
    mul_sparse_aware(de[h].p, QTauAccess::raw(num[h])->den, QTauAccess::raw(den[h])->num);
  }
  // prefix products of the denominators; top = sum_h nu_h prod_{g != h} de_g
  fmpz_poly_zero(top.p);
  fmpz_poly_one(bottom.p);
  FmpzPoly t;
  for (size_t h = 0; h < H; ++h) {
    // top/bottom + nu_h/de_h = (top de_h + nu_h bottom) / (bottom de_h)
    mul_sparse_aware(top.p, top.p, de[h].p);
    mul_sparse_aware(t.p, nu[h].p, bottom.p);
    fmpz_poly_add(top.p, top.p, t.p);
    mul_sparse_aware(bottom.p, bottom.p, de[h].p);
  }
}
}  // namespace

bool qtau_fraction_sum_equals(const std::vector<QTau>& num, const std::vector<QTau>& den, const QTau& value) {
  FmpzPoly top, bottom, l, r;
  fraction_sum_parts(num, den, top, bottom);
  // top / bottom == e / f  <=>  top f == e bottom  (bottom, f nonzero)
  mul_sparse_aware(l.p, top.p, QTauAccess::raw(value)->den);
  mul_sparse_aware(r.p, QTauAccess::raw(value)->num, bottom.p);
  return fmpz_poly_equal(l.p, r.p);
}

Truth equal_ratio_sum(const Field<QTau>&, const std::vector<QTau>& num, const std::vector<QTau>& den, const QTau& value) {
  return truth_of(qtau_fraction_sum_equals(num, den, value));
}

}  // namespace mhaq
