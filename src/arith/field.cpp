// Field<T> primitives: exp/log, decisions, linear solves and real roots per arithmetic.
#include "mhaq/arith/field.hpp"

#include <acb_poly.h>
#include <arb_mat.h>
#include <arb_poly.h>
#include <flint/fmpz_poly_mat.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "mhaq/arith/flint_wrappers.hpp"
#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/arith/solve/qtau_solve.hpp"

namespace mhaq {

const char* arith_name(Arith a) {
  switch (a) {
    case Arith::exact: return "exact";
    case Arith::ball: return "ball";
    case Arith::mpfr: return "mpfr";
    case Arith::ieee: return "double";
  }
  return "?";
}
Arith parse_arith(const std::string& s) {
  if (s == "exact") return Arith::exact;
  if (s == "ball") return Arith::ball;
  if (s == "mpfr") return Arith::mpfr;
  if (s == "double") return Arith::ieee;
  throw Error(ErrorKind::usage, "unknown arithmetic \"" + s + "\" (expected exact, ball, mpfr or double)");
}

void require_truth(Truth t, ErrorKind on_no, const std::string& what) {
  if (t == Truth::yes) return;
  if (t == Truth::no) throw Error(on_no, what);
  throw Error(ErrorKind::unable, "undecided at this precision (more precision may decide it): " + what);
}

namespace {
using flint::AcbPoly;
using flint::AcbVec;
using flint::ArbPoly;
using flint::Mag;

// Approximate complex roots (Arb's Durand-Kerner iteration) of the polynomial
// with the given exact (midpoint) coefficients; approx_: starting points only.
// Returns (re, im) midpoints; false when the leading coefficient is zero.
template <class SetCoeff>
bool approx_roots(long deg, long prec, SetCoeff set, std::vector<std::pair<Ball, Ball>>& out) {
  AcbPoly p;
  acb_poly_fit_length(p.p, deg + 1);
  for (long m = 0; m <= deg; ++m) set(m, acb_realref(p.p->coeffs + m));
  _acb_poly_set_length(p.p, deg + 1);
  _acb_poly_normalise(p.p);
  if (acb_poly_degree(p.p) != deg) return false;
  // The default iteration count of acb_poly_find_roots is too small for two
  // nearly equal roots (the iteration converges only linearly until they
  // separate), so ask for plenty: it stops as soon as every root is isolated.
  AcbVec roots(deg);
  long wp = prec;
  const long maxiter = 2 * prec + 64 * deg;
  for (int attempt = 0; attempt < 4; ++attempt, wp *= 2)
    if (acb_poly_find_roots(roots.v, p.p, attempt == 0 ? nullptr : roots.v, maxiter, wp) == deg) break;
  out.assign(deg, {});
  for (long i = 0; i < deg; ++i) {
    arf_set(arb_midref(out[i].first.raw()), arb_midref(acb_realref(roots.v + i)));
    arf_set(arb_midref(out[i].second.raw()), arb_midref(acb_imagref(roots.v + i)));
  }
  return true;
}

// e^{1/L} at the working precision.
Ball tau_ball(long L) {
  Ball t(Rational(1, static_cast<unsigned long>(L)));
  arb_exp(t.raw(), t.raw(), working_precision());
  return t;
}
void eval_at(Ball& out, const fmpz_poly_t p, const Ball& tau) {
  ArbPoly a;
  arb_poly_set_fmpz_poly(a.p, p, working_precision());
  arb_poly_evaluate(out.raw(), a.p, tau.raw(), working_precision());
}
}  // namespace

// ============================================================ exact: Q(tau)
Field<QTau>::Field(long L, ExactSolver solver) : L_(L), solver_(solver) {
  if (L < 1 || L > (1L << 40)) throw_input("exact arithmetic: L = " + std::to_string(L) + " outside [1, 2^40]");
}

QTau Field<QTau>::exp(const Rational& s) const {
  const Rational n = s * Rational(L_);
  if (!n.is_integer()) throw_input("exact oracle: score " + s.str() + " is not a multiple of 1/L (L = " + std::to_string(L_) + "): a token is off the grid");
  if (!fmpz_fits_si(fmpq_numref(n.raw())) || std::labs(fmpz_get_si(fmpq_numref(n.raw()))) > (1L << 40))
    throw_input("exact oracle: score " + s.str() + " gives an exponent of tau beyond 2^40");
  return QTauAccess::tau_pow(n.to_long());
}

QTau Field<QTau>::exp(const QTau& s) const {
  Rational q;
  if (!QTauAccess::is_rational(s, q)) throw_inconsistent("exact exp: the exponent is not a rational number, so e^x is not in Q(tau)");
  const Rational n = q * Rational(L_);
  if (!n.is_integer()) throw_inconsistent("exact exp: the exponent " + q.str() + " is not a multiple of 1/L, so e^x is not in Q(tau)");
  return exp(q);
}

QTau Field<QTau>::log(const QTau& r) const {
  long n = 0;
  // Transcendence of tau: the log of an element of Q(tau) lies in Q(tau) only for tau^n (proofs/08).
  if (!QTauAccess::is_tau_power(r, n)) throw_inconsistent("exact log: pole " + QTauAccess::str(r) + " is not a power of tau");
  return QTau(Rational(n, static_cast<unsigned long>(L_)));
}

Truth Field<QTau>::is_zero(const QTau& x) const { return truth_of(QTauAccess::is_zero(x)); }
Truth Field<QTau>::equal(const QTau& a, const QTau& b) const { return truth_of(QTauAccess::equal(a, b)); }

Truth Field<QTau>::is_positive(const QTau& x) const {
  if (QTauAccess::is_zero(x)) return Truth::no;
  Rational q;
  if (QTauAccess::is_rational(x, q)) return truth_of(q.sign() > 0);
  // A nonzero element has a nonzero value at the transcendental tau, so
  // evaluating numerator and denominator in balls at rising precision decides
  // the sign; the cap is far beyond any degree mhaq's limits allow.
  const fmpz_poly_q_struct* v = QTauAccess::raw(x);
  for (long prec = 64; prec <= (1L << 22); prec *= 2) {
    PrecisionScope scope(prec);
    const Ball tau = tau_ball(L_);
    Ball n, d;
    eval_at(n, v->num, tau);
    eval_at(d, v->den, tau);
    const bool nd = !arb_contains_zero(n.raw()), dd = !arb_contains_zero(d.raw());
    if (nd && dd) return truth_of(arb_is_positive(n.raw()) == arb_is_positive(d.raw()));
  }
  throw_internal("exact sign test: no decision below 2^22 bits");
}

QTau Field<QTau>::abs(const QTau& x) const { return is_positive(x) == Truth::no ? -x : x; }

Truth Field<QTau>::solve(Mat<QTau>& X, const Mat<QTau>& A, const Mat<QTau>& B) const {
  return truth_of(qtau_solve(solver_, X, A, B));
}

Truth Field<QTau>::solve_scaled(Mat<QTau>& X, QTau& lambda, const Mat<QTau>& A, const Mat<QTau>& B) const {
  Mat<QTau> Y;
  if (!qtau_solve(solver_, Y, A, B)) return Truth::no;
  // lambda: the least common multiple of the solution's denominators (a
  // polynomial in tau), so that every lambda Y_ij is a polynomial in tau
  fmpz_poly_t L, q;
  fmpz_poly_init(L);
  fmpz_poly_init(q);
  fmpz_poly_one(L);
  for (int i = 0; i < Y.rows(); ++i)
    for (int j = 0; j < Y.cols(); ++j)
      if (!QTauAccess::is_zero(Y(i, j))) fmpz_poly_lcm(L, L, QTauAccess::raw(Y(i, j))->den);
  X = Mat<QTau>(Y.rows(), Y.cols());
  for (int i = 0; i < Y.rows(); ++i)
    for (int j = 0; j < Y.cols(); ++j) {
      if (QTauAccess::is_zero(Y(i, j))) continue;
      const fmpz_poly_q_struct* y = QTauAccess::raw(Y(i, j));
      if (!fmpz_poly_divides(q, L, y->den)) throw_internal("solve_scaled: the lcm of the denominators is not a multiple of one");
      fmpz_poly_q_struct* x = QTauAccess::raw(X(i, j));
      fmpz_poly_mul(x->num, q, y->num);
      fmpz_poly_one(x->den);
    }
  fmpz_poly_q_struct* l = QTauAccess::raw(lambda);
  fmpz_poly_set(l->num, L);
  fmpz_poly_one(l->den);
  fmpz_poly_clear(q);
  fmpz_poly_clear(L);
  return Truth::yes;
}

int Field<QTau>::pole_root_in(const Ball& rho, QTau& out) const {
  if (arb_is_nonnegative(rho.raw())) return -1;
  if (!arb_is_negative(rho.raw())) return 0;
  // rho = -tau^-n: n = -L log(-rho), an integer that the ball must pin
  Ball x = -rho;
  arb_log(x.raw(), x.raw(), working_precision());
  arb_mul_si(x.raw(), x.raw(), -L_, working_precision());
  if (!arb_contains_int(x.raw())) return -1;
  fmpz_t n;
  fmpz_init(n);
  const bool unique = arb_get_unique_fmpz(n, x.raw()) && fmpz_fits_si(n);
  const long nn = unique ? fmpz_get_si(n) : 0;
  fmpz_clear(n);
  if (!unique || std::labs(nn) > (1L << 40)) return 0;
  out = -QTauAccess::tau_pow(-nn);
  return arb_contains(rho.raw(), enclose(out).raw()) ? 1 : 0;
}

Roots<QTau> Field<QTau>::real_roots(const std::vector<QTau>& c) const {
  // Roots of a polynomial over Q(tau) whose roots are -tau^{-n}: the Newton
  // polygon of the tau-adic valuations gives each n, and substitution
  // verifies each candidate exactly (proofs/02, proofs/08).
  Roots<QTau> out;
  const long deg = static_cast<long>(c.size()) - 1;
  if (deg < 1 || QTauAccess::is_zero(c.back())) {
    out.ok = Truth::no;
    out.why = "degree below 1 or zero leading coefficient";
    return out;
  }
  std::vector<std::pair<long, long>> pts;  // (m, valuation)
  for (long m = 0; m <= deg; ++m)
    if (!QTauAccess::is_zero(c[m])) pts.push_back({m, QTauAccess::valuation(c[m])});
  std::vector<std::pair<long, long>> hull;  // lower convex hull
  for (const auto& p : pts) {
    while (hull.size() >= 2) {
      const auto& a = hull[hull.size() - 2];
      const auto& b = hull[hull.size() - 1];
      const __int128 cross = static_cast<__int128>(b.first - a.first) * (p.second - a.second) -
                             static_cast<__int128>(b.second - a.second) * (p.first - a.first);
      if (cross <= 0) hull.pop_back();
      else break;
    }
    hull.push_back(p);
  }
  for (size_t s = 1; s < hull.size(); ++s) {
    const long len = hull[s].first - hull[s - 1].first;
    const long rise = hull[s].second - hull[s - 1].second;
    if (len != 1) {
      out.ok = Truth::no;
      out.why = "Newton polygon segment of length " + std::to_string(len) + ": the roots are not distinct powers of tau";
      return out;
    }
    QTau k = -QTauAccess::tau_pow(-rise);
    if (!QTauAccess::is_zero(poly_eval(c, k))) {
      out.ok = Truth::no;
      out.why = "candidate -tau^" + std::to_string(-rise) + " is not a root";
      return out;
    }
    out.roots.push_back(std::move(k));
  }
  if (static_cast<long>(out.roots.size()) != deg) {
    out.ok = Truth::no;
    out.why = "found " + std::to_string(out.roots.size()) + " of " + std::to_string(deg) + " roots";
    return out;
  }
  // ascending: -tau^-n increases with n (the hull visits n in decreasing order of -rise)
  std::sort(out.roots.begin(), out.roots.end(), [](const QTau& a, const QTau& b) {
    long na = 0, nb = 0;
    QTauAccess::is_tau_power(-a, na);
    QTauAccess::is_tau_power(-b, nb);
    return na > nb;
  });
  out.ok = Truth::yes;
  return out;
}

Ball Field<QTau>::enclose(const QTau& x) const {
  const fmpz_poly_q_struct* v = QTauAccess::raw(x);
  const Ball tau = tau_ball(L_);
  Ball n, d;
  eval_at(n, v->num, tau);
  eval_at(d, v->den, tau);
  return n / d;
}

namespace {
// The multiple of 1/den nearest to a ball's midpoint (ties to the lower one).
Rational nearest_of_ball(const Ball& b, long den) {
  fmpq_t q;
  fmpq_init(q);
  arf_get_fmpq(q, arb_midref(b.raw()));
  Rational x;
  fmpq_set(x.raw(), q);
  fmpq_clear(q);
  x *= Rational(den);
  fmpz_t f;
  fmpz_init(f);
  Rational half(1, 2);
  const Rational y = x + half;
  fmpz_fdiv_q(f, fmpq_numref(y.raw()), fmpq_denref(y.raw()));
  Rational r;
  fmpq_set_fmpz_frac(r.raw(), f, fmpq_denref(Rational(den).raw()));
  fmpz_clear(f);
  return r / Rational(den);
}
Rational nearest_of_rational(const Rational& x0, long den) {
  const Rational y = x0 * Rational(den) + Rational(1, 2);
  fmpz_t f;
  fmpz_init(f);
  fmpz_fdiv_q(f, fmpq_numref(y.raw()), fmpq_denref(y.raw()));
  Rational r;
  fmpq_set_fmpz_frac(r.raw(), f, fmpq_denref(Rational(1).raw()));
  fmpz_clear(f);
  return r / Rational(den);
}
}  // namespace

QTau Field<QTau>::relu(const QTau& x) const { return is_positive(x) == Truth::yes ? x : QTau(Rational(0)); }
Rational Field<QTau>::nearest(const QTau& x, long den) const {
  Rational q;
  if (QTauAccess::is_rational(x, q)) return nearest_of_rational(q, den);
  PrecisionScope scope(128);
  return nearest_of_ball(enclose(x), den);
}

std::string Field<QTau>::str(const QTau& x) const {
  Rational q;
  return QTauAccess::is_rational(x, q) ? q.str() : QTauAccess::str(x);
}

// ============================================================ ball: Arb
Ball Field<Ball>::exp(const Rational& s) const {
  Ball r(s);
  arb_exp(r.raw(), r.raw(), working_precision());
  return r;
}
Ball Field<Ball>::exp(const Ball& s) const {
  Ball r;
  arb_exp(r.raw(), s.raw(), working_precision());
  return r;
}
Ball Field<Ball>::log(const Ball& r) const {
  if (!arb_is_positive(r.raw())) throw_unable("cannot certify a pole r > 0 at " + std::to_string(working_precision()) + " bits");
  Ball out;
  arb_log(out.raw(), r.raw(), working_precision());
  return out;
}
Ball Field<Ball>::abs(const Ball& x) const {
  Ball r;
  arb_abs(r.raw(), x.raw());
  return r;
}
Ball Field<Ball>::relu(const Ball& x) const {
  if (arb_is_positive(x.raw())) return x;
  if (arb_is_nonpositive(x.raw())) return Ball(0L);
  // undecided: every value max(y, 0), y in x, lies in [0, upper(x)]
  Ball out, up;
  arb_get_ubound_arf(arb_midref(up.raw()), x.raw(), working_precision());
  arb_union(out.raw(), Ball(0L).raw(), up.raw(), working_precision());
  return out;
}
Rational Field<Ball>::nearest(const Ball& x, long den) const { return nearest_of_ball(x, den); }

Truth Field<Ball>::is_zero(const Ball& x) const {
  if (arb_is_zero(x.raw())) return Truth::yes;
  return arb_contains_zero(x.raw()) ? Truth::unknown : Truth::no;
}
Truth Field<Ball>::is_positive(const Ball& x) const {
  if (arb_is_positive(x.raw())) return Truth::yes;
  return arb_is_nonpositive(x.raw()) ? Truth::no : Truth::unknown;
}

namespace {

// A X = B for ball matrices with a componentwise a-posteriori bound (Rump's
// verification): with C ~ mid(A)^{-1}, G = C A - I and Z = C B, every
// solution is X = Z - G X, so |X - Z| <= |G| (|Z| + |X - Z|). A positive e
// with |G| (|Z| + e) < e componentwise proves rho(|G|) < 1 (Perron-Frobenius;
// A is then nonsingular everywhere in its balls) and |X - Z| <= e. All bounds
// are rounded up (mag_t). Unlike interval elimination, the bound of an entry
// grows only with the rows of |G| it meets, not with the condition number of
// A times the width of its balls. False when no e is found.
bool solve_verified(arb_mat_t X, const arb_mat_t A, const arb_mat_t Bm, slong prec) {
  const slong n = arb_mat_nrows(A), k = arb_mat_ncols(Bm);
  if (n == 0) return true;
  flint::ArbMat Am(n, n), C(n, n), G(n, n), Z(n, k);
  arb_mat_get_mid(Am.m, A);
  if (!arb_mat_approx_inv(C.m, Am.m, prec)) return false;
  arb_mat_get_mid(C.m, C.m);
  arb_mat_mul(G.m, C.m, A, prec);
  for (slong i = 0; i < n; ++i) arb_sub_ui(arb_mat_entry(G.m, i, i), arb_mat_entry(G.m, i, i), 1, prec);
  arb_mat_mul(Z.m, C.m, Bm, prec);
  std::vector<mag_struct> g(n * n), z(n), e(n), t(n);
  auto init = [](std::vector<mag_struct>& v) { for (auto& m : v) mag_init(&m); };
  auto clear = [](std::vector<mag_struct>& v) { for (auto& m : v) mag_clear(&m); };
  init(g), init(z), init(e), init(t);
  for (slong i = 0; i < n; ++i)
    for (slong j = 0; j < n; ++j) arb_get_mag(&g[i * n + j], arb_mat_entry(G.m, i, j));
  mag_t tmp, tiny;
  mag_init(tmp);
  mag_init(tiny);
  mag_one(tiny);
  mag_mul_2exp_si(tiny, tiny, -4 * prec);
  // t = |G| (z + e), rounded up
  auto apply = [&] {
    for (slong i = 0; i < n; ++i) {
      mag_zero(&t[i]);
      for (slong j = 0; j < n; ++j) {
        mag_add(tmp, &z[j], &e[j]);
        mag_addmul(&t[i], &g[i * n + j], tmp);
      }
    }
  };
  bool ok = true;
  for (slong c = 0; c < k && ok; ++c) {
    for (slong i = 0; i < n; ++i) {
      arb_get_mag(&z[i], arb_mat_entry(Z.m, i, c));
      mag_zero(&e[i]);
    }
    bool verified = false;
    for (int it = 0; it < 12 && !verified; ++it) {
      apply();
      verified = true;
      for (slong i = 0; i < n && verified; ++i) verified = mag_cmp(&t[i], &e[i]) < 0;
      if (verified) break;
      // next candidate: the image, inflated by 2^-8 and kept positive
      for (slong i = 0; i < n; ++i) {
        mag_mul_2exp_si(tmp, &t[i], -8);
        mag_add(&e[i], &t[i], tmp);
        mag_add(&e[i], &e[i], tiny);
      }
    }
    if (!verified) {
      ok = false;
      break;
    }
    for (slong i = 0; i < n; ++i) {
      arb_set(arb_mat_entry(X, i, c), arb_mat_entry(Z.m, i, c));
      arb_add_error_mag(arb_mat_entry(X, i, c), &e[i]);
    }
  }
  mag_clear(tmp);
  mag_clear(tiny);
  clear(g), clear(z), clear(e), clear(t);
  return ok;
}

}  // namespace

Truth Field<Ball>::solve(Mat<Ball>& X, const Mat<Ball>& A, const Mat<Ball>& B) const {
  const int n = A.rows(), k = B.cols();
  flint::ArbMat a(n, n), b(n, k), x(n, k);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) arb_set(arb_mat_entry(a.m, i, j), A(i, j).raw());
    for (int j = 0; j < k; ++j) arb_set(arb_mat_entry(b.m, i, j), B(i, j).raw());
  }
  // On success the solution of every system in the balls is contained in X.
  // First the verified componentwise bound above: plain interval
  // elimination, which arb_mat_solve uses at high precision, overestimates by
  // about the condition number when the entries are wide balls (jets over a
  // box of answers, proofs/31), or fails. Arb's own routes remain as fallbacks.
  const long prec = working_precision();
  if (!solve_verified(x.m, a.m, b.m, prec) && !arb_mat_solve_precond(x.m, a.m, b.m, prec) && !arb_mat_solve(x.m, a.m, b.m, prec)) return Truth::unknown;
  X = Mat<Ball>(n, k);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) arb_set(X(i, j).raw(), arb_mat_entry(x.m, i, j));
  return Truth::yes;
}

