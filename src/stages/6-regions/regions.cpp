// Stage 6 (transformer): region values and the path's crossings, written
// once for every field.
#include "mhaq/stages/6-regions/regions.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <optional>

#include "mhaq/arith/all_fields.hpp"

namespace mhaq {

namespace {

template <ArithField F>
typename F::value_type dot_q(const F& fld, const QVec& x, const std::vector<typename F::value_type>& y) {
  auto s = fld.from(Rational(0));
  for (size_t i = 0; i < x.size(); ++i)
    if (!x[i].is_zero()) s = s + fld.from(x[i]) * y[i];
  return s;
}

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

template <class T>
Truth equal_values(const Field<T>& fld, const RegionValues<T>& a, const RegionValues<T>& b) {
  // against the regions' overall scale: a head block that is zero in one
  // region is still compared with the others' size
  T scale = fld.from(Rational(0));
  const std::vector<T> fa = a.flat(), fb = b.flat();
  for (size_t i = 0; i < fa.size(); ++i) scale = scale + fld.abs(fa[i]) + fld.abs(fb[i]);
  Truth t = Truth::yes;
  for (size_t i = 0; i < fa.size() && t != Truth::no; ++i) t = truth_and(t, fld.equal(fa[i], fb[i], scale));
  return t;
}

}  // namespace

template <ArithField F>
RegionValues<typename F::value_type> region_values(const F& fld, Oracle<typename F::value_type>& oracle,
                                                   const std::vector<Mat<typename F::value_type>>& W, const QVec& x, const RegionDesign& design) {
  // Region values are scale-invariant (the regions are cones) while a pair
  // that straddles a hyperplane is not: the values at x and at 2x must agree,
  // and every extra sample must fit; otherwise the point is doubled again.
  using T = typename F::value_type;
  auto at_scale = [&](const QVec& at, Truth& stable) {
    // two heads with equal poles at an offset make its system singular at this
    // point only: the next offsets Delta + k E are tried, E with every entry
    // nonzero (1/8 on the diagonal, +-1/16 off it: still on the token grid), so that an offset
    // orthogonal to (W_h - W_g) x moves off it for all but one k
    for (int k = 0; k < 4; ++k) {
      QMat D = design.Delta;
      for (int r = 0; r < D.rows(); ++r)
        for (int c = 0; c < D.cols(); ++c) D(r, c) += Rational(k) * (r == c ? Rational(1, 8) : Rational((r + c) % 2 ? 1 : -1, 16));
      if (det(D).is_zero()) continue;
      try {
        return at_point(fld, oracle, W, at, D, stable);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::degenerate || k == 3) throw;
      }
    }
    throw_degenerate("region values: no invertible set of offsets separates the heads' poles");
  };
  QVec at = x;
  Truth st_prev = Truth::unknown;
  RegionValues<T> prev = at_scale(at, st_prev);
  for (int s = 0; s < design.max_scale_ups; ++s) {
    QVec next = at;
    for (auto& c : next) c *= Rational(2);  // same region, offsets relatively halved
    Truth st = Truth::unknown;
    RegionValues<T> cur = at_scale(next, st);
    if (st_prev != Truth::no && st != Truth::no && equal_values(fld, prev, cur) != Truth::no) return cur;
    at = next;
    prev = std::move(cur);
    st_prev = st;
  }
  throw_not_identifiable(
      "a neuron flips inside the probe pairs at every offset scale: its pre-activation does not follow the final token "
      "(condition ubar_j = sum_h U_{h,j} != 0 fails)");
}

