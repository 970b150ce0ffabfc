// QTau's field operations (+, -, *, /) on canonical fmpz_poly_q values.
//
// The exact run forms mostly two kinds of elements: "Laurent" ones, whose
// denominator is c tau^s (the weights, the sums of weighted values, the pair
// solutions and their values at a pole), and monomials (u / v) tau^e (the
// weights e^{s - s_max} and the poles -tau^n; rationals are the case e = 0).
// fmpz_poly_q treats them as general rational functions and runs polynomial
// gcds over their dense forms, of degree up to the answers' tau-degree. For
// these kinds the gcd is known in closed form (docs/math/exact-arithmetic.md,
// "Fast routes"), so the routes below form the canonical result with integer
// content gcds and shifts only. Every other case is fmpz_poly_q's own.
//
// The canonical form (numerator and denominator coprime in Z[tau], the
// denominator's leading coefficient positive; zero is 0/1) is unique, so every
// route returns the very numbers fmpz_poly_q would: the same value in the same
// representation. tests/test_qtau_arith.cpp checks this against fmpz_poly_q on
// random operands of every kind.
#include <flint/fmpz.h>
#include <flint/fmpz_poly.h>
#include <flint/fmpz_poly_q.h>
#include <flint/fmpz_vec.h>

#include <algorithm>

#include "mhaq/arith/flint_wrappers.hpp"
#include "mhaq/arith/numbers.hpp"
#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/base/error.hpp"

