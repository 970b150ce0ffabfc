// The options of one recover run (run/recover.hpp), apart from the driver so
// that the certificate writer (run/certificate.hpp) can read them without
// depending on the driver that calls it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "mhaq/arith/field.hpp"
#include "mhaq/arith/solve/qtau_solve.hpp"
#include "mhaq/oracle/checkpoint.hpp"
#include "mhaq/oracle/model_oracle.hpp"
#include "mhaq/oracle/external_oracle.hpp"
#include "mhaq/stages/2-schedule/design.hpp"
#include "mhaq/stages/learner.hpp"

namespace mhaq {

// recover --oracle CMD: the learner asks an external oracle
// (docs/oracle-protocol.md); the model, when there is one, is only the truth
// the result is compared with afterwards.
struct ExternalRun {
  ExternalOptions transport;
  ErrorStatement error;      // --oracle-error (empty: the oracle's own statement)
  bool truth_known = false;  // a --model to compare with
  long max_queries = 0;      // > 0: a plan that needs more is refused before any query
  // filled by the run (not part of its output, which must not depend on a resume)
  mutable long asked = 0, replayed = 0;
  mutable std::string exit_note;
};

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
  int neurons = 0;           // transformers: the learner's neuron count (0: found by the learner; balls are told the canonical count)
  Rational tolerance;        // floats: tolerance on max_rel_error; 0 = 2^(acc/4), acc = log2 of the answers' accuracy
  bool repair = true;      // repair degenerate pairs (stages/learner.hpp, Repair); false: such a draw ends degenerate
  ExactSolver exact_solver = ExactSolver::sparse;  // exact: the Q(tau) linear solver (same result, different time)
  // Exact cost guard: the largest tau-degree an answer of the plan may have
  // (L times a head-summed score range, known before any answer is computed);
  // 0 = kDefaultMaxDegree. A plan beyond it ends over_budget (exit 11) before any work.
  long max_degree = 0;
  // When set, a run that ends ok stores its certificate here (recover
  // --certificate; include/mhaq/run/certificate.hpp).
  std::string* certificate = nullptr;
  // How B and Delta are chosen (stages/2-schedule/design.hpp, analysis/design_search.hpp).
  Design design = Design::paper;
  // Floats: false skips the run's first-order error estimate (benchmarks
  // measure its cost this way; the judge then has no estimate to go by).
  bool error_estimate = true;
  // Floats: false skips the certified judge's replay in balls (proofs/40),
  // so the run ends unable: only tests/bench/bench_judge.cpp, which measures
  // the replay's cost this way.
  bool judge_replay = true;
  // When set, answers come from this external oracle (attention models only).
  const ExternalRun* external = nullptr;
  // recover --checkpoint / --resume-checkpoint (oracle/checkpoint.hpp): the
  // answers are journaled as they arrive, and a resume serves them again
  // before it asks the oracle; an external oracle's journal is set up by
  // checkpoint_external (run/recover.hpp). Attention runs with design paper
  // or scaled and no --noise or --target-error; null: none.
  const CheckpointSpec* checkpoint = nullptr;
  // Progress lines of a long run (base/progress.hpp; the program writes them
  // to standard error unless --quiet); null: none. No result depends on them.
  Progress* progress = nullptr;
  // The learner allows biases (heads' c and beta; docs/math/biases.md).
  // Unset: as the model (on when it has biases), off with no model.
  std::optional<bool> bias;
  // Schedule::rank: the bound R on every head's rank, 1 <= R < d (docs/math/low-rank.md)
  int rank = 0;
};

}  // namespace mhaq
