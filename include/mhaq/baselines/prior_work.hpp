// The prior-work baselines (Bhattamishra, Shah, Hahn, Kanade, arXiv
// 2601.16873; docs/math/baselines.md, proofs/17), reconstructed, so that mhaq can be
// compared with them on the same models through the same oracle interface.
//
//  * single head: [e_i] gives v_i (d queries); [u + e_j, e_j] gives
//    v_j + sigmoid(u^T W e_j) v^T u, whose sigmoid inverse is u^T w_j; d
//    random u per column give W. d^2 + d queries, none longer than 2 tokens.
//  * orthogonal: the same inside each head's subspace, whose basis P_h
//    (d x k_h, columns pairwise orthogonal across heads) is given: tokens
//    P_h y see only head h (the others score 0 and have values orthogonal to
//    P_h). Head h costs k_h^2 + k_h queries; A_h = P_h^T W_h P_h and
//    b_h = P_h^T v_h are lifted back by W_h = P_h G^-1 A_h G^-1 P_h^T,
//    v_h = P_h G^-1 b_h with G = P_h^T P_h (proofs/17).
//
// Rigor: the algorithm is the prior work's and has no check of its own
// assumptions. Exact mode is exact: on a model that meets them, every logit
// is a rational multiple of 1/L and the result is the truth by equality; on
// one that does not, a logit is the log of an element of Q(tau) that is no
// power of tau, which Field<QTau>::log reports (Error(inconsistent)) — a
// real-number run of the same algorithm returns wrong parameters instead.
// Balls enclose what the algorithm computes; floats are approx_.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "mhaq/stages/5-solve/solve.hpp"

namespace mhaq {

enum class BaselineMethod { single_head, orthogonal };
const char* baseline_method_name(BaselineMethod m);
BaselineMethod parse_baseline_method(const std::string& s);  // Error(usage)

struct BaselineOptions {
  BaselineMethod method = BaselineMethod::single_head;
  // orthogonal: one basis per head, d x k_h (columns are basis vectors).
  std::vector<QMat> bases;
  std::uint64_t seed = 1;
  TokenSpec tokens{5, 1};  // entries of the random u (the learner's draws)
  // The prior work's scaling (noisy answers): u is multiplied by 2^-s, the
  // least s <= max_scale_log2 with ||P u||_1 ||P e_j||_1 w_bound <= 1/2, so
  // every logit u^T W e_j lies in [-1/2, 1/2] when ||W||_max... <= w_bound
  // (the prior work's norm assumption). 0 = off (exact mode).
  int max_scale_log2 = 0;
  Rational w_bound{1};
};

template <class T>
struct BaselineResult {
  std::vector<LearnedHead<T>> heads;
  int redraws = 0;  // singular draws of U replaced before any query
};

// The queries the baseline sends, in order (non-adaptive: fixed before any
// answer); `learn_baseline` sends exactly these.
std::vector<Query> baseline_plan(int d, const BaselineOptions& o, int* redraws = nullptr);
// Queries per head basis of dimension k: k^2 + k.
long baseline_query_count(int d, const BaselineOptions& o);

// Runs the baseline through the oracle. Error(degenerate) when v^T u = 0 for
// a drawn u (the prior work needs v^T u != 0); Error(unable) when the field
// cannot decide a step; Error(inconsistent) in exact mode when a logit is not
// in (1/L)Z (the model violates the baseline's assumption).
template <ArithField F>
BaselineResult<typename F::value_type> learn_baseline(Oracle<typename F::value_type>& oracle, const BaselineOptions& o);

// Axis-aligned guessed bases for H heads in R^d: coordinates split into H
// contiguous blocks (sizes differ by at most one). Error(usage) unless 1 <= H <= d.
std::vector<QMat> axis_bases(int d, int H);
// Error(input) unless the bases have d rows, at least one column each, and
// columns pairwise orthogonal across heads and linearly independent within one.
void validate_bases(const std::vector<QMat>& bases, int d);

}  // namespace mhaq
