// The recover driver: builds the oracle for a hidden model, runs the learner
// through the Oracle interface only, compares the result with the canonical
// truth and lets the judge (run/judge.hpp) give the verdict. It is the one
// place where model and learner meet.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "mhaq/arith/field.hpp"
#include "mhaq/arith/solve/qtau_solve.hpp"
#include "mhaq/model/compare_heads.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/oracle/model_oracle.hpp"
#include "mhaq/model/transformer.hpp"
#include "mhaq/stages/2-schedule/design.hpp"
#include "mhaq/stages/learner.hpp"
#include "mhaq/run/judge.hpp"
#include "mhaq/run/recover_options.hpp"
#include "mhaq/run/run_result.hpp"

namespace mhaq {

// The default exact budget on the tau-degree of one answer (recover --max-degree).
inline constexpr long kDefaultMaxDegree = 20000;

// The exact cost estimate of a plan, before any work: the largest and the
// summed tau-degree bound of its answers (L * answer_score_spread), and L.
struct ExactCost {
  long L = 1;
  double max_degree = 0, total_degree = 0;
  int worst_pair = -1;  // index into the plan's pairs
};
ExactCost exact_cost(const Model& truth, const Plan& plan, long token_den);

// Default token draws: exact mode small integers; other modes a fine dyadic
// grid on [-1, 1] (2^20 steps), exactly representable in every arithmetic.
TokenSpec default_tokens(Arith a);
// Seed of the learner's own stream, derived from --seed (model draws use --seed directly).
std::uint64_t learner_seed(std::uint64_t seed);
// Default generated-model distributions per arithmetic.
GenerateOptions default_generate(Arith a);

// Runs one recovery. Every run outcome is reported in the returned record
// (run/run_result.hpp; status, one of the judge's statuses), not thrown;
// usage/input errors are thrown, among them any option or model size past the
// stated limits (run/recover_limits.hpp), checked before any work. Fields: status, message and remedy (unless ok), queries,
// max_length, paper_bound, heads_true, heads_recovered, self_check, and
// exact_match | contains_truth, max_radius | max_rel_error, tolerance,
// error_estimate. With noise: kappa, kappa_times_eps, certified_bound (the
// mean-value bound), ball_bound (the plain ball run's), observed_error.
// With a design other than paper: design, kappa and kappa_rms at the truth;
// tuned also pilot_queries, pilot_status, kappa_predicted and
// kappa_rms_predicted (on the pilot's estimate), design_queries, and
// queries counts the pilot's too. With target_error: bits_used, bits_start, kappa_estimate,
// attempts.
RecoverResult recover_run(const Model& truth, const RecoverOptions& o);
// An external run's checkpoint: the session journals the oracle's answers
// beside the checkpoint (checkpoint_oracle_journal) and, on resume, replays
// them. Called on o.external's options before recover_run; Error(usage) with
// --resume, or when a fresh checkpoint's journal exists already.
void checkpoint_external(ExternalRun& ext, const CheckpointSpec& c);
// The same, for callers of the library (record_json turns it into the JSON of
// mhaq recover --json).
inline RecoverResult recover(const Model& truth, const RecoverOptions& o) { return recover_run(truth, o); }

// The same for a hidden one-layer transformer (claim 5): the transformer
// learner through the oracle only, then the comparison with the canonical
// truth (exact_match, functional_check on 20 fresh sequences, containment or
// max_rel_error) and the judge. Fields as recover's plus model_kind,
// neurons_true, neurons_recovered, queries_by_phase.
RecoverResult recover_transformer_run(const TransformerModel& truth, const RecoverOptions& o);
inline RecoverResult recover_transformer(const TransformerModel& truth, const RecoverOptions& o) { return recover_transformer_run(truth, o); }
std::string transformer_report(const RecoverResult& r);

// The comparisons of recovered heads with the truth: model/compare_heads.hpp.

// Shared by recover and the baselines (evidence/baseline.hpp): the heads'
// entries as strings (F.str). The comparison with the truth and the tolerance are
// the arithmetic's policy (run/arith_policy.hpp).
template <class T>
std::vector<HeadRecord> head_records(const Field<T>& F, const std::vector<LearnedHead<T>>& hs);
// The judge's facts of a run whose truth is known (canon), before it runs.
RunFacts known_truth_facts(Arith a, const Model& canon);
// A float run's first-order error estimate in the metric of max_rel_error
// (log2): (d + sqrt d)(kappa_rel 2^-p + kappa eps). With biases pass d + 1:
// [W c] has d (d + 1) entries, and beta's term is a single entry's.
double first_order_estimate_log2(int d, double kappa, double kappa_rel, long p, const Rational& eps);

// recover --design placed (run/recover_placed.cpp): writes the run into r, returns its queries.
long recover_placed(RecoverResult& r, const Model& truth, const Model& canon, const RecoverOptions& o, const LearnOptions& lo);
// recover --design placed --arith ball (run/recover_placed_ball.cpp): the
// design's last round certified in balls (analysis/placed_certify.hpp), into
// r and the judge's facts, compared with `canon` when it is given; throws
// Error(unable) or Error(inconsistent) when a step cannot be certified.
struct PlacedResult;
void placed_heads(const Field<Ball>& F, const PlacedResult& res, int H, const Model* canon, RecoverResult& r, RunFacts& facts);


// Human-readable report of a recover result.
std::string recover_report(const RecoverResult& r);

// The report's reading of a self-check value (yes, no, unknown) of an
// attention run, or of a transformer run when transformer is set: unknown
// means no answer certainly differs from the heads' prediction, but the
// arithmetic cannot prove equality (balls overlap, floats agree within a
// tolerance). It is not a failure, and it is never worded as a success.
std::string self_check_phrase(SelfCheck value, bool transformer = false);

}  // namespace mhaq
