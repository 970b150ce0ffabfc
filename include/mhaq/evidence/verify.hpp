// The theorem checker behind `mhaq verify` (docs/studies/verify.md): repeated random trials
// of the paper's claims 1-3 over a stated distribution of models and learner
// draws, and the Schwartz-Zippel bound on degenerate draws (proofs/09).
// Everything here is deterministic in the options: the same options give the
// same result and JSON, byte for byte (no timings are reported).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/run/run_result.hpp"
#include "mhaq/stages/2-schedule/design.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"

namespace mhaq {

// verify runs every d in [min_d, max_d] and H up to max_h in every trial, so
// both stay below the program's general limits (docs/limits.md).
inline constexpr int verify_max_d = 16, verify_max_h = 16;

struct VerifyOptions {
  int trials = 20;
  std::uint64_t seed = 1;
  Arith arith = Arith::exact;
  long bits = 256;     // ball, mpfr
  int min_d = 2;       // d uniform on {min_d..max_d}
  int max_d = 4;
  int max_h = 3;       // canonical H uniform on {1..max_h}
  int h0_extra = 2;    // claim 3 runs use max_heads = H + h0_extra
  long token_range = 0;  // 0 = default_tokens(arith).range
  double tolerance = 0;  // mpfr/double claim-1 tolerance on max_rel_error; 0 = 2^(-bits/4)
  bool unknown_h = true;  // run the H0 variant (claim 4 row)
  int threads = 1;        // trials in parallel within a process (0 = all hardware threads); output does not depend on it
  // Which claims' trials run: "attention" (claims 1-4, the default),
  // "transformer" (claim 5 only: one-layer transformers of section 10) or
  // "all" (both, on the same trial indices).
  std::string model_kind = "attention";
  // 0: the claims table above. 4: only the paper's claim 4 (approximate
  // answers): per trial eps log-uniform on [1e-40, 1e-14], the MPFR learner
  // at `bits` under uniform and worst-case noise, the certified (mean-value)
  // bound, kappa and the observed errors (analysis/sensitivity.hpp, proofs/31).
  int claim = 0;
  // How every run's B and Delta are chosen (not exact). The count claims are
  // asserted on the design's own queries; a tuned run's pilot is reported.
  Design design = Design::paper;
  // The learner's schedule for claims 1-4 (claims 2 and 4 then count that
  // schedule's queries: stages/2-schedule/schedule.hpp, schedule_query_count).
  Schedule schedule = Schedule::paper;
  // Every trial's model gets biases (generate --bias) and the learner allows
  // them: claim 1 recovers (W_h, c_h, v_h) and beta, claims 2 and 4 count the
  // schedule with biases (docs/math/biases.md).
  bool bias = false;
  // > 0 (with Schedule::rank): every model's heads have rank exactly `rank`
  // (generate --rank) and every run is told that bound (recover --rank); d > rank.
  int rank = 0;
};

// One claim-5 trial's draw: (d, H, m) cycling over (2,1,2), (2,2,3), (3,2,3),
// (3,2,4) by trial index, and a variant (plain, shared W, a zero neuron,
// parallel neurons) from the trial's stream.
struct TransformerTrialSpec {
  int d = 0, H = 0, m = 0;
  bool share_w = false, zero_neuron = false, parallel_neurons = false;
};
TransformerTrialSpec draw_transformer_trial(const VerifyOptions& o, int index);

// One trial's draw, a pure function of (options, trial index).
struct TrialSpec {
  int index = 0;
  std::uint64_t seed = 0;  // model seed and learner seed, as `mhaq recover --seed`
  int d = 0;
  int H = 0;          // canonical head count intended (the model's canonical count is used)
  int raw_heads = 0;  // heads of the generated model before canonical merging
  bool share_w = false, cancel_v = false;
};
TrialSpec draw_trial(const VerifyOptions& o, int index);
std::uint64_t trial_seed(std::uint64_t seed, int index);

// The `mhaq recover ...` command line that replays one run of a trial.
std::string replay_command(const VerifyOptions& o, const TrialSpec& t, int max_heads);

// Schwartz-Zippel union bound (proofs/09) for the paper schedule with d,
// canonical H and token entries from a set of size S = 2R+1: events,
// degree sums, the unconditioned bound sum(deg)/S, the factor for redrawn
// singular B/Delta, and the final bound clipped to [0, 1].
struct SchwartzZippel {
  int d = 0, H = 0;
  long S = 0, pairs = 0, residue_events = 0, collision_events = 0, link_events = 0, degree_sum = 0;
  double unconditioned = 0, nonsingular_lower = 0, bound = 0;
};
SchwartzZippel schwartz_zippel(int d, int H, long S);
double schwartz_zippel_bound(int d, int H, long S);  // the clipped final bound

// One claim-5 trial's run: the drawn transformer's shape and variant, its
// recovery without the model, and the stated condition its canonical truth
// violates ("" if none).
struct TransformerTrial {
  TransformerTrialSpec spec;
  RecoverResult result;
  std::string condition;
};

// One trial, a pure function of (options, index): the draw (spec, with H =
// the model's canonical head count) and the recover results without their
// heads: known (H known) and, when o.unknown_h, h0 (only the bound H0
// known); for claim 4 the noise eps and the uniform and worst-case runs; for
// claim 5 the transformer's run. No verdict is made here; verify_tally
// judges the trials.
struct VerifyTrial {
  TrialSpec spec;  // index and seed always; the rest when an attention model was drawn
  bool attention = false;
  std::optional<RecoverResult> known, h0;
  int H0 = 0;
  std::optional<std::string> eps;  // claim 4
  std::optional<RecoverResult> uniform, worst;
  std::optional<TransformerTrial> transformer;
};
VerifyTrial verify_trial(const VerifyOptions& o, int index);
// A trial as a message between threads and ranks, and back (the round trip
// keeps every field the tally reads).
nlohmann::json verify_trial_json(const VerifyTrial& t);
VerifyTrial verify_trial_from_json(const nlohmann::json& j);

// A failing trial as the report lists it: R only in the rate study, d and H
// only in the claims table.
struct FailingTrial {
  std::optional<long> R;
  int trial = 0;
  std::uint64_t seed = 0;
  std::optional<int> d, H;
  std::string reason, command;
};

// One row of the claims table: trials and their verdicts, the worst figure
// (as text, and as a number when there is a finite one) and the failures.
struct ClaimRow {
  std::string id, text;
  int trials = 0, passes = 0, failures = 0, degenerate = 0, unable = 0, not_identifiable = 0, repaired = 0;
  std::string worst = "-";
  std::optional<double> worst_value;
  std::vector<FailingTrial> failing;
};

// One trial in the result's trial list. Claims 1-4: the draw, the H-known
// run's status and the bound (null where it does not apply), H0 and the
// H0 run's status. Claim 4's study: eps, the uniform run's status and,
// unless degenerate, kappa eps and the certified bound (null when none).
struct TrialRow {
  int trial = 0;
  std::uint64_t seed = 0;
  int d = 0, H = 0, raw_heads = 0;
  bool share_w = false, cancel_v = false;
  Status status = Status::ok;
  std::optional<double> bound;
  std::optional<int> H0;
  std::optional<Status> status_h0;
  std::string eps;
  std::optional<double> kappa_times_eps, certified_bound;
};

// The degenerate draws of the H-known runs against the Schwartz-Zippel bound.
struct DegenerateSummary {
  long token_range = 0, S = 0;
  int trials = 0, degenerate_known_h = 0, degenerate_h0 = 0, repaired_known_h = 0, vacuous_trials = 0;
  double observed_rate = 0;
  std::optional<double> mean_bound;  // none when the bound does not apply
  bool rate_within_bound = true, bound_applies = true;
  std::string derivation;
};

// What verify found. claim == 4: the claim-4 study (one claim row, the
// worst ratios); otherwise claims 1-5 as o.model_kind selects them.
struct VerifyResult {
  bool ok = false;  // no claim has a failure (claim 4: and some trial passed)
  int claim = 0;
  Arith arith = Arith::exact;
  long bits = 0;
  Design design = Design::paper;
  std::uint64_t seed = 0;
  int trials = 0;
  std::optional<double> tolerance;  // floats
  std::string model_kind;
  Schedule schedule = Schedule::paper;
  std::string distribution;
  std::vector<ClaimRow> claims;
  DegenerateSummary schwartz_zippel;
  std::vector<TrialRow> trial_list;
  double worst_bound_ratio = 0, worst_observed_over_bound = 0;  // claim 4
};

// The claims table from the trials 0..n-1, in index order.
VerifyResult verify_tally(const VerifyOptions& o, const std::vector<VerifyTrial>& trials);
// verify_tally over every trial, the trials run across o.threads threads
// and the MPI ranks (base/distribute.hpp). Each trial crosses its JSON
// round trip in every configuration, so the result is the same for any rank
// or thread count. Nothing on MPI ranks other than 0.
std::optional<VerifyResult> verify(const VerifyOptions& o);
nlohmann::json verify_json(const VerifyResult& v);  // the --json document (docs/studies/verify.md)
std::string verify_report(const VerifyResult& v);
// 0 when no claim has a failure, 6 (mismatch) otherwise.
int verify_exit_code(const VerifyResult& v);

// Rate study: for each R, o.trials known-H trials at token range R; observed
// degenerate rate next to the mean bound, overall and per (d, H). Distributed
// like verify (one item per range and trial); nothing on MPI ranks other than 0.
struct RateCell {
  int d = 0, H = 0, trials = 0, degenerate = 0;
  double observed_rate = 0, bound = 0;
  bool within = true;
};
struct RateRow {
  long token_range = 0, S = 0;
  int trials = 0, degenerate = 0, unrepaired = 0;
  double observed_rate = 0, mean_bound = 0;
  bool within = true;
  std::vector<RateCell> cells;
};
struct RateStudy {
  bool ok = false;
  Arith arith = Arith::exact;
  std::uint64_t seed = 0;
  int trials_per_range = 0;
  std::string distribution;
  std::vector<RateRow> rates;
  bool all_within_bound = true;
  int wrong_answers = 0;
  std::vector<FailingTrial> failing;
};
std::optional<RateStudy> rate_study(const VerifyOptions& o, const std::vector<long>& ranges);
nlohmann::json rate_json(const RateStudy& r);
std::string rate_report(const RateStudy& r);
int rate_exit_code(const RateStudy& r);  // 0, or 6 if a rate exceeds its bound or an answer was wrong

std::string verify_distribution(const VerifyOptions& o);

}  // namespace mhaq
