// Compiled by tests/answer_opacity.sh: learner-side code that reads the
// tau-structure of an exact answer must not compile. MHAQ_VARIANT selects one
// forbidden access; MHAQ_VARIANT 0 is the control (field operations and
// three-valued tests only), which must compile.
#include "mhaq/stages/learner.hpp"

namespace mhaq {
Truth learner_side(const Field<QTau>& F, const QTau& a, const QTau& b) {
  const QTau s = a * b - a / b;  // field operations: allowed
  Truth t = truth_and(F.is_positive(s), F.equal(a, b));
#if MHAQ_VARIANT == 1
  (void)a.raw();  // the polynomial representation
#elif MHAQ_VARIANT == 2
  (void)a.valuation();  // the tau-adic valuation
#elif MHAQ_VARIANT == 3
  long n;
  (void)a.is_tau_power(n);  // "is this answer a power of tau?"
#elif MHAQ_VARIANT == 4
  (void)F.L_;  // L belongs to the field
#elif MHAQ_VARIANT == 5
  (void)(a == b);  // a two-valued comparison
#endif
  return t;
}
}  // namespace mhaq
