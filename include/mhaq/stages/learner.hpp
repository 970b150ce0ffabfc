// The learner: the path through the stages, written once and run over every
// field. It is given an Oracle<T>& and nothing else (it never sees a model):
//
//   1-oracle    answers to the plan's queries (and, in the lean schedule, to
//               the fallback links it asks for)
//   2-schedule  the plan and its labelling graph
//   3-fit       one type-(H,H) fit per pair, f(0) chained from the limits
//   4-match     heads put in one order by walking the labelling graph
//   5-solve     the canonical heads (W_h, v_h)
//
// and finally the learner's own check that its heads reproduce every answer.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/base/progress.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "mhaq/stages/3-fit/fit_store.hpp"
#include "mhaq/stages/3-fit/pair_fit.hpp"
#include "mhaq/stages/4-match/labelling.hpp"
#include "mhaq/stages/4-match/match.hpp"
#include "mhaq/stages/5-solve/solve.hpp"

namespace mhaq {

struct LearnOptions {
  int H = 1;                    // head count, or an upper bound H0 when heads_is_bound
  bool heads_is_bound = false;  // claim 3: only H0 >= H is known
  // The model may have biases: the learner recovers (W_h, c_h, v_h) and beta,
  // with one more final token (docs/math/biases.md). Off: the paper's model,
  // and every query and number exactly as without this option.
  bool bias = false;
  Schedule schedule = Schedule::paper;
  int rank = 0;  // the rank schedule's bound R on every head's rank (1 <= R < d); 0 for the other schedules
  std::uint64_t seed = 1;
  TokenSpec tokens;
  int threads = 1;            // pair fits run in parallel; results do not depend on it
  int samples_per_pair = 0;   // 0: the paper's 2H+1 values per pair; K > 2H+1: oversampling
  bool self_check = true;     // re-evaluate the heads on every answer (no query cost)
  bool lean_fallback = true;  // lean and compact: ask for an across link where residues cannot label (equal v_h)
  bool repair = true;         // repair degenerate pairs from their links and residues (Repair, 4-match/labelling.hpp) instead of failing the run
  bool keep_fit_samples = false;  // LearnResult::fit_samples, for a replay of the run that reuses its fits (FitMemo)
  // The design's B and Delta when they were chosen before the run (the
  // scaled and tuned designs, stages/2-schedule/design.hpp); empty: drawn
  // from `seed` and `tokens` (the paper's design).
  std::optional<Draws> draws;
  // Progress lines of a long run (phase, queries answered, pairs fitted);
  // null: none. They go where the Progress writes them, never into a result.
  Progress* progress = nullptr;
  // Non-empty: the driver costed the small-grid witnesses (grid_guard.hpp)
  // beyond its budget; a run that needs them ends over budget with this text
  // instead of asking them.
  std::string grid_witness_refused;
  // Non-null: pair fits are looked up here before they are computed, and
  // every new one is stored (the paper, lean and rank schedules' pairs; not
  // under MPI, whose ranks share fits among themselves). Results do not
  // depend on it.
  FitStore* fit_store = nullptr;
};

// The query plan learn() sends for these options: B and Delta drawn from
// opt.seed exactly as learn() draws them (non-adaptive, so it is known before
// any query). `redraws` receives the number of singular draws replaced. With
// opt.bias, the final token b_{d+1} comes from a stream of its own, so B and
// Delta are those of the same seed without biases.
Plan learner_plan(int d, const LearnOptions& opt, int* redraws = nullptr);

template <class T>
struct LearnResult {
  std::vector<LearnedHead<T>> heads;
  // With LearnOptions::bias: beta = f([b_1]) - sum_h v_h^T b_1 (no query of its own).
  std::optional<T> beta;
  Plan plan;
  int redraws = 0;
  std::vector<PairFit<T>> fits;      // per pair of plan.pairs, heads in the pair's own order
  // With keep_fit_samples: per pair, the samples f(0), f(1), ... of its fit
  // when that fit is interpolate_pair's with H heads (empty otherwise).
  std::vector<std::vector<T>> fit_samples;
  std::vector<PairFit<T>> labelled;  // per base pair (plan.base_index), heads in the order of `heads`
  int heads_found = 0;               // minimal type found (claim 3); equals H when H is known
  // The rank schedule: each head's detected rank (5-solve/low_rank.hpp), in the order of `heads`; empty otherwise.
  std::vector<int> ranks;
  // Fallback: the queries asked for after the plan where residues could not
  // label (lean: across links, 2H queries each; compact: a pair's values up to
  // k = 2H-1 and one value of its across link, PairSpec::first_k marking the
  // first value asked).
  std::vector<PairSpec> fallback_pairs;
  std::vector<PairFit<T>> fallback_fits;  // lean only: the across links' fits
  long fallback_queries = 0;
  // Degenerate pairs repaired (see Repair); the run's query count is the plan's plus repair_queries.
  std::vector<Repair> repairs;
  long repair_queries = 0;
  // Small-grid witnesses (stages/grid_guard.hpp), beyond the plan and the repairs.
  long grid_witness_queries = 0;
  // The offset index i (delta_i) of the pair an unrepairable degenerate draw
  // was found at, -1 otherwise: learn() then draws that offset afresh once and
  // asks only the queries that use it (Repair with pair = the new base pair (i, 1)).
  int failed_offset = -1;
  // The learner's own check: do the heads reproduce every answer? yes/no, or
  // unknown when some comparison could not be decided (balls, tolerances).
  Truth self_check = Truth::unknown;
  long self_check_failed = -1;  // index of the first answer they certainly do not reproduce
  long answers = 0;             // answers received in all
};

// Runs the learner. Throws Error(degenerate | unable | inconsistent |
// not_identifiable) when a stage cannot finish; the learner never returns
// parameters it could not derive. self_check == no is returned, not thrown:
// the judge (run/judge.hpp) weighs it against the run's error estimate.
template <class T>
LearnResult<T> learn(Oracle<T>& oracle, const LearnOptions& opt);

}  // namespace mhaq
