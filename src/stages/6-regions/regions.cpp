// Stage 6 (transformer): region values and the path's crossings, written
// once for every field.
#include "mhaq/stages/6-regions/regions.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <optional>

#include "mhaq/arith/all_fields.hpp"
#include "regions_internal.hpp"

namespace mhaq {

using namespace regions_internal;

namespace {

// Region values at x itself (no scale-up): y_{h,i} = e_h^T delta_i from the
// pairs, then e_h = Delta^{-T} y_h. `stable` says whether every extra sample
// agreed (no neuron flipped inside a pair).
template <ArithField F>
RegionValues<typename F::value_type> at_point(const F& fld, Oracle<typename F::value_type>& oracle,
                                              const std::vector<Mat<typename F::value_type>>& W, const QVec& x, const QMat& Delta,
                                              Truth& stable) {
  using T = typename F::value_type;
  const int H = static_cast<int>(W.size()), d = static_cast<int>(x.size());
  const T one = fld.from(Rational(1));
  const T f0 = oracle.query({Run{x, 1}});
  stable = Truth::yes;
  std::vector<std::vector<T>> y(H, std::vector<T>(d));  // y[h][i]
  for (int i = 0; i < d; ++i) {
    const QVec delta = Delta.col(i);
    // poles from the attention part: log r_h = delta^T W_h x
    std::vector<T> r(H);
    for (int h = 0; h < H; ++h) {
      std::vector<T> Wx(d, fld.from(Rational(0)));
      for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b)
          if (!x[b].is_zero()) Wx[a] = Wx[a] + W[h](a, b) * fld.from(x[b]);
      r[h] = fld.exp(dot_q(fld, delta, Wx));
    }
    auto alpha = [&](int h, long k) {
      const T rk = r[h] * fld.from(Rational(k));
      return rk / (one + rk);
    };
    Mat<T> A(H, H), b(H, 1), sol;
    std::vector<T> extra;
    const QVec a = x + delta;
    for (long k = 1; k <= H + 1; ++k) {
      const T fk = oracle.query({Run{a, k}, Run{x, 1}}) - f0;
      if (k <= H) {
        for (int h = 0; h < H; ++h) A(static_cast<int>(k - 1), h) = alpha(h, k);
        b(static_cast<int>(k - 1), 0) = fk;
      } else {
        extra.push_back(fk);
      }
    }
    require_truth(fld.solve(sol, A, b), ErrorKind::degenerate, "region values: two heads with equal poles at an offset (a degenerate draw)");
    for (int h = 0; h < H; ++h) y[h][i] = sol(h, 0);
    // the extra sample k = H+1 must follow the same attention function
    T pred = fld.from(Rational(0));
    for (int h = 0; h < H; ++h) pred = pred + alpha(h, H + 1) * y[h][i];
    stable = truth_and(stable, fld.equal(pred, extra[0], fld.abs(f0) + fld.abs(extra[0])));
  }
  QMat DinvT;
  if (!inverse(Delta.transpose(), DinvT)) throw_internal("region values: Delta singular");
  RegionValues<T> out;
  out.e.assign(H, std::vector<T>(d, fld.from(Rational(0))));
  for (int h = 0; h < H; ++h)
    for (int a2 = 0; a2 < d; ++a2)
      for (int i = 0; i < d; ++i)
        if (!DinvT(a2, i).is_zero()) out.e[h][a2] = out.e[h][a2] + fld.from(DinvT(a2, i)) * y[h][i];
  return out;
}

// 2^-k for the least k >= 0 with every coordinate of 2^-k x at most `size`
// in absolute value (1 when size is 0: the point as placed).
inline Rational probe_shrink(const QVec& x, const Rational& size) {
  Rational c(1);
  if (size.sign() <= 0) return c;
  Rational m(0);
  for (const auto& v : x) m = std::max(m, v.sign() < 0 ? -v : v);
  while (m * c > size) c /= Rational(2);
  return c;
}

// Offsets fitted to the point x (a choice, made from the heads' midpoints):
// with w = (W_h - W_g) x for the two heads whose scores at x lie closest
// together, the first offset points along w and each other one along w plus
// one of d - 1 directions orthogonal to it, all scaled to entries of about
// 1/16 and rounded to multiples of 2^-12. Every offset then separates that
// pair's poles by about |delta| |w| / sqrt(2) or more, where a fixed offset can be nearly
// orthogonal to w (the pair system then loses that many digits), and the
// offsets stay well conditioned as a basis. False (D untouched) when w
// rounds to zero or there is one head (one pole: nothing to separate).
template <ArithField F>
bool fitted_offsets(const F& fld, const std::vector<Mat<typename F::value_type>>& W, const QVec& x, QMat& D) {
  const int H = static_cast<int>(W.size()), d = static_cast<int>(x.size());
  if (H < 2) return false;
  const long fine = 1L << 30;
  std::vector<QVec> wx(H, QVec(d, Rational(0)));
  for (int h = 0; h < H; ++h)
    for (int a = 0; a < d; ++a)
      for (int b = 0; b < d; ++b)
        if (!x[b].is_zero()) wx[h][a] += fld.nearest(W[h](a, b), fine) * x[b];
  QVec w;
  Rational best(-1);
  for (int h = 0; h < H; ++h)
    for (int g = h + 1; g < H; ++g) {
      const QVec diff = wx[h] - wx[g];
      const Rational n = approx_norm(diff);
      if (best.sign() < 0 || n < best) {
        best = n;
        w = diff;
      }
    }
  if (!(best.sign() > 0)) return false;
  const QVec u = scaled(w, Rational(1) / best);
  const Rational ww = dot(w, w);
  std::vector<QVec> dirs;
  for (int e = 0; e < d && static_cast<int>(dirs.size()) + 1 < d; ++e) {
    QVec v(d, Rational(0));
    v[e] = Rational(1);
    v = plus(v, w, -dot(v, w) / ww);
    for (const auto& m : dirs) v = plus(v, m, -dot(v, m) / dot(m, m));
    const Rational n = approx_norm(v);
    if (n < Rational(1, 4)) continue;  // nearly parallel to w or to the directions so far
    dirs.push_back(scaled(v, Rational(1) / n));
  }
  if (static_cast<int>(dirs.size()) + 1 != d) return false;
  QMat fit(d, d);
  for (int i = 0; i < d; ++i) {
    const QVec col = to_grid(scaled(i == 0 ? u : u + dirs[i - 1], Rational(1, 16)), 1L << 12);
    for (int a = 0; a < d; ++a) fit(a, i) = col[a];
  }
  if (det(fit).is_zero()) return false;
  D = fit;
  return true;
}

}  // namespace

