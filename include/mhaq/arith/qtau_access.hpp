// The polynomial structure of Q(tau) elements. Only the arithmetic layer
// (Field<QTau>'s roots, logarithm and sign tests), the oracle, and tools that
// store or print exact values (golden files, certificates, proofs) include
// this header. The learner's stages never do: reading the tau-structure of an
// answer would reveal more than the real number it stands for
// (docs/math/exact-arithmetic.md, proofs/08), and tests/stage_purity.sh checks that no stage file includes it.
#pragma once
#include <flint/fmpz_poly_q.h>

#include <string>

#include "mhaq/arith/field.hpp"
#include "mhaq/arith/numbers.hpp"
#include "mhaq/arith/rational.hpp"

namespace mhaq {

struct QTauAccess {
  static fmpz_poly_q_struct* raw(QTau& x) { return x.v_; }
  static const fmpz_poly_q_struct* raw(const QTau& x) { return x.v_; }
  static bool is_zero(const QTau& x) { return fmpz_poly_q_is_zero(x.v_); }
  static bool equal(const QTau& a, const QTau& b) { return fmpz_poly_q_equal(a.v_, b.v_); }
  static QTau tau_pow(long n);  // tau^n, n of any sign
  // tau-adic valuation: lowest exponent of the numerator minus that of the denominator (x != 0).
  static long valuation(const QTau& x);
  // True and n set when x equals tau^n exactly.
  static bool is_tau_power(const QTau& x, long& n);
  // True and q set when x is a constant of Q.
  static bool is_rational(const QTau& x, Rational& q);
  // Largest degree of numerator and denominator (a cost measure).
  static long degree(const QTau& x);
  static std::string str(const QTau& x);  // pretty, in the variable "t"
  static long L(const Field<QTau>& F) { return F.L_; }  // tau = e^{1/L}
};

}  // namespace mhaq
