// Stage 5: the canonical heads from the labelled base pairs
// (docs/math/schedules.md, proofs/03): with L_h(i,j) = log r_h(i,j) = delta_i^T W_h b_j and
// C_h(i) = c_h(i,1) = -v_h^T delta_i,
//     W_h = Delta^{-T} L_h B^{-1},      v_h = -Delta^{-T} C_h,
// with the inverses exact in Q (the learner's own choices) applied in the field.
// With biases (docs/math/biases.md) log r_h(i,j) = delta_i^T (W_h b_j + c_h)
// over d + 1 final tokens, and [W_h c_h] = Delta^{-T} L_h [B; 1 ... 1]^{-1}.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/arith/token_hash.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/stages/1-oracle/query_log.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "mhaq/stages/3-fit/pair_fit.hpp"

namespace mhaq {

template <class T>
struct LearnedHead {
  Mat<T> W;
  std::vector<T> v;
  std::vector<T> c = {};  // the score's term c^T x_i; empty without biases
};

// `labelled[plan.base_index(i, j)]` holds base pair (i, j) with heads in the
// global order; H heads are solved for.
// The heads are solved on up to `threads` threads, each into its own slot.
// delta_inverse: Delta^{-1} when the caller has it already (else inverted here).
// The rank schedule completes each head's log-poles from its skeleton first
// (5-solve/low_rank.hpp, whose errors it throws) and stores the detected
// ranks in `ranks` when given.
template <ArithField F>
std::vector<LearnedHead<typename F::value_type>> solve_heads(const F& fld, const Plan& plan,
                                                            const std::vector<PairFit<typename F::value_type>>& labelled, int H,
                                                            int threads = 1, const QMat* delta_inverse = nullptr,
                                                            std::vector<int>* ranks = nullptr);

struct IdPairHash {
  std::size_t operator()(const std::pair<int, int>& p) const noexcept {
    return std::hash<long long>()((static_cast<long long>(p.first) << 32) ^ static_cast<unsigned>(p.second));
  }
};

// f(X) of heads in the field (the attention formula of docs/math/model.md,
// with weights e^{s_i - s_N}): the learner's own evaluation of what it found.
// A head's c enters its scores, s_i = x_i^T (W_h x_N + c_h); beta, when
// given, is added last.
template <ArithField F>
typename F::value_type evaluate_heads(const F& fld, const std::vector<LearnedHead<typename F::value_type>>& heads, const Query& q,
                                      const typename F::value_type* beta = nullptr);

// evaluate_heads over many queries built from few distinct tokens (the
// plan's answers, for the self-check). Every number evaluate_heads forms from
// tokens alone is formed once and kept: per final token x_N and head, W_h x_N
// and s_N = x_N^T W_h x_N (d^2 operations); per distinct token x, v_h^T x; per
// distinct pair (x, x_N) of a query, x^T W_h x_N and its weight's exponential
// e^{x^T W_h x_N - s_N} (the same for every count of x). A query then costs
// O(H) field operations per run of equal tokens (the weights and the sums). Each
// kept number comes from the same operations in the same order as in
// evaluate_heads, so every value is identical to it (bit for bit in the float
// fields, the same balls, the same exact numbers). A query with a token or a
// pair not given to the constructor is evaluated by evaluate_heads itself.
template <ArithField F>
class HeadEvaluator {
 public:
  using T = typename F::value_type;
  HeadEvaluator(const F& fld, const std::vector<LearnedHead<T>>& heads, const QueryLog& queries, int threads, const T* beta = nullptr);
  T operator()(const Query& q) const;
  // fld.equal((*this)(q), answer), decided by equal_ratio_sum on the heads'
  // terms (arith/ratio_sum.hpp): the same decision, without forming the sum
  // where the field has a cheaper test.
  Truth matches(const Query& q, const T& answer) const;
  // matches(q, answer) for q = queries[i] of the constructor's list, with the
  // tokens' numbers looked up when the list was read (no hashing of q)
  Truth matches_at(size_t i, const Query& q, const T& answer) const;

 private:
  int id(const QVec& x) const;  // -1 when not kept
  // the kept numbers of q's tokens: false when some are not kept
  bool kept(const Query& q, std::vector<int>& xs, std::vector<const std::vector<T>*>& sx) const;
  // head h's numerator and denominator for q, from the kept numbers of its runs
  void head_parts(const Query& q, size_t h, const int* xs, const std::vector<T>* const* sx, T& num, T& den) const;
  Truth decide(const Query& q, const int* xs, const std::vector<T>* const* sx, const T& answer) const;
  const F& fld_;
  const std::vector<LearnedHead<T>>& heads_;
  const T* beta_;                                 // null: none
  std::unordered_map<QVec, int, TokenHash> ids_;  // distinct tokens
  std::vector<std::vector<T>> vx_;             // per token id, per head: v_h^T x
  std::map<int, std::vector<T>> sN_;           // per final token id, per head: s_N
  // per (token, final token), per head: exp(x^T W_h x_N - s_N)
  std::unordered_map<std::pair<int, int>, std::vector<T>, IdPairHash> sx_;
  // per query of the constructor's list, its runs' token ids and kept
  // exponentials at [at_[i], at_[i + 1]) (the map's nodes do not move)
  std::vector<size_t> at_;
  std::vector<int> flat_x_;
  std::vector<const std::vector<T>*> flat_sx_;
  std::vector<T> counts_;  // the counts 0..max in the field
};

}  // namespace mhaq
