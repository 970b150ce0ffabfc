// Field<T> primitives: exp/log, linear solves and real roots per arithmetic.
#include "mhaq/arith/field.hpp"
#include "mhaq/arith/qtau_solve.hpp"

#include <acb_poly.h>
#include <arb_mat.h>
#include <arb_poly.h>
#include <flint/fmpz_poly_mat.h>

#include <algorithm>
#include <string>

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

// ============================================================ exact: Q(tau)
QTau Field<QTau>::exp(const Rational& s) const {
  const Rational n = s * Rational(L);
  if (!n.is_integer()) throw_internal("exact oracle: score " + s.str() + " is not a multiple of 1/L, L=" + std::to_string(L));
  return QTau::tau_pow(n.to_long());
}

QTau Field<QTau>::log(const QTau& r) const {
  long n = 0;
  // Transcendence of tau: log of an element of Q(tau) lies in Q(tau) only for tau^n (proofs/08).
  if (!r.is_tau_power(n)) throw_inconsistent("exact log: pole " + r.str() + " is not a power of tau");
  return QTau(Rational(n, static_cast<unsigned long>(L)));
}

Truth Field<QTau>::is_positive(const QTau& x) const {
  // Sign of a nonzero element as a real number with tau = e^{1/L} > 1 needs a
  // real evaluation; the learner only asks it of constants.
  Rational q;
  if (!x.is_rational(q)) throw_internal("exact sign test on a non-constant element");
  return q.sign() > 0 ? Truth::yes : Truth::no;
}

namespace {
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
}  // namespace

void Field<QTau>::solve(Mat<QTau>& X, const Mat<QTau>& A, const Mat<QTau>& B) const {
  // Exact in every method (mhaq/arith/qtau_solve.hpp); singularity is decided exactly.
  if (!qtau_solve(current_exact_solver(), X, A, B)) throw_degenerate("linear system is singular (decided exactly in Q(tau))");
}

std::vector<QTau> Field<QTau>::real_roots(const std::vector<QTau>& c) const {
  // Roots of a polynomial over Q(tau) whose roots are -tau^{-n}: the Newton
  // polygon of the tau-adic valuations gives each n, and substitution
  // verifies each candidate exactly (proofs/02, proofs/08).
  const long deg = static_cast<long>(c.size()) - 1;
  if (deg < 1 || c.back().is_zero()) throw_internal("exact roots: bad degree");
  std::vector<std::pair<long, long>> pts;  // (m, valuation)
  for (long m = 0; m <= deg; ++m)
    if (!c[m].is_zero()) pts.push_back({m, c[m].valuation()});
  // lower convex hull
  std::vector<std::pair<long, long>> hull;
  for (const auto& p : pts) {
    while (hull.size() >= 2) {
      const auto& a = hull[hull.size() - 2];
      const auto& b = hull[hull.size() - 1];
      // remove b if it lies on or above segment a-p
      const __int128 cross = static_cast<__int128>(b.first - a.first) * (p.second - a.second) -
                             static_cast<__int128>(b.second - a.second) * (p.first - a.first);
      if (cross <= 0) hull.pop_back(); else break;
    }
    hull.push_back(p);
  }
  std::vector<QTau> roots;
  for (size_t s = 1; s < hull.size(); ++s) {
    const long len = hull[s].first - hull[s - 1].first;
    const long rise = hull[s].second - hull[s - 1].second;
    if (len != 1) throw_inconsistent("exact roots: Newton polygon segment of length " + std::to_string(len) + "; roots are not distinct powers of tau");
    // root k with valuation -rise, candidate k = -tau^{-rise}
    QTau k = -QTau::tau_pow(-rise);
    if (!poly_eval(c, k).is_zero()) throw_inconsistent("exact roots: candidate -tau^" + std::to_string(-rise) + " is not a root");
    roots.push_back(std::move(k));
  }
  if (static_cast<long>(roots.size()) != deg) throw_inconsistent("exact roots: found " + std::to_string(roots.size()) + " of " + std::to_string(deg));
  return roots;
}

