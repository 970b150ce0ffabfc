// Filter, refine and certify a solution of a nonlinear system
//     model(x)_k = target_k,   k < equations(),  x of size unknowns() <= equations(),
// for each field (included by field.hpp). A system `Sys` provides:
//   int unknowns() const; int equations() const; const V& target(int k) const;
//   template <class G> U model(const G&, const std::vector<U>& x, int k) const;
//   template <class G> void jacobian(const G&, const std::vector<U>& x, Mat<U>& J) const;  // equations x unknowns
//   template <class G> void linear_part(const G&, std::vector<U>& x) const;  // re-solve the unknowns x enters linearly
//   template <class G> Truth admissible(const G&, const std::vector<U>& x) const;  // x in the system's domain
// where U is the value type of the field G. The pair fits of stages/3-fit are
// the system the learner uses (P + sum_h c_h / (1 + r_h k) = f(k)).
#pragma once
#include <arb_mat.h>

#include <algorithm>
#include <vector>

#include "mhaq/arith/flint_wrappers.hpp"

namespace mhaq {

namespace detail {

// Least-squares step of a K x n system (K >= n): the plain solve when square,
// else the augmented system [I A; A^T 0] [s; x] = [b; 0], whose conditioning is
// that of A, not of A^T A. approx_ (floats).
template <class F>
Truth solve_least_squares(const F& fld, Mat<typename F::value_type>& x, const Mat<typename F::value_type>& A,
                          const Mat<typename F::value_type>& b) {
  using T = typename F::value_type;
  const int K = A.rows(), n = A.cols();
  if (K == n) return fld.solve(x, A, b);
  const T one = fld.from(Rational(1)), zero = fld.from(Rational(0));
  Mat<T> M(K + n, K + n, zero), rhs(K + n, 1, zero), y;
  for (int k = 0; k < K; ++k) {
    rhs(k, 0) = b(k, 0);
    M(k, k) = one;
    for (int j = 0; j < n; ++j) M(k, K + j) = M(K + j, k) = A(k, j);
  }
  const Truth t = fld.solve(y, M, rhs);
  if (t != Truth::yes) return t;
  x = Mat<T>(n, 1);
  for (int j = 0; j < n; ++j) x(j, 0) = y(K + j, 0);
  return Truth::yes;
}

template <class F, class Sys>
typename F::value_type residual_squares(const F& fld, const Sys& sys, const std::vector<typename F::value_type>& x) {
  auto ss = fld.from(Rational(0));
  for (int k = 0; k < sys.equations(); ++k) {
    const auto g = sys.model(fld, x, k) - sys.target(k);
    ss = ss + g * g;
  }
  return ss;
}

// Damped Gauss-Newton for the floating-point fields: a step is taken (halved
// up to 10 times) only when it lowers the sum of squared residuals and keeps x
// admissible; iteration stops when no step does, which in floating point is
// convergence to the working precision.
template <class F, class Sys>
void gauss_newton(const F& fld, const Sys& sys, std::vector<typename F::value_type>& x) {
  using T = typename F::value_type;
  const int K = sys.equations(), n = sys.unknowns();
  // Already a fit to the working precision (every residual "equal" at the
  // tolerance's yes-threshold): nothing to refine, the common case.
  bool fits = K == n;
  for (int k = 0; k < K && fits; ++k)
    fits = fld.log2_abs(sys.model(fld, x, k) - sys.target(k)) - std::max(0.0, fld.log2_abs(sys.target(k))) < 16.0 - static_cast<double>(fld.precision());
  if (fits) return;
  sys.linear_part(fld, x);
  T ss = residual_squares(fld, sys, x);
  for (int it = 0; it < 60; ++it) {
    Mat<T> J(K, n), g(K, 1), dx;
    sys.jacobian(fld, x, J);
    for (int k = 0; k < K; ++k) g(k, 0) = sys.model(fld, x, k) - sys.target(k);
    if (solve_least_squares(fld, dx, J, g) != Truth::yes) return;
    // relative size of the step: at the rounding level it is converged; below
    // the square root of it Newton is in its quadratic regime, where a full
    // step that fails to lower the residual means rounding has taken over
    double rel = -std::numeric_limits<double>::infinity();
    for (int i = 0; i < n; ++i) rel = std::max(rel, fld.log2_abs(dx(i, 0)) - fld.log2_abs(x[i]));
    const double p = static_cast<double>(fld.precision());
    if (rel < 8.0 - p) return;
    const int halvings = rel < -p / 2 ? 1 : 10;
    T scale = fld.from(Rational(1));
    const T half = fld.from(Rational(1, 2));
    bool taken = false;
    for (int h = 0; h < halvings && !taken; ++h, scale = scale * half) {
      std::vector<T> trial = x;
      for (int i = 0; i < n; ++i) trial[i] = x[i] - scale * dx(i, 0);
      if (sys.admissible(fld, trial) == Truth::no) continue;
      const T s2 = residual_squares(fld, sys, trial);
      if (fld.is_positive(ss - s2) == Truth::yes) {
        x = std::move(trial);
        ss = s2;
        taken = true;
      }
    }
    if (!taken) return;
  }
}

// Floats: the refined x must reproduce the system's targets (the equality
// decision at the tolerance); a residual beyond it means the approximation
// did not converge at this precision.
template <class F, class Sys>
Truth check_residuals(const F& fld, const Sys& sys, const std::vector<typename F::value_type>& x) {
  for (int k = 0; k < sys.equations(); ++k)
    if (fld.equal(sys.model(fld, x, k), sys.target(k)) == Truth::no)
      throw_unable("the refined fit does not reproduce value " + std::to_string(k) + " at " + std::to_string(fld.precision()) +
                   " bits (the pair is too ill-conditioned for this precision)");
  return Truth::yes;
}

}  // namespace detail

template <class Sys>
Truth Field<Mpfr>::certify(const Sys& sys, std::vector<Mpfr>& x) const {
  return detail::check_residuals(*this, sys, x);
}
template <class Sys>
Truth Field<double>::certify(const Sys& sys, std::vector<double>& x) const {
  return detail::check_residuals(*this, sys, x);
}

template <class Sys>
void Field<Mpfr>::refine(const Sys& sys, std::vector<Mpfr>& x) const {
  detail::gauss_newton(*this, sys, x);
}
template <class Sys>
void Field<double>::refine(const Sys& sys, std::vector<double>& x) const {
  detail::gauss_newton(*this, sys, x);
}

template <class Fn>
std::optional<std::vector<Ball>> Field<Ball>::filtered(const std::vector<Ball>& f, Fn&& fn) const {
  if constexpr (requires { fn.H; })
    if (starts)
      if (const std::vector<Ball>* x = starts->find(f, fn.H)) return *x;
  // The approximation is computed in MPFR at the working precision from the
  // midpoints (approx_: it need not be right; certify() decides).
  std::vector<Mpfr> mid(f.size());
  for (size_t k = 0; k < f.size(); ++k) arf_get_mpfr(mid[k].raw(), arb_midref(f[k].raw()), MPFR_RNDN);
  std::optional<std::vector<Mpfr>> am;
  try {
    am = fn(Field<Mpfr>{}, mid);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (!am) return std::nullopt;
  std::vector<Ball> out(am->size());
  for (size_t i = 0; i < am->size(); ++i) arf_set_mpfr(arb_midref(out[i].raw()), (*am)[i].raw());
  return out;
}

namespace detail {
// Epsilon-inflation of Krawczyk's boxes: each width just beyond its
// component's reach (5/4 of it), never smaller, then 1/64 wider. False when
// a width becomes infinite.
inline bool inflate_widths(std::vector<flint::Mag>& w, const std::vector<flint::Mag>& reach) {
  for (size_t i = 0; i < w.size(); ++i) {
    flint::Mag t;
    mag_mul_2exp_si(t.v, reach[i].v, -2);
    mag_add(t.v, t.v, reach[i].v);
    mag_max(w[i].v, w[i].v, t.v);
    mag_mul_2exp_si(t.v, w[i].v, -6);
    mag_add(w[i].v, w[i].v, t.v);
    if (mag_is_inf(w[i].v)) return false;
  }
  return true;
}
}  // namespace detail

namespace detail {
// The slope-form Krawczyk test with epsilon-inflation (see Field<Ball>::certify).
// Y ~ J(xt)^{-1} (a point matrix), Yg = Y g(xt). On success K holds K(X),
// which lies in the interior of X.
template <class Sys>
bool krawczyk_slope(const Field<Ball>& F, const Sys& sys, const std::vector<Ball>& xt, const arb_mat_t Y, const arb_mat_t Yg, std::vector<Ball>& K) {
  const long prec = working_precision();
  const int n = sys.unknowns();
  flint::ArbMat Jt(n, n), R0(n, n), M(n, n);
  {
    Mat<Ball> J(sys.equations(), n);
    sys.jacobian(F, xt, J);
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j) arb_set(arb_mat_entry(Jt.m, k, j), J(k, j).raw());
  }
  arb_mat_mul(R0.m, Y, Jt.m, prec);  // R0 = I - Y J(xt): rounding only
  arb_mat_neg(R0.m, R0.m);
  for (int i = 0; i < n; ++i) arb_add_ui(arb_mat_entry(R0.m, i, i), arb_mat_entry(R0.m, i, i), 1, prec);
  std::vector<flint::Mag> w(n);
  for (int i = 0; i < n; ++i) {
    arb_get_mag(w[i].v, arb_mat_entry(Yg, i, 0));
    mag_mul_2exp_si(w[i].v, w[i].v, 1);
    flint::Mag t;
    arb_get_mag(t.v, xt[i].raw());
    mag_mul_2exp_si(t.v, t.v, -prec + 4);
    mag_add(w[i].v, w[i].v, t.v);
  }
  Mat<Ball> Ym(n, n);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) arb_set(Ym(i, k).raw(), arb_mat_entry(Y, i, k));
  std::vector<Ball> X(n), dX(n), v;
  for (int attempt = 0; attempt < 40; ++attempt) {
    for (int i = 0; i < n; ++i) {
      X[i] = xt[i];
      mag_set(arb_radref(X[i].raw()), w[i].v);
      dX[i] = Ball(0L);
      mag_set(arb_radref(dX[i].raw()), w[i].v);
    }
    // M = R0 - sum_l (Y H_{.j.l}(X)) [-w_l, w_l], column by column
    arb_mat_set(M.m, R0.m);
    for (int j = 0; j < n; ++j)
      for (int l = 0; l < n; ++l) {
        if (!sys.applied_second_derivative(F, Ym, xt, X, dX, j, l, v)) continue;
        for (int i = 0; i < n; ++i) {
          const Ball& s = v[i];
          flint::Mag a;
          arb_get_mag(a.v, s.raw());
          mag_mul(a.v, a.v, w[l].v);
          arb_add_error_mag(arb_mat_entry(M.m, i, j), a.v);
        }
      }
    bool ok = true;
    std::vector<flint::Mag> reach(n);
    for (int i = 0; i < n; ++i) {
      Ball c(0L);
      for (int j = 0; j < n; ++j) {
        Ball d;  // the j-th entry of X - xt: [-w_j, w_j]
        mag_set(arb_radref(d.raw()), w[j].v);
        Ball m;
        arb_set(m.raw(), arb_mat_entry(M.m, i, j));
        c += m * d;
      }
      Ball k = xt[i];
      arb_sub(k.raw(), k.raw(), arb_mat_entry(Yg, i, 0), prec);
      arb_add(k.raw(), k.raw(), c.raw(), prec);
      ok = ok && arb_contains_interior(X[i].raw(), k.raw());
      Ball off = k - xt[i];
      arb_get_mag(reach[i].v, off.raw());
      K[i] = k;
    }
    if (ok) return true;
    if (!inflate_widths(w, reach)) return false;
  }
  return false;
}
}  // namespace detail

