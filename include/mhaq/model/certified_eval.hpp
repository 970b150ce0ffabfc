// Certified answers of an attention model without Q(tau): f(X) for exact
// rational weights and tokens, evaluated in Arb at rising precision (Ziv's
// strategy) until the ball fixes the correctly rounded decimal at the
// requested number of significant digits, or a precision cap is reached.
//
// Scores s_{h,r} = x_r^T (W_h x_N + c_h) and values v_h^T x_r are exact
// rationals (beta is added); only the weights e^{sqrt(root) (s_{h,r} -
// max_r s_{h,r})} are irrational (root: Model::root, an irrational scale).
// A head whose scores are all equal, or whose values are all equal,
// contributes an exact rational; when every head does, f is rational and its
// decimal is rounded exactly (ties to even). Otherwise the decimal is decided
// from a ball that contains f; a value that is a decimal tie or zero is never
// decided by a ball, so such a query ends in Error(unable) at the cap.
// This evaluator serves golden export of certified files and golden check's
// comparison; the separate checker (src/check) keeps its own.
#pragma once
#include <arb.h>

#include <string>

#include "mhaq/model/model.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"

namespace mhaq {

struct CertifiedValue {
  std::string decimal;  // "[-]d.ddd...e[+-]XX", `digits` significant digits, correctly rounded to nearest
  std::string mid;      // the deciding ball: midpoint and radius as exact dyadic rationals ("p/q");
  std::string rad;      //   rad "0" and mid the exact value when the answer is rational
  long bits = 0;        // working precision that decided it (0: rational, decided exactly)
  bool rational = false;
};

// Correctly rounded (to nearest, ties to even) decimal of x in scientific
// form "[-]d.ddd...e[+-]XX" with exactly D significant digits; zero is
// "0.000...e+00". Exact.
std::string decimal_of_rational(const Rational& x, long D);
// The same decimal for every point of the ball v, decided at `prec` bits:
// true and `out` set when all points of v round alike (v finite, not
// containing zero, the exponent and the rounding certain), false otherwise.
bool decimal_of_ball(const arb_t v, long D, long prec, std::string& out);

// The exact dyadic rational "p/q" (q a power of two) of a binary float.
std::string dyadic_text(const arf_t x);

// Precision of the first attempt for `digits` digits: 3.33 digits + 64 bits.
long certified_start_bits(long digits);
// Error(usage) when the first attempt for `digits` is above `max_bits` (no
// answer could be decided): the message gives the --max-bits that suffices,
// or the most digits that --max-bits (or its limit) allows.
void check_digits_within_bits(long digits, long max_bits);
// Error(unable) when the decimal is not decided within max_bits.
CertifiedValue certified_answer(const Model& m, const Query& q, long digits, long max_bits);

}  // namespace mhaq