// ============================================================ ball: Arb
Ball Field<Ball>::exp(const Rational& s) const {
  Ball r(s);
  arb_exp(r.raw(), r.raw(), working_precision());
  return r;
}
Ball Field<Ball>::log(const Ball& r) const {
  if (!arb_is_positive(r.raw())) throw_unable("cannot certify a pole r > 0 at " + std::to_string(working_precision()) + " bits");
  Ball out;
  arb_log(out.raw(), r.raw(), working_precision());
  return out;
}
Truth Field<Ball>::is_zero(const Ball& x) const {
  if (arb_is_zero(x.raw())) return Truth::yes;
  return arb_contains_zero(x.raw()) ? Truth::unknown : Truth::no;
}
Truth Field<Ball>::is_positive(const Ball& x) const {
  if (arb_is_positive(x.raw())) return Truth::yes;
  return arb_is_nonpositive(x.raw()) ? Truth::no : Truth::unknown;
}

namespace {
struct ArbMat {
  arb_mat_t m;
  ArbMat(long r, long c) { arb_mat_init(m, r, c); }
  ~ArbMat() { arb_mat_clear(m); }
  ArbMat(const ArbMat&) = delete;
  ArbMat& operator=(const ArbMat&) = delete;
};
struct AcbPoly {
  acb_poly_t p;
  AcbPoly() { acb_poly_init(p); }
  ~AcbPoly() { acb_poly_clear(p); }
  AcbPoly(const AcbPoly&) = delete;
  AcbPoly& operator=(const AcbPoly&) = delete;
};
struct AcbVec {
  acb_ptr v;
  long n;
  explicit AcbVec(long len) : v(_acb_vec_init(len)), n(len) {}
  ~AcbVec() { _acb_vec_clear(v, n); }
  AcbVec(const AcbVec&) = delete;
  AcbVec& operator=(const AcbVec&) = delete;
};

// Approximate complex roots (Arb's Durand-Kerner/Aberth) of the polynomial
// whose coefficients are the given midpoints; used as starting points only.
template <class SetCoeff>
std::vector<std::pair<arf_struct, arf_struct>> approx_roots(long deg, long prec, SetCoeff set) {
  AcbPoly p;
  acb_poly_fit_length(p.p, deg + 1);
  for (long m = 0; m <= deg; ++m) set(m, acb_realref(p.p->coeffs + m));
  _acb_poly_set_length(p.p, deg + 1);
  _acb_poly_normalise(p.p);
  if (acb_poly_degree(p.p) != deg) throw_unable("leading coefficient vanishes at this precision");
  AcbVec roots(deg);
  long wp = prec;
  for (int attempt = 0; attempt < 4; ++attempt, wp *= 2) {
    long isolated = acb_poly_find_roots(roots.v, p.p, nullptr, 0, wp);
    if (isolated == deg) break;
  }
  std::vector<std::pair<arf_struct, arf_struct>> out(deg);
  for (long i = 0; i < deg; ++i) {
    arf_init(&out[i].first);
    arf_init(&out[i].second);
    arf_set(&out[i].first, arb_midref(acb_realref(roots.v + i)));
    arf_set(&out[i].second, arb_midref(acb_imagref(roots.v + i)));
  }
  return out;
}
void clear_roots(std::vector<std::pair<arf_struct, arf_struct>>& r) {
  for (auto& x : r) { arf_clear(&x.first); arf_clear(&x.second); }
}
}  // namespace