namespace detail {
// The replay's route of Field<Ball>::certify (point_inverse): Krawczyk's test
// with Y the system's closed-form inverse Jacobian (PairSystem, proofs/30)
// evaluated in double at the centre xt, and I - Y J(X) enclosed at 64 bits
// (J over the box widened to 64-bit balls). Y need only be nonsingular and
// near the inverse for the test to pass; only g(xt) = model(xt) - targets
// needs the working precision. A system may offer residuals(F, x, g) for all
// of g at once. On success K holds K(X), inside X.
// |I - Y J| entrywise, for every J in the balls J (upper bounds, into
// Mabs), with Y exact doubles: in double, J = [Jm +- Jr] with Jm the nearest
// doubles, c = fl(sum_k Y_ik Jm_kj) and the rounding of the sum bounded by
// gamma_{n+2} sum_k |Y_ik| |Jm_kj| (Higham, Thm 3.1), every bound then raised
// by a factor 1 + 2^-20 for the rounding of the bounds themselves (each a sum
// of n + 2 products of non-negative doubles) and by the smallest normal
// double for underflow. False when a number is not finite.
inline bool point_inverse_residual(const Mat<double>& Y, const Mat<Ball>& J, std::vector<flint::Mag>& Mabs) {
  const int n = Y.rows();
  constexpr double u = 0x1p-53;
  const double gamma = (n + 2) * u / (1 - (n + 2) * u);
  std::vector<double> Jm(static_cast<size_t>(n) * n), Jr(static_cast<size_t>(n) * n);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j) {
      const arb_srcptr e = J(k, j).raw();
      const double m = arf_get_d(arb_midref(e), ARF_RND_NEAR);
      // rad + |mid - m| <= rad + u |m| + 2^-1074
      const double r = mag_get_d(arb_radref(e)) + u * std::fabs(m) + 0x1p-1074;
      if (!std::isfinite(m) || !std::isfinite(r)) return false;
      Jm[static_cast<size_t>(k) * n + j] = m;
      Jr[static_cast<size_t>(k) * n + j] = r;
    }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double c = 0, a = 0, b = 0;
      for (int k = 0; k < n; ++k) {
        const double y = Y(i, k), m = Jm[static_cast<size_t>(k) * n + j];
        c += y * m;
        a += std::fabs(y) * std::fabs(m);
        b += std::fabs(y) * Jr[static_cast<size_t>(k) * n + j];
      }
      const double bound = (std::fabs((i == j ? 1.0 : 0.0) - c) + gamma * a + b) * (1 + 0x1p-20) + 0x1p-1022;
      if (!std::isfinite(bound)) return false;
      mag_set_d(Mabs[static_cast<size_t>(i) * n + j].v, bound);
    }
  return true;
}

