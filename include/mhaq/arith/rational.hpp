// Exact rationals (FLINT fmpq) with value semantics, and small dense matrices
// over them. These carry everything the learner chooses itself (tokens, B,
// Delta, chaining coefficients) and every model parameter.
#pragma once
#include <flint/fmpq.h>
#include <flint/fmpz.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mhaq {

class Rational {
 public:
  Rational() { fmpq_init(v_); }
  Rational(long n) { fmpq_init(v_); fmpq_set_si(v_, n, 1); }  // NOLINT: implicit from integers is intended
  Rational(long n, unsigned long d);  // d > 0, reduced
  Rational(const Rational& o) { fmpq_init(v_); fmpq_set(v_, o.v_); }
  Rational(Rational&& o) noexcept { fmpq_init(v_); fmpq_swap(v_, o.v_); }
  Rational& operator=(const Rational& o) { fmpq_set(v_, o.v_); return *this; }
  Rational& operator=(Rational&& o) noexcept { fmpq_swap(v_, o.v_); return *this; }
  ~Rational() { fmpq_clear(v_); }

  // Parses "-3/4", "5", "0.125", "-1.5e-3" exactly; throws Error(input) otherwise,
  // also when the text or the value's canonical form "p/q" has more than
  // max_chars characters (the message quotes at most about 80 of them).
  static Rational parse(const std::string& s, std::size_t max_chars = 4096);
  // Characters of str(), computed without building it.
  std::size_t str_size() const;
  std::string str() const;  // canonical "p/q" or "p"

  fmpq* raw() { return v_; }
  const fmpq* raw() const { return v_; }
  bool is_zero() const { return fmpq_is_zero(v_); }
  int sign() const { return fmpq_sgn(v_); }
  bool is_integer() const { return fmpz_is_one(fmpq_denref(v_)); }
  // Exact only when it fits; throws Error(internal) otherwise.
  long to_long() const;
  // floor(x), and floor(sqrt(floor(x))) for x >= 0 (0 for x < 0): exact.
  Rational floor() const;
  Rational isqrt_floor() const;
  double approx_double() const { return fmpq_get_d(v_); }  // reporting only (IEEE comparison)

  Rational& operator+=(const Rational& o) { fmpq_add(v_, v_, o.v_); return *this; }
  Rational& operator-=(const Rational& o) { fmpq_sub(v_, v_, o.v_); return *this; }
  Rational& operator*=(const Rational& o) { fmpq_mul(v_, v_, o.v_); return *this; }
  Rational& operator/=(const Rational& o);
  friend Rational operator+(Rational a, const Rational& b) { return a += b; }
  friend Rational operator-(Rational a, const Rational& b) { return a -= b; }
  friend Rational operator*(Rational a, const Rational& b) { return a *= b; }
  friend Rational operator/(Rational a, const Rational& b) { return a /= b; }
  friend Rational operator-(Rational a) { fmpq_neg(a.v_, a.v_); return a; }
  friend bool operator==(const Rational& a, const Rational& b) { return fmpq_equal(a.v_, b.v_); }
  friend bool operator<(const Rational& a, const Rational& b) { return fmpq_cmp(a.v_, b.v_) < 0; }
  friend bool operator>(const Rational& a, const Rational& b) { return b < a; }
  friend bool operator<=(const Rational& a, const Rational& b) { return !(b < a); }

 private:
  fmpq_t v_;
};

using QVec = std::vector<Rational>;

// Dense row-major matrix over Q.
class QMat {
 public:
  QMat() = default;
  QMat(int rows, int cols) : r_(rows), c_(cols), a_(static_cast<size_t>(rows) * cols) {}
  int rows() const { return r_; }
  int cols() const { return c_; }
  Rational& operator()(int i, int j) { return a_[static_cast<size_t>(i) * c_ + j]; }
  const Rational& operator()(int i, int j) const { return a_[static_cast<size_t>(i) * c_ + j]; }
  QVec col(int j) const;
  QVec row(int i) const;
  QMat transpose() const;
  friend bool operator==(const QMat& a, const QMat& b) { return a.r_ == b.r_ && a.c_ == b.c_ && a.a_ == b.a_; }
  bool is_zero() const;

 private:
  int r_ = 0, c_ = 0;
  std::vector<Rational> a_;
};

Rational dot(const QVec& x, const QVec& y);
// The largest |x_i| (0 for an empty vector).
Rational max_abs(const QVec& x);
// The least power of two c >= 1 with every |x_i| / c <= size (size > 0).
Rational pow2_scale_within(const QVec& x, const Rational& size);
QVec matvec(const QMat& A, const QVec& x);

// A rational matrix kept as integers over one common denominator, for many
// products with vectors: apply(x) sums integer products and reduces each
// entry once, where matvec reduces (a gcd) after every term. The result is
// the same canonical rational as matvec(A, x).
class ClearedQMat {
 public:
  ClearedQMat() = default;
  explicit ClearedQMat(const QMat& A);
  bool empty() const { return r_ == 0 && c_ == 0; }
  QVec apply(const QVec& x) const;

 private:
  int r_ = 0, c_ = 0;
  std::vector<Rational> num_;  // integers, row-major: A = num_ / den_
  Rational den_{1};            // a positive integer
};
QVec operator+(const QVec& x, const QVec& y);
QVec operator-(const QVec& x, const QVec& y);
QMat operator+(const QMat& x, const QMat& y);
Rational det(const QMat& A);
int rank(const QMat& A);  // exact rank over Q
// Solves A x = b exactly; returns false when A is singular.
bool solve(const QMat& A, const QVec& b, QVec& x);
// Exact inverse; returns false when A is singular.
bool inverse(const QMat& A, QMat& inv);
// Least common multiple of the denominators of all entries.
Rational denominator_lcm(const QMat& A);

}  // namespace mhaq
