// Stage 5: the canonical heads from the labelled base pairs
// (docs/math/schedules.md, proofs/03): with L_h(i,j) = log r_h(i,j) = delta_i^T W_h b_j and
// C_h(i) = c_h(i,1) = -v_h^T delta_i,
//     W_h = Delta^{-T} L_h B^{-1},      v_h = -Delta^{-T} C_h,
// with the inverses exact in Q (the learner's own choices) applied in the field.
#pragma once
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "mhaq/stages/3-fit/pair_fit.hpp"

namespace mhaq {

template <class T>
struct LearnedHead {
  Mat<T> W;
  std::vector<T> v;
};

// `labelled[plan.base_index(i, j)]` holds base pair (i, j) with heads in the
// global order; H heads are solved for.
template <ArithField F>
std::vector<LearnedHead<typename F::value_type>> solve_heads(const F& fld, const Plan& plan,
                                                            const std::vector<PairFit<typename F::value_type>>& labelled, int H);

// f(X) of heads in the field (the attention formula of docs/math/model.md,
// with weights e^{s_i - s_N}): the learner's own evaluation of what it found.
template <ArithField F>
typename F::value_type evaluate_heads(const F& fld, const std::vector<LearnedHead<typename F::value_type>>& heads, const Query& q);

}  // namespace mhaq
