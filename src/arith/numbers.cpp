#include "mhaq/arith/numbers.hpp"

#include "mhaq/arith/qtau_access.hpp"

#include <flint/fmpq.h>

#include <algorithm>

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
std::string Ball::str(long digits) const {
  char* s = arb_get_str(v_, digits, 0);
  std::string out(s);
  flint_free(s);
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