template <ArithField F>
RegionValues<typename F::value_type> region_values(const F& fld, Oracle<typename F::value_type>& oracle,
                                                   const std::vector<Mat<typename F::value_type>>& W, const QVec& x, const RegionDesign& design) {
  // Region values are scale-invariant (the regions are cones) while a pair
  // that straddles a hyperplane is not: the values at x and at 2x must agree,
  // and every extra sample must fit; otherwise the point is doubled again.
  using T = typename F::value_type;
  // Successive scales use offsets of opposite signs: at a token exactly on a
  // hyperplane (possible on the grid) a pair's sign pattern depends on the
  // offsets and not on the scale, so +Delta and -Delta give different mixed
  // values there, while off every hyperplane both give the region's.
  auto at_scale = [&](const QVec& at, Truth& stable, bool negate) {
    // two heads with equal poles at an offset make its system singular at this
    // point only: the next offsets Delta + k E are tried, E with every entry
    // nonzero (1/8 on the diagonal, +-1/16 off it: still on the token grid), so that an offset
    // orthogonal to (W_h - W_g) x moves off it for all but one k
    QMat D0 = design.Delta;
    if (design.fitted_offsets) fitted_offsets(fld, W, at, D0);
    for (int k = 0; k < 4; ++k) {
      QMat D = D0;
      for (int r = 0; r < D.rows(); ++r)
        for (int c = 0; c < D.cols(); ++c) D(r, c) += Rational(k) * (r == c ? Rational(1, 8) : Rational((r + c) % 2 ? 1 : -1, 16));
      if (det(D).is_zero()) continue;
      if (negate)
        for (int r = 0; r < D.rows(); ++r)
          for (int c = 0; c < D.cols(); ++c) D(r, c) = -D(r, c);
      const Rational shrink = probe_shrink(at, design.probe_size);
      QVec small = at;
      for (auto& v : small) v *= shrink;
      for (int r = 0; r < D.rows(); ++r)
        for (int c = 0; c < D.cols(); ++c) D(r, c) *= shrink;
      try {
        return at_point(fld, oracle, W, small, D, stable);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::degenerate || k == 3) throw;
      }
    }
    throw_degenerate("region values: no invertible set of offsets separates the heads' poles");
  };
  QVec at = x;
  Truth st_prev = Truth::unknown;
  RegionValues<T> prev = at_scale(at, st_prev, false);
  for (int s = 0; s < design.max_scale_ups; ++s) {
    QVec next = at;
    for (auto& c : next) c *= Rational(2);  // same region, offsets relatively halved
    Truth st = Truth::unknown;
    RegionValues<T> cur = at_scale(next, st, s % 2 == 0);
    if (st_prev != Truth::no && st != Truth::no && equal_values(fld, prev, cur) != Truth::no) return cur;
    at = next;
    prev = std::move(cur);
    st_prev = st;
  }
  throw_not_identifiable("a neuron flips inside the probe pairs at every offset scale up to " + qvec_str(at) +
                         ": its pre-activation does not follow the final token (condition ubar_j = sum_h U_{h,j} != 0 fails)");
}

#define MHAQ_INSTANTIATE(F)                                                                                                       \
  template RegionValues<F::value_type> region_values<F>(const F&, Oracle<F::value_type>&, const std::vector<Mat<F::value_type>>&, \
                                                        const QVec&, const RegionDesign&);
MHAQ_FOR_EACH_TRANSFORMER_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
