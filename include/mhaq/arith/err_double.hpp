// A double with a running bound on its rounding error: the derivative parts
// of the float judge's cheap jets (proofs/33). Every operation rounds its
// midpoint to nearest and adds, to first order in the unit roundoff u, the
// propagated bounds of its operands and u times the result's magnitude, so
// `rad` bounds |mid - the same expression in exact arithmetic on the inputs|
// (the inputs being the jets' values rounded to double, each with its own
// u |x|). A solve adds the bound of the double LU solve's error (solve_err).
// Non-finite midpoints or bounds mean "no bound" (the caller falls back).
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "mhaq/arith/field.hpp"

namespace mhaq {

struct ErrDouble {
  static constexpr double u = 0x1p-53;  // unit roundoff of round to nearest
  double mid = 0, rad = 0;

  ErrDouble() = default;
  explicit ErrDouble(long v) : mid(static_cast<double>(v)) {}
  ErrDouble(double m, double r) : mid(m), rad(r) {}
  // a value rounded to double: within u |x| (and the smallest subnormal)
  static ErrDouble rounded(double m) { return {m, u * std::fabs(m) + 0x1p-1074}; }

  friend ErrDouble operator+(const ErrDouble& a, const ErrDouble& b) {
    const double m = a.mid + b.mid;
    return {m, a.rad + b.rad + u * std::fabs(m)};
  }
  friend ErrDouble operator-(const ErrDouble& a, const ErrDouble& b) {
    const double m = a.mid - b.mid;
    return {m, a.rad + b.rad + u * std::fabs(m)};
  }
  friend ErrDouble operator*(const ErrDouble& a, const ErrDouble& b) {
    const double m = a.mid * b.mid;
    return {m, std::fabs(a.mid) * b.rad + std::fabs(b.mid) * a.rad + a.rad * b.rad + u * std::fabs(m)};
  }
  friend ErrDouble operator-(const ErrDouble& a) { return {-a.mid, a.rad}; }
  bool finite() const { return std::isfinite(mid) && std::isfinite(rad); }
};

// X = A^{-1} R in double, each entry with a bound of its error: LU with
// partial pivoting on the midpoints, an approximate inverse Z, and to first
// order |X - A^{-1} R| <= |Z| w + ||E||/(1 - ||E||) || |Z| w ||_inf with E = I - Z A and
// w = |R - A X| + rad(R) + rad(A) |X| + 2 n u (|A| |X| + |R|) (the residual
// and the inputs' own bounds). False when A is singular in double or
// ||E||_inf >= 1/2 (the double solve cannot be trusted: the caller falls back).
// The bound is doubled against the rounding of its own computation.
inline bool solve_err(Mat<ErrDouble>& X, const Mat<ErrDouble>& A, const Mat<ErrDouble>& R) {
  const int n = A.rows(), k = R.cols();
  std::vector<double> lu(static_cast<size_t>(n) * n);
  std::vector<int> perm(n);
  for (int i = 0; i < n; ++i) {
    perm[i] = i;
    for (int j = 0; j < n; ++j) lu[static_cast<size_t>(i) * n + j] = A(i, j).mid;
  }
  auto L = [&](int i, int j) -> double& { return lu[static_cast<size_t>(i) * n + j]; };
  for (int c = 0; c < n; ++c) {
    int p = c;
    for (int i = c + 1; i < n; ++i)
      if (std::fabs(L(i, c)) > std::fabs(L(p, c))) p = i;
    if (L(p, c) == 0 || !std::isfinite(L(p, c))) return false;
    if (p != c) {
      for (int j = 0; j < n; ++j) std::swap(L(p, j), L(c, j));
      std::swap(perm[p], perm[c]);
    }
    for (int i = c + 1; i < n; ++i) {
      const double f = L(i, c) /= L(c, c);
      for (int j = c + 1; j < n; ++j) L(i, j) -= f * L(c, j);
    }
  }
  auto lu_solve = [&](std::vector<double>& b) {  // b <- A^{-1} b (rows of b in A's order)
    std::vector<double> y(n);
    for (int i = 0; i < n; ++i) y[i] = b[perm[i]];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < i; ++j) y[i] -= L(i, j) * y[j];
    for (int i = n - 1; i >= 0; --i) {
      for (int j = i + 1; j < n; ++j) y[i] -= L(i, j) * y[j];
      y[i] /= L(i, i);
    }
    b = y;
  };
  // Z = the computed inverse, column by column; E = I - Z A
  std::vector<double> Z(static_cast<size_t>(n) * n), col(n);
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) col[i] = i == j ? 1 : 0;
    lu_solve(col);
    for (int i = 0; i < n; ++i) Z[static_cast<size_t>(i) * n + j] = col[i];
  }
  double enorm = 0;
  for (int i = 0; i < n; ++i) {
    double row = 0;
    for (int j = 0; j < n; ++j) {
      double s = i == j ? 1 : 0;
      double mag = std::fabs(s);
      for (int t = 0; t < n; ++t) {
        s -= Z[static_cast<size_t>(i) * n + t] * A(t, j).mid;
        mag += std::fabs(Z[static_cast<size_t>(i) * n + t] * A(t, j).mid);
      }
      row += std::fabs(s) + 2 * n * ErrDouble::u * mag;
    }
    enorm = std::max(enorm, row);
  }
  if (!(enorm < 0.5)) return false;
  const double tail = enorm / (1 - enorm);
  X = Mat<ErrDouble>(n, k);
  std::vector<double> w(n);
  for (int j = 0; j < k; ++j) {
    for (int i = 0; i < n; ++i) col[i] = R(i, j).mid;
    lu_solve(col);
    for (int i = 0; i < n; ++i) {
      double s = R(i, j).mid, mag = std::fabs(s), rad = R(i, j).rad;
      for (int t = 0; t < n; ++t) {
        s -= A(i, t).mid * col[t];
        mag += std::fabs(A(i, t).mid * col[t]);
        rad += A(i, t).rad * std::fabs(col[t]);
      }
      w[i] = std::fabs(s) + rad + 2 * n * ErrDouble::u * mag;
    }
    std::vector<double> r(n, 0.0);
    double rmax = 0;
    for (int i = 0; i < n; ++i) {
      for (int t = 0; t < n; ++t) r[i] += std::fabs(Z[static_cast<size_t>(i) * n + t]) * w[t];
      rmax = std::max(rmax, r[i]);
    }
    for (int i = 0; i < n; ++i) {
      X(i, j) = {col[i], 2 * (r[i] + tail * rmax) + ErrDouble::u * std::fabs(col[i])};
      if (!X(i, j).finite()) return false;
    }
  }
  return true;
}

}  // namespace mhaq
