// The four number types the one learner runs over:
//   QTau   exact elements of Q(tau), tau = e^{1/L} (FLINT fmpz_poly_q)
//   Ball   Arb real balls at the thread's working precision
//   Mpfr   MPFR floats at the thread's working precision
//   double IEEE double, for comparison only
// Ball and Mpfr read their precision from a thread-local working precision set
// by PrecisionScope (Arb/MPFR style "prec" passed implicitly to operators).
#pragma once
#include <arb.h>
#include <flint/fmpz_poly.h>
#include <flint/fmpz_poly_q.h>
#include <mpfr.h>

#include <string>
#include <utility>

#include "mhaq/arith/rational.hpp"
#include "mhaq/base/precision.hpp"

namespace mhaq {

// ---------------------------------------------------------------- QTau
// An element of Q(tau), tau = e^{1/L}, as the learner may see it: a real
// number with field operations only (docs/math/exact-arithmetic.md). Its polynomial
// structure in tau (numerator, denominator, valuation, "is it tau^n") is
// private; only the arithmetic layer reaches it, through QTauAccess
// (arith/qtau_access.hpp), to decide signs, take exact roots and logarithms,
// and for tools that print or store exact answers. Zero and sign tests go
// through Field<QTau> and are three-valued like every other arithmetic's.
class QTau {
 public:
  QTau() { fmpz_poly_q_init(v_); }
  explicit QTau(const Rational& q);
  QTau(const QTau& o) { fmpz_poly_q_init(v_); fmpz_poly_q_set(v_, o.v_); }
  QTau(QTau&& o) noexcept { fmpz_poly_q_init(v_); fmpz_poly_q_swap(v_, o.v_); }
  QTau& operator=(const QTau& o) { fmpz_poly_q_set(v_, o.v_); return *this; }
  QTau& operator=(QTau&& o) noexcept { fmpz_poly_q_swap(v_, o.v_); return *this; }
  ~QTau() { fmpz_poly_q_clear(v_); }

  // fmpz_poly_q's results, by faster routes for the common kinds of element
  // (arith/qtau_arith.cpp)
  QTau& operator+=(const QTau& o);
  QTau& operator-=(const QTau& o);
  QTau& operator*=(const QTau& o);
  QTau& operator/=(const QTau& o);  // Error(internal) on division by zero
  friend QTau operator+(QTau a, const QTau& b) { return a += b; }
  friend QTau operator-(QTau a, const QTau& b) { return a -= b; }
  friend QTau operator*(QTau a, const QTau& b) { return a *= b; }
  friend QTau operator/(QTau a, const QTau& b) { return a /= b; }
  friend QTau operator-(QTau a) { fmpz_poly_q_neg(a.v_, a.v_); return a; }

 private:
  friend struct QTauAccess;
  fmpz_poly_q_t v_;
};

// ---------------------------------------------------------------- Ball
class Ball {
 public:
  Ball() { arb_init(v_); }
  explicit Ball(const Rational& q) { arb_init(v_); arb_set_fmpq(v_, q.raw(), working_precision()); }
  explicit Ball(long n) { arb_init(v_); arb_set_si(v_, n); }
  Ball(const Ball& o) { arb_init(v_); arb_set(v_, o.v_); }
  Ball(Ball&& o) noexcept { arb_init(v_); arb_swap(v_, o.v_); }
  Ball& operator=(const Ball& o) { arb_set(v_, o.v_); return *this; }
  Ball& operator=(Ball&& o) noexcept { arb_swap(v_, o.v_); return *this; }
  ~Ball() { arb_clear(v_); }

  arb_ptr raw() { return v_; }
  arb_srcptr raw() const { return v_; }
  bool contains(const Rational& q) const { return arb_contains_fmpq(v_, q.raw()); }
  bool contains_zero() const { return arb_contains_zero(v_); }
  bool is_finite() const { return arb_is_finite(v_); }
  double radius() const;      // upper bound, as a double (reporting)
  double mid_double() const;  // reporting only
  // Compares |midpoint| with o's: -1, 0, 1 (a choice of pivot, never a decision).
  int cmp_mid_abs(const Ball& o) const { return arf_cmpabs(arb_midref(v_), arb_midref(o.v_)); }
  std::string str(long digits = 20) const;

  Ball& operator+=(const Ball& o) { arb_add(v_, v_, o.v_, working_precision()); return *this; }
  Ball& operator-=(const Ball& o) { arb_sub(v_, v_, o.v_, working_precision()); return *this; }
  Ball& operator*=(const Ball& o) { arb_mul(v_, v_, o.v_, working_precision()); return *this; }
  Ball& operator/=(const Ball& o) { arb_div(v_, v_, o.v_, working_precision()); return *this; }
  friend Ball operator+(Ball a, const Ball& b) { return a += b; }
  friend Ball operator-(Ball a, const Ball& b) { return a -= b; }
  friend Ball operator*(Ball a, const Ball& b) { return a *= b; }
  friend Ball operator/(Ball a, const Ball& b) { return a /= b; }
  friend Ball operator-(Ball a) { arb_neg(a.v_, a.v_); return a; }

