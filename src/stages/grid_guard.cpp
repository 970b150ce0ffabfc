// The small-grid guard's arithmetic (proofs/39-grid-witness.md), in rationals.
#include "mhaq/stages/grid_guard.hpp"

#include <algorithm>

#include "mhaq/arith/rational.hpp"

namespace mhaq {

namespace {

// 2^-10: the guard's target for the probability of an ok with wrong heads.
Rational threshold() { return Rational(1, 1024UL); }

// The bound of proofs/09 at |S| = s (verify's schwartz_zippel, in rationals):
// D / (|S| (1 - sum_k |S|^-k)^2), D the degree sum of its events.
bool plan_bound_exceeds(long d, long H, long s) {
  const long D = H * (2 * d - 1) + H * (H - 1) * (2 * d * d - 1) + 2 * (d * d - 1) * H * (H - 1) * std::max(0L, H - 2);
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

GridGuard grid_guard(int d, const LearnOptions& opt) {
  GridGuard g;
  if (opt.draws) return g;  // a given design: its tokens are not the grid's
  const long H = opt.H, R = opt.tokens.range;
  if (!plan_bound_exceeds(d, H, 2 * R + 1)) return g;
  g.fires = true;
  // |S_w| >= 4 (4H - 1): each pair misses a wrong model with probability <= 1/4
  g.range = std::max(R, 8 * H - 2);
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
