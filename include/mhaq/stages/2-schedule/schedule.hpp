// Stage 2: query designs. The schedules are non-adaptive: the full list of
// queries is fixed by the draws (B, Delta) before any answer is seen, and the
// learner sends exactly Plan::queries(), in order. proofs/05 counts that list.
//
// A plan also carries its labelling graph: which link pair ties which base
// pairs, and by which relation (docs/math/schedules.md, proofs/03). The
// learner walks it; nothing else computes the plan's index layout.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mhaq/arith/rational.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"

namespace mhaq {

enum class Schedule { paper, lean, compact, rank };
const char* schedule_name(Schedule s);
Schedule parse_schedule(const std::string& s);  // throws Error(usage)

enum class PairKind { base, within, across };
const char* pair_kind_name(PairKind k);

// One pair: the queries [a x k, b] for k = 1..samples-1 with a = b + offset.
struct PairSpec {
  PairKind kind;
  int i, j;  // offset index, final-token index (0-based)
  QVec offset;
  QVec final_token;
  int samples = 0;  // values k = 0..samples-1 (k = 0 is chained, not queried)
  int first_k = 1;  // the first value queried (a compact fallback extends a pair past its planned values)
};
std::string pair_name(const PairSpec& p);  // "within-link pair (i=2, j=1)"

// How a base pair's heads are put into the global order.
//   within:    link poles = ref poles * target poles, link residues = ref + target residues
//   across:    link poles = ref poles * target poles, residues all equal
//   residue:   target residues = ref residues (no link pair; lean schedule)
//   predicted: a within link with one value f(1), predicted from ref and target
//              for each assignment of heads; the one that matches labels the
//              target (compact schedule, proofs/18)
//   poles:     the target's residues are the ref's (same offset), so it is
//              fitted with them known and comes out in the ref's order; only
//              its poles are unknown (compact schedule, proofs/19)
//   across_affine: the across link of a plan with biases (final token
//              2 b_1 - b_j, where log r is affine in the final token):
//              link poles = ref poles^2 / target poles, residues all equal
//              (docs/math/biases.md)
enum class Relation { within, across, residue, predicted, poles, across_affine };
struct LabelStep {
  int target;  // index into Plan::pairs of a base pair
  int ref;     // a base pair labelled by an earlier step, or the root
  int link;    // index into Plan::pairs of the link pair; -1 for residue
  Relation rel;
  // Residue steps (lean) and poles steps (compact) only: the across link that
  // decides the step when two heads' residues cannot be told apart (equal
  // v_h); the learner asks for it only then (docs/math/schedules.md). Lean:
  // the whole link, 2H queries. Compact: one value of the link, predicted for
  // each assignment, after the pair's own values up to k = 2H-1 (proofs/19).
  std::optional<PairSpec> fallback;
};

struct Plan {
  Schedule schedule = Schedule::paper;
  int d = 0, H = 0;
  int rank = 0;     // rank schedule: the bound R on every head's rank (1 <= R <= d); 0 otherwise
  int samples = 0;  // values of a fully fitted pair, k = 0..samples-1 (2H+1 unless oversampling); PairSpec::samples per pair
  // Columns b_j and delta_i. With biases B has d + 1 columns, affinely
  // independent (log r is then affine in the final token: docs/math/biases.md).
  QMat B, Delta;
  bool bias = false;
  std::vector<PairSpec> pairs;
  std::vector<LabelStep> labelling;  // in order: every base pair but the root is a target once
  Query first;                       // [b_1], the only length-1 query (chaining)

