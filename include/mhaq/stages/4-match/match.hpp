// Stage 4: matching heads. Each pair returns its heads in no particular order;
// link pairs (or residues, in the lean schedule) put them in one order
// (ALGORITHM.md section 4, proofs/03). One assignment routine serves every
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
