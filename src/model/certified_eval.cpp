#include "mhaq/model/certified_eval.hpp"

#include <arb.h>

#include <cmath>

#include "mhaq/base/error.hpp"
#include "mhaq/base/limits.hpp"

namespace mhaq {

namespace {
struct A {
  arb_t v;
  A() { arb_init(v); }
  ~A() { arb_clear(v); }
  A(const A&) = delete;
  A& operator=(const A&) = delete;
};
struct Z {
  fmpz_t v;
  Z() { fmpz_init(v); }
  ~Z() { fmpz_clear(v); }
  Z(const Z&) = delete;
  Z& operator=(const Z&) = delete;
};

void pow10(fmpz_t out, long k) {
  fmpz_set_ui(out, 10);
  fmpz_pow_ui(out, out, static_cast<ulong>(k));
}

std::string sci(bool neg, const fmpz_t M, long E, long D) {
  char* c = fmpz_get_str(nullptr, 10, M);
  const std::string s(c);
  flint_free(c);
  if (static_cast<long>(s.size()) != D) throw_internal("certified decimal: mantissa has the wrong length");
  std::string out;
  if (neg) out.push_back('-');
  out.push_back(s[0]);
  if (D > 1) {
    out.push_back('.');
    out.append(s, 1, std::string::npos);
  }
  const long aE = E < 0 ? -E : E;
  out.push_back('e');
  out.push_back(E < 0 ? '-' : '+');
  if (aE < 10) out.push_back('0');
  out.append(std::to_string(aE));
  return out;
}

struct HeadTerms {
  std::vector<Rational> t;  // s_r - max s, <= 0
  std::vector<Rational> c;  // v^T x_r
  std::vector<long> count;
  bool rational = false;
  Rational value;  // when rational
};
}  // namespace

std::string dyadic_text(const arf_t x) {
  fmpz_t m, e;
  fmpz_init(m);
  fmpz_init(e);
  arf_get_fmpz_2exp(m, e, x);
  Rational q;
  fmpz_set(fmpq_numref(q.raw()), m);
  if (fmpz_sgn(e) >= 0) {
    fmpz_mul_2exp(fmpq_numref(q.raw()), fmpq_numref(q.raw()), fmpz_get_ui(e));
  } else {
    fmpz_neg(e, e);
    fmpz_one(fmpq_denref(q.raw()));
    fmpz_mul_2exp(fmpq_denref(q.raw()), fmpq_denref(q.raw()), fmpz_get_ui(e));
    fmpq_canonicalise(q.raw());
  }
  fmpz_clear(m);
  fmpz_clear(e);
  return q.str();
}

std::string decimal_of_rational(const Rational& x, long D) {
  if (x.is_zero()) {
    std::string z("0");
    if (D > 1) {
      z.push_back('.');
      z.append(static_cast<size_t>(D - 1), '0');
    }
    z.append("e+00");
    return z;
  }
  Rational a = x.sign() < 0 ? -x : x;
  Z lo, hi, p, q, r, r2;
  pow10(lo.v, D - 1);
  pow10(hi.v, D);
  long E = static_cast<long>(fmpz_sizeinbase(fmpq_numref(a.raw()), 10)) - static_cast<long>(fmpz_sizeinbase(fmpq_denref(a.raw()), 10));
  fmpq_t y;
  fmpq_init(y);
  for (int it = 0;; ++it) {
    if (it > 64) throw_internal("certified decimal: exponent search did not settle");
    const long k = D - 1 - E;
    pow10(p.v, k < 0 ? -k : k);
    if (k >= 0) fmpq_mul_fmpz(y, a.raw(), p.v);
    else fmpq_div_fmpz(y, a.raw(), p.v);
    if (fmpq_cmp_fmpz(y, hi.v) >= 0) { ++E; continue; }
    if (fmpq_cmp_fmpz(y, lo.v) < 0) { --E; continue; }
    break;
  }
  fmpz_fdiv_qr(q.v, r.v, fmpq_numref(y), fmpq_denref(y));
  fmpz_mul_2exp(r2.v, r.v, 1);
  const int c = fmpz_cmp(r2.v, fmpq_denref(y));
  if (c > 0 || (c == 0 && fmpz_is_odd(q.v))) fmpz_add_ui(q.v, q.v, 1);
  if (fmpz_equal(q.v, hi.v)) { fmpz_set(q.v, lo.v); ++E; }
  fmpq_clear(y);
  return sci(x.sign() < 0, q.v, E, D);
}

bool decimal_of_ball(const arb_t v, long D, long prec, std::string& out) {
  if (!arb_is_finite(v) || arb_contains_zero(v)) return false;
  const bool neg = arb_is_negative(v);
  A a, y, p10, alo, ahi, z;
  Z lo, hi, M;
  pow10(lo.v, D - 1);
  pow10(hi.v, D);
  arb_set_fmpz(alo.v, lo.v);
  arb_set_fmpz(ahi.v, hi.v);
  arb_abs(a.v, v);
  const long e2 = arf_abs_bound_lt_2exp_si(arb_midref(a.v));
  long E = static_cast<long>(std::floor(static_cast<double>(e2 - 1) * 0.30102999566398120));
  for (int it = 0; it < 64; ++it) {
    const long k = D - 1 - E;
    arb_ui_pow_ui(p10.v, 10, static_cast<ulong>(k < 0 ? -k : k), prec);
    if (k >= 0) arb_mul(y.v, a.v, p10.v, prec);
    else arb_div(y.v, a.v, p10.v, prec);
    if (arb_ge(y.v, ahi.v)) { ++E; continue; }
    if (arb_lt(y.v, alo.v)) { --E; continue; }
    if (!(arb_ge(y.v, alo.v) && arb_lt(y.v, ahi.v))) return false;
    arb_set_d(z.v, 0.5);
    arb_add(z.v, y.v, z.v, prec);
    arb_floor(z.v, z.v, prec);
    if (!arb_get_unique_fmpz(M.v, z.v)) return false;
    if (fmpz_equal(M.v, hi.v)) { fmpz_set(M.v, lo.v); ++E; }
    out = sci(neg, M.v, E, D);
    return true;
  }
  return false;
}

long certified_start_bits(long digits) { return static_cast<long>(3.33 * static_cast<double>(digits)) + 64; }

void check_digits_within_bits(long digits, long max_bits) {
  const long need = certified_start_bits(digits);
  if (need <= max_bits) return;
  auto most_digits = [](long bits) {
    long d = 0;
    while (certified_start_bits(d + 1) <= bits) ++d;
    return d;
  };
  const std::string head = "--digits " + std::to_string(digits) + " needs a first attempt at " + std::to_string(need) +
                           " bits (3.33 bits a digit + 64), more than --max-bits " + std::to_string(max_bits) + ", so no answer could be decided: ";
  if (need > limits::max_bits)
    throw Error(ErrorKind::usage, head + "no --max-bits reaches it (the limit is " + std::to_string(limits::max_bits) + "); give --digits " +
                                      std::to_string(most_digits(limits::max_bits)) + " or fewer");
  throw Error(ErrorKind::usage, head + "give --max-bits " + std::to_string(need) + " or more, or --digits " + std::to_string(most_digits(max_bits)) + " or fewer");
}

CertifiedValue certified_answer(const Model& m, const Query& q, long digits, long max_bits) {
  if (q.empty()) throw_input("certified answer: an empty query");
  const QVec& xN = q.back().token;
  std::vector<HeadTerms> hs;
  Rational exact_sum = m.beta;  // beta, then every head whose value is rational
  bool all_rational = true;
  for (const auto& h : m.heads) {
    HeadTerms ht;
    const QVec Wx = h.c.empty() ? matvec(h.W, xN) : matvec(h.W, xN) + h.c;  // s_r = x_r^T (W x_N + c)
    Rational smax;
    for (size_t r = 0; r < q.size(); ++r) {
      const Rational s = dot(q[r].token, Wx);
      if (r == 0 || smax < s) smax = s;
      ht.t.push_back(s);
      ht.c.push_back(dot(h.v, q[r].token));
      ht.count.push_back(q[r].count);
    }
    bool same_t = true, same_c = true;
    for (size_t r = 0; r < q.size(); ++r) {
      ht.t[r] -= smax;
      same_t = same_t && ht.t[r] == ht.t[0];
      same_c = same_c && ht.c[r] == ht.c[0];
    }
    if (same_c) {
      ht.rational = true;
      ht.value = ht.c[0];
    } else if (same_t) {  // uniform weights: the count-weighted mean of c
      Rational num, len;
      for (size_t r = 0; r < q.size(); ++r) {
        num += Rational(ht.count[r]) * ht.c[r];
        len += Rational(ht.count[r]);
      }
      ht.rational = true;
      ht.value = num / len;
    }
    if (ht.rational) exact_sum += ht.value;
    else all_rational = false;
    hs.push_back(std::move(ht));
  }
  CertifiedValue out;
  if (all_rational) {
    out.rational = true;
    out.decimal = decimal_of_rational(exact_sum, digits);
    out.mid = exact_sum.str();
    out.rad.assign(1, '0');  // (assigning a literal trips a gcc 12 -Wrestrict false positive)
    return out;
  }
  A f, num, den, w, c, t, root;
  for (long prec = certified_start_bits(digits); prec <= max_bits; prec = prec * 2 > max_bits && prec < max_bits ? max_bits : prec * 2) {
    arb_set_fmpq(f.v, exact_sum.raw(), prec);
    arb_set_si(root.v, m.root);  // the scores' factor sqrt(root) (Model::root)
    arb_sqrt(root.v, root.v, prec);
    for (const auto& ht : hs) {
      if (ht.rational) continue;
      arb_zero(num.v);
      arb_zero(den.v);
      for (size_t r = 0; r < ht.t.size(); ++r) {
        arb_set_fmpq(w.v, ht.t[r].raw(), prec);
        if (m.root != 1) arb_mul(w.v, w.v, root.v, prec);
        arb_exp(w.v, w.v, prec);
        arb_mul_si(w.v, w.v, ht.count[r], prec);
        arb_add(den.v, den.v, w.v, prec);
        arb_set_fmpq(c.v, ht.c[r].raw(), prec);
        arb_addmul(num.v, w.v, c.v, prec);
      }
      arb_div(t.v, num.v, den.v, prec);
      arb_add(f.v, f.v, t.v, prec);
    }
    if (decimal_of_ball(f.v, digits, prec, out.decimal)) {
      out.bits = prec;
      out.mid = dyadic_text(arb_midref(f.v));
      arf_t r;
      arf_init(r);
      arf_set_mag(r, arb_radref(f.v));
      out.rad = dyadic_text(r);
      arf_clear(r);
      return out;
    }
    if (prec >= max_bits) break;
  }
  throw_unable("certified answer: " + std::to_string(digits) + " correctly rounded digits not decided within " + std::to_string(max_bits) +
               " bits (the value may be zero or a decimal tie; raise --max-bits or ask fewer digits)");
}

}  // namespace mhaq