 private:
  arb_t v_;
};

// ---------------------------------------------------------------- Mpfr
class Mpfr {
 public:
  Mpfr() { init(working_precision()); mpfr_set_zero(v_, 1); }
  explicit Mpfr(const Rational& q);
  explicit Mpfr(long n) { init(working_precision()); mpfr_set_si(v_, n, MPFR_RNDN); }
  Mpfr(const Mpfr& o) { init(mpfr_get_prec(o.v_)); mpfr_set(v_, o.v_, MPFR_RNDN); }
  Mpfr(Mpfr&& o) noexcept {
    if (o.on_heap()) {  // take the significand; o keeps a valid (inline) number
      *v_ = *o.v_;
      o.init_inline(MPFR_PREC_MIN);
    } else {
      init(mpfr_get_prec(o.v_));
      mpfr_set(v_, o.v_, MPFR_RNDN);
    }
  }
  Mpfr& operator=(const Mpfr& o) {
    if (this != &o) {
      set_precision(mpfr_get_prec(o.v_));
      mpfr_set(v_, o.v_, MPFR_RNDN);
    }
    return *this;
  }
  Mpfr& operator=(Mpfr&& o) noexcept {
    if (this == &o) return *this;
    if (on_heap() && o.on_heap()) {
      mpfr_swap(v_, o.v_);
    } else if (o.on_heap()) {
      if (on_heap()) mpfr_clear(v_);
      *v_ = *o.v_;
      o.init_inline(MPFR_PREC_MIN);
    } else {
      set_precision(mpfr_get_prec(o.v_));
      mpfr_set(v_, o.v_, MPFR_RNDN);
    }
    return *this;
  }
  ~Mpfr() {
    if (on_heap()) mpfr_clear(v_);
  }
  // Sets the precision; the value is lost (as mpfr_set_prec). Use this, never
  // mpfr_set_prec on raw(): an inline significand is not MPFR's to reallocate.
  void set_precision(mpfr_prec_t p) {
    if (mpfr_get_prec(v_) == p) return;
    if (on_heap()) mpfr_clear(v_);
    init(p);
  }

  mpfr_ptr raw() { return v_; }
  mpfr_srcptr raw() const { return v_; }
  double to_double() const { return mpfr_get_d(v_, MPFR_RNDN); }
  std::string str(long digits = 20) const;

#define MHAQ_MPFR_OP(op, fn)                                        \
  Mpfr& operator op##=(const Mpfr& o) {                             \
    const mpfr_prec_t p = working_precision();                      \
    if (mpfr_get_prec(v_) == p) {                                   \
      fn(v_, v_, o.v_, MPFR_RNDN);                                  \
    } else {                                                        \
      Mpfr r; fn(r.v_, v_, o.v_, MPFR_RNDN); *this = std::move(r);  \
    }                                                               \
    return *this;                                                   \
  }                                                                 \
  friend Mpfr operator op(const Mpfr& a, const Mpfr& b) {           \
    Mpfr r; fn(r.v_, a.v_, b.v_, MPFR_RNDN); return r;              \
  }
  MHAQ_MPFR_OP(+, mpfr_add)
  MHAQ_MPFR_OP(-, mpfr_sub)
  MHAQ_MPFR_OP(*, mpfr_mul)
  MHAQ_MPFR_OP(/, mpfr_div)
#undef MHAQ_MPFR_OP
  friend Mpfr operator-(const Mpfr& a) { Mpfr r; mpfr_neg(r.v_, a.v_, MPFR_RNDN); return r; }

 private:
  // Numbers up to kInlineLimbs limbs keep their significand inside the object
  // (MPFR's custom interface): no heap allocation for the working precisions
  // of ordinary runs. Larger ones are MPFR's own.
  static constexpr int kInlineLimbs = 5;
  bool on_heap() const { return mpfr_custom_get_significand(v_) != static_cast<const void*>(buf_); }
  void init_inline(mpfr_prec_t p) {
    mpfr_custom_init(buf_, p);
    mpfr_custom_init_set(v_, MPFR_ZERO_KIND, 0, p, buf_);
  }
  void init(mpfr_prec_t p) {
    if (mpfr_custom_get_size(p) <= sizeof(buf_))
      init_inline(p);
    else
      mpfr_init2(v_, p);
  }
  mpfr_t v_;
  mp_limb_t buf_[kInlineLimbs];
};

}  // namespace mhaq