template <class Sys>
bool krawczyk_point_inverse(const Field<Ball>& F, const Sys& sys, const std::vector<Ball>& x, std::vector<Ball>& K) {
  const long prec = working_precision();
  const int n = sys.unknowns();
  if (sys.equations() != n) return false;
  std::vector<double> xd(n);
  for (int i = 0; i < n; ++i) {
    xd[i] = arf_get_d(arb_midref(x[i].raw()), ARF_RND_NEAR);
    if (!std::isfinite(xd[i])) return false;
  }
  Mat<double> Yd;
  if (!sys.inverse_jacobian(Field<double>{}, xd, Yd)) return false;
  flint::ArbMat Y(n, n), g(n, 1), s(n, 1);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      if (!std::isfinite(Yd(i, k))) return false;
      arf_set_d(arb_midref(arb_mat_entry(Y.m, i, k)), Yd(i, k));
    }
  std::vector<Ball> xt(n);
  for (int i = 0; i < n; ++i) arb_get_mid_arb(xt[i].raw(), x[i].raw());
  if constexpr (requires(std::vector<Ball> r) { sys.residuals(F, xt, r); }) {
    std::vector<Ball> r;
    sys.residuals(F, xt, r);
    for (int k = 0; k < n; ++k) arb_swap(arb_mat_entry(g.m, k, 0), r[k].raw());
  } else {
    for (int k = 0; k < n; ++k) {
      const Ball gk = sys.model(F, xt, k) - sys.target(k);
      arb_set(arb_mat_entry(g.m, k, 0), gk.raw());
    }
  }
  arb_mat_mul(s.m, Y.m, g.m, prec);
  std::vector<flint::Mag> w(n);
  for (int i = 0; i < n; ++i) {
    arb_get_mag(w[i].v, arb_mat_entry(s.m, i, 0));
    mag_mul_2exp_si(w[i].v, w[i].v, 1);
    flint::Mag t;
    arb_get_mag(t.v, xt[i].raw());
    mag_mul_2exp_si(t.v, t.v, -prec + 4);
    mag_add(w[i].v, w[i].v, t.v);
    mag_max(w[i].v, w[i].v, arb_radref(x[i].raw()));
  }
  constexpr long kLow = 64;
  std::vector<flint::Mag> Mabs(static_cast<size_t>(n) * n);
  std::vector<Ball> X(n);
  Mat<Ball> J(n, n);
  for (int attempt = 0; attempt < 4; ++attempt) {
    {
      PrecisionScope low(kLow);
      for (int i = 0; i < n; ++i) {
        arb_set_round(X[i].raw(), xt[i].raw(), kLow);
        arb_add_error_mag(X[i].raw(), w[i].v);
      }
      sys.jacobian(F, X, J);
    }
    if (!point_inverse_residual(Yd, J, Mabs)) return false;
    bool ok = true;
    std::vector<flint::Mag> reach(n);
    for (int i = 0; i < n; ++i) {
      flint::Mag c, a;  // sum_j |M_ij| w_j
      for (int j = 0; j < n; ++j) {
        mag_mul(a.v, Mabs[static_cast<size_t>(i) * n + j].v, w[j].v);
        mag_add(c.v, c.v, a.v);
      }
      Ball& k = K[i];
      arb_sub(k.raw(), xt[i].raw(), arb_mat_entry(s.m, i, 0), prec);
      arb_add_error_mag(k.raw(), c.v);
      // K_i inside xt_i +- w_i: |mid(K_i) - xt_i| + rad(K_i) < w_i
      arf_sub(arb_midref(X[i].raw()), arb_midref(k.raw()), arb_midref(xt[i].raw()), MAG_BITS, ARF_RND_UP);
      arf_get_mag(reach[i].v, arb_midref(X[i].raw()));
      mag_add(reach[i].v, reach[i].v, arb_radref(k.raw()));
      ok = ok && mag_cmp(reach[i].v, w[i].v) < 0;
    }
    if (ok) return true;
    if (!inflate_widths(w, reach)) return false;
  }
  return false;
}
}  // namespace detail