Roots<Ball> Field<Ball>::real_roots(const std::vector<Ball>& c) const {
  // Isolate each root with the interval Newton test: if N(X) = m - p(m)/p'(X)
  // lies inside X, every polynomial in the coefficient balls has exactly one
  // root in X, and it lies in N(X). deg disjoint such intervals for a degree-deg
  // polynomial account for all its roots, so they are real and distinct.
  Roots<Ball> out;
  const long prec = working_precision();
  const long deg = static_cast<long>(c.size()) - 1;
  const std::string at = " at " + std::to_string(prec) + " bits";
  if (!arb_is_nonzero(c.back().raw())) {
    out.why = "cannot certify the leading coefficient nonzero" + at;
    return out;
  }
  std::vector<std::pair<Ball, Ball>> approx;
  if (!approx_roots(deg, prec, [&](long m, arb_ptr o) { arb_set_arf(o, arb_midref(c[m].raw())); }, approx)) {
    out.why = "leading coefficient vanishes" + at;
    return out;
  }
  const std::vector<Ball> dc = poly_derivative(*this, c);
  std::vector<Ball> mids;
  for (auto& a : approx) mids.push_back(a.first);
  for (long i = 0; i < deg; ++i) {
    Ball gap;  // distance to the nearest other approximation caps the inclusion width
    arb_pos_inf(gap.raw());
    for (long j = 0; j < deg; ++j) {
      if (j == i) continue;
      Ball dd = mids[i] - mids[j];
      arb_abs(dd.raw(), dd.raw());
      if (arb_lt(dd.raw(), gap.raw())) gap = dd;
    }
    const Ball& m = mids[i];
    Ball step = poly_eval(c, m) / poly_eval(dc, m);
    arb_abs(step.raw(), step.raw());
    bool ok = false;
    Ball X;
    Mag w, floor_w, mm, cap;  // widths: 4|p/p'|, growing, never beyond a third of the gap
    arb_get_mag(w.v, step.raw());
    mag_mul_2exp_si(w.v, w.v, 2);
    mag_set_ui_2exp_si(floor_w.v, 1, -prec + 8);
    arb_get_mag(mm.v, m.raw());
    mag_mul(floor_w.v, floor_w.v, mm.v);
    mag_max(w.v, w.v, floor_w.v);
    arb_get_mag_lower(cap.v, gap.raw());
    mag_div_ui(cap.v, cap.v, 3);
    for (int attempt = 0; attempt < 12 && !ok; ++attempt) {
      if (mag_cmp(w.v, cap.v) > 0) mag_set(w.v, cap.v);
      X = m;
      mag_set(arb_radref(X.raw()), w.v);
      const Ball dX = poly_eval(dc, X);
      if (!arb_contains_zero(dX.raw())) {
        const Ball N = m - poly_eval(c, m) / dX;
        if (arb_contains_interior(X.raw(), N.raw())) {
          ok = true;
          X = N;
          for (int it = 0; it < 3; ++it) {  // a few contractions tighten the enclosure
            Ball mid;
            arb_set_arf(mid.raw(), arb_midref(X.raw()));
            const Ball dX2 = poly_eval(dc, X);
            if (arb_contains_zero(dX2.raw())) break;
            const Ball N2 = mid - poly_eval(c, mid) / dX2;
            Ball I;
            if (!arb_intersection(I.raw(), X.raw(), N2.raw(), prec)) break;
            X = I;
          }
        }
      }
      if (mag_cmp(w.v, cap.v) >= 0) break;
      mag_mul_2exp_si(w.v, w.v, 3);
    }
    if (!ok) {
      out.why = "cannot isolate the roots" + at;
      return out;
    }
    out.roots.push_back(X);
  }
  for (size_t i = 0; i < out.roots.size(); ++i)
    for (size_t j = i + 1; j < out.roots.size(); ++j)
      if (arb_overlaps(out.roots[i].raw(), out.roots[j].raw())) {
        out.roots.clear();
        out.why = "root enclosures overlap" + at;
        return out;
      }
  std::sort(out.roots.begin(), out.roots.end(),
            [](const Ball& a, const Ball& b) { return arf_cmp(arb_midref(a.raw()), arb_midref(b.raw())) < 0; });
  out.ok = Truth::yes;
  return out;
}

