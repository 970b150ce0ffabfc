// The small-grid guard's arithmetic (proofs/39-grid-witness.md), in rationals.
#include "mhaq/stages/grid_guard.hpp"

#include <algorithm>

#include "mhaq/arith/rational.hpp"
#include "mhaq/base/random.hpp"

namespace mhaq {

namespace {

// 2^-10: the guard's target for the probability of an ok with wrong heads.
Rational threshold() { return Rational(1, 1024UL); }

// The bound of proofs/09 at |S| = s (verify's schwartz_zippel, in rationals):
// D / (|S| (1 - sum_k |S|^-k)^2), D the degree sum of its events. With
// biases the plan has 2d^2 + 2d - 1 pairs and d^2 + d - 1 links, and the
// same events, each of degree at most 2 (docs/math/biases.md).
bool plan_bound_exceeds(long d, long H, long s, bool bias) {
  const long pairs = bias ? 2 * d * d + 2 * d - 1 : 2 * d * d - 1, links = bias ? d * d + d - 1 : d * d - 1;
  const long D = H * (2 * d - 1) + H * (H - 1) * pairs + 2 * links * H * (H - 1) * std::max(0L, H - 2);
  Rational sing(0), term(1);
  for (long k = 1; k <= d; ++k) {
    term /= Rational(s);
    sing += term;
    if (term < Rational(1, 1UL << 40) && k >= 2) {  // the rest is below |S|^-k d: fold it in as an upper bound
      sing += term * Rational(d);
      break;
    }
  }
  const Rational ns = (Rational(1) - sing) * (Rational(1) - sing);
  if (!(Rational(0) < ns)) return true;
  return threshold() < Rational(D) / (Rational(s) * ns);
}

}  // namespace

long grid_guard_quiet_range(int d, long H, bool bias) {
  long hi = 1;
  while (plan_bound_exceeds(d, H, 2 * hi + 1, bias)) hi *= 2;
  long lo = hi / 2;  // exceeds at lo (or lo = 0), quiet at hi
  while (hi - lo > 1) {
    const long mid = lo + (hi - lo) / 2;
    (plan_bound_exceeds(d, H, 2 * mid + 1, bias) ? lo : hi) = mid;
  }
  return hi;
}

std::vector<Query> grid_witness_queries(int d, const LearnOptions& opt, const GridGuard& g) {
  std::vector<Query> out;
  if (g.pairs == 0) return out;
  Rng rng(opt.seed ^ 0x6772696477697431ULL);
  auto token = [&] {
    QVec x(static_cast<size_t>(d));
    for (int i = 0; i < d; ++i) x[static_cast<size_t>(i)] = Rational(rng.uniform_int(-g.range, g.range), static_cast<unsigned long>(opt.tokens.den));
    return x;
  };
  for (int w = 0; w < g.pairs; ++w) {
    const QVec x = token(), y = token();
    for (int k = 0; k < g.length; ++k) {
      Query q;
      if (k > 0) q.push_back(Run{x, k});
      q.push_back(Run{y, g.length - k});
      out.push_back(std::move(q));
    }
  }
  return out;
}

GridGuard grid_guard(int d, const LearnOptions& opt) {
  GridGuard g;
  const long H = opt.H, R = opt.tokens.range;
  // A chosen design (scaled, tuned) is not drawn uniformly from the grid, so
  // neither page 09's bound nor page 21's estimate says anything about it.
  g.fires = opt.draws || plan_bound_exceeds(d, H, 2 * R + 1, opt.bias);
  g.after_repair = opt.draws || 2 * R + 1 <= 10;  // (2R+1)^3 < 2^10: 10^3 = 1000, 11^3 = 1331
  // |S_w| >= 2 (4H - 1): each pair misses a wrong model with probability < 1/2.
  // A wider grid would need fewer pairs, but an exact answer's tau-degree
  // grows with the square of the range, and that is the dearer cost.
  g.range = std::max(R, 4 * H - 1);
  g.length = static_cast<int>(2 * H + 1);
  const Rational p = Rational(4 * H - 1) / Rational(2 * g.range + 1);
  Rational miss(1);
  while (threshold() < miss) {
    miss *= p;
    ++g.pairs;
  }
  return g;
}

}  // namespace mhaq