namespace mhaq {

namespace {
using flint::Fmpz;
using flint::FmpzPoly;
using Q = fmpz_poly_q_struct;

// Lowest exponent with a nonzero coefficient (p != 0).
slong low(const fmpz_poly_struct* p) {
  slong v = 0;
  while (fmpz_is_zero(p->coeffs + v)) ++v;
  return v;
}
// p = c tau^s for some c (p != 0)?
bool is_monomial(const fmpz_poly_struct* p) { return low(p) == p->length - 1; }
const fmpz* lead(const fmpz_poly_struct* p) { return p->coeffs + p->length - 1; }

// g = gcd(c, content(p)) >= 0; stops as soon as it reaches 1.
void gcd_content(fmpz_t g, const fmpz_t c, const fmpz_poly_struct* p) {
  fmpz_abs(g, c);
  for (slong i = 0; i < p->length && !fmpz_is_one(g); ++i)
    if (!fmpz_is_zero(p->coeffs + i)) fmpz_gcd(g, g, p->coeffs + i);
}

// x = P / (c tau^s), canonical, for any P and c > 0; P is taken (left
// unspecified). gcd(P, c tau^s) = gcd(content P, c) tau^{min(val P, s)}.
void set_laurent(Q* x, fmpz_poly_t P, const fmpz_t c, slong s) {
  if (fmpz_poly_is_zero(P)) {
    fmpz_poly_zero(x->num);
    fmpz_poly_one(x->den);
    return;
  }
  const slong t = std::min(low(P), s);
  Fmpz g;
  gcd_content(g.v, c, P);
  if (t > 0) fmpz_poly_shift_right(P, P, t);
  if (!fmpz_is_one(g.v)) fmpz_poly_scalar_divexact_fmpz(P, P, g.v);
  fmpz_poly_swap(x->num, P);
  Fmpz cg;
  fmpz_divexact(cg.v, c, g.v);
  fmpz_poly_zero(x->den);
  fmpz_poly_set_coeff_fmpz(x->den, s - t, cg.v);
}

// r = a + b, or a - b: both Laurent. False (nothing done) otherwise.
bool add_laurent(Q* r, const Q* a, const Q* b, bool subtract) {
  if (!is_monomial(a->den) || !is_monomial(b->den)) return false;
  const slong sa = a->den->length - 1, sb = b->den->length - 1, s = std::max(sa, sb);
  const fmpz *ca = lead(a->den), *cb = lead(b->den);
  Fmpz L, fa, fb;
  if (fmpz_equal(ca, cb)) {
    fmpz_set(L.v, ca);
    fmpz_one(fa.v);
    fmpz_one(fb.v);
  } else {
    fmpz_lcm(L.v, ca, cb);
    fmpz_divexact(fa.v, L.v, ca);
    fmpz_divexact(fb.v, L.v, cb);
  }
  if (subtract) fmpz_neg(fb.v, fb.v);
  // P = A fa tau^{s - sa} + B fb tau^{s - sb}
  const slong oa = s - sa, ob = s - sb;
  const slong n = std::max(a->num->length + oa, b->num->length + ob);
  FmpzPoly P;
  fmpz_poly_fit_length(P.p, n);
  _fmpz_vec_zero(P.p->coeffs, n);
  _fmpz_vec_scalar_mul_fmpz(P.p->coeffs + oa, a->num->coeffs, a->num->length, fa.v);
  _fmpz_vec_scalar_addmul_fmpz(P.p->coeffs + ob, b->num->coeffs, b->num->length, fb.v);
  _fmpz_poly_set_length(P.p, n);
  _fmpz_poly_normalise(P.p);
  set_laurent(r, P.p, L.v, s);
  return true;
}

// A monomial (u / v) tau^e: u != 0, v > 0, gcd(u, v) = 1 (a canonical one).
struct Monomial {
  Fmpz u, v;
  slong e = 0;
};
bool as_monomial(const Q* x, Monomial& m) {
  if (fmpz_poly_is_zero(x->num) || !is_monomial(x->num) || !is_monomial(x->den)) return false;
  fmpz_set(m.u.v, lead(x->num));
  fmpz_set(m.v.v, lead(x->den));
  m.e = (x->num->length - 1) - (x->den->length - 1);
  return true;
}
// 1 / m, canonical.
void invert(Monomial& m) {
  fmpz_swap(m.u.v, m.v.v);
  if (fmpz_sgn(m.v.v) < 0) {
    fmpz_neg(m.u.v, m.u.v);
    fmpz_neg(m.v.v, m.v.v);
  }
  m.e = -m.e;
}

// r = m * o for a monomial m = (u tau^a) / (v tau^b) (a, b = max(+-e, 0)) and
// any nonzero canonical o = N / D. With gcd(u tau^a, v tau^b) = 1 and
// gcd(N, D) = 1, gcd(u tau^a N, v tau^b D) = gcd(u tau^a, D) gcd(N, v tau^b),
// and gcd(u tau^a, D) = gcd(u, content D) tau^{min(a, val D)} (likewise the
// other), so the canonical product needs no polynomial gcd.
void mul_monomial(Q* r, const Monomial& m, const Q* o) {
  const slong a = std::max<slong>(m.e, 0), b = std::max<slong>(-m.e, 0);
  Fmpz g1, g2;
  gcd_content(g1.v, m.u.v, o->den);
  gcd_content(g2.v, m.v.v, o->num);
  const slong t1 = std::min(a, low(o->den)), t2 = std::min(b, low(o->num));
  Fmpz un, vd;
  fmpz_divexact(un.v, m.u.v, g1.v);
  fmpz_divexact(vd.v, m.v.v, g2.v);
  // num = (u / g1) (N / g2) tau^{a - t1 - t2}, den = (v / g2) (D / g1) tau^{b - t2 - t1}
  FmpzPoly N, D;
  auto shifted = [](fmpz_poly_t out, const fmpz_poly_struct* p, slong sh) {
    if (sh >= 0) fmpz_poly_shift_left(out, p, sh);
    else fmpz_poly_shift_right(out, p, -sh);
  };
  shifted(N.p, o->num, a - t1 - t2);
  shifted(D.p, o->den, b - t2 - t1);
  if (!fmpz_is_one(g2.v)) fmpz_poly_scalar_divexact_fmpz(N.p, N.p, g2.v);
  if (!fmpz_is_one(un.v)) fmpz_poly_scalar_mul_fmpz(N.p, N.p, un.v);
  if (!fmpz_is_one(g1.v)) fmpz_poly_scalar_divexact_fmpz(D.p, D.p, g1.v);
  if (!fmpz_is_one(vd.v)) fmpz_poly_scalar_mul_fmpz(D.p, D.p, vd.v);
  fmpz_poly_swap(r->num, N.p);
  fmpz_poly_swap(r->den, D.p);
}

// r = a * b for Laurent a and b: P / (c tau^s) with P = A B.
bool mul_laurent(Q* r, const Q* a, const Q* b) {
  if (!is_monomial(a->den) || !is_monomial(b->den)) return false;
  FmpzPoly P;
  fmpz_poly_mul(P.p, a->num, b->num);
  Fmpz c;
  fmpz_mul(c.v, lead(a->den), lead(b->den));
  set_laurent(r, P.p, c.v, (a->den->length - 1) + (b->den->length - 1));
  return true;
}

// A nonzero P = alpha tau^x P' with P' primitive, P'(0) != 0 and a positive
// leading coefficient.
struct Split {
  Fmpz alpha;
  slong x = 0;
  FmpzPoly prim;
};
void split(const fmpz_poly_struct* P, Split& s) {
  s.x = low(P);
  fmpz_poly_shift_right(s.prim.p, P, s.x);
  fmpz_poly_content(s.alpha.v, s.prim.p);
  if (fmpz_sgn(lead(s.prim.p)) < 0) fmpz_neg(s.alpha.v, s.alpha.v);
  fmpz_poly_scalar_divexact_fmpz(s.prim.p, s.prim.p, s.alpha.v);
}

// r = a / b for Laurent a = A / (ca tau^sa) and b = B / (cb tau^sb), both
// nonzero: with A = alpha tau^x A', B = beta tau^y B' (split) and
// g = gcd(A', B'), a / b = alpha cb tau^{x + sb} (A'/g) / (beta ca tau^{y + sa} (B'/g)).
// A'/g and B'/g are coprime, primitive and prime to tau, so only the integer
// factors and the powers of tau remain to cancel. The one polynomial gcd is
// that of the tau-free primitive parts.
bool div_laurent(Q* r, const Q* a, const Q* b) {
  if (!is_monomial(a->den) || !is_monomial(b->den)) return false;
  Split A, B;
  split(a->num, A);
  split(b->num, B);
  FmpzPoly G;
  if (fmpz_poly_equal(A.prim.p, B.prim.p)) {
    fmpz_poly_one(A.prim.p);
    fmpz_poly_one(B.prim.p);
  } else {
    fmpz_poly_gcd(G.p, A.prim.p, B.prim.p);
    if (!fmpz_poly_is_one(G.p)) {
      fmpz_poly_div(A.prim.p, A.prim.p, G.p);
      fmpz_poly_div(B.prim.p, B.prim.p, G.p);
    }
  }
  Fmpz n, d, g;
  fmpz_mul(n.v, A.alpha.v, lead(b->den));
  fmpz_mul(d.v, B.alpha.v, lead(a->den));
  fmpz_gcd(g.v, n.v, d.v);
  if (fmpz_sgn(d.v) < 0) fmpz_neg(g.v, g.v);  // the denominator's sign is B'/g's (positive)
  fmpz_divexact(n.v, n.v, g.v);
  fmpz_divexact(d.v, d.v, g.v);
  const slong en = A.x + (b->den->length - 1), ed = B.x + (a->den->length - 1), k = std::min(en, ed);
  fmpz_poly_scalar_mul_fmpz(A.prim.p, A.prim.p, n.v);
  fmpz_poly_shift_left(A.prim.p, A.prim.p, en - k);
  fmpz_poly_scalar_mul_fmpz(B.prim.p, B.prim.p, d.v);
  fmpz_poly_shift_left(B.prim.p, B.prim.p, ed - k);
  fmpz_poly_swap(r->num, A.prim.p);
  fmpz_poly_swap(r->den, B.prim.p);
  return true;
}

void set_zero(Q* r) {
  fmpz_poly_zero(r->num);
  fmpz_poly_one(r->den);
}
}  // namespace

QTau& QTau::operator+=(const QTau& o) {
  if (fmpz_poly_q_is_zero(o.v_)) return *this;
  if (fmpz_poly_q_is_zero(v_)) return *this = o;
  if (!add_laurent(v_, v_, o.v_, false)) fmpz_poly_q_add_in_place(v_, o.v_);
  return *this;
}

QTau& QTau::operator-=(const QTau& o) {
  if (fmpz_poly_q_is_zero(o.v_)) return *this;
  if (fmpz_poly_q_is_zero(v_)) {
    fmpz_poly_q_neg(v_, o.v_);
    return *this;
  }
  if (!add_laurent(v_, v_, o.v_, true)) fmpz_poly_q_sub_in_place(v_, o.v_);
  return *this;
}

QTau& QTau::operator*=(const QTau& o) {
  if (fmpz_poly_q_is_zero(v_) || fmpz_poly_q_is_zero(o.v_)) {
    set_zero(v_);
    return *this;
  }
  Monomial m;
  if (as_monomial(o.v_, m)) mul_monomial(v_, m, v_);
  else if (as_monomial(v_, m)) mul_monomial(v_, m, o.v_);
  else if (!mul_laurent(v_, v_, o.v_)) fmpz_poly_q_mul(v_, v_, o.v_);
  return *this;
}

QTau& QTau::operator/=(const QTau& o) {
  if (fmpz_poly_q_is_zero(o.v_)) throw_internal("Q(tau) division by zero");
  if (fmpz_poly_q_is_zero(v_)) return *this;
  Monomial m;
  if (as_monomial(o.v_, m)) {
    invert(m);
    mul_monomial(v_, m, v_);
  } else if (as_monomial(v_, m)) {
    QTau inv;
    fmpz_poly_q_inv(inv.v_, o.v_);
    mul_monomial(v_, m, inv.v_);
  } else if (!div_laurent(v_, v_, o.v_)) {
    fmpz_poly_q_div(v_, v_, o.v_);
  }
  return *this;
}

}  // namespace mhaq