// ============================================================ floating point
namespace {
double scale2(double x, long e) { return std::ldexp(x, static_cast<int>(e)); }
// x -= a * b in place (no temporaries for MPFR: the LU's inner loop)
void submul(double& x, const double& a, const double& b) { x -= a * b; }
void submul(Mpfr& x, const Mpfr& a, const Mpfr& b) {
  // One scratch number per thread, released when the thread ends (a bare
  // thread_local mpfr_t leaked its limbs in every worker thread).
  thread_local Mpfr t;
  t.set_precision(std::max(mpfr_get_prec(a.raw()), mpfr_get_prec(b.raw())));
  mpfr_mul(t.raw(), a.raw(), b.raw(), MPFR_RNDN);
  mpfr_sub(x.raw(), x.raw(), t.raw(), MPFR_RNDN);
}
Mpfr scale2(const Mpfr& x, long e) {
  Mpfr r(x);
  mpfr_mul_2si(r.raw(), x.raw(), e, MPFR_RNDN);
  return r;
}

// Relative agreement of a and b against scale s (all magnitudes as log2),
// judged by the field's tolerance; see FloatTolerance.
Truth judge_relative(double log2_diff, double log2_scale, const FloatTolerance& tol, long prec) {
  if (std::isinf(log2_diff) && log2_diff < 0) return Truth::yes;  // exactly equal
  if (std::isnan(log2_diff) || std::isnan(log2_scale) || std::isinf(log2_diff)) return Truth::unknown;
  if (std::isinf(log2_scale)) return log2_scale < 0 ? Truth::unknown : Truth::yes;
  const double rel = log2_diff - log2_scale;
  if (rel <= tol.yes_log2(prec)) return Truth::yes;
  if (rel > tol.no_log2(prec)) return Truth::no;
  return Truth::unknown;
}

template <class F, class T>
Truth float_equal(const F& fld, const T& a, const T& b, const T* scale) {
  double s = std::max(fld.log2_abs(a), fld.log2_abs(b));
  if (scale) s = std::max(s, fld.log2_abs(*scale));
  return judge_relative(fld.log2_abs(a - b), s, fld.tol, fld.precision());
}

// Gaussian elimination with partial pivoting, generic over a float type: the
// one float elimination, used by the float fields' solve (lu_solve) and by the
// placed design's small double systems (solve_dense). The pivot of a column is
// its first entry of largest size(x); elimination stops, returning false, at
// a pivot whose size is not usable(size). X = A^-1 B by back substitution;
// with check_finite, false as soon as an entry of X is infinite.
template <class T, class Size, class Usable>
bool gauss_solve(Mat<T>& X, Mat<T>& A, Mat<T>& B, Size size, Usable usable, bool check_finite) {
  const int n = A.rows(), k = B.cols();
  for (int col = 0; col < n; ++col) {
    int piv = col;
    auto best = size(A(col, col));
    for (int i = col + 1; i < n; ++i) {
      const auto m = size(A(i, col));
      if (m > best) { best = m; piv = i; }
    }
    if (!usable(best)) return false;
    if (piv != col) {
      for (int j = 0; j < n; ++j) std::swap(A(col, j), A(piv, j));
      for (int j = 0; j < k; ++j) std::swap(B(col, j), B(piv, j));
    }
    for (int i = col + 1; i < n; ++i) {
      const T f = A(i, col) / A(col, col);
      for (int j = col; j < n; ++j) submul(A(i, j), f, A(col, j));
      for (int j = 0; j < k; ++j) submul(B(i, j), f, B(col, j));
    }
  }
  X = Mat<T>(n, k);
  for (int j = 0; j < k; ++j)
    for (int i = n; i-- > 0;) {
      T s = B(i, j);
      for (int t = i + 1; t < n; ++t) submul(s, A(i, t), X(t, j));
      X(i, j) = s / A(i, i);
      if (check_finite && !std::isfinite(size(X(i, j))) && size(X(i, j)) > 0) return false;
    }
  return true;
}

// The float fields' solve: rows and columns are first equilibrated by powers
// of two (exact scaling), which matters for the pair systems whose unknowns
// differ in size by e^{|s|}; pivots are compared by log2|x|. Floats never
// declare a system singular: a zero or non-finite pivot, or an infinite
// entry of the solution, is Truth::unknown (an exact run, or the head-count
// diagnosis, decides).
template <class T, class F>
Truth lu_solve(const F& fld, Mat<T>& X, Mat<T> A, Mat<T> B) {
  const int n = A.rows(), k = B.cols();
  std::vector<long> cscale(n, 0);
  for (int i = 0; i < n; ++i) {
    double m = -INFINITY;
    for (int j = 0; j < n; ++j) m = std::max(m, fld.log2_abs(A(i, j)));
    if (!std::isfinite(m)) continue;
    const long e = -static_cast<long>(std::floor(m));
    for (int j = 0; j < n; ++j) A(i, j) = scale2(A(i, j), e);
    for (int j = 0; j < k; ++j) B(i, j) = scale2(B(i, j), e);
  }
  for (int j = 0; j < n; ++j) {
    double m = -INFINITY;
    for (int i = 0; i < n; ++i) m = std::max(m, fld.log2_abs(A(i, j)));
    if (!std::isfinite(m)) continue;
    cscale[j] = -static_cast<long>(std::floor(m));
    for (int i = 0; i < n; ++i) A(i, j) = scale2(A(i, j), cscale[j]);
  }
  const auto size = [&](const T& x) { return fld.log2_abs(x); };
  if (!gauss_solve(X, A, B, size, [](double best) { return std::isfinite(best); }, true)) return Truth::unknown;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) X(i, j) = scale2(X(i, j), cscale[i]);
  return Truth::yes;
}

