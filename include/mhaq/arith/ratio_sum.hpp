// Does sum_h num[h] / den[h] equal a given value? The learner's self-check
// asks this of every answer (the heads' terms against the oracle's answer).
#pragma once
#include <cstddef>
#include <vector>

#include "mhaq/arith/field.hpp"

namespace mhaq {

// Every field: the sum formed term by term from zero, left to right, then
// compared with fld.equal (the very operations of a plain evaluation).
template <class F>
Truth equal_ratio_sum(const F& fld, const std::vector<typename F::value_type>& num, const std::vector<typename F::value_type>& den,
                      const typename F::value_type& value) {
  typename F::value_type total = fld.from(Rational(0)), q = total;
  for (std::size_t h = 0; h < num.size(); ++h) {
    q = num[h];  // total = total + num[h] / den[h], in place
    q /= den[h];
    total += q;
  }
  return fld.equal(total, value);
}

// Q(tau): the same decision by cross-multiplication in Z[tau], without
// forming the sum's canonical form (no polynomial gcd); Error(internal) when
// some den[h] is zero, as the division would.
Truth equal_ratio_sum(const Field<QTau>& fld, const std::vector<QTau>& num, const std::vector<QTau>& den, const QTau& value);

}  // namespace mhaq
