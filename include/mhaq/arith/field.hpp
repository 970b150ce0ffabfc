// The arithmetic seam. Every algorithm in mhaq is written once against
// Field<T>, a small traits object in the spirit of CGAL's
// Algebraic_structure_traits: +,-,*,/ on T, three-valued zero and sign tests,
// exp of a rational, log of a positive number, a linear solve and the real
// roots of a real-rooted polynomial.
//
// Rigor contracts (Arb wording):
//  * Field<QTau>: every result is exact; Truth is never Unknown.
//  * Field<Ball>: on success the exact result is contained in the output balls;
//    a decision the balls cannot make is Truth::unknown and the callers turn it
//    into Error(unable), never into a guess.
//  * Field<Mpfr>, Field<double>: approx_ semantics; no error bound is claimed,
//    and decisions are floating-point judgements (documented where made).
#pragma once
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "mhaq/base/error.hpp"
#include "mhaq/arith/numbers.hpp"
#include "mhaq/arith/rational.hpp"

namespace mhaq {

enum class Truth { no, yes, unknown };
inline Truth truth_not(Truth t) { return t == Truth::yes ? Truth::no : t == Truth::no ? Truth::yes : Truth::unknown; }

enum class Arith { exact, ball, mpfr, ieee };
const char* arith_name(Arith a);
Arith parse_arith(const std::string& s);  // throws Error(usage)

template <class T>
class Mat {
 public:
  Mat() = default;
  Mat(int r, int c) : r_(r), c_(c), a_(static_cast<size_t>(r) * c) {}
  int rows() const { return r_; }
  int cols() const { return c_; }
  T& operator()(int i, int j) { return a_[static_cast<size_t>(i) * c_ + j]; }
  const T& operator()(int i, int j) const { return a_[static_cast<size_t>(i) * c_ + j]; }

 private:
  int r_ = 0, c_ = 0;
  std::vector<T> a_;
};

template <class T>
struct Field;

template <>
struct Field<QTau> {
  static constexpr Arith tag = Arith::exact;
  static constexpr bool is_exact = true;
  static constexpr bool is_rigorous = true;
  long L = 1;  // tau = e^{1/L}

  QTau from(const Rational& q) const { return QTau(q); }
  QTau exp(const Rational& s) const;  // requires s*L integer
  QTau log(const QTau& r) const;      // requires r == tau^n; returns n/L
  Truth is_zero(const QTau& x) const { return x.is_zero() ? Truth::yes : Truth::no; }
  Truth is_positive(const QTau& x) const;
  void solve(Mat<QTau>& X, const Mat<QTau>& A, const Mat<QTau>& B) const;
  std::vector<QTau> real_roots(const std::vector<QTau>& c) const;
};

template <>
struct Field<Ball> {
  static constexpr Arith tag = Arith::ball;
  static constexpr bool is_exact = false;
  static constexpr bool is_rigorous = true;

  Ball from(const Rational& q) const { return Ball(q); }
  Ball exp(const Rational& s) const;
  Ball log(const Ball& r) const;  // unable unless r is certainly positive
  Truth is_zero(const Ball& x) const;
  Truth is_positive(const Ball& x) const;
  void solve(Mat<Ball>& X, const Mat<Ball>& A, const Mat<Ball>& B) const;
  std::vector<Ball> real_roots(const std::vector<Ball>& c) const;
  // Krawczyk certification of a pair fit: given the sample balls f(0..2H)
  // and an approximate fit (midpoints used), returns true and replaces the fit
  // by enclosures that contain, for every choice of samples in the balls, the
  // unique nearby solution of P + sum c_h/(1 + r_h k) = f(k) (proofs/02).
  bool certify_pair(const std::vector<Ball>& f, Ball& P, std::vector<Ball>& r, std::vector<Ball>& c) const;
};

template <>
struct Field<Mpfr> {
  static constexpr Arith tag = Arith::mpfr;
  static constexpr bool is_exact = false;
  static constexpr bool is_rigorous = false;

  Mpfr from(const Rational& q) const { return Mpfr(q); }
  Mpfr exp(const Rational& s) const;
  Mpfr log(const Mpfr& r) const;
  Truth is_zero(const Mpfr& x) const { return mpfr_zero_p(x.raw()) ? Truth::yes : Truth::no; }
  Truth is_positive(const Mpfr& x) const { return mpfr_sgn(x.raw()) > 0 ? Truth::yes : Truth::no; }
  double log2_abs(const Mpfr& x) const;
  void solve(Mat<Mpfr>& X, const Mat<Mpfr>& A, const Mat<Mpfr>& B) const;
  std::vector<Mpfr> real_roots(const std::vector<Mpfr>& c) const;
  Mpfr abs(const Mpfr& x) const;
};

template <>
struct Field<double> {
  static constexpr Arith tag = Arith::ieee;
  static constexpr bool is_exact = false;
  static constexpr bool is_rigorous = false;

  double from(const Rational& q) const { return q.approx_double(); }
  double exp(const Rational& s) const { return std::exp(s.approx_double()); }
  double log(const double& r) const;
  Truth is_zero(const double& x) const { return x == 0.0 ? Truth::yes : Truth::no; }
  Truth is_positive(const double& x) const { return x > 0.0 ? Truth::yes : Truth::no; }
  double log2_abs(const double& x) const { return x == 0.0 ? -std::numeric_limits<double>::infinity() : std::log2(std::fabs(x)); }
  void solve(Mat<double>& X, const Mat<double>& A, const Mat<double>& B) const;
  std::vector<double> real_roots(const std::vector<double>& c) const;
  double abs(const double& x) const { return std::fabs(x); }
};

// Evaluates sum c[m] x^m (Horner), generic.
template <class T>
T poly_eval(const std::vector<T>& c, const T& x) {
  T acc = c.back();
  for (size_t m = c.size() - 1; m-- > 0;) acc = acc * x + c[m];
  return acc;
}
template <class T>
std::vector<T> poly_derivative(const Field<T>& F, const std::vector<T>& c) {
  std::vector<T> d;
  for (size_t m = 1; m < c.size(); ++m) d.push_back(c[m] * F.from(Rational(static_cast<long>(m))));
  if (d.empty()) d.push_back(F.from(Rational(0)));
  return d;
}

}  // namespace mhaq
