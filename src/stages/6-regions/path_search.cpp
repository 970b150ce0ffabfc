// Stage 6 (transformer): the path's crossings by predicted-crossing bisection
// (proofs/15), each certified by the single-crossing test (proofs/22), written
// once for every field.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "mhaq/arith/all_fields.hpp"
#include "mhaq/stages/6-regions/regions.hpp"
#include "mhaq/stages/6-regions/resolution.hpp"
#include "regions_internal.hpp"

namespace mhaq {

using namespace regions_internal;

namespace {

// One search along p -> q -> -p. Pieces of the path with the region values at
// their ends wait on a stack, depth-first in path order.
template <ArithField F>
class PathSearcher {
 public:
  using T = typename F::value_type;
  PathSearcher(const F& fld, Oracle<T>& oracle, const std::vector<Mat<T>>& W, const RegionDesign& design)
      : fld_(fld), oracle_(oracle), W_(W), design_(design), d_(0), H_(static_cast<int>(W.size())) {}

  PathSearch<T> run(const QVec& p, const QVec& q, int neurons_told);

 private:
  struct Piece {
    QVec a, b;
    RegionValues<T> ea, eb;
    int depth;
    long zoom = 1;
  };
  // The close probes around a predicted crossing: parameters along the piece
  // and the region values there.
  struct Probes {
    T t, tl, tr;
    QVec xl, xr;
    RegionValues<T> el, er;
  };

  RegionValues<T> probe(QVec& x, bool may_move = true);
  void step(Piece pc);
  [[noreturn]] void too_close(const Piece& pc);
  void zero_normal_piece(const Piece& pc);
  bool single_crossing(const Piece& pc, const std::vector<T>& n, const Probes& pr, Crossing<T>& c);
  void far_pairs(const QVec& xc, const QVec& nq, const std::vector<T>& n, int after_side, const Rational& Z, const Rational& xn,
                 std::vector<std::pair<QVec, QVec>>& pairs, const std::function<void(const std::string&)>& uncertified);
  T g_at(const QVec& y) {  // the single-token answer T([y]) = sum_j u_j ReLU(ubar_j^T y)
    ++out_.test_probes;
    return oracle_.query({Run{y, 1}});
  }
  Truth same(const T& a, const T& b) const { return fld_.equal(a, b, fld_.abs(a) + fld_.abs(b)); }
  std::vector<T> jump_of(const Piece& pc) const {
    const std::vector<T> fa = pc.ea.flat(), fb = pc.eb.flat();
    std::vector<T> j(fa.size());
    for (size_t i = 0; i < j.size(); ++i) j[i] = fb[i] - fa[i];
    return j;
  }

