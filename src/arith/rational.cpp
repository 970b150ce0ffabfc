#include "mhaq/arith/rational.hpp"
#include "mhaq/arith/token_hash.hpp"

#include <flint/fmpq_mat.h>

#include <algorithm>
#include <cctype>

#include "mhaq/arith/flint_wrappers.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/text.hpp"

namespace mhaq {

Rational::Rational(long n, unsigned long d) {
  fmpq_init(v_);
  if (d == 0) throw_input("zero denominator");
  fmpq_set_si(v_, n, d);
}

Rational& Rational::operator/=(const Rational& o) {
  if (o.is_zero()) throw_internal("rational division by zero");
  fmpq_div(v_, v_, o.v_);
  return *this;
}

long Rational::to_long() const {
  if (!is_integer() || !fmpz_fits_si(fmpq_numref(v_))) throw_internal("rational " + str() + " is not a machine integer");
  return fmpz_get_si(fmpq_numref(v_));
}

std::string Rational::str() const {
  // fmpq_get_str's text ("p/q", or "p" when q = 1); word-size parts without
  // its allocations (oracle batches and transcripts write every token)
  const fmpz* n = fmpq_numref(v_);
  const fmpz* d = fmpq_denref(v_);
  if (!COEFF_IS_MPZ(*n) && !COEFF_IS_MPZ(*d))
    return *d == 1 ? std::to_string(static_cast<long>(*n)) : std::to_string(static_cast<long>(*n)) + '/' + std::to_string(static_cast<long>(*d));
  char* s = fmpq_get_str(nullptr, 10, v_);
  std::string out(s);
  flint_free(s);
  return out;
}

namespace {
bool all_digits(const std::string& s, size_t from, size_t to) {
  if (from >= to) return false;
  for (size_t i = from; i < to; ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}
}  // namespace

std::size_t Rational::str_size() const {
  // fmpz_sizeinbase may exceed the digit count by one: count exactly near the edge.
  const fmpz* n = fmpq_numref(v_);
  const fmpz* d = fmpq_denref(v_);
  auto digits = [](const fmpz* z) {
    const size_t est = fmpz_sizeinbase(z, 10);
    if (est < 2) return est;
    fmpz_t p;
    fmpz_init(p);
    fmpz_set_ui(p, 10);
    fmpz_pow_ui(p, p, est - 1);
    const bool full = fmpz_cmpabs(z, p) >= 0;
    fmpz_clear(p);
    return full ? est : est - 1;
  };
  return (fmpz_sgn(n) < 0 ? 1 : 0) + digits(n) + (fmpz_is_one(d) ? 0 : 1 + digits(d));
}

Rational Rational::parse(const std::string& text, std::size_t max_chars) {
  constexpr long kMaxExp10 = 10000;  // decimal exponents: 10^10000 has 10,001 digits
  // the message of a malformed number, built only when one is thrown
  const auto bad = [&text] { return "not an exact rational: " + quote_text(text) + " (expected e.g. \"-3/4\", \"5\" or \"0.125\")"; };
  if (text.empty()) throw_input(bad());
  if (text.size() > max_chars)
    throw_input("number " + quote_text(text) + " is longer than the limit of " + std::to_string(max_chars) + " characters");
  size_t pos = 0;
  bool neg = false;
  if (text[0] == '-' || text[0] == '+') { neg = text[0] == '-'; pos = 1; }
  Rational out;
  const auto slash = text.find('/');
  if (slash != std::string::npos) {
    if (!all_digits(text, pos, slash) || !all_digits(text, slash + 1, text.size())) throw_input(bad());
    fmpz_t n, d;
    fmpz_init(n); fmpz_init(d);
    fmpz_set_str(n, text.substr(pos, slash - pos).c_str(), 10);
    fmpz_set_str(d, text.substr(slash + 1).c_str(), 10);
    if (fmpz_is_zero(d)) { fmpz_clear(n); fmpz_clear(d); throw_input("zero denominator in " + quote_text(text)); }
    fmpq_set_fmpz_frac(out.v_, n, d);
    fmpz_clear(n); fmpz_clear(d);
  } else {
    // decimal: digits[.digits][e[+-]digits]
    size_t e = text.find_first_of("eE", pos);
    std::string mant = text.substr(pos, e == std::string::npos ? std::string::npos : e - pos);
    long exp10 = 0;
    if (e != std::string::npos) {
      size_t ep = e + 1;
      bool eneg = false;
      if (ep < text.size() && (text[ep] == '-' || text[ep] == '+')) { eneg = text[ep] == '-'; ++ep; }
      if (!all_digits(text, ep, text.size())) throw_input(bad());
      // digits beyond 6 are past the limit whatever they are (and past stol's range)
      exp10 = text.size() - ep > 6 ? 1000000 : std::stol(text.substr(ep));
      if (exp10 > kMaxExp10) throw_input("number " + quote_text(text) + " has a decimal exponent out of range (at most " + std::to_string(kMaxExp10) + " in size)");
      if (eneg) exp10 = -exp10;
    }
    const auto dot = mant.find('.');
    std::string digits = mant;
    if (dot != std::string::npos) {
      std::string frac = mant.substr(dot + 1);
      std::string intp = mant.substr(0, dot);
      if ((intp.empty() && frac.empty()) || (!intp.empty() && !all_digits(intp, 0, intp.size())) ||
          (!frac.empty() && !all_digits(frac, 0, frac.size())))
        throw_input(bad());
      digits = intp + frac;
      exp10 -= static_cast<long>(frac.size());
    } else if (!all_digits(mant, 0, mant.size())) {
      throw_input(bad());
    }
    if (exp10 > kMaxExp10 || exp10 < -kMaxExp10)  // the fraction's digits moved it past the limit
      throw_input("number " + quote_text(text) + " has a decimal exponent out of range (at most " + std::to_string(kMaxExp10) + " in size, the fraction's digits counted)");
    fmpz* n = fmpq_numref(out.v_);
    fmpz* den = fmpq_denref(out.v_);
    fmpz_set_str(n, digits.c_str(), 10);
    fmpz_t p;
    if (fmpz_is_zero(n)) {
      // 0 whatever the exponent
    } else if (exp10 >= 0) {
      fmpz_init_set_ui(p, 10);
      fmpz_pow_ui(p, p, static_cast<ulong>(exp10));
      fmpz_mul(n, n, p);
      fmpz_clear(p);
    } else {
      // n / 10^k in lowest terms without a gcd: with n = 2^a 5^b m, m prime
      // to 10, the common factor is 2^min(a,k) 5^min(b,k)
      const ulong k = static_cast<ulong>(-exp10);
      const ulong a = std::min<ulong>(fmpz_val2(n), k);
      fmpz_fdiv_q_2exp(n, n, a);
      ulong b = 0;
      for (; b < k && fmpz_divisible_si(n, 5); ++b) fmpz_divexact_ui(n, n, 5);
      fmpz_init_set_ui(p, 5);
      fmpz_pow_ui(p, p, k - b);
      fmpz_mul_2exp(den, p, k - a);
      fmpz_clear(p);
    }
  }
  if (neg) fmpq_neg(out.v_, out.v_);
  if (out.str_size() > max_chars)
    throw_input("number " + quote_text(text) + " has the exact value p/q of " + std::to_string(out.str_size()) + " characters, more than the limit of " +
                std::to_string(max_chars));
  return out;
}

QVec QMat::col(int j) const {
  QVec v(r_);
  for (int i = 0; i < r_; ++i) v[i] = (*this)(i, j);
  return v;
}
QVec QMat::row(int i) const {
  QVec v(c_);
  for (int j = 0; j < c_; ++j) v[j] = (*this)(i, j);
  return v;
}
QMat QMat::transpose() const {
  QMat t(c_, r_);
  for (int i = 0; i < r_; ++i)
    for (int j = 0; j < c_; ++j) t(j, i) = (*this)(i, j);
  return t;
}
bool QMat::is_zero() const {
  for (const auto& x : a_)
    if (!x.is_zero()) return false;
  return true;
}

std::size_t TokenHash::operator()(const QVec& x) const noexcept {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the entries' residues mod a prime below 2^32
  for (const Rational& r : x) {
    h = (h ^ fmpz_fdiv_ui(fmpq_numref(r.raw()), 4294967291UL)) * 1099511628211ULL;
    h = (h ^ fmpz_fdiv_ui(fmpq_denref(r.raw()), 4294967291UL)) * 1099511628211ULL;
  }
  return static_cast<std::size_t>(h);
}

Rational dot(const QVec& x, const QVec& y) {
  if (x.size() != y.size()) throw_internal("dot: size mismatch");
  Rational s;
  for (size_t i = 0; i < x.size(); ++i) fmpq_addmul(s.raw(), x[i].raw(), y[i].raw());
  return s;
}
Rational max_abs(const QVec& x) {
  Rational m(0);
  for (const auto& v : x) m = std::max(m, v.sign() < 0 ? -v : v);
  return m;
}
Rational pow2_scale_within(const QVec& x, const Rational& size) {
  if (size.sign() <= 0) throw_internal("pow2_scale_within: size must be positive");
  const Rational m = max_abs(x);
  Rational c(1);
  while (m > size * c) c *= Rational(2);
  return c;
}
QVec matvec(const QMat& A, const QVec& x) {
  if (static_cast<size_t>(A.cols()) != x.size()) throw_internal("matvec: size mismatch");
  QVec y(A.rows());
  for (int i = 0; i < A.rows(); ++i)
    for (int j = 0; j < A.cols(); ++j) fmpq_addmul(y[i].raw(), A(i, j).raw(), x[j].raw());
  return y;
}
ClearedQMat::ClearedQMat(const QMat& A) : r_(A.rows()), c_(A.cols()), num_(static_cast<size_t>(A.rows()) * A.cols()) {
  fmpz* den = fmpq_numref(den_.raw());
  fmpz_one(den);
  for (int i = 0; i < r_; ++i)
    for (int j = 0; j < c_; ++j) fmpz_lcm(den, den, fmpq_denref(A(i, j).raw()));
  for (int i = 0; i < r_; ++i)
    for (int j = 0; j < c_; ++j) {
      fmpz* n = fmpq_numref(num_[static_cast<size_t>(i) * c_ + j].raw());
      fmpz_divexact(n, den, fmpq_denref(A(i, j).raw()));
      fmpz_mul(n, n, fmpq_numref(A(i, j).raw()));
    }
}
QVec ClearedQMat::apply(const QVec& x) const {
  if (static_cast<size_t>(c_) != x.size()) throw_internal("ClearedQMat::apply: size mismatch");
  // x = m / e with integers m_j and e the lcm of x's denominators
  fmpz_t e, t, acc, full;
  fmpz_init_set_ui(e, 1);
  fmpz_init(t);
  fmpz_init(acc);
  fmpz_init(full);
  for (const Rational& xj : x) fmpz_lcm(e, e, fmpq_denref(xj.raw()));
  std::vector<Rational> m(x.size());  // integers
  for (size_t j = 0; j < x.size(); ++j) {
    fmpz_divexact(t, e, fmpq_denref(x[j].raw()));
    fmpz_mul(fmpq_numref(m[j].raw()), t, fmpq_numref(x[j].raw()));
  }
  fmpz_mul(full, fmpq_numref(den_.raw()), e);
  QVec y(r_);
  for (int i = 0; i < r_; ++i) {
    fmpz_zero(acc);
    for (int j = 0; j < c_; ++j) fmpz_addmul(acc, fmpq_numref(num_[static_cast<size_t>(i) * c_ + j].raw()), fmpq_numref(m[j].raw()));
    fmpq_set_fmpz_frac(y[i].raw(), acc, full);
  }
  fmpz_clear(e);
  fmpz_clear(t);
  fmpz_clear(acc);
  fmpz_clear(full);
  return y;
}
QVec operator+(const QVec& x, const QVec& y) {
  QVec z(x);
  for (size_t i = 0; i < z.size(); ++i) z[i] += y[i];
  return z;
}
QVec operator-(const QVec& x, const QVec& y) {
  QVec z(x);
  for (size_t i = 0; i < z.size(); ++i) z[i] -= y[i];
  return z;
}
QMat operator+(const QMat& x, const QMat& y) {
  QMat z(x);
  for (int i = 0; i < z.rows(); ++i)
    for (int j = 0; j < z.cols(); ++j) z(i, j) += y(i, j);
  return z;
}

namespace {
using flint::FmpqMat;
FmpqMat fmpq_mat_of(const QMat& A) {
  FmpqMat m(A.rows(), A.cols());
  for (int i = 0; i < A.rows(); ++i)
    for (int j = 0; j < A.cols(); ++j) fmpq_set(fmpq_mat_entry(m.m, i, j), A(i, j).raw());
  return m;
}
}  // namespace

Rational det(const QMat& A) {
  if (A.rows() != A.cols()) throw_internal("det: not square");
  FmpqMat m = fmpq_mat_of(A);
  Rational d;
  fmpq_mat_det(d.raw(), m.m);
  return d;
}

int rank(const QMat& A) {
  FmpqMat m = fmpq_mat_of(A), r(A.rows(), A.cols());
  return static_cast<int>(fmpq_mat_rref(r.m, m.m));
}

bool solve(const QMat& A, const QVec& b, QVec& x) {
  if (A.rows() != A.cols() || static_cast<size_t>(A.rows()) != b.size()) throw_internal("solve: shape");
  FmpqMat m = fmpq_mat_of(A), rhs(A.rows(), 1), sol(A.rows(), 1);
  for (int i = 0; i < A.rows(); ++i) fmpq_set(fmpq_mat_entry(rhs.m, i, 0), b[i].raw());
  if (!fmpq_mat_solve_fraction_free(sol.m, m.m, rhs.m)) return false;
  x.assign(A.rows(), Rational());
  for (int i = 0; i < A.rows(); ++i) fmpq_set(x[i].raw(), fmpq_mat_entry(sol.m, i, 0));
  return true;
}

bool inverse(const QMat& A, QMat& inv) {
  if (A.rows() != A.cols()) throw_internal("inverse: not square");
  FmpqMat m = fmpq_mat_of(A), r(A.rows(), A.cols());
  if (!fmpq_mat_inv(r.m, m.m)) return false;
  inv = QMat(A.rows(), A.cols());
  for (int i = 0; i < A.rows(); ++i)
    for (int j = 0; j < A.cols(); ++j) fmpq_set(inv(i, j).raw(), fmpq_mat_entry(r.m, i, j));
  return true;
}

Rational denominator_lcm(const QMat& A) {
  fmpz_t l;
  fmpz_init_set_ui(l, 1);
  for (int i = 0; i < A.rows(); ++i)
    for (int j = 0; j < A.cols(); ++j) fmpz_lcm(l, l, fmpq_denref(A(i, j).raw()));
  Rational out;
  fmpz_set(fmpq_numref(out.raw()), l);
  fmpz_clear(l);
  return out;
}

Rational Rational::floor() const {
  Rational r;
  fmpz_fdiv_q(fmpq_numref(r.v_), fmpq_numref(v_), fmpq_denref(v_));
  fmpz_one(fmpq_denref(r.v_));
  return r;
}

Rational Rational::isqrt_floor() const {
  Rational r = floor();
  if (r.sign() <= 0) return Rational(0);
  fmpz_sqrt(fmpq_numref(r.v_), fmpq_numref(r.v_));
  return r;
}

}  // namespace mhaq
