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
#include "mhaq/stages/6-regions/resolution.hpp"

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


// Differences of two flat vectors compared entrywise against their overall scale.
template <class T>
Truth equal_flat(const Field<T>& fld, const std::vector<T>& a, const std::vector<T>& b) {
  T scale = fld.from(Rational(0));
  for (size_t i = 0; i < a.size(); ++i) scale = scale + fld.abs(a[i]) + fld.abs(b[i]);
  Truth t = Truth::yes;
  for (size_t i = 0; i < a.size() && t != Truth::no; ++i) t = truth_and(t, fld.equal(a[i], b[i], scale));
  return t;
}

// sqrt(x . x) to about 2^-10, by an integer square root: sizes for placing
// test points (choices, made without floats).
Rational approx_norm(const QVec& x) {
  const Rational s = dot(x, x) * Rational(1L << 40);
  const Rational r = s.isqrt_floor() / Rational(1L << 20);
  if (!r.is_zero()) return r;
  Rational m(0);  // a tiny vector: its largest entry, never zero for a nonzero vector
  for (const auto& v : x) m = std::max(m, v.sign() < 0 ? -v : v);
  return m;
}

QVec scaled(const QVec& x, const Rational& c) {
  QVec y = x;
  for (auto& v : y) v *= c;
  return y;
}

QVec plus(const QVec& x, const QVec& y, const Rational& c) {  // x + c y
  QVec z = x;
  for (size_t i = 0; i < z.size(); ++i) z[i] += c * y[i];
  return z;
}

QVec to_grid(const QVec& x, long den) {
  QVec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] * Rational(den) + Rational(1, 2)).floor() / Rational(den);
  return y;
}

template <class T>
std::string vec_str(const Field<T>& fld, const std::vector<T>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + fld.str(v[i]);
  return s + ")";
}