  const F& fld_;
  Oracle<T>& oracle_;
  const std::vector<Mat<T>>& W_;
  const RegionDesign& design_;
  int d_, H_;
  PathSearch<T> out_;
  std::vector<Piece> stack_;
};

// A probe that lands exactly on a hyperplane (its pairs flip at every scale)
// is moved by one grid step, at most twice; the moved point replaces it, and
// a point still flipping after that is too close to a hyperplane (degenerate).
// Corners do not move: one that flips is the ubar_j = 0 condition unless
// single tokens show a hyperplane through it.
template <ArithField F>
RegionValues<typename F::value_type> PathSearcher<F>::probe(QVec& x, bool may_move) {
  for (int attempt = 0;; ++attempt) {
    if (++out_.probes > design_.max_probes)
      throw_unable("the path search needed more than " + std::to_string(design_.max_probes) + " region evaluations");
    QVec y = x;
    if (attempt > 0) y[(attempt - 1) % d_] += Rational(1, design_.grid_den);
    try {
      RegionValues<T> e = region_values(fld_, oracle_, W_, y, design_);
      x = y;
      return e;
    } catch (const Error& err) {
      if (err.kind() != ErrorKind::not_identifiable) throw;
      if (!may_move) {
        // A corner exactly on a neuron's hyperplane (a grid point can be)
        // fails the same way; single tokens kink through it, while a neuron
        // with ubar_j = 0 is invisible to them. Only no kink within 1/16
        // along every axis leaves the condition as the explanation.
        Truth straight = Truth::yes;
        const T g0 = g_at(x);
        for (int a = 0; a < d_ && straight != Truth::no; ++a) {
          QVec lo = x, hi = x;
          lo[a] -= Rational(1, 16);
          hi[a] += Rational(1, 16);
          // one query per statement: the order of queries is part of the run
          const T glo = g_at(lo);
          const T ghi = g_at(hi);
          straight = truth_and(straight, same(glo + ghi, g0 + g0));
        }
        if (straight != Truth::yes)
          throw_degenerate("the path's corner " + qvec_str(x) + " lies on or within 1/16 of a neuron's hyperplane (single tokens kink there), " +
                           "where the probe pairs flip at every offset scale (another seed moves the path)");
        throw;
      }
      // A point the search chose (not a corner) and its grid neighbours may
      // all lie within the offsets' reach of a hyperplane: close, nearly
      // parallel hyperplanes do that. It says nothing about the model's
      // conditions (a neuron with ubar_j = 0 fails at the corners already).
      if (attempt >= 2)
        throw_degenerate("region values at " + qvec_str(x) + " and its grid neighbours: a neuron flips inside the probe pairs at every offset " +
                         "scale tried, so the point lies too close to a neuron's hyperplane for the offsets (another seed moves the path)");
    }
  }
}

template <ArithField F>
void PathSearcher<F>::too_close(const Piece& pc) {
  zero_normal_piece(pc);
  throw_degenerate("two or more neuron hyperplanes cross the path between " + qvec_str(pc.a) + " and " + qvec_str(pc.b) + " (combined jump " +
                   vec_str(fld_, jump_of(pc)) + "), closer together than the token grid resolves" +
                   (out_.resolution_deg >= 0 ? " (the crossings certified so far resolve " + std::to_string(out_.resolution_deg) + " degrees)" : std::string()) +
                   "; they are distinct hyperplanes that this path cannot separate (another seed moves the path)");
}

// A jump of the region values whose normal sum_h jump_h is zero comes from a
// neuron with ubar_j = 0 (its state in the pairs follows the offsets, not the
// final token, so single tokens never see it) or from several neurons whose
// normals cancel. Single tokens tell them apart: g(y) = T([y]) kinks on every
// hyperplane with ubar_j != 0 that crosses the piece, and is the linear
// function ebar(a)^T y across it otherwise. Returns when the normal is not
// zero or g kinks inside the piece; throws not_identifiable otherwise.
template <ArithField F>
void PathSearcher<F>::zero_normal_piece(const Piece& pc) {
  const std::vector<T> j = jump_of(pc);
  Truth zero = Truth::yes;
  for (int c = 0; c < d_; ++c) {
    T s = fld_.from(Rational(0));
    for (int h = 0; h < H_; ++h) s = s + j[h * d_ + c];
    zero = truth_and(zero, fld_.is_zero(s));
  }
  if (zero != Truth::yes) return;
  std::vector<T> ebar(d_, fld_.from(Rational(0)));
  for (int h = 0; h < H_; ++h)
    for (int c = 0; c < d_; ++c) ebar[c] = ebar[c] + pc.ea.e[h][c];
  // 35 tokens 32 a + k (b - a), k = -1..33: grid points, the piece at 32x (a
  // cone) and one step past either end, so that a hyperplane through an end
  // point (a grid point can lie on one) shows its kink
  const int parts = 32;
  Truth linear = Truth::yes;
  for (int k = -1; k <= parts + 1 && linear != Truth::no; ++k) {
    QVec y = plus(scaled(pc.a, Rational(parts)), pc.b - pc.a, Rational(k));
    linear = truth_and(linear, same(g_at(y), dot_q(fld_, y, ebar)));
  }
  if (linear != Truth::yes) return;
  throw_not_identifiable("the region values jump by " + vec_str(fld_, j) + " between " + qvec_str(pc.a) + " and " + qvec_str(pc.b) +
                         " with zero hyperplane normal sum_h jump_h, and T on single tokens has no kink there (" + std::to_string(parts + 3) +
                         " tokens across): some neuron's pre-activation does not follow the final token (condition ubar_j = sum_h U_{h,j} != 0 fails)");
}

template <ArithField F>
PathSearch<typename F::value_type> PathSearcher<F>::run(const QVec& p, const QVec& q, int neurons_told) {
  d_ = static_cast<int>(p.size());
  QVec p0 = p, q0 = q, mp = p;
  for (auto& c : mp) c = -c;
  // the path's corners stay put (p and -p must stay antipodal): a corner on a
  // hyperplane ends this path attempt
  const RegionValues<T> ep = probe(p0, false), eq = probe(q0, false), em = probe(mp, false);
  out_.start = ep;
  out_.end = em;
  stack_ = {{q0, mp, eq, em, 0, 1}, {p0, q0, ep, eq, 0, 1}};
  auto found_all = [&] { return neurons_told > 0 && static_cast<int>(out_.crossings.size()) >= neurons_told; };
  while (!stack_.empty() && !found_all()) {
    Piece pc = std::move(stack_.back());
    stack_.pop_back();
    step(std::move(pc));
  }
  return std::move(out_);
}

// One piece: nothing, a certified crossing, or smaller pieces on the stack.
template <ArithField F>
void PathSearcher<F>::step(Piece pc) {
  const Truth same_values = equal_values(fld_, pc.ea, pc.eb);
  if (same_values == Truth::yes) return;
  if (same_values == Truth::unknown) {
    ++out_.undecided_flats;
    return;
  }
  if (pc.depth > 40 || pc.a == pc.b) too_close(pc);
  // Zoom: the regions are cones, so 2a -> 2b crosses the same hyperplanes in
  // the same order with twice the grid resolution (queries at 2x have larger
  // scores, hence higher degrees in exact mode: only where needed, at most 64x).
  auto span_of = [&] {
    Rational span(0);
    for (size_t c = 0; c < pc.a.size(); ++c) {
      const Rational dc = pc.b[c] - pc.a[c];
      span = std::max(span, dc.sign() < 0 ? -dc : dc);
    }
    return span;
  };
  for (int zoom = 0; zoom < 6; ++zoom) {
    if (!(span_of() * Rational(design_.probe_den) < Rational(64)) || pc.zoom >= 64) break;
    for (auto& c : pc.a) c *= Rational(2);
    for (auto& c : pc.b) c *= Rational(2);
    pc.zoom *= 2;
  }
  // a single crossing's jump predicts its hyperplane: n = sum_h jump_h
  const std::vector<T> fa = pc.ea.flat(), fb = pc.eb.flat();
  std::vector<T> n(d_, fld_.from(Rational(0)));
  for (int h = 0; h < H_; ++h)
    for (int c = 0; c < d_; ++c) n[c] = n[c] + (fb[h * d_ + c] - fa[h * d_ + c]);
  // A neuron with ubar_j = 0 changes the values by sign((r_h - r_g) U^T delta)
  // only: a jump with zero normal, which no hyperplane explains. Three or more
  // crossings in one piece can also sum to a zero normal: such a piece is
  // bisected first, and single tokens decide once it is small.
  Truth zero_normal = Truth::yes;
  for (int c = 0; c < d_; ++c) zero_normal = truth_and(zero_normal, fld_.is_zero(n[c]));
  if (zero_normal == Truth::yes && pc.depth >= 12) zero_normal_piece(pc);
  const T na = dot_q(fld_, pc.a, n), nb = dot_q(fld_, pc.b, n);
  const Truth opposite = truth_not(fld_.is_positive(na * nb));  // the predicted hyperplane separates a and b
  Probes pr;
  pr.t = fld_.from(Rational(1, 2));
  if (opposite == Truth::yes && fld_.is_zero(na - nb) == Truth::no) pr.t = na / (na - nb);
  // probes close to the predicted crossing on either side: four steps of
  // 1/probe_den (along the segment's largest coordinate), rounded to the
  // grid, at most a quarter of the way to either end
  const T eta = fld_.from(Rational(4) / (Rational(design_.probe_den) * span_of()));
  const T qa = pr.t * fld_.from(Rational(1, 4)), qb = (fld_.from(Rational(1)) - pr.t) * fld_.from(Rational(1, 4));
  pr.tl = pr.t - (fld_.is_positive(qa - eta) == Truth::yes ? eta : qa);
  pr.tr = pr.t + (fld_.is_positive(qb - eta) == Truth::yes ? eta : qb);
  auto point_at = [&](const T& t) {
    QVec x(pc.a.size());
    for (size_t c = 0; c < pc.a.size(); ++c) x[c] = fld_.nearest(fld_.from(pc.a[c]) + t * fld_.from(pc.b[c] - pc.a[c]), design_.grid_den);
    return x;
  };
  pr.xl = point_at(pr.tl);
  pr.xr = point_at(pr.tr);
  if (pr.xl == pc.a || pr.xr == pc.b || pr.xl == pr.xr) too_close(pc);
  pr.el = probe(pr.xl);
  pr.er = probe(pr.xr);
  if (zero_normal != Truth::yes && opposite == Truth::yes && equal_values(fld_, pr.el, pc.ea) != Truth::no &&
      equal_values(fld_, pr.er, pc.eb) != Truth::no && equal_values(fld_, pr.el, pr.er) == Truth::no) {
    Crossing<T> c;
    const std::vector<T> vl = pr.el.flat(), vr = pr.er.flat();
    for (size_t i = 0; i < vl.size(); ++i) c.jump.push_back(vr[i] - vl[i]);
    c.before = pr.xl;
    c.after = pr.xr;
    // d = 1: every hyperplane is the point 0 (no angle to resolve)
    if (!design_.single_crossing_test || d_ == 1 || single_crossing(pc, n, pr, c)) out_.crossings.push_back(std::move(c));
    return;
  }
  stack_.push_back({pr.xr, pc.b, pr.er, pc.eb, pc.depth + 1, pc.zoom});
  stack_.push_back({pr.xl, pr.xr, pr.el, pr.er, pc.depth + 1, pc.zoom});
  stack_.push_back({pc.a, pr.xl, pc.ea, pr.el, pc.depth + 1, pc.zoom});
}

// The single-crossing test (proofs/22), on single tokens: a one-token
// sequence [y] has attention output y in every head, so
// g(y) = T([y]) = sum_{j active at y} u_j ubar_j^T y = ebar(y)^T y with
// ebar = sum_h e_h, piecewise linear with a kink on every hyperplane, and no
// exponentials at any scale. True: the crossing is certified (its resolution
// set in c). False: the piece holds more crossings and was split on the stack.
template <ArithField F>
bool PathSearcher<F>::single_crossing(const Piece& pc, const std::vector<T>& n, const Probes& pr, Crossing<T>& c) {
  const int d = d_;
  const long fine = 1L << 24;
  const QVec nq = direction_on_grid(fld_, n, fine);
  c.normal = nq;
  const QVec s = pc.b - pc.a;
  const Rational tq = fld_.nearest(pr.t, fine), tlq = fld_.nearest(pr.tl, fine), trq = fld_.nearest(pr.tr, fine);
  const QVec xc = plus(pc.a, s, tq);  // the predicted crossing
  Rational ns = dot(nq, s);
  if (ns.sign() < 0) ns = -ns;
  const Rational xn = approx_norm(xc), nn = approx_norm(nq);
  const int after_side = dot(nq, pr.xr).sign();
  const std::function<void(const std::string&)> uncertified = [&](const std::string& why) {
    throw_degenerate("the path's crossing near " + qvec_str(xc) + " (jump " + vec_str(fld_, c.jump) + ", predicted normal " + qvec_str(nq) +
                     ") is not certified as one neuron's hyperplane: " + why + " (another seed draws another path)");
  };
  if (ns.is_zero() || xn.is_zero() || nn.is_zero() || after_side == 0 || dot(nq, pr.xl).sign() != -after_side)
    uncertified("the predicted hyperplane does not separate the close probes");
  std::vector<T> eb(d, fld_.from(Rational(0))), ea(d, fld_.from(Rational(0)));
  for (int h = 0; h < H_; ++h)
    for (int i = 0; i < d; ++i) {
      eb[i] = eb[i] + pr.el.e[h][i];
      ea[i] = ea[i] + pr.er.e[h][i];
    }
  // test points window |y| from the predicted hyperplane, scaled (cones)
  // until that distance is at least 1 (16 grid steps)
  Rational Z(1);
  while (design_.window * xn * Z < Rational(1)) Z *= Rational(2);
  std::vector<std::pair<QVec, QVec>> pairs;
  const Rational tau = design_.window * xn * nn / ns;  // moves xc by window |xc| across the predicted hyperplane
  const bool left_in = !(tq - tau > tlq), right_in = !(tq + tau < trq);
  if (left_in && right_in) {
    pairs.push_back({pr.xl, pr.xr});  // the close probes already lie within the window
  } else {
    const QVec ym = left_in ? pr.xl : to_grid(scaled(plus(xc, s, -tau), Z), design_.grid_den);
    const QVec yp = right_in ? pr.xr : to_grid(scaled(plus(xc, s, tau), Z), design_.grid_den);
    if (dot(nq, ym).sign() != -after_side || dot(nq, yp).sign() != after_side) uncertified("a test point fell on the wrong side");
    // each side: the before (after) region's linear function, at the test
    // point and one grid step beside it (a token exactly on some other
    // hyperplane agrees with both sides of it)
    bool fits = true;
    for (int side = -1; side <= 1 && fits; side += 2) {
      if ((side < 0 && left_in) || (side > 0 && right_in)) continue;
      const QVec& y = side < 0 ? ym : yp;
      QVec y2 = y;
      y2[0] += Rational(1, design_.grid_den);
      const std::vector<T>& e = side < 0 ? eb : ea;
      fits = same(g_at(y), dot_q(fld_, y, e)) != Truth::no && same(g_at(y2), dot_q(fld_, y2, e)) != Truth::no;
    }
    if (!fits) {
      // another hyperplane within the window: the piece holds two or more
      // crossings. It is split at the window's edges (or halfway to the close
      // probes if that is further), with region values there at the smallest
      // scale that separates the split points, at most 256: pairs at a larger
      // scale have larger scores, so their systems are worse conditioned
      // (approximate arithmetics lose digits) and their answers have higher
      // degrees (exact mode). A window the grid cannot resolve is reported.
      const Rational dl = std::max(tau, (tq - tlq) / Rational(2)), dr = std::max(tau, (trq - tq) / Rational(2));
      QVec sm, sp, al, ar;
      bool separated = false;
      for (Rational Zc(1); !separated && Zc <= Z && (Zc == Rational(1) || xn * Zc <= Rational(256)); Zc *= Rational(2)) {
        sm = to_grid(scaled(plus(xc, s, -dl), Zc), design_.grid_den);
        sp = to_grid(scaled(plus(xc, s, dr), Zc), design_.grid_den);
        al = scaled(pr.xl, Zc);
        ar = scaled(pr.xr, Zc);
        separated = !(sm == sp || sm == al || sp == ar || dot(nq, sm).sign() != -after_side || dot(nq, sp).sign() != after_side);
      }
      if (!separated)
        throw_degenerate("two or more neuron hyperplanes cross the path within " + std::to_string(design_.window.approx_double() * 180 / 3.14159265358979) +
                         " degrees of the predicted hyperplane " + qvec_str(nq) + " near " + qvec_str(xc) + " (combined jump " + vec_str(fld_, c.jump) +
                         "), closer together than the token grid resolves at an affordable scale; distinct hyperplanes that this path cannot "
                         "separate (another seed moves the path)");
      RegionValues<T> esm = probe(sm), esp = probe(sp);
      stack_.push_back({sp, ar, esp, pr.er, pc.depth + 1, pc.zoom});
      stack_.push_back({sm, sp, esm, esp, pc.depth + 1, pc.zoom});
      stack_.push_back({al, sm, pr.el, esm, pc.depth + 1, pc.zoom});
      return false;
    }
    pairs.push_back({ym, yp});
  }
  if (d >= 3) far_pairs(xc, nq, n, after_side, Z, xn, pairs, uncertified);
  std::vector<long double> nl(d);
  for (int i = 0; i < d; ++i) nl[i] = static_cast<long double>(nq[i].approx_double());
  const double phi = separating_half_angle(pairs, nl);
  if (!(phi < std::acos(-1.0) / 2)) uncertified("the test pairs do not confine the hyperplane");
  c.resolution_deg = resolution_degrees(phi);
  out_.resolution_deg = std::max(out_.resolution_deg, c.resolution_deg);
  return true;
}

// Far from the path: directions of the predicted hyperplane orthogonal to the
// crossing. With y(t) = z0 + t o crossing it, a single hyperplane makes
// g(y(1)) + g(y(-1)) - 2 g(y(0)) equal the kink term's,
// K(t) = side ReLU(side n^T y(t)), whatever the linear part of g there (other
// neurons' states differ far from the path).
template <ArithField F>
void PathSearcher<F>::far_pairs(const QVec& xc, const QVec& nq, const std::vector<T>& n, int after_side, const Rational& Z, const Rational& xn,
                                std::vector<std::pair<QVec, QVec>>& pairs, const std::function<void(const std::string&)>& uncertified) {
  const int d = d_;
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
  const Rational nn = approx_norm(nq);
  Rational R = Z * xn;
  if (R * design_.window < Rational(1)) R = Rational(1) / design_.window;
  const QVec o = to_grid(scaled(nq, design_.window * R / nn * Rational(after_side)), design_.grid_den);
  auto kink = [&](const QVec& y) {
    const T v = dot_q(fld_, y, n);
    return after_side > 0 ? fld_.relu(v) : -fld_.relu(-v);
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
      const QVec z0 = to_grid(scaled(z, R / zn), design_.grid_den);
      const QVec zm = plus(z0, o, Rational(-1)), zp = plus(z0, o, Rational(1));
      if (dot(nq, zm).sign() != -after_side || dot(nq, zp).sign() != after_side) continue;
      // one query per statement: their order is part of the run (a replay
      // asks them again in that order)
      const T g0 = g_at(z0);
      const T gm = g_at(zm);
      const T gp = g_at(zp);
      const T lhs = gp + gm - fld_.from(Rational(2)) * g0;
      const T rhs = kink(zp) + kink(zm) - fld_.from(Rational(2)) * kink(z0);
      if (same(lhs, rhs) == Truth::no) continue;
      pairs.push_back({zm, zp});
      shown = true;
    }
    if (!shown)
      uncertified("far from the path along the predicted hyperplane its kink differs: two hyperplanes meet near the path, or the jump "
                  "is two neurons'");
  }
}

}  // namespace

