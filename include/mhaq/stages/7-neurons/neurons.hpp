// Stage 7 (transformer): the neurons from the path's jumps
// (docs/math/transformer.md, step 4; proofs/15, proofs/16). Along p -> -p every neuron switches exactly
// once, so the jumps satisfy
//
//     sum_j sigma_j jump_j = sum_j u_j U_{.,j} = E(p) + E(-p),
//
// (sigma_j = +1 for a neuron that switches on, -1 for one that switches off).
// With linearly independent jumps the sign vector is unique; then
// u_j U_{.,j} = sigma_j jump_j, and the sign of u_j follows from the side of
// its hyperplane p lies on. The neurons come out canonical: u_j in {+1, -1}.
#pragma once
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/stages/6-regions/regions.hpp"

namespace mhaq {

// The message of neurons_from_path's Error(degenerate).
inline constexpr const char* kUnresolvedCrossings =
    "the sign system sum_j sigma_j jump_j = E(p) + E(-p) has no solution with every sigma_j = +-1: the path took two neurons for one jump";

template <class T>
struct LearnedNeuron {
  T u;                           // +1 or -1
  std::vector<std::vector<T>> U;  // U[h][a]
};

// Error(not_identifiable) naming the condition when the jumps are linearly
// dependent and their signs are not unique; Error(degenerate) when the sign
// system has no +-1 solution (the path took two neurons for one jump; the
// learner decides whether they share a hyperplane); Error(unable) when a
// sign cannot be decided at this precision.
template <ArithField F>
std::vector<LearnedNeuron<typename F::value_type>> neurons_from_path(const F& fld, const PathSearch<typename F::value_type>& path,
                                                                     const QVec& p, int d);

}  // namespace mhaq

namespace mhaq {

// T(X) of learned parameters, in the field (the learner's own evaluation):
// heads W_h, canonical neurons (u_j, U_{h,j}).
template <ArithField F>
typename F::value_type evaluate_learned_transformer(const F& fld, const std::vector<Mat<typename F::value_type>>& W,
                                                    const std::vector<LearnedNeuron<typename F::value_type>>& neurons, const Query& q);

}  // namespace mhaq
