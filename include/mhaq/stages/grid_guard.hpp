// The small-grid guard (proofs/39-grid-witness.md): on a token grid where the
// plan's own Schwartz-Zippel bound (proofs/09) is not small, the plan's answers
// can fit a second model exactly, so the learner asks pair witnesses drawn
// from a larger grid before it reports heads.
#pragma once

#include <string>

#include "mhaq/stages/learner.hpp"

namespace mhaq {

struct GridGuard {
  bool fires = false;  // the plan's bound exceeds kGridGuardThreshold
  long range = 0;      // witness tokens in {-range..range}/den (den of the plan)
  int pairs = 0;       // witness pairs (x, y)
  int length = 0;      // each asked at k = 0..length-1 copies of x, then y: length queries
  long queries() const { return static_cast<long>(pairs) * length; }
};

// Fires when the proofs/09 bound, at (d, H or H0, |S| = 2R+1), exceeds 2^-10.
// Then the guard's failure bound ((4H-1)/|S_w|)^pairs is at most 2^-10 as well.
GridGuard grid_guard(int d, const LearnOptions& opt);

// Words every message of a run the guard ended contains.
inline const char* grid_guard_marker() { return "small token grid"; }

}  // namespace mhaq