// Real roots in floating point (approx_): Arb's complex root finder on the
// coefficients. Rounding turns two nearly equal real roots into a complex pair
// a +- ib; such a pair is read as the real pair a -+ |b|, the right split to
// first order. The pair fits then refine every unknown on their own equations
// (better conditioned than these roots) and check that the refined fit
// reproduces its values, so a pair of truly non-real roots ends there.
template <class T, class F, class ToArf, class FromArf>
Roots<T> float_real_roots(const F& fld, const std::vector<T>& c, ToArf to_arf, FromArf from_arf) {
  Roots<T> out;
  const long prec = fld.precision();
  const long deg = static_cast<long>(c.size()) - 1;
  for (const T& x : c)
    if (std::isnan(fld.log2_abs(x)) || (std::isinf(fld.log2_abs(x)) && fld.log2_abs(x) > 0)) {
      out.why = "non-finite polynomial coefficient";
      return out;
    }
  std::vector<std::pair<Ball, Ball>> approx;
  if (!approx_roots(deg, prec, [&](long m, arb_ptr o) { to_arf(arb_midref(o), c[m]); }, approx)) {
    out.why = "leading coefficient vanishes";
    return out;
  }
  for (auto& [re, im] : approx) {
    T x = from_arf(arb_midref(re.raw()));
    if (!arf_is_zero(arb_midref(im.raw()))) {
      const T y = fld.abs(from_arf(arb_midref(im.raw())));
      x = arf_sgn(arb_midref(im.raw())) > 0 ? x + y : x - y;  // the member with positive imaginary part moves up
    }
    out.roots.push_back(x);
  }
  std::sort(out.roots.begin(), out.roots.end(), [&](const T& a, const T& b) { return fld.is_positive(b - a) == Truth::yes; });
  out.ok = Truth::yes;
  return out;
}
}  // namespace