void Field<Ball>::solve(Mat<Ball>& X, const Mat<Ball>& A, const Mat<Ball>& B) const {
  const int n = A.rows(), k = B.cols();
  ArbMat a(n, n), b(n, k), x(n, k);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) arb_set(arb_mat_entry(a.m, i, j), A(i, j).raw());
    for (int j = 0; j < k; ++j) arb_set(arb_mat_entry(b.m, i, j), B(i, j).raw());
  }
  // arb_mat_solve: on success the solution of every system in the balls is contained in X.
  if (!arb_mat_solve(x.m, a.m, b.m, working_precision()))
    throw_unable("cannot certify a " + std::to_string(n) + "x" + std::to_string(n) + " system nonsingular at " +
                 std::to_string(working_precision()) + " bits");
  X = Mat<Ball>(n, k);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) arb_set(X(i, j).raw(), arb_mat_entry(x.m, i, j));
}

std::vector<Ball> Field<Ball>::real_roots(const std::vector<Ball>& c) const {
  // Isolate each root with the interval Newton test: if N(X) = m - p(m)/p'(X)
  // lies inside X, every polynomial in the coefficient balls has exactly one
  // root in X, and it lies in N(X). H disjoint such intervals for a degree-H
  // polynomial account for all its roots, so they are real and distinct.
  const long prec = working_precision();
  const long deg = static_cast<long>(c.size()) - 1;
  if (!arb_is_nonzero(c.back().raw())) throw_unable("cannot certify the leading coefficient nonzero");
  auto approx = approx_roots(deg, prec, [&](long m, arb_ptr out) { arb_set_arf(out, arb_midref(c[m].raw())); });
  const std::vector<Ball> dc = poly_derivative(*this, c);
  std::vector<Ball> roots;
  std::vector<Ball> mids(deg);
  for (long i = 0; i < deg; ++i) arb_set_arf(mids[i].raw(), &approx[i].first);
  clear_roots(approx);
  for (long i = 0; i < deg; ++i) {
    // distance to nearest other approximation caps the inclusion width
    Ball gap;
    arb_pos_inf(gap.raw());
    for (long j = 0; j < deg; ++j) {
      if (j == i) continue;
      Ball dd = mids[i] - mids[j];
      arb_abs(dd.raw(), dd.raw());
      if (arb_lt(dd.raw(), gap.raw())) gap = dd;
    }
    const Ball& m = mids[i];
    Ball pm = poly_eval(c, m), dm = poly_eval(dc, m);
    Ball step = pm / dm;
    arb_abs(step.raw(), step.raw());
    bool ok = false;
    Ball X;
    // widths: 4|p/p'|, growing, but never beyond a third of the gap
    mag_t w;
    mag_init(w);
    arb_get_mag(w, step.raw());
    mag_mul_2exp_si(w, w, 2);
    mag_t floor_w;
    mag_init(floor_w);
    mag_set_ui_2exp_si(floor_w, 1, -prec + 8);
    mag_t mm;
    mag_init(mm);
    arb_get_mag(mm, m.raw());
    mag_mul(floor_w, floor_w, mm);
    mag_max(w, w, floor_w);
    mag_t cap;
    mag_init(cap);
    arb_get_mag_lower(cap, gap.raw());
    mag_div_ui(cap, cap, 3);
    for (int attempt = 0; attempt < 12 && !ok; ++attempt) {
      if (mag_cmp(w, cap) > 0) mag_set(w, cap);
      X = m;
      mag_set(arb_radref(X.raw()), w);
      Ball dX = poly_eval(dc, X);
      if (!arb_contains_zero(dX.raw())) {
        Ball N = m - poly_eval(c, m) / dX;
        if (arb_contains_interior(X.raw(), N.raw())) {
          ok = true;
          X = N;
          // a few contractions tighten the enclosure
          for (int it = 0; it < 3; ++it) {
            Ball mid;
            arb_set_arf(mid.raw(), arb_midref(X.raw()));
            Ball dX2 = poly_eval(dc, X);
            if (arb_contains_zero(dX2.raw())) break;
            Ball N2 = mid - poly_eval(c, mid) / dX2;
            Ball I;
            if (!arb_intersection(I.raw(), X.raw(), N2.raw(), prec)) break;
            X = I;
          }
        }
      }
      if (mag_cmp(w, cap) >= 0) break;
      mag_mul_2exp_si(w, w, 3);
    }
    mag_clear(w); mag_clear(floor_w); mag_clear(mm); mag_clear(cap);
    if (!ok) throw_unable("cannot isolate the poles of a pair at " + std::to_string(prec) + " bits");
    roots.push_back(X);
  }
  for (size_t i = 0; i < roots.size(); ++i)
    for (size_t j = i + 1; j < roots.size(); ++j)
      if (arb_overlaps(roots[i].raw(), roots[j].raw())) throw_unable("pole enclosures overlap at " + std::to_string(prec) + " bits");
  std::sort(roots.begin(), roots.end(), [](const Ball& a, const Ball& b) { return arf_cmp(arb_midref(a.raw()), arb_midref(b.raw())) < 0; });
  return roots;
}