template <ArithField F>
PathSearch<typename F::value_type> search_path(const F& fld, Oracle<typename F::value_type>& oracle,
                                                 const std::vector<Mat<typename F::value_type>>& W, const QVec& p, const QVec& q,
                                                 const RegionDesign& design, int neurons_told) {
  using T = typename F::value_type;
  PathSearch<T> out;
  auto probe = [&](const QVec& x) {
    if (++out.probes > design.max_probes)
      throw_unable("the path search needed more than " + std::to_string(design.max_probes) + " region evaluations");
    return region_values(fld, oracle, W, x, design);
  };
  struct Piece {
    QVec a, b;
    RegionValues<T> ea, eb;
    int depth;
    long zoom = 1;
  };
  QVec mp = p;
  for (auto& c : mp) c = -c;
  const RegionValues<T> ep = probe(p), eq = probe(q), em = probe(mp);
  out.start = ep;
  out.end = em;
  // depth-first, in path order, so crossings come out ordered
  std::vector<Piece> stack{{q, mp, eq, em, 0, 1}, {p, q, ep, eq, 0, 1}};
  auto point_at = [&](const QVec& a, const QVec& b, const T& t) {
    QVec x(a.size());
    for (size_t c = 0; c < a.size(); ++c) x[c] = fld.nearest(fld.from(a[c]) + t * fld.from(b[c] - a[c]), design.grid_den);
    return x;
  };
  auto found_all = [&] { return neurons_told > 0 && static_cast<int>(out.crossings.size()) >= neurons_told; };
  while (!stack.empty() && !found_all()) {
    Piece pc = std::move(stack.back());
    stack.pop_back();
    const Truth same = equal_values(fld, pc.ea, pc.eb);
    if (same == Truth::yes) continue;
    if (same == Truth::unknown) {
      ++out.undecided_flats;
      continue;
    }
    if (pc.depth > 40 || pc.a == pc.b)
      throw_degenerate("two crossings of the path lie closer together than the token grid resolves (another seed moves the path)");
    // Zoom: the regions are cones, so 2a -> 2b crosses the same hyperplanes in
    // the same order with twice the grid resolution (queries at 2x have larger
    // scores, hence higher degrees in exact mode: only where needed, at most 64x).
    for (int zoom = 0; zoom < 6; ++zoom) {
      Rational span(0);
      for (size_t c = 0; c < pc.a.size(); ++c) {
        const Rational dc = pc.b[c] - pc.a[c];
        span = std::max(span, dc.sign() < 0 ? -dc : dc);
      }
      if (!(span * Rational(design.probe_den) < Rational(64)) || pc.zoom >= 64) break;
      for (auto& c : pc.a) c *= Rational(2);
      for (auto& c : pc.b) c *= Rational(2);
      pc.zoom *= 2;
    }
    // a single crossing's jump predicts its hyperplane: n = sum_h jump_h
    const std::vector<T> fa = pc.ea.flat(), fb = pc.eb.flat();
    const int d = static_cast<int>(p.size()), H = static_cast<int>(W.size());
    std::vector<T> n(d, fld.from(Rational(0)));
    for (int h = 0; h < H; ++h)
      for (int c = 0; c < d; ++c) n[c] = n[c] + (fb[h * d + c] - fa[h * d + c]);
    // A neuron with ubar_j = 0 changes the values by sign((r_h - r_g) U^T delta)
    // only: a jump with zero normal, which no hyperplane explains.
    Truth zero_normal = Truth::yes;
    for (int c = 0; c < d; ++c) zero_normal = truth_and(zero_normal, fld.is_zero(n[c]));
    if (zero_normal == Truth::yes)
      throw_not_identifiable("the region values jump with zero hyperplane normal sum_h jump_h: some neuron's pre-activation does not follow "
                             "the final token (condition ubar_j = sum_h U_{h,j} != 0 fails)");
    const T na = dot_q(fld, pc.a, n), nb = dot_q(fld, pc.b, n);
    const Truth opposite = truth_not(fld.is_positive(na * nb));  // the predicted hyperplane separates a and b
    const T half = fld.from(Rational(1, 2));
    T t = half;
    if (opposite == Truth::yes && fld.is_zero(na - nb) == Truth::no) t = na / (na - nb);
    // probes close to the predicted crossing on either side: four steps of
    // 1/probe_den (along the segment's largest coordinate), rounded to the grid, at most a quarter of the way
    // to either end. If the piece holds two crossings, the combined jump's
    // prediction falls between them, and close probes see one of them.
    Rational span(0);
    for (size_t c = 0; c < pc.a.size(); ++c) {
      const Rational dc = pc.b[c] - pc.a[c];
      span = std::max(span, dc.sign() < 0 ? -dc : dc);
    }
    const T eta = fld.from(Rational(4) / (Rational(design.probe_den) * span));
    const T qa = t * fld.from(Rational(1, 4)), qb = (fld.from(Rational(1)) - t) * fld.from(Rational(1, 4));
    const T tl = t - (fld.is_positive(qa - eta) == Truth::yes ? eta : qa), tr = t + (fld.is_positive(qb - eta) == Truth::yes ? eta : qb);
    const QVec xl = point_at(pc.a, pc.b, tl), xr = point_at(pc.a, pc.b, tr);
    if (xl == pc.a || xr == pc.b || xl == xr)
      throw_degenerate("two crossings of the path lie closer together than the token grid resolves (another seed moves the path)");
    const RegionValues<T> el = probe(xl), er = probe(xr);
    if (opposite == Truth::yes && equal_values(fld, el, pc.ea) != Truth::no && equal_values(fld, er, pc.eb) != Truth::no &&
        equal_values(fld, el, er) == Truth::no) {
      Crossing<T> c;
      const std::vector<T> vl = el.flat(), vr = er.flat();
      for (size_t i = 0; i < vl.size(); ++i) c.jump.push_back(vr[i] - vl[i]);
      c.before = xl;
      c.after = xr;
      out.crossings.push_back(std::move(c));
      continue;
    }
    stack.push_back({xr, pc.b, er, pc.eb, pc.depth + 1, pc.zoom});
    stack.push_back({xl, xr, el, er, pc.depth + 1, pc.zoom});
    stack.push_back({pc.a, xl, pc.ea, el, pc.depth + 1, pc.zoom});
  }
  if (neurons_told > 0 && static_cast<int>(out.crossings.size()) != neurons_told)
    throw_inconsistent("the path crosses " + std::to_string(out.crossings.size()) + " neuron hyperplanes, the stated neuron count is " +
                       std::to_string(neurons_told));
  return out;
}

#define MHAQ_INSTANTIATE(F)                                                                                                       \
  template RegionValues<F::value_type> region_values<F>(const F&, Oracle<F::value_type>&, const std::vector<Mat<F::value_type>>&, \
                                                        const QVec&, const RegionDesign&);                                        \
  template PathSearch<F::value_type> search_path<F>(const F&, Oracle<F::value_type>&, const std::vector<Mat<F::value_type>>&,     \
                                                     const QVec&, const QVec&, const RegionDesign&, int);
MHAQ_FOR_EACH_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
