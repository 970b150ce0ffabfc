#include "mhaq/arith/numbers.hpp"

#include "mhaq/arith/qtau_access.hpp"

#include <flint/fmpq.h>

#include <algorithm>
#include <cmath>

#include "mhaq/base/error.hpp"

namespace mhaq {

// ---- QTau
QTau::QTau(const Rational& q) {
  fmpz_poly_q_init(v_);
  fmpz_poly_set_fmpz(v_->num, fmpq_numref(q.raw()));
  fmpz_poly_set_fmpz(v_->den, fmpq_denref(q.raw()));
}

QTau QTauAccess::tau_pow(long n) {
  QTau t;
  if (n >= 0) {
    fmpz_poly_zero(t.v_->num);
    fmpz_poly_set_coeff_si(t.v_->num, n, 1);
  } else {
    fmpz_poly_zero(t.v_->den);
    fmpz_poly_set_coeff_si(t.v_->den, -n, 1);
    fmpz_poly_one(t.v_->num);
  }
  return t;
}

namespace {
long lowest_exponent(const fmpz_poly_t p) {
  for (long i = 0; i < fmpz_poly_length(p); ++i)
    if (!fmpz_is_zero(p->coeffs + i)) return i;
  return -1;
}
bool is_monic_monomial(const fmpz_poly_t p, long& n) {
  const long len = fmpz_poly_length(p);
  if (len == 0 || !fmpz_is_one(p->coeffs + len - 1)) return false;
  if (lowest_exponent(p) != len - 1) return false;
  n = len - 1;
  return true;
}
}  // namespace

long QTauAccess::valuation(const QTau& x) {
  if (is_zero(x)) throw_internal("valuation of zero");
  return lowest_exponent(x.v_->num) - lowest_exponent(x.v_->den);
}

bool QTauAccess::is_tau_power(const QTau& x, long& n) {
  long a = 0, b = 0;
  if (!is_monic_monomial(x.v_->num, a) || !is_monic_monomial(x.v_->den, b)) return false;
  if (a != 0 && b != 0) return false;  // canonical form never has both
  n = a - b;
  return true;
}

bool QTauAccess::is_rational(const QTau& x, Rational& q) {
  const fmpz_poly_q_struct* v_ = x.v_;
  if (fmpz_poly_degree(v_->num) > 0 || fmpz_poly_degree(v_->den) != 0) return false;
  fmpz_t n, d;
  fmpz_init(n); fmpz_init(d);
  fmpz_poly_get_coeff_fmpz(n, v_->num, 0);
  fmpz_poly_get_coeff_fmpz(d, v_->den, 0);
  fmpq_set_fmpz_frac(q.raw(), n, d);
  fmpz_clear(n); fmpz_clear(d);
  return true;
}

long QTauAccess::degree(const QTau& x) { return std::max(fmpz_poly_degree(x.v_->num), fmpz_poly_degree(x.v_->den)); }

std::string QTauAccess::str(const QTau& x) {
  char* s = fmpz_poly_q_get_str_pretty(x.v_, "t");
  std::string out(s);
  flint_free(s);
  return out;
}

// ---- Ball
double Ball::radius() const { return mag_get_d(arb_radref(v_)); }
double Ball::mid_double() const { return arf_get_d(arb_midref(v_), ARF_RND_NEAR); }

// Arb's "[m +/- r]" (ARB_STR_MORE: the midpoint's digits printed even where
// the radius makes them uncertain) with as many digits as the ball needs to
// keep its midpoint (the count comes from the ball; the argument is not
// used, and goes when the header next changes): the printed interval contains
// the ball, and its radius exceeds the ball's by at most a few percent (the
// decimal rounding of m, below rad / 20, and Arb's rounding up of r). An exact
// ball prints exactly when at most 20000 digits do it; a ball of midpoint 0
// prints as "[+/- r]".
std::string Ball::str(long /*digits*/) const {
  constexpr double kLog10of2 = 0.30103;
  const arf_struct* m = arb_midref(v_);
  long digits = 5;
  if (arb_is_finite(v_) && !arf_is_zero(m)) {
    const slong mb = arf_bits(m);
    const slong em = arf_abs_bound_lt_2exp_si(m);  // |m| < 2^em
    // exact digits: m = n 2^-k (k > 0 fraction bits) has at most bits(n) + k
    // significant decimal digits (n 5^k / 10^k), an integer m < 2^em em log10 2 + 1
    const slong k = mb - em;
    digits = static_cast<long>(k > 0 ? static_cast<double>(mb) * kLog10of2 + static_cast<double>(k) * 0.69897 : static_cast<double>(em) * kLog10of2) + 3;
    if (!mag_is_zero(arb_radref(v_))) {
      // rad >= 2^(er - 1): the midpoint's rounding, half a unit in the last
      // of `needed` digits, stays below rad / 20
      const slong er = fmpz_get_si(MAG_EXPREF(arb_radref(v_)));
      const long needed = static_cast<long>(std::ceil(static_cast<double>(em - er + 1) * kLog10of2)) + 2;
      digits = needed;  // Arb adds the conversion's error even when fewer digits are exact
    }
    digits = std::clamp<long>(digits, 3, 20000);
  }
  // an exact ball without ARB_STR_MORE: Arb prints it exactly when `digits` hold it
  char* s = arb_get_str(v_, digits, mag_is_zero(arb_radref(v_)) ? 0 : ARB_STR_MORE);
  std::string out(s);
  flint_free(s);
  // "[0.3417968750000 +/- 1e-70]": the midpoint's trailing zeros say nothing
  if (out.size() > 1 && out[0] == '[' && out.find('.') != std::string::npos) {
    const size_t end = out.find_first_of(" e");
    size_t z = end;
    while (z > 1 && out[z - 1] == '0') --z;
    if (z > 1 && out[z - 1] == '.') --z;
    if (end != std::string::npos && out.find('.') < end) out.erase(z, end - z);
  }
  return out;
}

// ---- Mpfr
Mpfr::Mpfr(const Rational& q) {
  init(working_precision());
  if (q.is_integer() && fmpz_fits_si(fmpq_numref(q.raw()))) {  // the common case (counts, small constants)
    mpfr_set_si(v_, fmpz_get_si(fmpq_numref(q.raw())), MPFR_RNDN);
    return;
  }
  mpq_t t;
  mpq_init(t);
  fmpq_get_mpq(t, q.raw());
  mpfr_set_q(v_, t, MPFR_RNDN);
  mpq_clear(t);
}
std::string Mpfr::str(long digits) const {
  char buf[64];
  mpfr_snprintf(buf, sizeof buf, "%%.%ldRg", digits);
  std::string fmt(buf);
  std::vector<char> out(static_cast<size_t>(digits) + 64);
  mpfr_snprintf(out.data(), out.size(), fmt.c_str(), v_);
  return std::string(out.data());
}

}  // namespace mhaq