bool Field<Ball>::certify_pair(const std::vector<Ball>& f, Ball& P, std::vector<Ball>& r, std::vector<Ball>& c) const {
  const long prec = working_precision();
  const long H = static_cast<long>(r.size()), n = 2 * H + 1;
  // x = (P, r_1..r_H, c_1..c_H); g_k(x) = P + sum_h c_h / (1 + r_h k) - f_k.
  std::vector<Ball> xt(n);
  arb_get_mid_arb(xt[0].raw(), P.raw());
  for (long h = 0; h < H; ++h) {
    arb_get_mid_arb(xt[1 + h].raw(), r[h].raw());
    arb_get_mid_arb(xt[1 + H + h].raw(), c[h].raw());
  }
  const Ball one(1L);
  auto g = [&](const std::vector<Ball>& x, long k) {
    Ball s = x[0] - f[k];
    for (long h = 0; h < H; ++h) s += x[1 + H + h] / (one + x[1 + h] * Ball(k));
    return s;
  };
  auto jac = [&](ArbMat& J, const std::vector<Ball>& x) {
    for (long k = 0; k < n; ++k) {
      arb_one(arb_mat_entry(J.m, k, 0));
      for (long h = 0; h < H; ++h) {
        const Ball den = one + x[1 + h] * Ball(k);
        const Ball inv = one / den;
        arb_set(arb_mat_entry(J.m, k, 1 + H + h), inv.raw());
        const Ball dr = -(x[1 + H + h] * Ball(k) * inv * inv);
        arb_set(arb_mat_entry(J.m, k, 1 + h), dr.raw());
      }
    }
  };
  ArbMat Jt(n, n), Y(n, n), JX(n, n), YJ(n, n), M(n, n), gt(n, 1), Yg(n, 1), dX(n, 1), corr(n, 1);
  jac(Jt, xt);
  arb_mat_get_mid(Jt.m, Jt.m);
  if (!arb_mat_approx_inv(Y.m, Jt.m, prec)) return false;
  arb_mat_get_mid(Y.m, Y.m);
  for (long k = 0; k < n; ++k) {
    const Ball gk = g(xt, k);
    arb_set(arb_mat_entry(gt.m, k, 0), gk.raw());
  }
  arb_mat_mul(Yg.m, Y.m, gt.m, prec);
  // initial box: twice the Newton step, plus a few ulps
  std::vector<Ball> X(n);
  std::vector<mag_struct> w(n);
  for (long i = 0; i < n; ++i) {
    mag_init(&w[i]);
    arb_get_mag(&w[i], arb_mat_entry(Yg.m, i, 0));
    mag_mul_2exp_si(&w[i], &w[i], 1);
    mag_t t;
    mag_init(t);
    arb_get_mag(t, xt[i].raw());
    mag_mul_2exp_si(t, t, -prec + 4);
    mag_add(&w[i], &w[i], t);
    mag_clear(t);
  }
  bool ok = false;
  std::vector<Ball> K(n);
  for (int attempt = 0; attempt < 6 && !ok; ++attempt) {
    for (long i = 0; i < n; ++i) {
      X[i] = xt[i];
      mag_set(arb_radref(X[i].raw()), &w[i]);
      arb_zero(arb_mat_entry(dX.m, i, 0));
      mag_set(arb_radref(arb_mat_entry(dX.m, i, 0)), &w[i]);  // X - xt = [0 +/- w]
    }
    jac(JX, X);
    arb_mat_mul(YJ.m, Y.m, JX.m, prec);
    arb_mat_one(M.m);
    arb_mat_sub(M.m, M.m, YJ.m, prec);
    arb_mat_mul(corr.m, M.m, dX.m, prec);
    ok = true;
    for (long i = 0; i < n && ok; ++i) {
      Ball k = xt[i];
      arb_sub(k.raw(), k.raw(), arb_mat_entry(Yg.m, i, 0), prec);
      arb_add(k.raw(), k.raw(), arb_mat_entry(corr.m, i, 0), prec);
      ok = arb_contains_interior(X[i].raw(), k.raw());
      K[i] = k;
    }
    for (long i = 0; i < n; ++i) mag_mul_2exp_si(&w[i], &w[i], 3);  // epsilon-inflation for the next try
  }
  for (auto& m : w) mag_clear(&m);
  if (!ok) return false;
  // distinct positive poles and nonzero residues, so the solution in X is the
  // true fit up to the order of heads (uniqueness of the type-(H,H) interpolant)
  for (long h = 0; h < H; ++h) {
    if (!arb_is_positive(K[1 + h].raw()) || arb_contains_zero(K[1 + H + h].raw())) return false;
    for (long g2 = h + 1; g2 < H; ++g2)
      if (arb_overlaps(K[1 + h].raw(), K[1 + g2].raw())) return false;
  }
  P = K[0];
  for (long h = 0; h < H; ++h) {
    r[h] = K[1 + h];
    c[h] = K[1 + H + h];
  }
  return true;
}