bool solve_dense(std::vector<std::vector<double>> A, std::vector<double>& x) {
  const int n = static_cast<int>(A.size());
  Mat<double> M(n, n), B(n, 1), X;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) M(i, j) = A[i][j];
    B(i, 0) = x[i];
  }
  if (!gauss_solve(X, M, B, [](double v) { return std::fabs(v); }, [](double best) { return best != 0; }, false)) return false;
  for (int i = 0; i < n; ++i) x[i] = X(i, 0);
  return true;
}

Mpfr Field<Mpfr>::exp(const Rational& s) const {
  Mpfr r(s);
  mpfr_exp(r.raw(), r.raw(), MPFR_RNDN);
  return r;
}
Mpfr Field<Mpfr>::exp(const Mpfr& s) const {
  Mpfr r;
  mpfr_exp(r.raw(), s.raw(), MPFR_RNDN);
  return r;
}
Mpfr Field<Mpfr>::log(const Mpfr& r) const {
  if (mpfr_sgn(r.raw()) <= 0) throw_unable("pole r <= 0 in floating point: precision too low");
  Mpfr out;
  mpfr_log(out.raw(), r.raw(), MPFR_RNDN);
  return out;
}
Mpfr Field<Mpfr>::abs(const Mpfr& x) const {
  Mpfr r;
  mpfr_abs(r.raw(), x.raw(), MPFR_RNDN);
  return r;
}
double Field<Mpfr>::log2_abs(const Mpfr& x) const {
  if (mpfr_zero_p(x.raw())) return -std::numeric_limits<double>::infinity();
  if (mpfr_nan_p(x.raw())) return std::numeric_limits<double>::quiet_NaN();
  if (mpfr_inf_p(x.raw())) return std::numeric_limits<double>::infinity();
  long e = 0;
  const double m = mpfr_get_d_2exp(&e, x.raw(), MPFR_RNDN);
  return std::log2(std::fabs(m)) + static_cast<double>(e);
}
Truth Field<Mpfr>::is_zero(const Mpfr& x) const { return mpfr_zero_p(x.raw()) || mpfr_nan_p(x.raw()) ? Truth::unknown : Truth::no; }
Truth Field<Mpfr>::is_positive(const Mpfr& x) const {
  if (mpfr_nan_p(x.raw())) return Truth::unknown;
  return truth_of(mpfr_sgn(x.raw()) > 0);
}
Truth Field<Mpfr>::equal(const Mpfr& a, const Mpfr& b) const { return float_equal(*this, a, b, static_cast<const Mpfr*>(nullptr)); }
Truth Field<Mpfr>::equal(const Mpfr& a, const Mpfr& b, const Mpfr& scale) const { return float_equal(*this, a, b, &scale); }
Truth Field<Mpfr>::solve(Mat<Mpfr>& X, const Mat<Mpfr>& A, const Mat<Mpfr>& B) const { return lu_solve(*this, X, A, B); }
Roots<Mpfr> Field<Mpfr>::real_roots(const std::vector<Mpfr>& c) const {
  return float_real_roots(
      *this, c, [](arf_ptr out, const Mpfr& x) { arf_set_mpfr(out, x.raw()); },
      [](arf_srcptr a) {
        Mpfr r;
        arf_get_mpfr(r.raw(), a, MPFR_RNDN);
        return r;
      });
}
Mpfr Field<Mpfr>::relu(const Mpfr& x) const { return mpfr_sgn(x.raw()) > 0 ? x : Mpfr(0L); }
Rational Field<Mpfr>::nearest(const Mpfr& x, long den) const { return nearest_of_ball(enclose(x), den); }
Ball Field<Mpfr>::enclose(const Mpfr& x) const {
  Ball b;
  arf_set_mpfr(arb_midref(b.raw()), x.raw());
  return b;
}

