// Products and sums in place: the same roundings as the expressions they
// replace, without the temporaries those expressions make (each a fresh
// number, a copy of the left operand and a free). Hot loops of the learner's
// evaluations use them; every value stays the one the expression gives.
#pragma once
#include "mhaq/arith/numbers.hpp"

namespace mhaq {

// out = a * b (the product rounded once, as a * b). `out` may hold any value
// on entry; it must not be a or b.
template <class T>
void mul_into(T& out, const T& a, const T& b) {
  out = a;
  out *= b;
}
inline void mul_into(Ball& out, const Ball& a, const Ball& b) { arb_mul(out.raw(), a.raw(), b.raw(), working_precision()); }

// s = s + a * b with the product rounded, then the sum rounded (never a fused
// multiply-add); `tmp` is scratch.
template <class T>
void add_product(T& s, const T& a, const T& b, T& tmp) {
  mul_into(tmp, a, b);
  s += tmp;
}

}  // namespace mhaq
