// The typed record of one run (recover on attention or on a transformer, and
// the prior-work baselines), as the drivers fill it and the tools pass it to
// each other: verify, sweep, golden, the baselines' comparison, the reports
// and the command line read these fields. The record becomes JSON in one
// module only (run/record_json.hpp), at the edge.
//
// The fields are grouped by concern (run, plan, design, oracle, evidence,
// judge, truth, study, output); the JSON keys are the fields' names, with
// run.kind as "model_kind", design.kind as "design", oracle.name, error and
// bits as "oracle", "oracle_error" and "oracle_bits".
//
// Every field but the status is optional: a field is written exactly when it is
// set, so the record of a run that ended early holds only what that run
// established. A number that the JSON writes as null when it has no value
// (not computed, or outside double's range) is a double that is not finite;
// finite_number() reads such a field as "absent or not a number".
#pragma once
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mhaq/arith/solve/exact_solver.hpp"
#include "mhaq/arith/truth.hpp"
#include "mhaq/baselines/prior_work.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/oracle/model_oracle.hpp"
#include "mhaq/oracle/protocol.hpp"
#include "mhaq/run/judge.hpp"
#include "mhaq/stages/2-schedule/design.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"

namespace mhaq {

// A recovered attention head, entries as the arithmetic writes them (Field::str).
struct HeadRecord {
  std::vector<std::vector<std::string>> W;
  std::vector<std::string> v;
  std::optional<std::vector<std::string>> c = {};  // with biases: the score's term c^T x_i
};
// A recovered transformer: its heads' W and its neurons' (u, U).
struct TransformerRecord {
  struct Neuron {
    std::string u;
    std::vector<std::vector<std::string>> U;  // per head
  };
  std::vector<std::vector<std::vector<std::string>>> W;  // per head
  std::vector<Neuron> neurons;
};
// A degenerate pair repaired by the learner.
struct RepairRecord {
  std::string pair, reason, route;
  long queries = 0;
};
// The exact cost estimate of a plan (run/recover.hpp, ExactCost) and its budget.
struct ExactCostRecord {
  long L = 0;
  double max_answer_degree = 0, total_answer_degree = 0;
  long max_degree_budget = 0;
};
// One ball attempt of --target-error.
struct PrecisionAttempt {
  long bits = 0;
  Status status = Status::ok;
  double certified_relative_error = NAN;  // not finite: none
};
// Transformers: the comparison T - T' = 0 on fresh sequences (exact).
struct FunctionalCheck {
  long sequences = 0;
  int zero_differences = 0;
  bool all_zero = false;
};
struct PhaseQueries {
  long attention = 0, regions = 0, verification = 0;
};
struct PathRecord {
  int probes = 0, crossings = 0, undecided_flats = 0, test_probes = 0;
};

// What the learner's own self-check found: Truth's three values, and none
// for the baselines, which do not check their assumptions.
enum class SelfCheck { no, yes, unknown, none };
const char* self_check_name(SelfCheck s);  // "no", "yes", "unknown", "none"
inline SelfCheck self_check_of(Truth t) { return t == Truth::yes ? SelfCheck::yes : t == Truth::no ? SelfCheck::no : SelfCheck::unknown; }
// What the learner was told about the head count.
enum class HeadsKnown { exact, upper_bound };
const char* heads_known_name(HeadsKnown h);  // "exact", "upper bound H0"

// What was run: the model's kind, the method, the arithmetic and the options.
struct RunRecord {
  oracle_protocol::ModelKind kind = oracle_protocol::ModelKind::attention;
  std::optional<BaselineMethod> method;  // baselines: the prior-work method
  Arith arith = Arith::exact;
  std::optional<long> bits;
  int d = 0;
  std::optional<int> H;
  std::optional<HeadsKnown> heads_known;
  std::optional<int> neurons_told;
  std::uint64_t seed = 0;
  std::optional<long> token_range, token_den;
  std::optional<int> samples_per_pair;
  std::optional<std::string> note;
  std::optional<ExactSolver> exact_solver;
  std::optional<std::string> bases_source;  // baselines: orthogonal
  std::optional<std::vector<long>> subspace_dims;
  std::optional<int> scale_log2_max;
  std::optional<bool> bias;  // the learner allowed biases (heads' c and beta; docs/math/biases.md)
};
// The plan: the schedule, its bounds and the exact cost guard.
struct PlanRecord {
  std::optional<Schedule> schedule;
  std::optional<long> paper_bound, attention_paper_bound, schedule_count, query_bound, max_length_bound;
  std::optional<ExactCostRecord> exact_cost;
  std::optional<int> rank_bound;        // the rank schedule: --rank R
  std::optional<long> parameter_floor;  // the rank schedule: H (2dR - R^2 + d) real parameters
};
// The design (recover --design); tuned: its pilot and the search; placed:
// the pilot's kind, the query budget, the rounds, the ladder's fit.
struct DesignRecord {
  std::optional<Design> kind;
  std::optional<long> pilot_queries, design_queries;  // tuned: the pilot's queries, and the design's own run without them
  std::optional<std::string> pilot_status;            // "ok", "not run", or why the pilot failed
  std::optional<Schedule> pilot_schedule;
  std::optional<int> pilot_heads, design_evaluations;
  std::optional<bool> design_searched;
  std::optional<double> kappa_predicted, kappa_rms_predicted, kappa_rms_predicted_start;
  std::optional<std::string> pilot_kind, misplaced;
  std::optional<long> query_budget;
  std::optional<int> placed_rounds, placed_reestimates;
  std::optional<double> max_pole_shift, pair_log2_cond_max, offsets_log2_cond_max;
  // placed in balls: the widest output ball relative to the largest |midpoint|
  // of its head's W (or v), log2 (from the output alone)
  std::optional<double> max_rel_radius_log2;
};
// The oracle: an external one (recover --oracle), the answers' rounding and noise.
struct OracleRecord {
  std::optional<std::string> name, error;  // the external oracle's name; why it failed
  std::optional<long> bits;                 // the answers rounded to this many bits
  std::optional<std::string> noise_eps;
  std::optional<std::uint64_t> noise_seed;
  std::optional<NoisePattern> noise_pattern;
};
// What the run established from the answers alone.
struct EvidenceRecord {
  std::optional<long> queries;  // every query sent (a tuned design's pilot included)
  std::optional<long> max_length;
  std::optional<long> L;  // exact: the field's L
  std::optional<int> heads_recovered, heads_found, neurons_recovered, redraws;
  std::optional<std::vector<int>> ranks;  // the rank schedule: each recovered head's detected rank
  std::optional<SelfCheck> self_check;
  std::optional<std::string> self_check_note;
  std::optional<Truth> verification;  // transformers: the verification queries
  std::optional<long> fallback_pairs, fallback_queries, repairs, repair_queries;  // queries beyond the plan
  std::optional<long> grid_witness_queries;  // a small grid's witnesses (stages/grid_guard.hpp), when it fired
  std::optional<std::vector<RepairRecord>> repaired_pairs;
  std::optional<std::vector<HeadRecord>> heads;
  std::optional<std::string> beta;  // with biases: the constant added to every answer
  std::optional<TransformerRecord> model;  // transformers: the recovered parameters
  std::optional<PhaseQueries> queries_by_phase;
  std::optional<PathRecord> path;
  std::optional<double> angular_resolution_deg;
  std::optional<long> queries_targeted;
};
// The verdict, and for floats the tolerance on max_rel_error, the decisions'
// tolerance and the run's own first-order error estimate.
struct JudgeRecord {
  Status status = Status::ok;
  std::string message;                // why, for every status but ok
  std::optional<std::string> remedy;  // what to do, for every status but ok
  std::optional<Status> blind_status;  // transformers: the status the answers alone give
  std::optional<double> tolerance, error_estimate;
  std::optional<std::string> tolerance_decimal, decision_tolerance, error_estimate_decimal, estimate_note;
  // Floats: the judge's certified bound on max_rel_error (proofs/40), from
  // the run's replay in balls over its answers; the assumption on the
  // answers' error it rests on; the replay's route and precision, or why
  // there is no bound.
  std::optional<double> certified_error;
  std::optional<std::string> certified_error_decimal, answer_assumption, judge_route, judge_note;
  std::optional<long> judge_bits;
};
// The comparison with the known truth, as the arithmetic's truth test made it
// (run/arith_policy.hpp); absent when the run ended before it.
struct TruthRecord {
  std::optional<int> heads_true, neurons_true;  // the canonical truth, when one is known
  std::optional<bool> exact_match, contains_truth;
  std::optional<FunctionalCheck> functional_check;
  std::optional<double> max_radius, max_rel_error;
  std::optional<std::string> max_radius_decimal, max_rel_error_decimal;  // the same in decimal ("inf" for a wrong head count)
  std::optional<bool> wrong;  // baselines: parameters returned that disagree with the known truth
  std::optional<double> observed_error, certified_relative_error;
};
// The noise study (recover --noise; the sensitivity at the truth) and the
// precision search (--target-error).
struct StudyRecord {
  std::optional<double> kappa, kappa_times_eps, kappa_rel, kappa_rms, kappa_pair;
  std::optional<std::string> kappa_note;
  std::optional<long> certified_bits;
  std::optional<double> certified_bound, ball_bound;  // the mean-value bound; the plain ball run's
  std::optional<std::string> certified_note, ball_note;
  std::optional<std::string> target_error;
  std::optional<double> kappa_estimate;
  std::optional<long> estimate_bits, bits_start, bits_used, oracle_calls;
  std::optional<std::vector<PrecisionAttempt>> attempts;
};
// What the command line adds: the certificate and the model file's conversion.
struct OutputRecord {
  std::optional<std::string> certificate_note;     // why no certificate was written
  std::optional<ModelFileInfo> model_conversion;  // how a factored model file became (W_h, v_h)
  std::optional<std::string> certificate;         // the certificate file written
};

struct RecoverResult {
  RunRecord run;
  PlanRecord plan;
  DesignRecord design;
  OracleRecord oracle;
  EvidenceRecord evidence;
  JudgeRecord judge;
  TruthRecord truth;
  StudyRecord study;
  OutputRecord output;

  Status status() const { return judge.status; }
  bool repaired() const { return evidence.repairs.value_or(0) > 0 || evidence.fallback_queries.value_or(0) > 0; }
  int exit_code() const { return status_exit_code(judge.status); }
};

// A nullable number field: its value when set and finite.
inline std::optional<double> finite_number(const std::optional<double>& x) {
  if (!x || !std::isfinite(*x)) return std::nullopt;
  return x;
}

}  // namespace mhaq