double Field<double>::log(const double& r) const {
  if (!(r > 0)) throw_unable("pole r <= 0 in double precision");
  return std::log(r);
}
Truth Field<double>::is_zero(const double& x) const { return x == 0.0 || std::isnan(x) ? Truth::unknown : Truth::no; }
Truth Field<double>::is_positive(const double& x) const {
  if (std::isnan(x)) return Truth::unknown;
  return truth_of(x > 0);
}
Truth Field<double>::equal(const double& a, const double& b) const { return float_equal(*this, a, b, static_cast<const double*>(nullptr)); }
Truth Field<double>::equal(const double& a, const double& b, const double& scale) const { return float_equal(*this, a, b, &scale); }
Truth Field<double>::solve(Mat<double>& X, const Mat<double>& A, const Mat<double>& B) const { return lu_solve(*this, X, A, B); }
Roots<double> Field<double>::real_roots(const std::vector<double>& c) const {
  return float_real_roots(
      *this, c, [](arf_ptr out, const double& x) { arf_set_d(out, x); }, [](arf_srcptr a) { return arf_get_d(a, ARF_RND_NEAR); });
}
double Field<double>::relu(const double& x) const { return x > 0 ? x : 0.0; }
Rational Field<double>::nearest(const double& x, long den) const { return nearest_of_ball(enclose(x), den); }
Ball Field<double>::enclose(const double& x) const {
  Ball b;
  arb_set_d(b.raw(), x);
  return b;
}
std::string Field<double>::str(const double& x) const {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

}  // namespace mhaq
