// Ball mode of the placed design (docs/math/designs.md#placed, proofs/37).
// The design runs on the answers' midpoints (analysis/placed_design.hpp) and
// only chooses the queries and a starting point. This certifies its last
// round from the answers as the oracle stated them (balls):
//  * each pair: 2H+1 of its samples on the grid (the subset whose first-order
//    error is least, a choice made in floating point), the square system
//    P + sum_h c_h / (1 + r_h t_k) = f(t_k) at those ratios, and Krawczyk's
//    test on it (Field<Ball>::certify with PairSystem at the given nodes): on
//    success the enclosure holds the pair's true poles and residues, in some
//    order;
//  * labels: at the first final token, the only choices of one residue per
//    pair that agree, for every other pair, with the linear relation
//    c(q) = (Delta^{-1} delta_q)^T c of residues must be H and use each
//    residue once; they are then the true heads. The other pairs are labelled
//    by the residues -delta^T v_h these heads predict (a unique matching);
//  * W_h b_j = Delta_j^{-T} log r_h(., j), W_h = [W_h b_j] B^{-1} and
//    v_h = -Delta_j^{-T} c_h(., j) (intersected over the final tokens), with
//    the offsets' and tokens' inverses exact in Q. With biases (d + 1 final
//    tokens) the same columns are W_h b_j + c_h, [W_h c_h] = [W_h b_j +
//    c_h] A^{-1} with A = [B; 1 ... 1], and beta = f([b_1]) - v^T b_1 from
//    the ball of the answer to [b_1].
// Every step is decided on the balls; a step that cannot be decided throws
// Error(unable) (with what to change), a contradiction Error(inconsistent).
#pragma once
#include <optional>
#include <vector>

#include "mhaq/analysis/placed_design.hpp"
#include "mhaq/stages/3-fit/pair_fit.hpp"

namespace mhaq {

struct PlacedCertified {
  std::vector<LearnedHead<Ball>> heads;  // with biases each with its c_h
  std::optional<Ball> beta;              // with biases: f([b_1]) - v^T b_1
  double worst_pair_log2_rel = -1e9;  // the widest certified pole or residue, relative (log2)
  double max_rel_radius_log2 = -1e9;  // the widest output ball relative to the largest |midpoint| of its head's W (or v)
};

// Certifies the last round of `res` (H heads); the working precision is the
// caller's.
PlacedCertified certify_placed(const PlacedResult& res, int H);

// The labelling search at the first final token (proofs/37 (3) and (4)):
// every choice pick[i] of one residue of each of its d pairs `first` whose
// prediction lambda_q^T c_pick (lam[q] = Delta^{-1} delta_q, balls of
// rationals) meets a residue of every check pair q, in lexicographic order,
// stopping after 4H + 1. A depth-first search over pick[0], pick[1], ...:
// the first 4 checks prune by interval hulls of the picks still open; with
// `sparse`, every other check whose lambda is exactly zero from index i on is
// tested at depth i (its prediction is then known), else at the leaf. Both
// are sound prunes of the same leaf test, so `sparse` changes `nodes` (the
// nodes visited) and not `found`. The search stops (`stopped`, `found`
// incomplete) when it would visit more than `node_limit` nodes.
struct PlacedLabelSearch {
  std::vector<std::vector<int>> found;
  long nodes = 0;
  bool stopped = false;
};
PlacedLabelSearch placed_label_search(const std::vector<PairFit<Ball>>& first, const std::vector<std::vector<Ball>>& lam,
                                      const std::vector<const PairFit<Ball>*>& checks, int H, bool sparse,
                                      long node_limit);

// The 2H+1 samples (indices into the grid, increasing) a pair is certified
// from: of the candidates (evenly spread index sets, then single moves), the
// one whose first-order relative error bound on the poles and residues at
// the approximation (P, r, c) is least, with answer errors `err` (doubles:
// the choice only).
std::vector<int> placed_subset(const std::vector<Rational>& t, const std::vector<double>& err, const Mpfr& P, const std::vector<Mpfr>& r,
                               const std::vector<Mpfr>& c);

}  // namespace mhaq