// ============================================================ floating point
namespace {
double scale2(double x, long e) { return std::ldexp(x, static_cast<int>(e)); }
Mpfr scale2(const Mpfr& x, long e) {
  Mpfr r(x);
  mpfr_mul_2si(r.raw(), x.raw(), e, MPFR_RNDN);
  return r;
}

// Gaussian elimination with partial pivoting, generic over a float type.
// Rows and columns are first equilibrated by powers of two (exact scaling),
// which matters for the pair systems whose unknowns differ in size by e^{|s|}.
template <class T, class F>
void lu_solve(const F& fld, Mat<T>& X, Mat<T> A, Mat<T> B) {
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
  for (int col = 0; col < n; ++col) {
    int piv = col;
    double best = fld.log2_abs(A(col, col));
    for (int i = col + 1; i < n; ++i) {
      const double m = fld.log2_abs(A(i, col));
      if (m > best) { best = m; piv = i; }
    }
    if (fld.is_zero(A(piv, col)) == Truth::yes)
      throw_degenerate("linear system is singular (floating-point judgement: exact zero pivot)");
    if (piv != col) {
      for (int j = 0; j < n; ++j) std::swap(A(col, j), A(piv, j));
      for (int j = 0; j < k; ++j) std::swap(B(col, j), B(piv, j));
    }
    for (int i = col + 1; i < n; ++i) {
      const T f = A(i, col) / A(col, col);
      for (int j = col; j < n; ++j) A(i, j) = A(i, j) - f * A(col, j);
      for (int j = 0; j < k; ++j) B(i, j) = B(i, j) - f * B(col, j);
    }
  }
  X = Mat<T>(n, k);
  for (int j = 0; j < k; ++j)
    for (int i = n; i-- > 0;) {
      T s = B(i, j);
      for (int t = i + 1; t < n; ++t) s = s - A(i, t) * X(t, j);
      X(i, j) = s / A(i, i);
    }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) X(i, j) = scale2(X(i, j), cscale[i]);
}

