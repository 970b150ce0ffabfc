// The typed record of one run (recover on attention or on a transformer, and
// the prior-work baselines), as the drivers fill it and the tools pass it to
// each other: verify, sweep, golden, the baselines' comparison, the reports
// and the command line read these fields. The record becomes JSON in one
// module only (run/record_json.hpp), at the edge.
//
// Every field but status is optional: a field is written exactly when it is
// set, so the record of a run that ended early holds only what that run
// established. A number that the JSON writes as null when it has no value
// (not computed, or outside double's range) is a double that is not finite;
// finite_number() reads such a field as "absent or not a number".
#pragma once
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mhaq/run/judge.hpp"

namespace mhaq {

// A recovered attention head, entries as the arithmetic writes them (Field::str).
struct HeadRecord {
  std::vector<std::vector<std::string>> W;
  std::vector<std::string> v;
  std::vector<std::string> c = {};  // with biases: the score's term c^T x_i
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

struct RecoverResult {
  // ---- what was run
  std::optional<std::string> model_kind;  // "transformer"; absent for attention
  std::optional<std::string> method;      // baselines: the prior-work method
  std::string arith;
  std::optional<long> bits;
  int d = 0;
  std::optional<int> H;
  std::optional<std::string> heads_known;  // "exact" or "upper bound H0"
  std::optional<int> neurons_told;
  std::uint64_t seed = 0;
  std::optional<std::string> schedule;
  std::optional<bool> bias;  // the learner allowed biases (heads' c and beta)
  std::optional<int> heads_true, neurons_true;  // the canonical truth, when one is known
  std::optional<long> paper_bound, attention_paper_bound, schedule_count, query_bound, max_length_bound;
  std::optional<std::string> bases_source;  // baselines: orthogonal
  std::optional<std::vector<long>> subspace_dims;
  std::optional<int> scale_log2_max;
  std::optional<long> oracle_bits;
  std::optional<std::string> noise_eps;
  std::optional<std::uint64_t> noise_seed;
  std::optional<long> token_range, token_den;
  std::optional<int> samples_per_pair;
  std::optional<std::string> note;
  std::optional<std::string> exact_solver;
  // ---- the design (recover --design); tuned: its pilot and the search
  std::optional<std::string> design;
  std::optional<long> pilot_queries, design_queries;  // tuned: the pilot's queries, and the design's own run without them
  std::optional<std::string> pilot_status, pilot_schedule;
  std::optional<int> pilot_heads, design_evaluations;
  std::optional<bool> design_searched;
  std::optional<double> kappa_predicted, kappa_rms_predicted, kappa_rms_predicted_start;
  // placed: the pilot's kind, the query budget, the rounds, the ladder's fit
  std::optional<std::string> pilot_kind, misplaced;
  std::optional<long> query_budget;
  std::optional<int> placed_rounds, placed_reestimates;
  std::optional<double> max_pole_shift, pair_log2_cond_max, offsets_log2_cond_max;
  // placed in balls: the widest output ball relative to the largest |midpoint|
  // of its head's W (or v), log2 (from the output alone)
  std::optional<double> max_rel_radius_log2;
  // ---- the exact cost guard
  std::optional<ExactCostRecord> exact_cost;
  // ---- noise (recover --noise) and the sensitivity at the truth
  std::optional<std::string> noise_pattern;
  std::optional<double> kappa, kappa_times_eps, kappa_rel, kappa_rms, kappa_pair;
  std::optional<std::string> kappa_note;
  std::optional<long> certified_bits;
  std::optional<double> certified_bound, ball_bound;  // the mean-value bound; the plain ball run's
  std::optional<std::string> certified_note, ball_note;
  // ---- --target-error
  std::optional<std::string> target_error;
  std::optional<double> kappa_estimate;
  std::optional<long> estimate_bits, bits_start, bits_used, oracle_calls;
  std::optional<std::vector<PrecisionAttempt>> attempts;
  // ---- an external oracle (recover --oracle)
  std::optional<std::string> oracle, oracle_error;
  // ---- the outcome
  Status status = Status::ok;
  std::string message;                // why, for every status but ok
  std::optional<std::string> remedy;  // what to do, for every status but ok
  std::optional<std::string> blind_status;  // transformers: the status the answers alone give
  std::optional<long> queries;  // every query sent (a tuned design's pilot included)
  std::optional<long> max_length;
  std::optional<long> L;  // exact: the field's L
  std::optional<int> heads_recovered, heads_found, neurons_recovered, redraws;
  std::optional<std::string> self_check, self_check_note, verification;
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
  // Floats: the tolerance on max_rel_error, the decisions' tolerance and the
  // run's own first-order error estimate.
  std::optional<double> tolerance, error_estimate;
  std::optional<std::string> tolerance_decimal, decision_tolerance, error_estimate_decimal, estimate_note;
  // The comparison with the known truth, as the arithmetic's truth test made
  // it (run/arith_policy.hpp); absent when the run ended before it.
  std::optional<bool> exact_match, contains_truth;
  std::optional<FunctionalCheck> functional_check;
  std::optional<double> max_radius, max_rel_error;
  std::optional<std::string> max_radius_decimal, max_rel_error_decimal;  // the same in decimal ("inf" for a wrong head count)
  std::optional<bool> wrong;  // baselines: parameters returned that disagree with the known truth
  std::optional<double> observed_error, certified_relative_error;
  std::optional<std::string> certificate_note;  // why no certificate was written
  // ---- added by the command line
  std::optional<nlohmann::json> model_conversion;  // how a factored model file became (W_h, v_h)
  std::optional<std::string> certificate;         // the certificate file written

  bool repaired() const { return repairs.value_or(0) > 0 || fallback_queries.value_or(0) > 0; }
  int exit_code() const { return status_exit_code(status); }
};

// A nullable number field: its value when set and finite.
inline std::optional<double> finite_number(const std::optional<double>& x) {
  if (!x || !std::isfinite(*x)) return std::nullopt;
  return x;
}

}  // namespace mhaq
