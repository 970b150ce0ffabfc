// Stage 6 (transformer): the angular bound of the single-crossing test.
#include "mhaq/stages/6-regions/resolution.hpp"

#include <algorithm>
#include <cmath>

namespace mhaq {

namespace {

using LD = long double;

LD dotl(const std::vector<LD>& a, const std::vector<LD>& b) {
  LD s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Smallest eigenvalue of a small symmetric matrix (cyclic Jacobi rotations).
LD min_eigenvalue(std::vector<std::vector<LD>> A) {
  const size_t n = A.size();
  for (int sweep = 0; sweep < 100; ++sweep) {
    LD off = 0;
    for (size_t p = 0; p < n; ++p)
      for (size_t q = p + 1; q < n; ++q) off += A[p][q] * A[p][q];
    if (off < 1e-36L) break;
    for (size_t p = 0; p < n; ++p)
      for (size_t q = p + 1; q < n; ++q) {
        if (A[p][q] == 0) continue;
        const LD theta = (A[q][q] - A[p][p]) / (2 * A[p][q]);
        const LD t = (theta >= 0 ? 1 : -1) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const LD c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (size_t k = 0; k < n; ++k) {  // A <- A J
          const LD akp = A[k][p], akq = A[k][q];
          A[k][p] = c * akp - s * akq;
          A[k][q] = s * akp + c * akq;
        }
        for (size_t k = 0; k < n; ++k) {  // A <- J^T A
          const LD apk = A[p][k], aqk = A[q][k];
          A[p][k] = c * apk - s * aqk;
          A[q][k] = s * apk + c * aqk;
        }
      }
  }
  LD m = A.empty() ? 0 : A[0][0];
  for (size_t i = 1; i < n; ++i) m = std::min(m, A[i][i]);
  return m;
}

}  // namespace

double separating_half_angle(const std::vector<std::pair<QVec, QVec>>& pairs, const std::vector<long double>& n) {
  const double right = std::acos(-1.0) / 2;
  const size_t d = n.size();
  const LD nn = std::sqrt(dotl(n, n));
  if (pairs.empty() || d < 2 || !(nn > 0)) return right;
  std::vector<LD> nh(d);
  for (size_t i = 0; i < d; ++i) nh[i] = n[i] / nn;
  // an orthonormal basis of P = nhat^perp: Gram-Schmidt of the unit vectors
  std::vector<std::vector<LD>> basis;
  for (size_t e = 0; e < d && basis.size() + 1 < d; ++e) {
    std::vector<LD> v(d, 0);
    v[e] = 1;
    for (int pass = 0; pass < 2; ++pass) {  // twice, for orthogonality in floating point
      const LD c0 = dotl(v, nh);
      for (size_t i = 0; i < d; ++i) v[i] -= c0 * nh[i];
      for (const auto& b : basis) {
        const LD c = dotl(v, b);
        for (size_t i = 0; i < d; ++i) v[i] -= c * b[i];
      }
    }
    const LD len = std::sqrt(dotl(v, v));
    if (len < 0.25L) continue;  // nearly parallel to n or to the basis so far
    for (auto& x : v) x /= len;
    basis.push_back(std::move(v));
  }
  if (basis.size() + 1 != d) return right;
  const size_t k = d - 1;
  std::vector<std::vector<LD>> G(k, std::vector<LD>(k, 0));
  for (const auto& [lo, hi] : pairs) {
    if (lo.size() != d || hi.size() != d) return right;
    std::vector<LD> c(d), h(d);
    for (size_t i = 0; i < d; ++i) {
      const LD a = static_cast<LD>(lo[i].approx_double()), b = static_cast<LD>(hi[i].approx_double());
      c[i] = (a + b) / 2;
      h[i] = (b - a) / 2;
    }
    const LD rho = std::sqrt(dotl(h, h)) + std::fabs(dotl(nh, c));
    if (!(rho > 0)) return right;
    std::vector<LD> a(k);
    for (size_t r = 0; r < k; ++r) a[r] = dotl(basis[r], c) / rho;
    for (size_t r = 0; r < k; ++r)
      for (size_t s = 0; s < k; ++s) G[r][s] += a[r] * a[s];
  }
  const LD lam = min_eigenvalue(G);
  if (!(lam > 0)) return right;
  const LD s = std::sqrt(static_cast<LD>(pairs.size()) / lam) * (1 + 1e-9L);
  if (!(s < 1)) return right;
  return static_cast<double>(std::asin(s));
}

double resolution_degrees(double half_angle) { return 2 * half_angle * 180.0 / std::acos(-1.0); }

}  // namespace mhaq
