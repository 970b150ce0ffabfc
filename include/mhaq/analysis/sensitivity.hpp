// First-order sensitivity of the recovered parameters to the oracle's answers
// (claim 4; docs/math/conditioning.md, proofs/11).
//
// Parameters are the canonical heads' entries, in head order: for head h the
// d*d entries of W_h (row-major), then the d entries of v_h; with biases
// (docs/math/biases.md) then the d entries of c_h, measured with W_h (s_k =
// ||[W_h c_h]||_F), and after every head beta (s_k = |beta|). The error of a
// recovery is measured entrywise against a per-head scale:
//
//     err = max over heads h, entries k of |theta'_k - theta_k| / s_k,
//     s_k = ||W_h||_F for entries of W_h,  s_k = ||v_h||_2 for entries of v_h
//     (a norm that is zero counts as 1: absolute error, as max_rel_error).
//
// J = d theta / d answers is not derived by hand: the learner itself runs on
// jets (arith/jet.hpp) over the answers, so J comes from the same stages that
// learn (pair fits by the implicit function theorem, the chaining of f(0), the
// labelling and the final solves). With it:
//
//   kappa     = max_k sum_j |J_kj| / s_k: err <= kappa * eps + O(eps^2) when
//               every answer is off by at most eps, and the sign pattern
//               sign(J_{k*, j}) of the maximising row attains it to first order;
//   kappa_rel = max_k sum_j |J_kj| |f_j| / s_k: the same per unit *relative*
//               answer error (worst case);
//   kappa_rms = max_k sqrt(sum_j (J_kj f_j)^2) / s_k: per unit relative error
//               when the answer errors are independent (typical of rounding).
//
// Rigor: sensitivity_from_model runs the jets over Arb balls at increasing
// precision until every row sum is certified to relative accuracy 2^-40; the
// stored doubles are the midpoints (approx_, accurate to about 12 digits).
// sensitivity_from_answers is the estimate a black-box user can compute from
// the answers of one run (approx_).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mhaq/arith/jet.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/oracle/model_oracle.hpp"
#include "mhaq/stages/learner.hpp"

namespace mhaq {

struct Sensitivity {
  int d = 0, H = 0;
  long columns = 0;  // one per answer, in the order sent
  long bits = 0;     // precision at which the row sums were computed
  long derivative_bits = 0;  // precision of the derivative parts: 53 for double (proofs/33), else `bits`
  double kappa_err_rel = 0;  // with double derivatives: the largest relative error bound of kappa, kappa_rel, kappa_rms, pair_cond
  std::vector<double> J;           // rows() x columns, row-major
  std::vector<double> scale;       // s_k per row
  std::vector<double> answer_abs;  // |f_j| per column
  double kappa = 0, kappa_rel = 0, kappa_rms = 0;
  long kappa_row = 0;              // the row attaining kappa
  double pair_cond = 0;            // max over base pairs of ||d(P,r,c)/d(samples)||_inf (a pair fit's own amplification)

