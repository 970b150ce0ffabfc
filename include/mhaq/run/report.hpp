// Small pieces every run report shares (recover, recover_transformer).
#pragma once
#include <string>

#include "mhaq/arith/rational.hpp"
#include "mhaq/run/judge.hpp"
#include "mhaq/run/run_result.hpp"

namespace mhaq {

// A power of two given by its log2, as a short decimal that never underflows.
std::string decimal_of_log2(double l2);
// The power of two when it is a normal double, 0 for -inf, NaN otherwise (the
// record writes it as null; the decimal string beside it always holds the value).
double pow2_value(double l2);
// log2 |q| (to double accuracy).
double log2_abs(const Rational& q);
// status, and message and remedy unless ok.
void report_verdict(RecoverResult& r, const Verdict& v);
// A float run's report lines on its judge: the tolerance, the certified
// bound (or why there is none), the first-order estimate and the assumption
// on the answers.
std::string judge_lines(const RecoverResult& r);

}  // namespace mhaq
