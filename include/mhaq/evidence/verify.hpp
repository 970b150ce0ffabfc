// The theorem checker behind `mhaq verify` (docs/studies/verify.md): repeated random trials
// of the paper's claims 1-3 over a stated distribution of models and learner
// draws, and the Schwartz-Zippel bound on degenerate draws (proofs/09).
// Everything here is deterministic in the options: the same options give the
// same JSON, byte for byte (no timings are reported).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/stages/2-schedule/design.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"

namespace mhaq {

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
nlohmann::json schwartz_zippel(int d, int H, long S);
double schwartz_zippel_bound(int d, int H, long S);  // the clipped final bound

// One trial, a pure function of (options, index): the draw (trial, seed, d,
// H = the model's canonical head count, raw_heads, share_w, cancel_v) and the
// recover results without their heads: "known" (H known) and, when
// o.unknown_h, "H0" and "h0" (only the bound H0 known). No verdict is made
// here; verify_tally judges the records.
nlohmann::json verify_trial(const VerifyOptions& o, int index);
// The claims table from the records of trials 0..n-1, in index order.
// Result: {"claims":[...], "distribution":..., "schwartz_zippel":{...}, ...}.
nlohmann::json verify_tally(const VerifyOptions& o, const std::vector<nlohmann::json>& records);
// verify_tally over every trial's record, the trials run across o.threads
// threads and the MPI ranks (base/distribute.hpp). Each record crosses a
// JSON round trip in every configuration, so the result is the same for any
// rank or thread count. Returns null on MPI ranks other than 0.
nlohmann::json verify(const VerifyOptions& o);
std::string verify_report(const nlohmann::json& v);
// 0 when no claim has a failure, 6 (mismatch) otherwise.
int verify_exit_code(const nlohmann::json& v);

// Rate study: for each R, o.trials known-H trials at token range R; observed
// degenerate rate next to the mean bound, overall and per (d, H). Distributed
// like verify (one item per range and trial); null on MPI ranks other than 0.
nlohmann::json rate_study(const VerifyOptions& o, const std::vector<long>& ranges);
std::string rate_report(const nlohmann::json& r);
int rate_exit_code(const nlohmann::json& r);  // 0, or 6 if a rate exceeds its bound or an answer was wrong

std::string verify_distribution(const VerifyOptions& o);

}  // namespace mhaq