template <class Fn>
std::optional<std::vector<QTau>> Field<QTau>::enclose_roots(const std::vector<QTau>& x, Fn&& fn) const {
  for (long prec = 128; prec <= 4096; prec *= 2) {
    PrecisionScope scope(prec);
    std::vector<Ball> xb;
    for (const QTau& v : x) xb.push_back(enclose(v));
    std::optional<std::vector<Ball>> r;
    try {
      r = fn(Field<Ball>{}, xb);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::unable) continue;
      if (e.kind() == ErrorKind::internal || e.kind() == ErrorKind::usage) throw;
      return std::nullopt;  // a decision the exact route makes and words itself
    }
    if (!r) return std::nullopt;
    std::vector<QTau> out;
    bool wider = false;
    for (const Ball& b : *r) {
      QTau q;
      const int k = pole_root_in(b, q);
      if (k < 0) return std::nullopt;
      if (k == 0) {
        wider = true;
        break;
      }
      out.push_back(std::move(q));
    }
    if (!wider) return out;
  }
  return std::nullopt;
}

template <class Sys>
Truth Field<Ball>::certify(const Sys& sys, std::vector<Ball>& x) const {
  // Krawczyk operator on the first n equations: with Y ~ J(xt)^{-1} and a box
  // X around xt, K(X) = xt - Y g(xt) + (I - Y J(X)) (X - xt). If K(X) lies in
  // the interior of X, every choice of targets in their balls has exactly one
  // solution in X, and it lies in K(X) (proofs/10).
  const long prec = working_precision();
  const int n = sys.unknowns();
  if constexpr (requires(Mat<double> Yd, std::vector<double> xd) { sys.inverse_jacobian(Field<double>{}, xd, Yd); }) {
    if (point_inverse) {
      std::vector<Ball> K(n);
      if (detail::krawczyk_point_inverse(*this, sys, x, K) && sys.admissible(*this, K) == Truth::yes) {
        x = std::move(K);
        return Truth::yes;
      }
    }
  }
  using flint::ArbMat;
  std::vector<Ball> xt(n);
  for (int i = 0; i < n; ++i) arb_get_mid_arb(xt[i].raw(), x[i].raw());
  Mat<Ball> Jm;
  auto jac = [&](ArbMat& out, const std::vector<Ball>& at) {
    Mat<Ball> J(sys.equations(), n);
    sys.jacobian(*this, at, J);
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j) arb_set(arb_mat_entry(out.m, k, j), J(k, j).raw());
  };
  ArbMat Jt(n, n), Y(n, n), JX(n, n), YJ(n, n), M(n, n), gt(n, 1), Yg(n, 1), dX(n, 1), corr(n, 1);
  jac(Jt, xt);
  arb_mat_get_mid(Jt.m, Jt.m);
  if (!arb_mat_approx_inv(Y.m, Jt.m, prec)) return Truth::unknown;
  arb_mat_get_mid(Y.m, Y.m);
  for (int k = 0; k < n; ++k) {
    const Ball gk = sys.model(*this, xt, k) - sys.target(k);
    arb_set(arb_mat_entry(gt.m, k, 0), gk.raw());
  }
  arb_mat_mul(Yg.m, Y.m, gt.m, prec);
  // initial box: twice the Newton step, plus a few ulps; epsilon-inflated on retries
  std::vector<mag_struct> w(n);
  for (int i = 0; i < n; ++i) {
    mag_init(&w[i]);
    arb_get_mag(&w[i], arb_mat_entry(Yg.m, i, 0));
    mag_mul_2exp_si(&w[i], &w[i], 1);
    mag_t t;
    mag_init(t);
    arb_get_mag(t, xt[i].raw());
    mag_mul_2exp_si(t, t, -prec + 4);
    mag_add(&w[i], &w[i], t);
    mag_clear(t);
    // a box that contains x: when x is already an enclosure of the truth, the
    // unique solution the test proves in the box is the truth
    mag_max(&w[i], &w[i], arb_radref(x[i].raw()));
  }
  bool ok = false;
  std::vector<Ball> X(n), K(n);
  for (int attempt = 0; attempt < 6 && !ok; ++attempt) {
    for (int i = 0; i < n; ++i) {
      X[i] = xt[i];
      mag_set(arb_radref(X[i].raw()), &w[i]);
      arb_zero(arb_mat_entry(dX.m, i, 0));
      mag_set(arb_radref(arb_mat_entry(dX.m, i, 0)), &w[i]);
    }
    jac(JX, X);
    arb_mat_mul(YJ.m, Y.m, JX.m, prec);
    arb_mat_one(M.m);
    arb_mat_sub(M.m, M.m, YJ.m, prec);
    arb_mat_mul(corr.m, M.m, dX.m, prec);
    ok = true;
    for (int i = 0; i < n && ok; ++i) {
      Ball k = xt[i];
      arb_sub(k.raw(), k.raw(), arb_mat_entry(Yg.m, i, 0), prec);
      arb_add(k.raw(), k.raw(), arb_mat_entry(corr.m, i, 0), prec);
      ok = arb_contains_interior(X[i].raw(), k.raw());
      K[i] = k;
    }
    for (int i = 0; i < n; ++i) mag_mul_2exp_si(&w[i], &w[i], 3);
  }
  for (auto& m : w) mag_clear(&m);
  if (!ok) {
    // Second route (a system that states its second derivatives, e.g. the
    // pair fits): the slope form of I - Y J(X) = (I - Y J(xt)) - Y (J(X) - J(xt)),
    //   Y (J(X) - J(xt))_{.j} in sum_l (Y d^2f/dx_j dx_l (X)) [-w_l, w_l],
    // keeps the cancellation inside each product Y v that the entrywise
    // interval product |Y| |J(X) - J(xt)| loses (near-colliding poles give Y
    // large rows that nearly cancel on the columns of J), and the box grows
    // per component (epsilon-inflation: each w_i just beyond the reach of
    // K_i), so a component whose second-order term exceeds its first-order
    // width widens alone. The test and its conclusion are Krawczyk's.
    if constexpr (requires(std::vector<Ball> v, Mat<Ball> Ym) { sys.applied_second_derivative(*this, Ym, xt, xt, xt, 0, 0, v); }) {
      ok = detail::krawczyk_slope(*this, sys, xt, Y.m, Yg.m, K);
    }
  }
  if (!ok || sys.admissible(*this, K) != Truth::yes) return Truth::unknown;
  x = std::move(K);
  return Truth::yes;
}

}  // namespace mhaq