std::string qvec_str(const QVec& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i].str();
  return s + ")";
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
    for (int k = 0; k < 4; ++k) {
      QMat D = design.Delta;
      for (int r = 0; r < D.rows(); ++r)
        for (int c = 0; c < D.cols(); ++c) D(r, c) += Rational(k) * (r == c ? Rational(1, 8) : Rational((r + c) % 2 ? 1 : -1, 16));
      if (det(D).is_zero()) continue;
      if (negate)
        for (int r = 0; r < D.rows(); ++r)
          for (int c = 0; c < D.cols(); ++c) D(r, c) = -D(r, c);
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
  // A probe that lands exactly on a hyperplane (its pairs flip at every
  // scale) is moved by one grid step, at most twice; the moved point replaces
  // it. A pair flipping everywhere after that is the ubar_j = 0 condition.
  auto probe = [&](QVec& x, bool may_move = true) {
    const int d = static_cast<int>(x.size());
    for (int attempt = 0;; ++attempt) {
      if (++out.probes > design.max_probes)
        throw_unable("the path search needed more than " + std::to_string(design.max_probes) + " region evaluations");
      QVec y = x;
      if (attempt > 0) y[(attempt - 1) % d] += Rational(1, design.grid_den);
      try {
        RegionValues<T> e = region_values(fld, oracle, W, y, design);
        x = y;
        return e;
      } catch (const Error& err) {
        if (err.kind() != ErrorKind::not_identifiable || attempt >= 2 || !may_move) throw;
      }
    }
  };
  struct Piece {
    QVec a, b;
    RegionValues<T> ea, eb;
    int depth;
    long zoom = 1;
  };
  QVec p0 = p, q0 = q, mp = p;
  for (auto& c : mp) c = -c;
  // the path's corners stay put (p and -p must stay antipodal): a corner on a
  // hyperplane ends this path attempt
  const RegionValues<T> ep = probe(p0, false), eq = probe(q0, false), em = probe(mp, false);
  out.start = ep;
  out.end = em;
  // depth-first, in path order, so crossings come out ordered
  std::vector<Piece> stack{{q0, mp, eq, em, 0, 1}, {p0, q0, ep, eq, 0, 1}};
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
    auto too_close = [&]() {
      const std::vector<T> fa0 = pc.ea.flat(), fb0 = pc.eb.flat();
      std::vector<T> jj(fa0.size());
      for (size_t i = 0; i < jj.size(); ++i) jj[i] = fb0[i] - fa0[i];
      throw_degenerate("two or more neuron hyperplanes cross the path between " + qvec_str(pc.a) + " and " + qvec_str(pc.b) +
                       " (combined jump " + vec_str(fld, jj) + "), closer together than the token grid resolves" +
                       (out.resolution_deg >= 0 ? " (the crossings certified so far resolve " + std::to_string(out.resolution_deg) + " degrees)" : std::string()) +
                       "; they are distinct hyperplanes that this path cannot separate (another seed moves the path)");
    };
    if (pc.depth > 40 || pc.a == pc.b) too_close();
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
    // Three or more crossings in one piece can also sum to a zero normal:
    // such a piece is bisected first, and only a zero normal that persists
    // through many halvings is taken as the condition failing.
    if (zero_normal == Truth::yes && pc.depth >= 12)
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
    QVec xl = point_at(pc.a, pc.b, tl), xr = point_at(pc.a, pc.b, tr);
    if (xl == pc.a || xr == pc.b || xl == xr) too_close();
    const RegionValues<T> el = probe(xl), er = probe(xr);
    if (zero_normal != Truth::yes && opposite == Truth::yes && equal_values(fld, el, pc.ea) != Truth::no && equal_values(fld, er, pc.eb) != Truth::no &&
        equal_values(fld, el, er) == Truth::no) {
      Crossing<T> c;
      const std::vector<T> vl = el.flat(), vr = er.flat();
      for (size_t i = 0; i < vl.size(); ++i) c.jump.push_back(vr[i] - vl[i]);
      c.before = xl;
      c.after = xr;
      if (!design.single_crossing_test || d == 1) {  // d = 1: every hyperplane is the point 0 (no angle to resolve)
        out.crossings.push_back(std::move(c));
        continue;
      }
      // ---- the single-crossing test (proofs/22), on single tokens: a
      // one-token sequence [y] has attention output y in every head, so
      // g(y) = T([y]) = sum_{j active at y} u_j ubar_j^T y = ebar(y)^T y with
      // ebar = sum_h e_h, piecewise linear with a kink on every hyperplane,
      // and no exponentials at any scale.
      const long fine = 1L << 24;
      QVec nq(d);
      for (int i = 0; i < d; ++i) nq[i] = fld.nearest(n[i], fine);
      c.normal = nq;
      const QVec s = pc.b - pc.a;
      const Rational tq = fld.nearest(t, fine), tlq = fld.nearest(tl, fine), trq = fld.nearest(tr, fine);
      const QVec xc = plus(pc.a, s, tq);  // the predicted crossing
      Rational ns = dot(nq, s);
      if (ns.sign() < 0) ns = -ns;
      const Rational xn = approx_norm(xc), nn = approx_norm(nq);
      const int after_side = dot(nq, xr).sign();
      auto uncertified = [&](const std::string& why) {
        throw_degenerate("the path's crossing near " + qvec_str(xc) + " (jump " + vec_str(fld, c.jump) + ", predicted normal " + qvec_str(nq) +
                         ") is not certified as one neuron's hyperplane: " + why + " (another seed draws another path)");
      };
      if (ns.is_zero() || xn.is_zero() || nn.is_zero() || after_side == 0 || dot(nq, xl).sign() != -after_side)
        uncertified("the predicted hyperplane does not separate the close probes");
      std::vector<T> eb(d, fld.from(Rational(0))), ea(d, fld.from(Rational(0)));
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < d; ++i) {
          eb[i] = eb[i] + el.e[h][i];
          ea[i] = ea[i] + er.e[h][i];
        }
      auto g_at = [&](const QVec& y) {
        ++out.test_probes;
        return oracle.query({Run{y, 1}});
      };
      auto lin = [&](const std::vector<T>& e, const QVec& y) { return dot_q(fld, y, e); };
      auto same = [&](const T& a, const T& b) { return fld.equal(a, b, fld.abs(a) + fld.abs(b)); };
      // test points window |y| from the predicted hyperplane, scaled (cones)
      // until that distance is at least 1 (16 grid steps)
      Rational Z(1);
      while (design.window * xn * Z < Rational(1)) Z *= Rational(2);
      std::vector<std::pair<QVec, QVec>> pairs;
      const Rational tau = design.window * xn * nn / ns;  // moves xc by window |xc| across the predicted hyperplane
      const bool left_in = !(tq - tau > tlq), right_in = !(tq + tau < trq);
      if (left_in && right_in) {
        pairs.push_back({xl, xr});  // the close probes already lie within the window
      } else {
        const QVec ym = left_in ? xl : to_grid(scaled(plus(xc, s, -tau), Z), design.grid_den);
        const QVec yp = right_in ? xr : to_grid(scaled(plus(xc, s, tau), Z), design.grid_den);
        if (dot(nq, ym).sign() != -after_side || dot(nq, yp).sign() != after_side) uncertified("a test point fell on the wrong side");
        // each side: the before (after) region's linear function, at the test
        // point and one grid step beside it (a token exactly on some other
        // hyperplane agrees with both sides of it)
        bool fits = true;
        for (int side = -1; side <= 1 && fits; side += 2) {
          if ((side < 0 && left_in) || (side > 0 && right_in)) continue;
          const QVec& y = side < 0 ? ym : yp;
          QVec y2 = y;
          y2[0] += Rational(1, design.grid_den);
          const std::vector<T>& e = side < 0 ? eb : ea;
          fits = same(g_at(y), lin(e, y)) != Truth::no && same(g_at(y2), lin(e, y2)) != Truth::no;
        }
        if (!fits) {
          // another hyperplane within the window: the piece holds two or more
          // crossings. It is split at the window's edges, with region values
          // there at a scale whose pairs stay affordable (at most 256); a
          // window the grid cannot resolve at that scale is reported.
          Rational Zc(1);
          while (xn * Zc * Rational(2) <= Rational(256)) Zc *= Rational(2);
          if (Zc > Z) Zc = Z;
          // split points: the window's edges, or halfway to the close probes if that is further
          const Rational dl = std::max(tau, (tq - tlq) / Rational(2)), dr = std::max(tau, (trq - tq) / Rational(2));
          QVec sm = to_grid(scaled(plus(xc, s, -dl), Zc), design.grid_den), sp = to_grid(scaled(plus(xc, s, dr), Zc), design.grid_den);
          QVec al = scaled(xl, Zc), ar = scaled(xr, Zc);
          if (sm == sp || sm == al || sp == ar || dot(nq, sm).sign() != -after_side || dot(nq, sp).sign() != after_side)
            throw_degenerate("two or more neuron hyperplanes cross the path within " + std::to_string(design.window.approx_double() * 180 / 3.14159265358979) +
                             " degrees of the predicted hyperplane " + qvec_str(nq) + " near " + qvec_str(xc) + " (combined jump " + vec_str(fld, c.jump) +
                             "), closer together than the token grid resolves at an affordable scale; distinct hyperplanes that this path cannot "
                             "separate (another seed moves the path)");
          RegionValues<T> esm = probe(sm), esp = probe(sp);
          stack.push_back({sp, ar, esp, er, pc.depth + 1, pc.zoom});
          stack.push_back({sm, sp, esm, esp, pc.depth + 1, pc.zoom});
          stack.push_back({al, sm, el, esm, pc.depth + 1, pc.zoom});
          continue;
        }
        pairs.push_back({ym, yp});
      }
      if (d >= 3) {
        // far from the path: directions of the predicted hyperplane orthogonal
        // to the crossing. With y(t) = z0 + t o crossing it, a single
        // hyperplane makes g(y(1)) + g(y(-1)) - 2 g(y(0)) equal the kink
        // term's, K(t) = side ReLU(side n^T y(t)), whatever the linear part
        // of g there (other neurons' states differ far from the path).
        const QVec xp = plus(xc, nq, -dot(xc, nq) / dot(nq, nq));
        std::vector<QVec> dirs;
        for (int e = 0; e < d && static_cast<int>(dirs.size()) < d - 2; ++e) {
          QVec v(d, Rational(0));
          v[e] = Rational(1);
          v = plus(v, nq, -dot(v, nq) / dot(nq, nq));
          if (!dot(xp, xp).is_zero()) v = plus(v, xp, -dot(v, xp) / dot(xp, xp));
          for (const auto& m : dirs) v = plus(v, m, -dot(v, m) / dot(m, m));
          if (!dot(v, v).is_zero()) dirs.push_back(v);
        }
        Rational R = Z * xn;
        if (R * design.window < Rational(1)) R = Rational(1) / design.window;
        const QVec o = to_grid(scaled(nq, design.window * R / nn * Rational(after_side)), design.grid_den);
        auto kink = [&](const QVec& y) {
          const T v = dot_q(fld, y, n);
          return after_side > 0 ? fld.relu(v) : -fld.relu(-v);
        };
        for (const QVec& m : dirs) {
          bool shown = false;
          // the direction itself, then halfway towards the crossing (another
          // hyperplane may run through the first test line by chance)
          for (int variant = 0; variant < 2 && !shown; ++variant) {
            QVec z = m;
            if (variant == 1 && dot(xp, xp).is_zero()) continue;
            if (variant == 1) z = plus(scaled(m, Rational(1) / approx_norm(m)), xp, Rational(1) / approx_norm(xp));
            const Rational zn = approx_norm(z);
            if (zn.is_zero()) continue;
            const QVec z0 = to_grid(scaled(z, R / zn), design.grid_den);
            const QVec zm = plus(z0, o, Rational(-1)), zp = plus(z0, o, Rational(1));
            if (dot(nq, zm).sign() != -after_side || dot(nq, zp).sign() != after_side) continue;
            const T lhs = g_at(zp) + g_at(zm) - fld.from(Rational(2)) * g_at(z0);
            const T rhs = kink(zp) + kink(zm) - fld.from(Rational(2)) * kink(z0);
            if (same(lhs, rhs) == Truth::no) continue;
            pairs.push_back({zm, zp});
            shown = true;
          }
          if (!shown)
            uncertified("far from the path along the predicted hyperplane its kink differs: two hyperplanes meet near the path, or the jump "
                        "is two neurons'");
        }
      }
      std::vector<long double> nl(d);
      for (int i = 0; i < d; ++i) nl[i] = static_cast<long double>(nq[i].approx_double());
      const double phi = separating_half_angle(pairs, nl);
      if (!(phi < std::acos(-1.0) / 2)) uncertified("the test pairs do not confine the hyperplane");
      c.resolution_deg = resolution_degrees(phi);
      out.resolution_deg = std::max(out.resolution_deg, c.resolution_deg);
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
