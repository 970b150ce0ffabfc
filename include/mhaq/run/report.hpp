// Small pieces every run report shares (recover, recover_transformer).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "mhaq/arith/rational.hpp"
#include "mhaq/run/judge.hpp"

namespace mhaq {

// A power of two given by its log2, as a short decimal that never underflows.
std::string decimal_of_log2(double l2);
// The power of two as a JSON number when it is a normal double, 0 for -inf,
// null otherwise (the decimal string beside it always holds the value).
nlohmann::json pow2_json(double l2);
// log2 |q| (to double accuracy).
double log2_abs(const Rational& q);
// status, and message and remedy unless ok.
void report_verdict(nlohmann::json& r, const Verdict& v);

}  // namespace mhaq
