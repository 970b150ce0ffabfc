// The typed result of one recover run (attention or transformer), as the
// tools pass it to each other: verify, sweep, golden, the baselines'
// comparison and the command line read these fields, never the run's JSON
// record by key. `doc` is that record, kept only to be written out.
#pragma once
#include <optional>
#include <nlohmann/json.hpp>
#include <string>

#include "mhaq/run/judge.hpp"

namespace mhaq {

struct RecoverResult {
  Status status = Status::ok;
  std::string message;  // why, for every status but ok
  long queries = 0;     // every query sent (a tuned design's pilot included)
  long max_length = 0;
  std::optional<long> design_queries;  // tuned design: the design's own run, without the pilot
  int heads_true = 0, heads_recovered = 0;
  std::optional<int> heads_found;                       // attention: heads the learner found (H0 runs)
  std::optional<int> neurons_true, neurons_recovered;   // transformers
  long repairs = 0, fallback_queries = 0;               // queries beyond the plan (a repaired or fallback run)
  // The comparison with the known truth, as the arithmetic's truth test made it
  // (run/arith_policy.hpp); absent when the run ended before it.
  std::optional<bool> exact_match, contains_truth;
  std::optional<bool> functional_all_zero;  // exact transformers: T - T' = 0 on fresh sequences
  std::optional<double> max_radius, max_rel_error;  // as written (a number; absent when out of double's range)
  std::optional<std::string> max_radius_decimal, max_rel_error_decimal;  // the same in decimal ("inf" for a wrong head count)
  std::optional<bool> wrong;  // baselines: parameters returned that disagree with the known truth
  std::optional<std::string> certificate_note;      // why no certificate was written
  std::optional<double> certified_relative_error;   // balls: certified radius / head norm
  // With noise (recover --noise): kappa, kappa eps, the certified bound and
  // the observed parameter error (numbers; absent when not computed).
  std::optional<double> kappa, kappa_times_eps, certified_bound, observed_error;
  std::optional<std::string> certified_note;  // why there is no certified bound
  bool repaired() const { return repairs > 0 || fallback_queries > 0; }
  int exit_code() const { return status_exit_code(status); }

  nlohmann::json doc;  // the run's record, for output only
};

// The typed result of a run's record: the one place that reads the record
// recover and recover_transformer write (run/recover.hpp).
RecoverResult typed_result(nlohmann::json doc);

}  // namespace mhaq
