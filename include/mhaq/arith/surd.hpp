// Scales q sqrt(m): a rational q times the square root of a squarefree
// positive integer m. An attention layer's scale 1/sqrt(d_k) is one (d_k = 8:
// sqrt(2)/4); mhaq keeps it exactly as this algebraic factor of the scores
// instead of rounding it (docs/math/model.md).
#pragma once
#include <string>

#include "mhaq/arith/rational.hpp"

namespace mhaq {

struct Surd {
  Rational q{1};
  long m = 1;  // squarefree, >= 1
  bool is_rational() const { return m == 1; }
  // "3/4", "sqrt(2)", "sqrt(2)/4", "3*sqrt(2)/4", "-sqrt(6)"
  std::string str() const;
};

// q sqrt(x) for a rational x > 0, with the square part of x taken out:
// sqrt(n/d) = sqrt(n d)/d and n d = s^2 m with m squarefree. Error(input)
// naming `where` when x <= 0 or m does not fit in 62 bits.
Surd surd_of(const Rational& q, const Rational& x, const std::string& where);

// Parses a scale: a rational ("1/2", "0.125"), "sqrt(x)", "1/sqrt(x)",
// "a*sqrt(x)", "a/sqrt(x)", "sqrt(x)/b" and "a*sqrt(x)/b" with rationals a,
// b and x > 0 (spaces ignored). Error(input) naming `where` otherwise.
Surd parse_surd(const std::string& text, const std::string& where);

}  // namespace mhaq
