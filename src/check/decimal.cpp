// The checker's correctly rounded decimals (check_internal.hpp).
#include <cmath>

#include "check_internal.hpp"

namespace mhaq::check {

namespace {
void pow10(fmpz_t out, long k) {
  fmpz_set_ui(out, 10);
  fmpz_pow_ui(out, out, static_cast<ulong>(k));
}
std::string sci(bool neg, const fmpz_t M, long E, long D) {
  char* c = fmpz_get_str(nullptr, 10, M);
  std::string s(c);
  flint_free(c);
  std::string out;
  if (neg) out.push_back('-');
  out.push_back(s[0]);
  if (D > 1) {
    out.push_back('.');
    out.append(s, 1, std::string::npos);
  }
  const long aE = std::labs(E);
  out.push_back('e');
  out.push_back(E < 0 ? '-' : '+');
  if (aE < 10) out.push_back('0');
  out.append(std::to_string(aE));
  return out;
}

}  // namespace

std::string decimal_exact(const fmpq_t x, long D) {
  if (fmpq_is_zero(x)) {
    std::string z("0");
    if (D > 1) {
      z.push_back('.');
      z.append(static_cast<size_t>(D - 1), '0');
    }
    z.append("e+00");
    return z;
  }
  fmpq_t a, y;
  fmpq_init(a);
  fmpq_init(y);
  fmpq_abs(a, x);
  fmpz_t lo, hi, p, q, r;
  fmpz_init(lo), fmpz_init(hi), fmpz_init(p), fmpz_init(q), fmpz_init(r);
  pow10(lo, D - 1);
  pow10(hi, D);
  long E = static_cast<long>(fmpz_sizeinbase(fmpq_numref(a), 10)) - static_cast<long>(fmpz_sizeinbase(fmpq_denref(a), 10)) - 2;
  for (;;) {  // the smallest E with |x| < 10^(E+1): stepped up from below
    const long k = D - 1 - E;
    pow10(p, std::labs(k));
    if (k >= 0) fmpq_mul_fmpz(y, a, p);
    else fmpq_div_fmpz(y, a, p);
    if (fmpq_cmp_fmpz(y, hi) >= 0) { ++E; continue; }
    break;
  }
  while (fmpq_cmp_fmpz(y, lo) < 0) {  // cannot happen after stepping up from below; kept for safety of the loop bound
    --E;
    const long k = D - 1 - E;
    pow10(p, std::labs(k));
    if (k >= 0) fmpq_mul_fmpz(y, a, p);
    else fmpq_div_fmpz(y, a, p);
  }
  fmpz_fdiv_qr(q, r, fmpq_numref(y), fmpq_denref(y));
  fmpz_mul_2exp(r, r, 1);
  const int c = fmpz_cmp(r, fmpq_denref(y));
  if (c > 0 || (c == 0 && fmpz_is_odd(q))) fmpz_add_ui(q, q, 1);
  if (fmpz_equal(q, hi)) { fmpz_set(q, lo); ++E; }
  const std::string out = sci(fmpq_sgn(x) < 0, q, E, D);
  fmpz_clear(lo), fmpz_clear(hi), fmpz_clear(p), fmpz_clear(q), fmpz_clear(r);
  fmpq_clear(a);
  fmpq_clear(y);
  return out;
}

std::string decimal_ball(const arb_t v, long D, slong prec) {
  if (!arb_is_finite(v) || arb_contains_zero(v)) return "";
  Ab a, y, p10, half;
  fmpz_t lo, hi, M;
  fmpz_init(lo), fmpz_init(hi), fmpz_init(M);
  pow10(lo, D - 1);
  pow10(hi, D);
  arb_abs(a.v, v);
  // 10^E <= |x| < 10^(E+1) from the midpoint's binary exponent, then certified
  long E = static_cast<long>(std::floor(static_cast<double>(arf_abs_bound_lt_2exp_si(arb_midref(a.v)) - 1) * 0.3010299956639812));
  std::string out;
  for (int it = 0; it < 64; ++it) {
    const long k = D - 1 - E;
    arb_ui_pow_ui(p10.v, 10, static_cast<ulong>(std::labs(k)), prec);
    if (k >= 0) arb_mul(y.v, a.v, p10.v, prec);
    else arb_div(y.v, a.v, p10.v, prec);
    Ab blo, bhi;
    arb_set_fmpz(blo.v, lo);
    arb_set_fmpz(bhi.v, hi);
    if (arb_ge(y.v, bhi.v)) { ++E; continue; }
    if (arb_lt(y.v, blo.v)) { --E; continue; }
    if (!(arb_ge(y.v, blo.v) && arb_lt(y.v, bhi.v))) break;
    arb_set_d(half.v, 0.5);
    arb_add(y.v, y.v, half.v, prec);
    arb_floor(y.v, y.v, prec);
    if (!arb_get_unique_fmpz(M, y.v)) break;
    if (fmpz_equal(M, hi)) { fmpz_set(M, lo); ++E; }
    out = sci(arb_is_negative(v), M, E, D);
    break;
  }
  fmpz_clear(lo), fmpz_clear(hi), fmpz_clear(M);
  return out;
}


}  // namespace mhaq::check
