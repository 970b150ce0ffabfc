// The small-grid guard (proofs/39-grid-witness.md): on a token grid where the
// plan's own Schwartz-Zippel bound (proofs/09) is not small, the plan's answers
// can fit a second model exactly, so the learner asks pair witnesses drawn
// from a larger grid before it reports heads.
#pragma once

#include <string>
#include <vector>

#include "mhaq/stages/learner.hpp"

namespace mhaq {

struct GridGuard {
  bool fires = false;         // the plan's own bound (proofs/09) exceeds 2^-10, or a chosen design
  bool after_repair = false;  // a repaired run's own witnesses (proofs/21) miss 2^-10 on this grid, or a chosen design
  long range = 0;      // witness tokens in {-range..range}/den (den of the plan)
  int pairs = 0;       // witness pairs (x, y)
  int length = 0;      // each asked at k = 0..length-1 copies of x, then y: length queries
  long queries() const { return static_cast<long>(pairs) * length; }
};

// `fires` when the proofs/09 bound, at (d, H or H0, |S| = 2R+1), exceeds
// 2^-10; `after_repair` when the three witnesses of a repaired run
// (proofs/21, each missing a wrong model with probability about 1/(2R+1))
// do: (2R+1)^3 < 2^10, that is R <= 4. Both hold for a chosen design
// (opt.draws), which neither bound covers. The witnesses' parameters are set
// either way, and their failure bound ((4H-1)/|S_w|)^pairs is at most 2^-10.
GridGuard grid_guard(int d, const LearnOptions& opt);

// Whether a run with these options will surely ask the witnesses (the guard
// fires and only a bound is known: H0 on the head count, or --rank R on every
// head's rank, whose answers fit a second model within the bound where a head
// is below it, and a model within the bound where a head above it escapes the
// check, docs/math/low-rank.md), or may ask them (a repaired pair on a grid
// where its own witnesses are not enough would call for them).
// One rule for the learner (repaired: a pair was repaired) and the drivers
// that cost the witnesses before the run (repaired: a repair may happen).
inline bool grid_guard_asks(const GridGuard& g, const LearnOptions& opt, bool repaired) {
  return (g.fires && (opt.heads_is_bound || opt.rank > 0)) || (g.after_repair && repaired);
}
inline bool grid_guard_certain(const GridGuard& g, const LearnOptions& opt) { return grid_guard_asks(g, opt, false); }
// A run told H whose pairs all show fewer heads is confirmed as a run told
// only H0 = H would be (learn()), so it may ask them too.
inline bool grid_guard_possible(const GridGuard& g, const LearnOptions& opt) {
  return grid_guard_asks(g, opt, opt.repair) || (g.fires && !opt.heads_is_bound);
}

// The witness queries, in the order asked: pair w's queries are k copies of
// x_w followed by length - k copies of y_w, k = 0..length-1. They depend only
// on opt.seed and the grid, never on an answer, so a driver can cost them
// before the run.
std::vector<Query> grid_witness_queries(int d, const LearnOptions& opt, const GridGuard& g);

// The least token range at which the plan's own bound is at most 2^-10, so the
// guard does not fire (for the message of a run the guard ended).
long grid_guard_quiet_range(int d, long H, bool bias = false);

// Words every message of a run the guard ended contains.
inline const char* grid_guard_marker() { return "small token grid"; }

}  // namespace mhaq
