// Recovered heads against the canonical truth: the comparison each
// arithmetic's run makes (run/arith_policy.hpp), the golden files and the
// baselines.
#pragma once
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/stages/learner.hpp"

namespace mhaq {

// Exact recovered heads equal the canonical heads of the truth (entries
// equal in Q), up to permutation. With biases the heads' c and beta are
// compared too: a head without c, or no beta (null), stands for zero.
bool exact_heads_match(const std::vector<LearnedHead<QTau>>& got, const Model& canon, const QTau* beta = nullptr);

// Ball recovered heads contain the canonical heads of the truth (every entry
// contains the true rational, times sqrt(root) for an irrational scale),
// under some one-to-one assignment; c and beta as in exact_heads_match.
bool ball_heads_contain(const std::vector<LearnedHead<Ball>>& got, const Model& canon, const Ball* beta = nullptr);

// The baseline's relative error ||W - W'||_F / ||W||_F + ||v - v'|| / ||v||
// (a norm that is 0 counts as 1, so heads with W = 0 are measured by the
// absolute error), worst head, under the best assignment of recovered to true
// heads (bottleneck matching); log2, +inf when the head counts differ. With
// biases W stands for [W c], and |beta - beta'| / |beta| (1 when beta is
// zero) counts as one more term of the maximum.
template <class T>
double max_rel_error_log2(const std::vector<LearnedHead<T>>& got, const Model& canon, const T* beta = nullptr);

}  // namespace mhaq
