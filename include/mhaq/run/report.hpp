// Small pieces every run report shares (recover, recover_transformer).
#pragma once
#include <string>

#include "mhaq/arith/rational.hpp"
#include "mhaq/run/judge.hpp"
#include "mhaq/run/recover_options.hpp"
#include "mhaq/run/run_result.hpp"

namespace mhaq {

// A power of two given by its log2, as a short decimal that never underflows.
std::string decimal_of_log2(double l2);
// The power of two when it is a normal double, 0 for -inf, NaN otherwise (the
// record writes it as null; the decimal string beside it always holds the value).
double pow2_value(double l2);
// A float judge's certified bound on max_rel_error, as a log2: when it is
// finite, kept in the facts the verdict is decided from and written to the
// record, and true; else nothing is kept, and false.
bool record_certified_bound(RecoverResult& r, RunFacts& facts, double l2);
// A float run's first-order error estimate, as a log2: in the facts and the
// record (it informs; it never decides an ok).
void record_estimate(RecoverResult& r, RunFacts& facts, double l2);
// Why a float judge has no certified bound, in the facts and the record.
void record_judge_note(RecoverResult& r, RunFacts& facts, const std::string& why);
// log2 |q| (to double accuracy).
double log2_abs(const Rational& q);
// What to do about a run that ended with v, in terms of the run's own
// options: a remedy names only options that apply to this run (no --arith
// exact for an external oracle or a chosen design, no --bits for double, no
// --oracle-bits for an external oracle, the accuracy that limits the run).
// The kind of run comes from r: a baseline (r.method), a transformer
// (r.model_kind), else attention. Empty for ok.
std::string run_remedy(const RecoverResult& r, const Verdict& v, const RecoverOptions& o);
// status, and message and remedy (run_remedy) unless ok.
void report_verdict(RecoverResult& r, const Verdict& v, const RecoverOptions& o);
// A float run's report lines on its judge: the tolerance, the certified
// bound (or why there is none), the first-order estimate and the assumption
// on the answers.
std::string judge_lines(const RecoverResult& r);

}  // namespace mhaq
