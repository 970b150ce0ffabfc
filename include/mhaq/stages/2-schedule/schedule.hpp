// Query designs. Both schedules are non-adaptive: the full list of queries is
// fixed by the draws (B, Delta) before any answer is seen, and the learner
// sends exactly Plan::queries(), in order. proofs/05 counts that list.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/arith/rational.hpp"

namespace mhaq {

enum class Schedule { paper, lean };
const char* schedule_name(Schedule s);
Schedule parse_schedule(const std::string& s);  // throws Error(usage)

enum class PairKind { base, within, across };

// One pair: the queries [a x k, b] for k = 1..2H with a = b + offset.
struct PairSpec {
  PairKind kind;
  int i, j;  // offset index, final-token index (0-based)
  QVec offset;
  QVec final_token;
};

struct Plan {
  Schedule schedule = Schedule::paper;
  int d = 0, H = 0;
  int samples = 0;  // values per pair, k = 0..samples-1 (2H+1 unless oversampling)
  QMat B, Delta;  // columns b_j and delta_i
  std::vector<PairSpec> pairs;
  Query first;  // [b_1], the only length-1 query (chaining)
  // Every query in the order the learner sends it: first, then each pair's k = 1..samples-1.
  std::vector<Query> queries() const;
  // Index in queries() of pair p's k-th query (k >= 1).
  long query_index(long p, long k) const { return 1 + p * (samples - 1) + (k - 1); }
};

// Paper: d^2 base pairs, d(d-1) within links, d-1 across links.
// Lean: d^2 base pairs and d-1 within links at b_1; residues label the rest.
// samples = values per pair (0: the paper's 2H+1; more: oversampling, fitted by least squares).
Plan make_plan(Schedule s, const QMat& B, const QMat& Delta, int H, int samples = 0);
long paper_query_bound(long d, long H);  // 4 H d^2 - 2H + 1
long lean_query_count(long d, long H);   // 1 + 2H (d^2 + d - 1)

// Token entries: uniform integers in [-range, range], divided by den.
struct TokenSpec {
  long range = 3;
  long den = 1;
};
struct Draws {
  QMat B, Delta;
  int redraws = 0;  // singular draws replaced (cost: no queries; drawn before any)
};
// Draws invertible B and Delta; throws Error(degenerate) after 64 singular draws.
Draws draw_tokens(Rng& rng, int d, const TokenSpec& spec);

}  // namespace mhaq
