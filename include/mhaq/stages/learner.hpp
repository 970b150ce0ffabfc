// The learner: written once, run over every Field<T>. It is given an
// Oracle<T>& and nothing else (this header does not know the Model type).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"

namespace mhaq {

// f(k) = P + sum_h c_h / (1 + r_h k) recovered from f(0..2H) (proofs/01, 02).
template <class T>
struct PairFit {
  T P;
  std::vector<T> r;  // poles in the r-parametrisation, r_h > 0
  std::vector<T> c;  // residues c_h = v_h^T (b - a)
};

// Rigor: exact -> exact; ball -> on success every output contains the truth,
// Error(unable) when a decision cannot be made; floats -> approx_.
// Error(degenerate) when the type-(H,H) system is certainly singular.
template <class T>
PairFit<T> interpolate_pair(const Field<T>& F, const std::vector<T>& f, int H);

// Orders the heads of `cur` like those of `ref` from a link pair (proofs/03):
// within links (poles multiply, residues add) or across links (poles
// multiply, residues equal). Returns perm with cur head perm[h] matching ref
// head h. Exact: Error(degenerate) when several assignments fit (ambiguous
// link); balls: Error(unable) when they cannot be told apart.
template <class T>
std::vector<int> link_permutation(const Field<T>& F, const PairFit<T>& ref, const PairFit<T>& cur, const PairFit<T>& link,
                                  bool within, const std::string& what);

template <class T>
struct LearnedHead {
  Mat<T> W;
  std::vector<T> v;
};

struct LearnOptions {
  int H = 1;                    // head count, or an upper bound H0 when heads_is_bound
  bool heads_is_bound = false;  // claim 3: only H0 >= H is known
  Schedule schedule = Schedule::paper;
  std::uint64_t seed = 1;
  TokenSpec tokens;
  int threads = 1;              // pair fits run in parallel; results do not depend on it
  int samples_per_pair = 0;     // 0: the paper's 2H+1 values per pair; K > 2H+1: oversampling (least squares)
};

// The query plan learn() sends for these options: B and Delta drawn from
// opt.seed exactly as learn() draws them (non-adaptive, so it is known before
// any query). `redraws` receives the number of singular draws replaced.
Plan learner_plan(int d, const LearnOptions& opt, int* redraws = nullptr);

template <class T>
struct LearnResult {
  std::vector<LearnedHead<T>> heads;
  Plan plan;
  int redraws = 0;
  std::vector<PairFit<T>> fits;    // per pair of plan.pairs, heads in the pair's own order
  std::vector<PairFit<T>> labelled;  // base pair (i, j) at index j*d + i, heads in the order of `heads`
  int heads_found = 0;             // minimal type found (claim 3), equals H when H is known
  double fit_threshold_log2 = 0;   // floats with heads_is_bound: relative residual threshold used
  bool self_checked = false;       // exact: recovered heads reproduce every answer
};

// Minimal-type interpolant through the 2H0+1 values (proofs/07): the least m
// whose type-(m,m) fit on k = 0..2m reproduces all values. Exact: decided
// exactly. Ball: Error(unable) when agreement cannot be certified. Floats:
// agreement within relative 2^threshold_log2.
template <class T>
PairFit<T> interpolate_pair_minimal(const Field<T>& F, const std::vector<T>& f, int H0, double threshold_log2);

template <class T>
LearnResult<T> learn(Oracle<T>& oracle, const LearnOptions& opt);

}  // namespace mhaq
