// The per-arithmetic members of the run layer's policy (run/arith_policy.hpp).
#include "mhaq/run/arith_policy.hpp"

#include <arb.h>

#include <cstdio>
#include <limits>

#include "mhaq/arith/flint_wrappers.hpp"
#include "mhaq/model/compare_heads.hpp"
#include "mhaq/run/report.hpp"

namespace mhaq {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

template <class T>
void compare_float(RecoverResult& r, RunFacts& f, const Model& canon, const std::vector<LearnedHead<T>>& got, const T* beta) {
  const double l2 = max_rel_error_log2(got, canon, beta);
  r.truth.max_rel_error = pow2_value(l2);
  r.truth.max_rel_error_decimal = decimal_of_log2(l2);
  f.agrees = l2 <= f.tolerance_log2;
  if (!f.agrees) f.disagreement = "max_rel_error " + decimal_of_log2(l2) + " exceeds the tolerance " + decimal_of_log2(f.tolerance_log2);
}

// the default tolerance follows the answers' accuracy: the learner's
// precision, the oracle's rounding and its noise, whichever is coarsest
template <class T>
void float_tolerance(RecoverResult& r, RunFacts& facts, const Field<T>& F, const Rational& tolerance, bool decisions) {
  facts.tolerance_log2 = tolerance.is_zero() ? default_tolerance_log2(static_cast<long>(-F.tol.acc(F.precision()))) : log2_abs(tolerance);
  r.judge.tolerance = pow2_value(facts.tolerance_log2);
  r.judge.tolerance_decimal = decimal_of_log2(facts.tolerance_log2);
  if (!decisions) return;
  char b[200];
  std::snprintf(b, sizeof b, "equal within 2^%.0f relative, different beyond 2^%.0f, undecided between (answers accurate to 2^%.0f; floating-point judgement)",
                F.tol.yes_log2(F.precision()), F.tol.no_log2(F.precision()), F.tol.acc(F.precision()));
  r.judge.decision_tolerance = b;
}
}  // namespace

// ---- exact: Q(tau), no precision, equality in Q
template <>
std::unique_ptr<PrecisionScope> ArithOps<QTau>::precision(long) {
  return nullptr;
}
template <>
long ArithOps<QTau>::reported_bits(long) {
  return -1;
}
template <>
void ArithOps<QTau>::compare(RecoverResult& r, RunFacts& f, const Model& canon, const std::vector<LearnedHead<QTau>>& got, const QTau* beta) {
  const bool m = exact_heads_match(got, canon, beta);
  r.truth.exact_match = m;
  f.agrees = m;
  if (!m) f.disagreement = "the recovered heads differ from the canonical truth (exact comparison in Q)";
}
template <>
void ArithOps<QTau>::tolerance(RecoverResult&, RunFacts&, const Field<QTau>&, const Rational&, bool) {}

// ---- balls: --bits, containment of the truth
template <>
std::unique_ptr<PrecisionScope> ArithOps<Ball>::precision(long bits) {
  return std::make_unique<PrecisionScope>(bits);
}
template <>
long ArithOps<Ball>::reported_bits(long bits) {
  return bits;
}
template <>
void ArithOps<Ball>::compare(RecoverResult& r, RunFacts& f, const Model& canon, const std::vector<LearnedHead<Ball>>& got, const Ball* beta) {
  flint::Mag mx;
  for (const auto& g : got) {
    for (int i = 0; i < canon.d; ++i) {
      mag_max(mx.v, mx.v, arb_radref(g.v[i].raw()));
      for (int j = 0; j < canon.d; ++j) mag_max(mx.v, mx.v, arb_radref(g.W(i, j).raw()));
    }
    for (const Ball& x : g.c) mag_max(mx.v, mx.v, arb_radref(x.raw()));
  }
  if (beta) mag_max(mx.v, mx.v, arb_radref(beta->raw()));
  double l2 = -kInf;
  if (!mag_is_zero(mx.v)) {
    Ball b;
    arf_set_mag(arb_midref(b.raw()), mx.v);
    arb_log_base_ui(b.raw(), b.raw(), 2, 64);
    l2 = b.mid_double();
  }
  const bool c = ball_heads_contain(got, canon, beta);
  r.truth.contains_truth = c;
  r.truth.max_radius = pow2_value(l2);
  r.truth.max_radius_decimal = decimal_of_log2(l2);
  f.agrees = c;
  if (!c) f.disagreement = "some output ball misses the canonical truth";
}
template <>
void ArithOps<Ball>::tolerance(RecoverResult&, RunFacts&, const Field<Ball>&, const Rational&, bool) {}

// ---- mpfr: --bits, max_rel_error within the tolerance
template <>
std::unique_ptr<PrecisionScope> ArithOps<Mpfr>::precision(long bits) {
  return std::make_unique<PrecisionScope>(bits);
}
template <>
long ArithOps<Mpfr>::reported_bits(long bits) {
  return bits;
}
template <>
void ArithOps<Mpfr>::compare(RecoverResult& r, RunFacts& f, const Model& canon, const std::vector<LearnedHead<Mpfr>>& got, const Mpfr* beta) {
  compare_float(r, f, canon, got, beta);
}
template <>
void ArithOps<Mpfr>::tolerance(RecoverResult& r, RunFacts& f, const Field<Mpfr>& F, const Rational& tolerance, bool decisions) {
  float_tolerance(r, f, F, tolerance, decisions);
}

// ---- IEEE double: 53 bits, max_rel_error within the tolerance
template <>
std::unique_ptr<PrecisionScope> ArithOps<double>::precision(long) {
  return nullptr;
}
template <>
long ArithOps<double>::reported_bits(long) {
  return 53;
}
template <>
void ArithOps<double>::compare(RecoverResult& r, RunFacts& f, const Model& canon, const std::vector<LearnedHead<double>>& got, const double* beta) {
  compare_float(r, f, canon, got, beta);
}
template <>
void ArithOps<double>::tolerance(RecoverResult& r, RunFacts& f, const Field<double>& F, const Rational& tolerance, bool decisions) {
  float_tolerance(r, f, F, tolerance, decisions);
}

}  // namespace mhaq
