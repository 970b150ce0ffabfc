// Stage 6 (transformer): region values and the crossings of a path.
//
// For a final token x, let S(x) be the set of neurons active at x
// (ubar_j^T x > 0). Along a pair [(x + delta) x k, x] with delta small, no
// neuron changes sign, so the transformer is the attention model with value
// vectors e_h(S) = sum_{j in S} u_j U_{h,j} (docs/math/transformer.md, proofs/14):
//
//     f(k) - f(0) = sum_h alpha_h(k) e_h^T delta,   alpha_h(k) = r_h k / (1 + r_h k),
//
// with the poles r_h = e^{delta^T W_h x} known from the attention part. H
// samples per offset give the H numbers e_h^T delta; d offsets give every
// e_h(S(x)); one more sample per offset checks that no neuron flipped.
//
// A path p -> q -> -p crosses every neuron's hyperplane exactly once
// (proofs/15). Region values are constant between crossings and jump by
// +-u_j U_{.,j} at neuron j's; a jump's hyperplane normal is the sum of its
// head blocks, which predicts where it crosses.
#pragma once
#include <string>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"

namespace mhaq {

// e[h][a]: the region's value vector of head h (H x d), flattened head-major by flat().
template <class T>
struct RegionValues {
  std::vector<std::vector<T>> e;
  std::vector<T> flat() const {
    std::vector<T> out;
    for (const auto& v : e) out.insert(out.end(), v.begin(), v.end());
    return out;
  }
};

struct RegionDesign {
  QMat Delta;           // d offsets (columns), the learner's own, invertible
  long grid_den = 1;    // tokens lie in (1/grid_den)Z
  // Probe resolution: probes sit 4/probe_den from a predicted crossing (in
  // the path's largest coordinate). It must be coarse next to the offsets
  // (entries 1/16), or a probe's pairs straddle the hyperplane at every
  // scale-up; a finer token grid (floats and balls, 2^-20) does not refine it.
  long probe_den = 16;
  int max_scale_ups = 4;  // a pair whose extra sample disagrees: the probe point is doubled (same region, relatively smaller offsets)
  int max_probes = 400;   // region evaluations the path search may spend
  // The single-crossing test (proofs/22): a crossing is accepted only when
  // single tokens within `window` radians of its predicted hyperplane, on
  // both sides, show its kink: in the path's plane at the predicted crossing
  // and, for d >= 3, far from the path along the hyperplane. Off: the close
  // probes alone decide (a rule that merges two hyperplanes a few degrees
  // apart into one jump; kept as the broken variant of proofs/22).
  bool single_crossing_test = true;
  Rational window{1, 4096};
  // Probe size: 0 evaluates region values at each point where the path puts
  // it. Positive: at 2^-k times the point and its offsets, k the least with
  // every coordinate at most probe_size (the same cone, the same relative
  // offsets, proofs/14). A point far from the origin then keeps its poles
  // e^{delta^T W_h x} near 1 instead of spreading them to e^{+-10} and
  // beyond, where the pair system is nearly singular, and an external
  // oracle is asked only tokens of about the size its stated error covers.
  Rational probe_size{0};
  // Offsets fitted to each point, so that they separate the poles of the two
  // heads whose scores lie closest there (off: Delta everywhere).
  bool fitted_offsets = false;
};

// Region values at final token x, from 1 + d(H+1) queries. Throws
// Error(not_identifiable) when the extra samples disagree at every scale (a
// neuron whose pre-activation does not follow the final token), and
// Error(unable | degenerate) from the solves.
template <ArithField F>
RegionValues<typename F::value_type> region_values(const F& fld, Oracle<typename F::value_type>& oracle,
                                                   const std::vector<Mat<typename F::value_type>>& W, const QVec& x, const RegionDesign& design);

// One crossing of the path: the jump of the region values from `before` to
// `after` (grid points on either side of one hyperplane).
template <class T>
struct Crossing {
  std::vector<T> jump;  // E(after) - E(before), H*d entries
  QVec before, after;
  QVec normal;                  // the predicted hyperplane's normal sum_h jump_h, rounded to a rational (reporting)
  double resolution_deg = -1;   // two hyperplanes further apart than this are never merged into this jump (-1: not tested)
};

template <class T>
struct PathSearch {
  std::vector<Crossing<T>> crossings;  // in path order
  RegionValues<T> start, end;          // at p and at -p
  int probes = 0;                      // region evaluations
  int undecided_flats = 0;             // intervals taken as crossing-free on an undecided equality
  int test_probes = 0;                 // of `probes`, those spent by the single-crossing test
  double resolution_deg = -1;          // the coarsest certified resolution over the crossings (-1: none tested)
};

// Finds every crossing of the path p -> q -> -p by predicted-crossing
// bisection (proofs/15), each one certified by the single-crossing test
// (proofs/22). neurons_told > 0 stops as soon as that many crossings are
// found (fewer are the caller's to judge). Error(degenerate) names the crossing when two
// hyperplanes cannot be told apart on this path (closer together along it
// than the token grid resolves, or meeting near it), never not_identifiable
// for that reason.
template <ArithField F>
PathSearch<typename F::value_type> search_path(const F& fld, Oracle<typename F::value_type>& oracle,
                                                 const std::vector<Mat<typename F::value_type>>& W, const QVec& p, const QVec& q,
                                                 const RegionDesign& design, int neurons_told);

// After the learner's transformer misses an answer: whether every crossing's
// jump still kinks on one hyperplane at angle 2^-log2_window from the
// predicted one, on single tokens at the crossing and, for d >= 3, away from
// the path along the hyperplane (second differences across it equal the
// jump's kink exactly). Yes: the neurons merged into each jump lie on one
// hyperplane to within that angle. It asks 3 single tokens per test point;
// its "yes" is a decision only where the field's equality is one (exact,
// balls): the learner asks it only when told so.
template <ArithField F>
Truth crossings_on_one_hyperplane(const F& fld, Oracle<typename F::value_type>& oracle, const std::vector<Crossing<typename F::value_type>>& cs, int H,
                                  const RegionDesign& design, int log2_window);

}  // namespace mhaq
