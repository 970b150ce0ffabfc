// One judge for every tool: the statuses a run can end in, their exit codes
// and remedies, and the verdict function that weighs what a run found
// (recover, verify, golden, certificates, sweep and the CLI all use it).
//
//   status            exit  meaning                                   remedy
//   ok                0     recovered, and checked as far as possible
//   degenerate        4     this draw of the learner's queries        another --seed
//   unable            5     precision too low to decide or to meet    more --bits (or exact)
//                           the tolerance
//   mismatch          6     the result disagrees with a known truth   (a bug; report it)
//   inconsistent      8     the answers fit no model with the stated  check H (too small?) or the oracle
//                           head count
//   not_identifiable  9     the model, or the stated H, is not        no seed helps: fix H or the model
//                           identifiable from value queries
//   checker_rejected  10    a checker rejected a certificate, golden  the file is wrong or tampered with
//                           file or lemma check
//   over_budget       11    the estimated exact cost exceeds the       smaller token range, ball mode, or
//                           stated budget (refused before the work),   a larger --max-degree; a larger
//                           or the run needs more than --max-queries   --max-queries
//   oracle_failed     12    an external oracle exited, hung or sent    fix the oracle (the message names
//                           a malformed reply                          the fault and the last query)
#pragma once
#include <cmath>
#include <optional>
#include <string>

#include "mhaq/arith/field.hpp"
#include "mhaq/base/error.hpp"

namespace mhaq {

enum class Status { ok, degenerate, unable, mismatch, inconsistent, not_identifiable, rejected, over_budget, oracle_failed };

const char* status_name(Status s);  // the JSON "status" string
int status_exit_code(Status s);
const char* status_remedy(Status s);
Status parse_status(const std::string& s);  // Error(internal) for an unknown name
std::optional<Status> find_status(const std::string& s);  // nothing for an unknown name
// The status an error of the learner means; Error(internal) for kinds that are not run outcomes.
Status status_of(ErrorKind k);

struct Verdict {
  Status status = Status::ok;
  std::string message;  // why, for every status but ok
};

// The default tolerance of a float run on max_rel_error whose answers are
// accurate to `bits` bits (the learner's precision, the oracle's rounding or
// its noise, whichever is coarsest): 2^(-bits/4).
double default_tolerance_log2(long bits);

// What one run found, as the judge needs it.
struct RunFacts {
  Arith arith = Arith::exact;
  // The learner's own check that its heads reproduce every answer.
  Truth self_check = Truth::unknown;
  long self_check_failed = -1;
  // Floats: the stated tolerance on max_rel_error and the run's first-order
  // error estimate from kappa (log2; NaN when it could not be computed). The
  // estimate is a reported figure; it decides nothing unless first_order_only.
  double tolerance_log2 = std::numeric_limits<double>::quiet_NaN();
  double estimate_log2 = std::numeric_limits<double>::quiet_NaN();
  // Floats: the judge's evidence (proofs/40-float-judge.md). certified_log2
  // bounds max_rel_error for every model with at most the stated H heads
  // whose values lie within the answers' stated errors (log2; NaN: none, and
  // judge_note says why). contradiction: the replay in balls certifies that
  // no such model fits the answers.
  double certified_log2 = std::numeric_limits<double>::quiet_NaN();
  std::string judge_note;
  bool contradiction = false;
  // A float tool without that evidence yet is judged on its estimate alone.
  bool first_order_only = false;
  // Comparison with a known truth, when there is one.
  bool truth_known = false;
  int heads_true = 0, heads_recovered = 0;
  bool agrees = true;           // exact: equality; ball: containment; floats: max_rel_error <= tolerance
  std::string disagreement;     // how it disagrees
};

// The verdict on a run that returned heads (a learner that threw is judged
// by status_of(kind), a float one after its replay in balls). Rules:
//  * self_check no: inconsistent when exact or balls, or when a float run's
//    replay certifies the contradiction; otherwise unable (the answers'
//    stated error or the precision may explain it);
//  * floats: ok needs a certified bound within the tolerance; none, or one
//    above it, is unable;
//  * truth known: a head count that differs, or no agreement, is mismatch;
//  * otherwise ok.
Verdict judge(const RunFacts& f);

}  // namespace mhaq