  bool bias = false;  // rows for c_h and beta follow
  int stride() const { return d * d + d + (bias ? d : 0); }
  int rows() const { return H * stride() + (bias ? 1 : 0); }
  int row_W(int h, int i, int j) const { return h * stride() + i * d + j; }
  int row_v(int h, int i) const { return h * stride() + d * d + i; }
  int row_c(int h, int i) const { return h * stride() + d * d + d + i; }
  int row_beta() const { return H * stride(); }
  // sign(J[kappa_row][j]) per answer (+1 where the entry is zero): the answer
  // perturbation eps * signs that attains kappa to first order.
  std::vector<signed char> worst_signs() const;
};

// J at the true answers of `canon` for the learner with options `lo` (known
// H = canon's head count), rows in canon's head order. `token_den` is the
// oracle's token grid. constant_answer >= 0 (proofs/11's broken variant only)
// treats that answer as a constant.
Sensitivity sensitivity_from_model(const Model& canon, const LearnOptions& lo, long token_den, int constant_answer = -1);

// J of heads that some algorithm computed on jets over `answers` (the q-th
// answer the variable q; e.g. a baseline replayed on a JetOracle): rows in
// the heads' order, kappa, kappa_rel and kappa_rms as above.
template <class T>
Sensitivity sensitivity_of_jet_heads(const Field<T>& field, int d, const std::vector<LearnedHead<Jet<T>>>& heads, const std::vector<T>& answers);

// J at a run's own answers (no model): the learner replayed on jets over the
// recorded queries and answers; rows in the run's head order. Without
// `reference` the replay runs at the current working precision, the run's
// own. With `reference` (the run's own heads, of a float run at run_bits) it
// first runs at low_bits, 2 low_bits, ... below run_bits, on the answers
// rounded to that precision, and
// takes the first replay whose heads agree with the reference to
// kEstimateAgreeBits bits (estimate_agrees): the same decisions, and values
// with that many good bits, from which kappa needs a few correct bits, not the
// run's precision (proofs/32-low-precision-estimate.md). S.bits tells which
// precision the jets ran at.
// Over MPFR with `reference` and `double_derivs`, each such replay (and the
// one at run_bits) first carries its
// derivatives in double with running error bounds, and is taken when the
// bounds move kappa, kappa_rel, kappa_rms and pair_cond by at most
// 2^-kEstimateDerivBits relative; otherwise the same replay with MPFR
// derivatives (proofs/33-double-derivative-estimate.md).
// With a reference (the float judge's estimate) S.J is left empty: the
// estimate needs the kappas, which are row sums, not J itself.
// Without `with_pair_cond` the pair fits are not differentiated again for
// pair_cond (left 0, and not part of the double derivatives' acceptance):
// for callers that use only kappa, kappa_rel and kappa_rms.
// With `memo` (the run's own pair fits, fit_memo, made at run_bits) and a
// reference, the first replay runs at run_bits and takes every pair fit the
// run made from the memo instead of computing it again; it is taken when its
// heads equal the reference bit for bit (proofs/35-replay-reuses-fits.md),
// and otherwise the replays above follow.
constexpr long kEstimateBits = 128;
constexpr long kEstimateAgreeBits = 32;
constexpr long kEstimateDerivBits = 8;
template <class T>
Sensitivity sensitivity_from_answers(const Field<T>& field, int d, const LearnOptions& lo, const std::vector<Query>& queries,
                                     const std::vector<T>& answers, const std::vector<LearnedHead<T>>* reference = nullptr, long run_bits = 0,
                                     long low_bits = kEstimateBits, bool double_derivs = true, bool with_pair_cond = true,
                                     const FitMemo<T>* memo = nullptr);

// The same estimate composed from the run itself instead of replayed
// (proofs/38-composed-estimate.md): each labelled base pair's derivatives in
// closed form (proofs/30) at the run's values, chained through f(0) and the
// final solves; J itself is never formed (S.J empty). The row sums over a
// pair's own answers are entries of |Delta^{-T}| P_h |B^{-1}|, an O(d^3)
// product per head; only the answers that every chained f(0) reads are
// summed with their signs, O(d^4 + H d^3) per head. Every number is a double
// with a running error bound: the result equals the replay at the run's
// precision up to those bounds (S.kappa_err_rel, derivative_bits = 53), and
// is refused (nullopt) when they exceed 2^-kEstimateDerivBits of a kappa, as
// the replay's double derivatives are. Also nullopt where the learner took
// another path: the compact schedule, oversampling, a bound on H, repairs.
// With `with_pair_cond`, pair_cond over the base pairs as well. Without
// `chain_f0` (proofs/38's broken variant only) the chained f(0) of the pairs
// at b_2..b_d count as constants.
template <class T>
std::optional<Sensitivity> composed_sensitivity(const Field<T>& field, const LearnOptions& lo, const LearnResult<T>& run, const std::vector<T>& answers,
                                                bool with_pair_cond = false, bool chain_f0 = true);

// A head's scale s_k from its entries (||W_h||_F or ||v_h||_2, formed in
// balls at the working precision): 1 when it is zero to the working precision.
double parameter_scale(const std::vector<Ball>& entries);

// The pair fits of a run learned with keep_fit_samples, by their samples, at
// the current working precision (the run's).
template <class T>
FitMemo<T> fit_memo(const LearnResult<T>& run);

// Whether every entry of the heads `got` (values of jets, in the reference's
// head order) is within 2^-bits of the reference's entry, relative to the
// reference head's largest |entry| of W (of v), or absolutely where that is
// zero; false when the head counts or sizes differ.
template <class T>
bool estimate_agrees(const Field<T>& field, const std::vector<LearnedHead<Jet<T>>>& got, const std::vector<LearnedHead<T>>& reference, long bits);

// log2 of the largest first-order relative error of a pair's fit (P, r, c)
// over every pair of the plan, when every answer is off by a relative 2^acc,
// from the run's own answers (the first column's limits chain f(0)).
// +inf when some base pair cannot be fitted at all. It tells a float run
// whether its tolerance decisions can be trusted at this precision.
template <class T>
double pair_error_log2(const Field<T>& field, const Plan& plan, const std::vector<T>& answers, int H, double acc_log2);

// log2 of the entrywise error metric above (-inf when zero); heads are
// matched to the truth by the bottleneck assignment (stages/4-match). approx_
// for floats; for balls the midpoints are used. +inf when the head counts
// differ. (log2, because errors at 1024 bits underflow doubles.)
template <class T>
double param_error_log2(const std::vector<LearnedHead<T>>& got, const Model& canon);

// log2 of a certified upper bound of sup |x - theta_k| / s_k over every x in
// the balls, under the assignment of recovered to true heads (by containment)
// that minimises it. Returns false when no assignment contains the truth.
bool certified_param_error_log2(const std::vector<LearnedHead<Ball>>& got, const Model& canon, double& bound);

// The mean-value certified bound (claim 4, proofs/31). The learner runs on
// jets over balls whose answers are the envelope balls Y of `noise` (every
// value the approximate oracle may return, around the truth). The values
// then enclose every intermediate quantity over Y and the gradients enclose
// the Jacobian J(y') at every y' in Y, so for any answers y + e within the
// oracle's perturbation bounds u_j (the envelope radii),
//     |theta_k(y + e) - theta_k| <= sum_j sup_Y |J_kj| u_j
// by the mean-value theorem along the segment from y to y + e (Y is convex
// and every step of the learner is certified smooth on it). Divided by the
// true head's scale (a lower bound), maximised over entries: the bound on
// the entrywise error metric above, for every perturbation at once. Because
// J varies by O(eps) over Y, it is (1 + O(eps)) kappa eps, not the chained
// enclosure of a plain ball run.
struct MeanValueBound {
  bool ok = false;
  double log2_bound = 0;  // log2 of the certified bound on the error metric
  std::string why;        // when !ok: the step that could not be certified
};
MeanValueBound certified_mean_value_bound(const Model& canon, const LearnOptions& lo, long token_den, const OracleNoise& noise);

// log2 of the certified relative radius: max over entries of rad_k / (lower
// bound of the head's scale computed from the balls themselves). Needs no
// truth: it bounds the relative error of the midpoints, and it is what
// --target-error certifies. +inf when a scale is not certainly positive.
double certified_relative_radius_log2(const std::vector<LearnedHead<Ball>>& got);

}  // namespace mhaq