template <ArithField F>
PathSearch<typename F::value_type> search_path(const F& fld, Oracle<typename F::value_type>& oracle,
                                                 const std::vector<Mat<typename F::value_type>>& W, const QVec& p, const QVec& q,
                                                 const RegionDesign& design, int neurons_told) {
  return PathSearcher<F>(fld, oracle, W, design).run(p, q, neurons_told);
}


template <ArithField F>
Truth crossings_on_one_hyperplane(const F& fld, Oracle<typename F::value_type>& oracle, const std::vector<Crossing<typename F::value_type>>& cs, int H,
                                  const RegionDesign& design, int log2_window) {
  using T = typename F::value_type;
  Truth all = cs.empty() ? Truth::unknown : Truth::yes;
  const Rational eps = Rational(1) / Rational(1L << log2_window);
  for (const auto& c : cs) {
    const int d = static_cast<int>(c.before.size());
    if (d < 2) return Truth::unknown;
    std::vector<T> n(d, fld.from(Rational(0)));
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < d; ++i) n[i] = n[i] + c.jump[h * d + i];
    const QVec nf = direction_on_grid(fld, n, 1L << 60);
    const Rational nn2 = dot(nf, nf);
    const int after_side = dot(nf, c.after).sign();
    if (nn2.is_zero() || after_side == 0 || dot(nf, c.before).sign() != -after_side) return Truth::unknown;
    const QVec xc = c.before + c.after;
    const QVec xp = plus(xc, nf, -dot(xc, nf) / nn2);  // on the predicted hyperplane, at the crossing
    if (dot(xp, xp).is_zero()) return Truth::unknown;
    // centres: the crossing, and for d >= 3 points of the hyperplane away
    // from the path (two hyperplanes may meet near the crossing)
    std::vector<QVec> centres{xp};
    std::vector<QVec> dirs;
    for (int e = 0; e < d && static_cast<int>(dirs.size()) < d - 2; ++e) {
      QVec v(d, Rational(0));
      v[e] = Rational(1);
      v = plus(v, nf, -dot(v, nf) / nn2);
      v = plus(v, xp, -dot(v, xp) / dot(xp, xp));
      for (const auto& m : dirs) v = plus(v, m, -dot(v, m) / dot(m, m));
      if (dot(v, v).is_zero()) continue;
      dirs.push_back(v);
      centres.push_back(plus(xp, v, approx_norm(xp) / approx_norm(v)));
    }
    const Rational nfn = approx_norm(nf);
    for (const QVec& z : centres) {
      const Rational zn = approx_norm(z);
      Rational Zs(1);
      while (eps * zn * Zs < Rational(1)) Zs *= Rational(2);
      const QVec z0 = to_grid(scaled(z, Zs), design.grid_den);
      const QVec o = to_grid(scaled(nf, eps * zn * Zs / nfn * Rational(after_side)), design.grid_den);
      const QVec zm = plus(z0, o, Rational(-1)), zp = plus(z0, o, Rational(1));
      if (dot(nf, zm).sign() != -after_side || dot(nf, zp).sign() != after_side) return Truth::unknown;
      auto g_at = [&](const QVec& y) { return oracle.query({Run{y, 1}}); };
      auto kink = [&](const QVec& y) {
        const T v = dot_q(fld, y, n);
        return after_side > 0 ? fld.relu(v) : -fld.relu(-v);
      };
      const T g0 = g_at(z0);
      const T gm = g_at(zm);
      const T gp = g_at(zp);
      const T lhs = gp + gm - fld.from(Rational(2)) * g0;
      const T rhs = kink(zp) + kink(zm) - fld.from(Rational(2)) * kink(z0);
      all = truth_and(all, fld.equal(lhs, rhs, fld.abs(lhs) + fld.abs(rhs)));
      if (all == Truth::no) return all;
    }
  }
  return all;
}

#define MHAQ_INSTANTIATE(F)                                                                                                   \
  template Truth crossings_on_one_hyperplane<F>(const F&, Oracle<F::value_type>&, const std::vector<Crossing<F::value_type>>&, int, \
                                                const RegionDesign&, int);                                                    \
  template PathSearch<F::value_type> search_path<F>(const F&, Oracle<F::value_type>&, const std::vector<Mat<F::value_type>>&, \
                                                     const QVec&, const QVec&, const RegionDesign&, int);
MHAQ_FOR_EACH_TRANSFORMER_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
