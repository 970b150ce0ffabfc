// Stage 5, heads of bounded rank (docs/math/low-rank.md, proofs/41). The
// rank schedule knows a head's log-pole matrix M_h = Delta^T W_h B, entry
// (i, j) = log r_h(i, j) = delta_i^T W_h b_j, on the rows i < R and the
// columns j <= R only (0-based). M_h has the rank of W_h. When that rank is
// k <= R, a generic draw gives the R x (R + 1) block M[I, J'] (I = {0..R-1},
// J' = {0..R}) the same rank k, and any k rows I_k and columns J_k of it with
// a nonsingular k x k block give every entry by the skeleton
//     M = M[:, J_k] M[I_k, J_k]^{-1} M[I_k, :].
// The columns J' hold one more than R: a head of rank above R has columns J'
// of rank R + 1 (for a generic draw), which no skeleton of rank at most R
// reproduces, so a bound that does not hold is reported, never turned into
// heads.
#pragma once
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"

namespace mhaq {

struct SkeletonRank {
  int rank = 0;                 // the detected rank k (exact: exact; balls: certified; floats: judged)
  std::vector<int> rows, cols;  // I_k and J_k, in the order pivoted
};

// The rank of A by Gaussian elimination with complete pivoting: each pivot is
// the entry of largest |midpoint| among those the field decides nonzero
// (floats: relative to A's largest entry, at the field's tolerance).
// `decided` is false when the elimination stopped with an entry left that is
// neither certainly zero nor certainly nonzero (balls never certify a zero).
struct PivotedRank {
  int rank = 0;
  bool decided = true;
  std::vector<int> rows, cols;
};
template <ArithField F>
PivotedRank pivoted_rank(const F& fld, Mat<typename F::value_type> A);

// M: d x d with the head's log-poles at every (i, j) the plan asks
// (plan.asked); the other entries are set from the skeleton. `head` (0-based)
// names the head in messages. Throws
//   Error(inconsistent) when the head's rank certainly exceeds plan.rank
//     (its columns 0..R have rank R + 1; the message holds rank_bound_marker());
//   Error(degenerate) when the asked entries fit no skeleton of the detected
//     rank but the bound may hold (the draw lowered the block's rank);
//   Error(unable) when the field cannot decide the rank (balls: a rank below
//     the bound is an equality, which balls never certify; floats: a pivot
//     inside the tolerance margin), or cannot solve the k x k block.
template <ArithField F>
SkeletonRank complete_low_rank(const F& fld, const Plan& plan, Mat<typename F::value_type>& M, int head);

// Words every rank-above-bound message holds (the run's remedy: raise --rank).
inline const char* rank_bound_marker() { return "above the rank bound"; }

}  // namespace mhaq
