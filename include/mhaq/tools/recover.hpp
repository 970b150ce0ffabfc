// The recover driver: builds the oracle for a hidden model, runs the learner
// through the Oracle interface only, and compares the result with the
// canonical truth. It is the one place where model and learner meet.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "mhaq/arith/field.hpp"
#include "mhaq/stages/learner.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/stages/1-oracle/model_oracle.hpp"

namespace mhaq {

struct RecoverOptions {
  Arith arith = Arith::exact;
  long bits = 256;        // ball, mpfr
  int heads = 0;          // learner's H; 0 = canonical count of the truth (known H)
  int max_heads = 0;      // > 0: only the bound H0 is known (claim 3); overrides heads
  Schedule schedule = Schedule::paper;
  std::uint64_t seed = 1;  // learner's randomness
  TokenSpec tokens{0, 0};  // 0 = default for the arithmetic
  long oracle_bits = 0;    // approximate oracle: answers rounded to this many bits (0 = off)
  Rational noise_eps;      // approximate oracle: added noise uniform in [-eps, eps]
  std::uint64_t noise_seed = 1;
  int threads = 1;         // learner threads (0 = all hardware threads); output does not depend on it
  NoisePattern noise_pattern = NoisePattern::uniform;  // uniform, or signs = the worst case of the first-order error
  int samples_per_pair = 0;  // 0: 2H+1 (the paper's count); K > 2H+1: oversampling, least-squares pair fits
  Rational target_error;     // > 0 (ball only): raise precision until the balls certify this relative error
  long max_bits = 1L << 14;  // cap of the precision doubling for target_error
  // When set, a run that ends ok and agrees with the truth stores its
  // certificate here (recover --certificate; include/mhaq/certificate.hpp).
  std::string* certificate = nullptr;
};

// Default token draws: exact mode small integers; other modes a fine dyadic
// grid on [-1, 1] (2^20 steps), exactly representable in every arithmetic.
TokenSpec default_tokens(Arith a);
// Seed of the learner's own stream, derived from --seed (model draws use --seed directly).
std::uint64_t learner_seed(std::uint64_t seed);
// Default generated-model distributions per arithmetic.
GenerateOptions default_generate(Arith a);

// Runs one recovery. Degenerate and precision failures are reported in the
// returned object ("status"), not thrown; usage/input errors are thrown.
// Fields: status, message, queries, max_length, paper_bound, heads_true,
// heads_recovered, and exact_match | contains_truth, max_radius | max_rel_error.
// With noise: kappa, kappa_times_eps, certified_bound, observed_error
// (sensitivity.hpp's entrywise metric). With target_error: bits_used,
// bits_start, kappa_estimate, attempts.
nlohmann::json recover(const Model& truth, const RecoverOptions& o);

// Exact recovered heads equal the canonical heads of the truth (entries
// equal in Q), up to permutation.
bool exact_heads_match(const std::vector<LearnedHead<QTau>>& got, const Model& canon);

// Ball recovered heads contain the canonical heads of the truth (every entry
// contains the true rational), under some one-to-one assignment.
bool ball_heads_contain(const std::vector<LearnedHead<Ball>>& got, const Model& canon);

// Exit code for a recover result: 0 ok, 4 degenerate, 5 unable, 6 mismatch,
// 8 inconsistent (the answers fit no model with the stated head count).
int recover_exit_code(const nlohmann::json& r);

// Human-readable report of a recover result.
std::string recover_report(const nlohmann::json& r);

}  // namespace mhaq
