// Query designs beyond the paper's (docs/math/designs.md): the first-order prediction of
// a design's amplification from an estimate of the heads, and the adaptive
// `tuned` design that chooses B and Delta from a pilot run's answers.
//
// The learner-side rule holds by types: choose_tuned_design gets an
// Oracle<T>& and nothing else; its estimate of the heads comes from the
// pilot's answers (a run of the learner itself), never from a model.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/stages/2-schedule/design.hpp"
#include "mhaq/stages/learner.hpp"

namespace mhaq {

// An estimate of the canonical heads (approx_): W_h row-major, v_h.
struct HeadsEstimate {
  int d = 0;
  std::vector<std::vector<double>> W, v;
  int heads() const { return static_cast<int>(W.size()); }
};

// approx_ first-order prediction, for the paper schedule run with final
// tokens B and offsets Delta on a model equal to `est`, of
//   kappa_rms = max_k sqrt(sum_j (J_kj f_j)^2) / s_k
// (analysis/sensitivity.hpp), composed from the base pairs' own Jacobians, the
// chaining of f(0) through the limits of the first column and the final
// solves W = Delta^{-T} L B^{-1}, v = -Delta^{-T} C (proofs/30). Links only
// label heads, so they do not enter. log2; +inf when B or Delta is singular
// or a pair's Jacobian is (colliding poles, a zero residue).
double predicted_log2_kappa_rms(const HeadsEstimate& est, const QMat& B, const QMat& Delta);
// The same composition's kappa = max_k sum_j |J_kj| / s_k (log2).
double predicted_log2_kappa(const HeadsEstimate& est, const QMat& B, const QMat& Delta);

// The prediction's building block, a base pair's first-order sensitivities
// d(log r_h, c_h, P)/d f(k) at the estimate, by the closed form of proofs/30
// (`closed`) or by inverting the pair's Jacobian in MPFR (the check of it).
// Row-major [h][k] for log r and c, then P: 2H+1 rows of 2H+1. Empty when the
// pair is singular there.
std::vector<std::vector<double>> pair_sensitivities(const HeadsEstimate& est, const QVec& delta, const QVec& b, bool closed);

struct TunedOptions {
  int H = 1;                   // the learner's H (or the bound H0 when heads_is_bound)
  bool heads_is_bound = false;
  std::uint64_t seed = 1;      // the pilot's draws and the search's candidates
  TokenSpec tokens;            // the grid of the design's entries (den) and its scale (range/den)
  int threads = 1;             // pilot fits and search branches; the result does not depend on it
  long pilot_bits = 128;       // the pilot's MPFR precision (the answers' own precision)
  double answer_acc_log2 = 0;  // the answers' accuracy (log2, relative); 0: -pilot_bits
  int candidates = 0;          // random starts scored (0: the default)
  int steps = 0;               // local-search steps in all (0: the default)
};

struct TunedDesign {
  Draws draws;                     // the chosen B and Delta (on the grid 1/tokens.den)
  long pilot_queries = 0;          // oracle queries the pilot spent
  std::string pilot_status;        // "ok", or why the pilot did not give an estimate
  double log2_kappa_predicted = 0; // predicted log2 kappa_rms of the chosen design, on the estimate
  double log2_kappa_predicted_worst = 0;  // the same for kappa (worst-case sign pattern, row sums of |J|)
  double log2_kappa_start = 0;     // the same for the scaled design the search started from
  int evaluations = 0;             // predictions computed by the search
  int pilot_heads = 0;             // heads in the pilot's estimate
  double pilot_acc_log2 = 0;       // the decision accuracy at which the pilot's run succeeded
  bool searched = false;           // false: the pilot failed and `draws` is the scaled design
  HeadsEstimate estimate;
};

// The pilot: the lean schedule with the scaled design, run by the learner in
// MPFR on the oracle's answers (their midpoints, at the working precision,
// with decisions judged at the accuracy the pilot can reach), gives an
// estimate of the heads; then a seeded search over B and Delta minimises
// predicted_log2_kappa_rms on that estimate. If the pilot fails, the scaled
// design is returned (pilot_status says why) and its queries still count.
// Deterministic in (answers, options), whatever `threads`.
template <class T>
TunedDesign choose_tuned_design(Oracle<T>& oracle, const TunedOptions& opt);

// The design search alone, on a given estimate (exposed for tests and benches).
TunedDesign search_design(const HeadsEstimate& est, const TunedOptions& opt);

}  // namespace mhaq
