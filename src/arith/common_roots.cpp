// Field<T>::common_roots for each arithmetic (field.hpp, proofs/19): one root
// of each of several polynomials S_h, chosen by a common value of phi = U/V.
//
// The ball test is the core. Every root of every S_h is isolated in a complex
// box by Arb's root inclusion (valid for every polynomial inside the
// coefficient balls); phi is evaluated on each box. A root of S_0 survives
// when, for every other h, its value box meets the value box of some root of
// S_h. The true choice always survives (its values are equal), so one
// survivor with one partner in every S_h is the choice. The exact field runs
// the same test on enclosures of its exact coefficients at rising precision,
// then finds each chosen root exactly. The float fields run it on approximate
// roots, comparing values at their tolerance.
#include <acb_poly.h>
#include <arb.h>
#include <flint/fmpz_mpoly.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "mhaq/arith/field.hpp"
#include "mhaq/arith/flint_wrappers.hpp"
#include "mhaq/arith/qtau_access.hpp"

namespace mhaq {

namespace {

using Cx = flint::Acb;  // a complex ball
using flint::AcbVec;

// Approximate complex roots of the polynomial with the given midpoint
// coefficients (approx_: starting points). The leading coefficient's midpoint
// must be nonzero.
void approximate_roots(const std::vector<Ball>& c, long prec, AcbVec& roots) {
  const long deg = static_cast<long>(c.size()) - 1;
  acb_poly_t p;
  acb_poly_init(p);
  acb_poly_fit_length(p, deg + 1);
  for (long m = 0; m <= deg; ++m) arb_set_arf(acb_realref(p->coeffs + m), arb_midref(c[m].raw()));
  _acb_poly_set_length(p, deg + 1);
  // plenty of iterations: two nearly equal roots converge only linearly until they separate
  const long maxiter = 2 * prec + 64 * deg;
  long wp = prec;
  for (int attempt = 0; attempt < 4; ++attempt, wp *= 2)
    if (acb_poly_find_roots(roots.v, p, attempt == 0 ? nullptr : roots.v, maxiter, wp) == deg) break;
  for (long i = 0; i < deg; ++i) acb_get_mid(roots.v + i, roots.v + i);
  acb_poly_clear(p);
}

void eval(Cx& out, const std::vector<Ball>& c, const Cx& z, long prec) {
  acb_zero(out.v);
  for (size_t m = c.size(); m-- > 0;) {
    acb_mul(out.v, out.v, z.v, prec);
    arb_add(acb_realref(out.v), acb_realref(out.v), c[m].raw(), prec);
  }
}

// One polynomial's isolated roots and the value of phi on each.
struct Isolated {
  std::vector<Cx> root, value;
  std::vector<char> any;  // V contains 0 on the box: the value is unbounded
};

// ---------------------------------------------------------------- the ball test
struct BallChoice {
  Truth ok = Truth::unknown;
  CommonRoots<Ball>::Fail fail = CommonRoots<Ball>::Fail::none;
  std::vector<Cx> roots;  // the chosen box of each S_h
  std::string why;
};

BallChoice ball_choice(const std::vector<std::vector<Ball>>& S, const std::vector<Ball>& U, const std::vector<Ball>& V, long prec) {
  BallChoice out;
  const size_t m = S.size();
  std::vector<Isolated> iso(m);
  for (size_t h = 0; h < m; ++h) {
    const long deg = static_cast<long>(S[h].size()) - 1;
    if (deg < 1) {
      out.ok = Truth::no;
      out.why = "polynomial " + std::to_string(h) + " has no roots";
      return out;
    }
    if (!arb_is_nonzero(S[h].back().raw())) {
      out.why = "cannot certify the leading coefficient of polynomial " + std::to_string(h) + " nonzero";
      return out;
    }
    AcbVec r(deg), poly(deg + 1);
    approximate_roots(S[h], prec, r);
    for (long k = 0; k <= deg; ++k) acb_set_arb(poly.v + k, S[h][k].raw());
    if (_acb_poly_validate_roots(r.v, poly.v, deg + 1, prec) != deg) {
      out.why = "cannot isolate the roots of polynomial " + std::to_string(h);
      return out;
    }
    for (long i = 0; i < deg; ++i) {
      Cx z, u, v, q;
      acb_set(z.v, r.v + i);
      eval(u, U, z, prec);
      eval(v, V, z, prec);
      const bool unbounded = acb_contains_zero(v.v);
      if (!unbounded) acb_div(q.v, u.v, v.v, prec);
      iso[h].root.push_back(z);
      iso[h].value.push_back(q);
      iso[h].any.push_back(unbounded);
    }
  }
  auto meets = [&](size_t h, size_t a, size_t g, size_t b) {
    return iso[h].any[a] || iso[g].any[b] || acb_overlaps(iso[h].value[a].v, iso[g].value[b].v);
  };
  std::vector<size_t> alive;
  for (size_t a = 0; a < iso[0].root.size(); ++a) {
    bool ok = true;
    for (size_t g = 1; g < m && ok; ++g) {
      bool some = false;
      for (size_t b = 0; b < iso[g].root.size() && !some; ++b) some = meets(0, a, g, b);
      ok = some;
    }
    if (ok) alive.push_back(a);
  }
  if (alive.empty()) {
    out.ok = Truth::no;
    out.fail = CommonRoots<Ball>::Fail::none;
    out.why = "no value is common to a root of every polynomial";
    return out;
  }
  if (alive.size() > 1) {
    out.why = std::to_string(alive.size()) + " candidate common values cannot be told apart at " + std::to_string(prec) + " bits";
    return out;
  }
  const size_t a = alive[0];
  if (iso[0].any[a]) {
    out.why = "the common value is unbounded on the chosen root's box at " + std::to_string(prec) + " bits";
    return out;
  }
  std::vector<size_t> pick{a};
  for (size_t g = 1; g < m; ++g) {
    std::vector<size_t> partners;
    for (size_t b = 0; b < iso[g].root.size(); ++b)
      if (meets(0, a, g, b)) partners.push_back(b);
    if (partners.size() != 1) {
      out.why = "polynomial " + std::to_string(g) + " has " + std::to_string(partners.size()) + " roots with the common value at " +
                std::to_string(prec) + " bits";
      return out;
    }
    pick.push_back(partners[0]);
  }
  // Each chosen root is real: the polynomials are real, so the conjugate of
  // the root in box B is a root in conj(B); when conj(B) meets no other box
  // of that polynomial, the conjugate is the root itself.
  for (size_t h = 0; h < m; ++h) {
    const Cx& B = iso[h].root[pick[h]];
    if (!arb_contains_zero(acb_imagref(B.v))) {
      out.ok = Truth::no;
      out.fail = CommonRoots<Ball>::Fail::none;
      out.why = "the chosen root of polynomial " + std::to_string(h) + " is not real";
      return out;
    }
    Cx conj;
    acb_conj(conj.v, B.v);
    for (size_t b = 0; b < iso[h].root.size(); ++b)
      if (b != pick[h] && acb_overlaps(conj.v, iso[h].root[b].v)) {
        out.why = "cannot certify the chosen root of polynomial " + std::to_string(h) + " real at " + std::to_string(prec) + " bits";
        return out;
      }
    out.roots.push_back(B);
  }
  out.ok = Truth::yes;
  return out;
}

Ball real_part(const Cx& z) {
  Ball b;
  arb_set(b.raw(), acb_realref(z.v));
  return b;
}

// Trims exactly zero leading coefficients (exact polynomials).
std::vector<QTau> trimmed(std::vector<QTau> c) {
  while (c.size() > 1 && QTauAccess::is_zero(c.back())) c.pop_back();
  return c;
}

// Whether an exact polynomial in k (coefficients in Q(tau)) is squarefree:
// cleared of denominators it is a polynomial in Z[k, tau]; it has a multiple
// root in k exactly when it shares a factor of positive k-degree with its
// k-derivative (FLINT's multivariate gcd).
bool squarefree_in_k(const std::vector<QTau>& c) {
  fmpz_poly_t L, q;
  fmpz_poly_init(L);
  fmpz_poly_init(q);
  fmpz_poly_one(L);
  for (const QTau& x : c)
    if (!QTauAccess::is_zero(x)) fmpz_poly_lcm(L, L, QTauAccess::raw(x)->den);
  fmpz_mpoly_ctx_t ctx;
  fmpz_mpoly_ctx_init(ctx, 2, ORD_LEX);  // variables k, tau
  fmpz_mpoly_t P, D, G;
  fmpz_mpoly_init(P, ctx);
  fmpz_mpoly_init(D, ctx);
  fmpz_mpoly_init(G, ctx);
  fmpz_t coef;
  fmpz_init(coef);
  for (size_t m = 0; m < c.size(); ++m) {
    if (QTauAccess::is_zero(c[m])) continue;
    const fmpz_poly_q_struct* v = QTauAccess::raw(c[m]);
    if (!fmpz_poly_divides(q, L, v->den)) throw_internal("squarefree_in_k: the lcm of the denominators is not a multiple of one");
    fmpz_poly_mul(q, q, v->num);
    for (slong e = 0; e < fmpz_poly_length(q); ++e) {
      fmpz_poly_get_coeff_fmpz(coef, q, e);
      if (fmpz_is_zero(coef)) continue;
      ulong exp[2] = {static_cast<ulong>(m), static_cast<ulong>(e)};
      fmpz_mpoly_push_term_fmpz_ui(P, coef, exp, ctx);
    }
  }
  fmpz_mpoly_sort_terms(P, ctx);
  fmpz_mpoly_combine_like_terms(P, ctx);
  fmpz_mpoly_derivative(D, P, 0, ctx);
  if (!fmpz_mpoly_gcd(G, P, D, ctx)) throw_internal("squarefree_in_k: FLINT's gcd failed");
  const bool out = fmpz_mpoly_degree_si(G, 0, ctx) <= 0;
  fmpz_clear(coef);
  fmpz_mpoly_clear(G, ctx);
  fmpz_mpoly_clear(D, ctx);
  fmpz_mpoly_clear(P, ctx);
  fmpz_mpoly_ctx_clear(ctx);
  fmpz_poly_clear(q);
  fmpz_poly_clear(L);
  return out;
}

double log2_abs_acb(const Cx& z) {
  mag_t m;
  mag_init(m);
  acb_get_mag(m, z.v);  // upper bound; for midpoints of approximate values it is the value
  const double out = mag_is_zero(m) ? -std::numeric_limits<double>::infinity() : mag_get_d_log2_approx(m);
  mag_clear(m);
  return out;
}

}  // namespace

// ============================================================ balls
CommonRoots<Ball> Field<Ball>::common_roots(const std::vector<std::vector<Ball>>& S, const std::vector<Ball>& U, const std::vector<Ball>& V) const {
  CommonRoots<Ball> out;
  if (S.empty()) throw_internal("common_roots: no polynomials");
  const BallChoice c = ball_choice(S, U, V, working_precision());
  out.ok = c.ok;
  out.fail = c.fail;
  out.why = c.why;
  if (c.ok == Truth::yes)
    for (const Cx& z : c.roots) out.roots.push_back(real_part(z));
  return out;
}

// ============================================================ exact
CommonRoots<QTau> Field<QTau>::common_roots(const std::vector<std::vector<QTau>>& S0, const std::vector<QTau>& U, const std::vector<QTau>& V) const {
  CommonRoots<QTau> out;
  if (S0.empty()) throw_internal("common_roots: no polynomials");
  std::vector<std::vector<QTau>> S;
  for (const auto& p : S0) S.push_back(trimmed(p));
  // two identical polynomials share every root and every value
  for (size_t h = 0; h < S.size(); ++h)
    for (size_t g = h + 1; g < S.size(); ++g) {
      bool same = S[h].size() == S[g].size();
      for (size_t k = 0; k < S[h].size() && same; ++k) same = QTauAccess::equal(S[h][k], S[g][k]);
      if (same) {
        out.ok = Truth::no;
        out.fail = CommonRoots<QTau>::Fail::several;
        out.why = "polynomials " + std::to_string(h) + " and " + std::to_string(g) + " are identical";
        return out;
      }
    }
  std::string last;
  bool squarefree_checked = false;
  // The ball test on enclosures of the exact coefficients is rigorous for
  // them; rising precision decides every separable case. A polynomial with a
  // multiple root never isolates: that is decided exactly (squarefree_in_k)
  // the first time isolation fails. Values that coincide exactly never
  // separate: at the cap they are reported as several.
  for (long prec = 128; prec <= (1L << 12); prec *= 2) {
    PrecisionScope scope(prec);
    auto enc = [&](const std::vector<QTau>& c) {
      std::vector<Ball> b;
      for (const auto& x : c) b.push_back(enclose(x));
      return b;
    };
    std::vector<std::vector<Ball>> SB;
    for (const auto& p : S) SB.push_back(enc(p));
    const BallChoice c = ball_choice(SB, enc(U), enc(V), prec);
    if (c.ok == Truth::no) {
      out.ok = Truth::no;
      out.fail = c.fail == CommonRoots<Ball>::Fail::none ? CommonRoots<QTau>::Fail::none : CommonRoots<QTau>::Fail::several;
      out.why = c.why;
      return out;
    }
    last = c.why;
    if (c.ok == Truth::unknown && prec >= 512 && !squarefree_checked && c.why.rfind("cannot isolate", 0) == 0) {
      squarefree_checked = true;
      for (size_t h = 0; h < S.size(); ++h)
        if (!squarefree_in_k(S[h])) {
          out.ok = Truth::no;
          out.fail = CommonRoots<QTau>::Fail::multiple;
          out.why = "polynomial " + std::to_string(h) + " has a multiple root (checked exactly)";
          return out;
        }
    }
    if (c.ok == Truth::unknown) continue;
    // The chosen root of S_h is isolated in its box; a pole's root is
    // -tau^-n, so n = -L log(-rho) is read off the box and checked exactly.
    std::vector<QTau> found;
    bool wider = false;
    for (size_t h = 0; h < S.size() && !wider; ++h) {
      Ball rho = real_part(c.roots[h]);
      if (arb_is_nonnegative(rho.raw())) {
        out.ok = Truth::no;
        out.fail = CommonRoots<QTau>::Fail::unrepresentable;
        out.why = "the chosen root of polynomial " + std::to_string(h) + " is not negative, so it is no pole's root -tau^-n";
        return out;
      }
      if (!arb_is_negative(rho.raw())) {
        wider = true;
        break;
      }
      Ball x = -rho;
      arb_log(x.raw(), x.raw(), prec);
      arb_mul_si(x.raw(), x.raw(), -L_, prec);
      if (!arb_contains_int(x.raw())) {
        out.ok = Truth::no;
        out.fail = CommonRoots<QTau>::Fail::unrepresentable;
        out.why = "the chosen root of polynomial " + std::to_string(h) + " is not -tau^-n for an integer n";
        return out;
      }
      fmpz_t n;
      fmpz_init(n);
      const bool unique = arb_get_unique_fmpz(n, x.raw()) && fmpz_fits_si(n);
      const long nn = unique ? fmpz_get_si(n) : 0;
      fmpz_clear(n);
      if (!unique || std::labs(nn) > (1L << 40)) {
        wider = true;
        break;
      }
      QTau cand = -QTauAccess::tau_pow(-nn);
      if (!QTauAccess::is_zero(poly_eval(S[h], cand))) {
        out.ok = Truth::no;
        out.fail = CommonRoots<QTau>::Fail::unrepresentable;
        out.why = "the chosen root of polynomial " + std::to_string(h) + " is not -tau^" + std::to_string(-nn) + " (checked exactly)";
        return out;
      }
      // the exact root must be the one isolated in the chosen box
      if (!arb_contains(rho.raw(), enclose(cand).raw())) {
        wider = true;
        break;
      }
      found.push_back(std::move(cand));
    }
    if (wider) continue;
    out.ok = Truth::yes;
    out.roots = std::move(found);
    return out;
  }
  out.ok = Truth::no;
  out.fail = CommonRoots<QTau>::Fail::several;
  out.why = "candidate common values still coincide at 2^12 bits (" + last + "); treated as several";
  return out;
}

// ============================================================ floats
namespace {

// The approximate roots z of the polynomial with midpoint coefficients c
// (degree >= 1), each with the midpoint of phi(z) = U(z) / V(z); `any` marks
// a root where V's midpoint vanishes.
void approximate_values(const std::vector<Ball>& c, const std::vector<Ball>& UB, const std::vector<Ball>& VB, long prec, Isolated& iso) {
  const long deg = static_cast<long>(c.size()) - 1;
  AcbVec r(deg);
  approximate_roots(c, prec, r);
  for (long i = 0; i < deg; ++i) {
    Cx z, u, v, q;
    acb_set(z.v, r.v + i);
    eval(u, UB, z, prec);
    eval(v, VB, z, prec);
    acb_get_mid(u.v, u.v);
    acb_get_mid(v.v, v.v);
    const bool unbounded = acb_is_zero(v.v);
    if (!unbounded) acb_div(q.v, u.v, v.v, prec);
    acb_get_mid(q.v, q.v);
    iso.root.push_back(z);
    iso.value.push_back(q);
    iso.any.push_back(unbounded);
  }
}

template <class T, class F, class ToArf, class FromArf>
CommonRoots<T> float_common_roots(const F& fld, const std::vector<std::vector<T>>& S, const std::vector<T>& U, const std::vector<T>& V,
                                  ToArf to_arf, FromArf from_arf) {
  CommonRoots<T> out;
  if (S.empty()) throw_internal("common_roots: no polynomials");
  const long p0 = fld.precision();
  const double yes = fld.tol.yes_log2(p0), no = fld.tol.no_log2(p0), gap = -fld.tol.acc(p0) / 8;
  const long prec = p0 + 32;
  PrecisionScope scope(prec);
  auto balls = [&](const std::vector<T>& c) {
    std::vector<Ball> b(c.size());
    for (size_t k = 0; k < c.size(); ++k) to_arf(arb_midref(b[k].raw()), c[k]);
    while (b.size() > 1 && arf_is_zero(arb_midref(b.back().raw()))) b.pop_back();
    return b;
  };
  for (const auto& p : S)
    for (const T& x : p)
      if (!std::isfinite(fld.log2_abs(x)) && fld.log2_abs(x) > 0) {
        out.why = "non-finite polynomial coefficient";
        return out;
      }
  const std::vector<Ball> UB = balls(U), VB = balls(V);
  const size_t m = S.size();
  std::vector<Isolated> iso(m);
  for (size_t h = 0; h < m; ++h) {
    const std::vector<Ball> c = balls(S[h]);
    const long deg = static_cast<long>(c.size()) - 1;
    if (deg < 1) {
      out.why = "polynomial " + std::to_string(h) + " has no roots at this precision";
      return out;
    }
    approximate_values(c, UB, VB, prec, iso[h]);
  }
  // relative distance of two values, log2
  auto rel = [&](size_t h, size_t a, size_t g, size_t b) {
    if (iso[h].any[a] || iso[g].any[b]) return -std::numeric_limits<double>::infinity();
    Cx d;
    acb_sub(d.v, iso[h].value[a].v, iso[g].value[b].v, prec);
    return log2_abs_acb(d) - std::max(log2_abs_acb(iso[h].value[a]), log2_abs_acb(iso[g].value[b]));
  };
  // A float cannot certify a value: the choice is ranked. Each root of S_0
  // scores the worst, over the other S_g, of its nearest value there; the
  // best must agree within the "no" threshold, and the runner-up must be
  // beyond the "yes" threshold and a clear gap (acc/8 bits) worse. (Near a
  // critical point of phi, roots of every S_g crowd together with values
  // that agree to second order: only a gap tells them from the true choice.)
  // A wrong choice would not reproduce the pair's values: the pair fit's
  // residual check and the learner's self-check stand behind it.
  auto nearest = [&](size_t a, size_t g, double* second) {
    size_t best = 0;
    double r1 = std::numeric_limits<double>::infinity(), r2 = r1;
    for (size_t b = 0; b < iso[g].root.size(); ++b) {
      const double r = rel(0, a, g, b);
      if (r < r1) {
        r2 = r1;
        r1 = r;
        best = b;
      } else if (r < r2) {
        r2 = r;
      }
    }
    if (second) *second = r2;
    return std::make_pair(best, r1);
  };
  std::vector<std::pair<double, size_t>> score;
  for (size_t a = 0; a < iso[0].root.size(); ++a) {
    double worst = -std::numeric_limits<double>::infinity();
    for (size_t g = 1; g < m; ++g) worst = std::max(worst, nearest(a, g, nullptr).second);
    score.emplace_back(worst, a);
  }
  std::sort(score.begin(), score.end());
  const double s1 = score[0].first, s2 = score.size() > 1 ? score[1].first : std::numeric_limits<double>::infinity();
  if (!(s1 <= no)) {
    out.why = "no common value within the tolerance (rounding may hide it)";
    return out;
  }
  if (!(s2 > yes && s2 - s1 >= gap)) {
    out.why = "2 candidate common values within the tolerance";
    return out;
  }
  const size_t a = score[0].second;
  std::vector<size_t> pick{a};
  for (size_t g = 1; g < m; ++g) {
    double r2 = 0;
    const auto [b, r1] = nearest(a, g, &r2);
    if (!(r2 > yes && r2 - r1 >= gap)) {
      out.why = "polynomial " + std::to_string(g) + " has 2 roots with the common value within the tolerance";
      return out;
    }
    pick.push_back(b);
  }
  for (size_t h = 0; h < m; ++h) {
    const Cx& z = iso[h].root[pick[h]];
    const double re = arf_is_zero(arb_midref(acb_realref(z.v))) ? -std::numeric_limits<double>::infinity()
                                                                : std::log2(std::fabs(arf_get_d(arb_midref(acb_realref(z.v)), ARF_RND_NEAR)));
    const double im = arf_is_zero(arb_midref(acb_imagref(z.v))) ? -std::numeric_limits<double>::infinity()
                                                                : std::log2(std::fabs(arf_get_d(arb_midref(acb_imagref(z.v)), ARF_RND_NEAR)));
    if (im - re > no) {
      out.why = "the chosen root of polynomial " + std::to_string(h) + " is not real within the tolerance";
      return out;
    }
    out.roots.push_back(from_arf(arb_midref(acb_realref(z.v)), p0));
  }
  out.ok = Truth::yes;
  return out;
}

}  // namespace

CommonRoots<Mpfr> Field<Mpfr>::common_roots(const std::vector<std::vector<Mpfr>>& S, const std::vector<Mpfr>& U, const std::vector<Mpfr>& V) const {
  return float_common_roots(
      *this, S, U, V, [](arf_ptr o, const Mpfr& x) { arf_set_mpfr(o, x.raw()); },
      [](arf_srcptr a, long p0) {
        PrecisionScope back(p0);
        Mpfr r;
        arf_get_mpfr(r.raw(), a, MPFR_RNDN);
        return r;
      });
}

CommonRoots<double> Field<double>::common_roots(const std::vector<std::vector<double>>& S, const std::vector<double>& U,
                                                const std::vector<double>& V) const {
  return float_common_roots(
      *this, S, U, V, [](arf_ptr o, const double& x) { arf_set_d(o, x); }, [](arf_srcptr a, long) { return arf_get_d(a, ARF_RND_NEAR); });
}

}  // namespace mhaq