  int finals() const { return B.cols(); }  // final tokens: d, or d + 1 with biases
  // Base pairs come first, column by column. Every (i, j) is asked but in the
  // rank schedule, which asks a subset (base_at).
  int base_index(int i, int j) const { return base_at.empty() ? j * d + i : base_at[static_cast<size_t>(j) * d + i]; }
  bool asked(int i, int j) const { return base_index(i, j) >= 0; }
  int base_count() const { return base_at.empty() ? d * finals() : base_pairs; }
  int root() const { return base_index(0, 0); }
  std::vector<int> base_at;  // rank schedule: index into pairs of base pair (i, j) at j d + i, -1 when not asked
  int base_pairs = 0;        // rank schedule: the number of base pairs
  // The relation of this plan's across links: across, or across_affine with biases.
  Relation across() const { return bias ? Relation::across_affine : Relation::across; }
  // The final token of the across link from b_1 to b_j: b_1 + b_j, or 2 b_1 - b_j with biases.
  QVec across_token(int j) const;
  std::vector<long> start;            // index in queries() of each pair's k = 1 query
  // Every query in the order the learner sends it: first, then each pair's k = 1..samples-1.
  std::vector<Query> queries() const;
  long query_count() const { return start.empty() ? 1 : start.back() + pairs.back().samples - 1; }
  // Index in queries() of pair p's k-th query (1 <= k < pairs[p].samples).
  long query_index(long p, long k) const { return start[p] + (k - 1); }
  // The queries of one pair (k = 1..samples-1), e.g. a fallback pair's.
  std::vector<Query> pair_queries(const PairSpec& p) const;
};

// Paper: d^2 base pairs, d(d-1) within links, d-1 across links.
// Lean: d^2 base pairs and d-1 within links at b_1; residues label the rest.
// Compact: base pairs (i, 1) fitted fully (2H values), d-1 within links at
//   b_1 with one value each (H >= 2), and base pairs (i, j >= 2) with
//   compact_samples(H) values each, fitted with their residues known.
// Rank (a bound R on every head's rank, docs/math/low-rank.md): the base
//   pairs of the rows i <= R, of the columns j <= R + 1 (the last one checks
//   the bound; none when R = d), and d-1 within links at b_1, labelled as lean.
// samples = values per pair (0: the paper's 2H+1; more: oversampling, not compact).
// A B with d + 1 columns makes a plan for a model with biases: the final
// token b_{d+1} gets its base pairs like every other, its labelling steps
// and across link (docs/math/biases.md); not with the rank schedule.
// rank = R for the rank schedule (1 <= R <= d), 0 for the others.
Plan make_plan(Schedule s, const QMat& B, const QMat& Delta, int H, int samples = 0, int rank = 0);
long paper_query_bound(long d, long H);  // 4 H d^2 - 2H + 1
long lean_query_count(long d, long H);   // 1 + 2H (d^2 + d - 1)
// Values k >= 1 of a compact pair (i, j >= 2): 1 (H = 1), 3 (H = 2), 2H - 2 (H >= 3).
int compact_samples(int H);
// 1 + 2Hd + (d - 1 if H >= 2) + compact_samples(H) d (d - 1)
long compact_query_count(long d, long H);
// Pairs of the rank schedule: 2dR - R^2 + 2d - R - 1 (d^2 + d - 1, lean's, at R = d).
long rank_pair_count(long d, long R);
// 1 + 2H (2dR - R^2 + 2d - R - 1)
long rank_query_count(long d, long H, long R);
// The real parameters of H heads of rank R with their value vectors: H (2dR - R^2 + d).
long rank_parameter_floor(long d, long H, long R);
// The query count of schedule s (no oversampling; rank: R = rank), and its
// longest query (2H + 1). With biases (docs/math/biases.md): paper
// 4Hd^2 + 4Hd - 2H + 1, lean 1 + 2H(d^2 + 2d - 1), compact
// 1 + 2Hd + (d - 1 if H >= 2) + s_H d^2 (the rank schedule takes no biases).
long schedule_query_count(Schedule s, long d, long H, long rank = 0, bool bias = false);
// Largest H (or H0) the compact schedule takes: its links are decided by
// predicting one value for each of the H! assignments of heads.
constexpr int compact_max_heads = 8;

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
// B with one more final token b_{d+1} drawn from `spec` (its own stream rng),
// such that [B; 1 ... 1] is invertible (the final tokens span affinely);
// throws Error(degenerate) after 64 draws that do not.
QMat with_affine_final(Rng& rng, const QMat& B, const TokenSpec& spec);

}  // namespace mhaq