template <class T, class F, class ToArf, class FromArf>
std::vector<T> float_real_roots(const F& fld, const std::vector<T>& c, long prec, ToArf to_arf, FromArf from_arf) {
  const long deg = static_cast<long>(c.size()) - 1;
  auto approx = approx_roots(deg, prec, [&](long m, arb_ptr out) { to_arf(arb_midref(out), c[m]); });
  std::vector<T> roots;
  const std::vector<T> dc = poly_derivative(fld, c);
  for (auto& [re, im] : approx) {
    // floating-point judgement: noise makes nearly-real roots complex; keep the
    // real part unless the imaginary part exceeds 1/8 of the root's size
    if (!arf_is_zero(&im)) {
      arf_t a, b;
      arf_init(a); arf_init(b);
      arf_abs(a, &im);
      arf_abs(b, &re);
      arf_mul_2exp_si(b, b, -3);
      const bool complex = arf_cmp(a, b) > 0;
      arf_clear(a); arf_clear(b);
      if (complex) { clear_roots(approx); throw_unable("pair polynomial has non-real roots at this precision"); }
    }
    T x = from_arf(&re);
    for (int it = 0; it < 2; ++it) {
      const T d = poly_eval(dc, x);
      if (fld.is_zero(d) == Truth::yes) break;
      x = x - poly_eval(c, x) / d;
    }
    roots.push_back(x);
  }
  clear_roots(approx);
  std::sort(roots.begin(), roots.end(), [&](const T& a, const T& b) { return fld.is_positive(b - a) == Truth::yes; });
  return roots;
}
}  // namespace

Mpfr Field<Mpfr>::exp(const Rational& s) const {
  Mpfr r(s);
  mpfr_exp(r.raw(), r.raw(), MPFR_RNDN);
  return r;
}
Mpfr Field<Mpfr>::log(const Mpfr& r) const {
  if (mpfr_sgn(r.raw()) <= 0) throw_unable("pole r <= 0 in floating point: precision too low");
  Mpfr out;
  mpfr_log(out.raw(), r.raw(), MPFR_RNDN);
  return out;
}
double Field<Mpfr>::log2_abs(const Mpfr& x) const {
  if (mpfr_zero_p(x.raw())) return -std::numeric_limits<double>::infinity();
  long e = 0;
  const double m = mpfr_get_d_2exp(&e, x.raw(), MPFR_RNDN);
  return std::log2(std::fabs(m)) + static_cast<double>(e);
}
Mpfr Field<Mpfr>::abs(const Mpfr& x) const {
  Mpfr r;
  mpfr_abs(r.raw(), x.raw(), MPFR_RNDN);
  return r;
}
void Field<Mpfr>::solve(Mat<Mpfr>& X, const Mat<Mpfr>& A, const Mat<Mpfr>& B) const { lu_solve(*this, X, A, B); }
std::vector<Mpfr> Field<Mpfr>::real_roots(const std::vector<Mpfr>& c) const {
  return float_real_roots(
      *this, c, working_precision(), [](arf_ptr out, const Mpfr& x) { arf_set_mpfr(out, x.raw()); },
      [](arf_srcptr a) {
        Mpfr r;
        arf_get_mpfr(r.raw(), a, MPFR_RNDN);
        return r;
      });
}

double Field<double>::log(const double& r) const {
  if (!(r > 0)) throw_unable("pole r <= 0 in double precision");
  return std::log(r);
}
void Field<double>::solve(Mat<double>& X, const Mat<double>& A, const Mat<double>& B) const { lu_solve(*this, X, A, B); }
std::vector<double> Field<double>::real_roots(const std::vector<double>& c) const {
  return float_real_roots(
      *this, c, 53, [](arf_ptr out, const double& x) { arf_set_d(out, x); },
      [](arf_srcptr a) { return arf_get_d(a, ARF_RND_NEAR); });
}

}  // namespace mhaq
