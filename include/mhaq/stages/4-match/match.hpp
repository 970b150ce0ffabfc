// Stage 4: matching heads. Each pair returns its heads in no particular order;
// link pairs (or residues, in the lean schedule) put them in one order
// (docs/math/schedules.md, proofs/03). One assignment routine serves every
// place that matches heads: labelling, the comparison with a known truth,
// and the error metrics.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "mhaq/stages/3-fit/pair_fit.hpp"

namespace mhaq {

// Perfect matchings between heads h = 0..n-1 of a reference list and heads
// g = 0..n-1 of another, using only pairs (h, g) whose compatibility is not
// Truth::no.
//   none:    no such matching;
//   unique:  exactly one; perm[h] = g;
//   several: more than one; `certain` says whether two of them use only
//            Truth::yes entries (a certain ambiguity), perm holds one of them.
// Decided by augmenting paths and an alternating-cycle test, in O(n^3).
struct Assignment {
  enum class Kind { none, unique, several } kind = Kind::none;
  std::vector<int> perm;
  bool certain = false;
};
Assignment match_heads(int n, const std::function<Truth(int, int)>& compat);

// Bottleneck matching: the perfect matching minimising the largest cost
// cost[h][g] (+inf forbids the pair); empty when none exists. `value`
// receives that largest cost.
std::vector<int> bottleneck_matching(const std::vector<std::vector<double>>& cost, double* value = nullptr);

// The labelling relation of one step: is head h of `ref` head g of `cur`?
// (link = nullptr for Relation::residue.) Assignment::unique is the answer;
// the caller decides what none / several mean.
template <ArithField F>
Assignment label_assignment(const F& fld, const PairFit<typename F::value_type>& ref, const PairFit<typename F::value_type>& cur,
                            const PairFit<typename F::value_type>* link, Relation rel);

// Repair of a degenerate base pair from its link (learner.hpp, Repair): the
// link's poles are r_h(ref) r_h(target); its residues are c_h(ref) + c_h(target)
// (within) or c_h(ref) (across). Within links tie each link head to a head of
// `ref` through the target's residues: `known_c` (the same offset at another
// final token, in the global order) when it is not empty; otherwise the
// target's own degenerate fit `partial` (its visible heads' poles and
// residues, a head with zero residue being invisible there). Returns the
// target's fit in the order of `ref` (r_h = link pole / ref pole, c_h = its
// residue, P = `P`) and Assignment::unique in `a`; otherwise `a` says why not.
// Relation::across_affine (biases): link poles r_h(ref)^2 / r_h(target), so
// the target's are r_h(ref)^2 / link pole.
template <ArithField F>
PairFit<typename F::value_type> derive_from_link(const F& fld, const PairFit<typename F::value_type>& ref, const PairFit<typename F::value_type>& link,
                                                 const std::vector<typename F::value_type>& known_c, const PairFit<typename F::value_type>& partial,
                                                 Relation rel, const typename F::value_type& P, Assignment& a);

// The compact schedule's within link at b_1 (proofs/18): the pair with offset
// delta_1 + delta_i has poles r_h r'_{perm h} and residues c_h + c'_{perm h}
// for the right assignment perm (ref head h is cur head perm[h]), so its one
// value f(1) is predicted from the two fits and f(0) = v^T b_1:
//     f(1) = f(0) - sum_h (c_h + c'_{perm h}) rho_h / (1 + rho_h),   rho_h = r_h r'_{perm h}.
// Every one of the H! assignments is tried; those whose prediction is not
// certainly different from f1 are possible (Assignment: none, unique or several).
// Relation::across (the compact fallback, proofs/19): the link (delta_i, b_1 + b_j)
// of ref = (i, 1) and cur = (i, j) has poles r_h r'_{perm h} and the residues
// c_h of both, so only assignments that pair equal residues are tried, and
//     f(1) = f(0) - sum_h c_h rho_h / (1 + rho_h);
// Relation::across_affine the same with rho_h = r_h^2 / r'_{perm h} (the
// link (delta_i, 2 b_1 - b_j) of a plan with biases).
template <ArithField F>
Assignment predicted_assignment(const F& fld, const PairFit<typename F::value_type>& ref, const PairFit<typename F::value_type>& cur,
                                const typename F::value_type& f0, const typename F::value_type& f1, Relation rel = Relation::within);

// The unique assignment, or the error it means:
//   none -> Error(inconsistent): the answers fit no model with this many heads;
//   several, certain -> Error(degenerate): an ambiguous link at this draw;
//   several, uncertain -> Error(unable): cannot tell heads apart at this precision.
std::vector<int> unique_or_throw(const Assignment& a, const std::string& what);

template <class T>
PairFit<T> permuted(const PairFit<T>& f, const std::vector<int>& perm) {
  PairFit<T> out{f.P, {}, {}};
  for (int g : perm) {
    out.r.push_back(f.r[g]);
    out.c.push_back(f.c[g]);
  }
  return out;
}

}  // namespace mhaq
