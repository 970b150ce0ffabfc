// Stage 2: query designs, i.e. how B and Delta are chosen
// (docs/math/designs.md, docs/math/conditioning.md). The schedule (which pairs, which links) is the same for
// every design; only the final tokens b_j and the offsets delta_i differ.
//
//   paper   B and Delta drawn uniformly from the arithmetic's token grid (the
//           default; the query count and length claims are about it);
//   scaled  non-adaptive: B and Delta random orthogonal matrices (condition
//           number 1), the offsets' columns s times longer than the final
//           tokens', with s chosen per H (design_offset_scale);
//   tuned   adaptive: a pilot run's answers give an estimate of the heads,
//           and B and Delta are chosen to minimise the first-order
//           amplification predicted on that estimate (analysis/design_search.hpp);
//   placed  adaptive, for answers of low precision: its own queries (offsets
//           per final token that place every head's pole, copy counts on a
//           geometric grid), not this schedule's (analysis/placed_design.hpp).
//
// Exact-grid rationals only: the draws are the learner's own choices, and
// everything here is exact in Q (no number type is named).
#pragma once
#include <string>

#include "mhaq/arith/rational.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"

namespace mhaq {

enum class Design { paper, scaled, tuned, placed };
const char* design_name(Design d);
Design parse_design(const std::string& s);  // throws Error(usage)

// The scaled design's offset scale for H heads, relative to the final
// tokens' (docs/math/designs.md: the per-H optimum of the median predicted
// kappa_rms over 60 models per H at d = 4, default model distribution, seeds
// apart from every committed study): 2 for H = 1, 5/2 for H = 2..5, 3 beyond.
Rational design_offset_scale(int H);

// A random orthogonal matrix (the Cayley transform (I - S)(I + S)^{-1} of a
// skew matrix S with entries uniform on [-1, 1], exact in Q) times `norm`,
// rounded entrywise to the grid (1/den)Z. Its columns have norm `norm` up to
// the rounding, and its condition number is 1 up to the rounding.
QMat orthogonal_on_grid(Rng& rng, int d, const Rational& norm, long den);

// The scaled design: B = orthogonal_on_grid with column norm
// sqrt(d/3) * range/den (the mean column norm of the paper's uniform
// entries on [-range, range]/den), and Delta the same with
// design_offset_scale(H) times that norm. Draws that round to a singular
// matrix are redrawn (counted); Error(degenerate) after 64.
Draws draw_scaled(Rng& rng, int d, int H, const TokenSpec& tokens);

}  // namespace mhaq
