// The Field<T> contract (arith/field.hpp), one body over every number type the
// learner runs on (arith/all_fields.hpp): exact Q(tau), Arb balls, MPFR,
// double, and the jets over the inexact three (Jet<Ball>, Jet<Mpfr>,
// Jet<double>, Jet<Mpfr, ErrDouble>). The body checks
//   * ring laws on random elements (rationals and powers of tau);
//   * each result against the exact rational it stands for: equal (exact),
//     contained (balls), within a stated tolerance (floats);
//   * the decisions: made and right where the contract says they are made,
//     never wrong where it allows unknown;
//   * solve, real_roots, and refine + certify of a small nonlinear system;
//   * for jets, the derivatives of the same results.
// The body collects what fails instead of asserting, so that two controls can
// run it on fields that break the contract (a wrong conversion, a wrong sign)
// and on the skeleton a new arithmetic starts from, and require failures.
// A new arithmetic adds its field to MHAQ_FOR_EACH_FIELD and passes here.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "mhaq/arith/all_fields.hpp"
#include "mhaq/base/precision.hpp"
#include "mhaq/base/random.hpp"
#include "skeleton_field.hpp"
#include "test_util.hpp"

using namespace mhaq;

namespace {

constexpr long kL = 4;       // tau = e^{1/4} in the exact field
constexpr long kBits = 128;  // balls and MPFR

template <class T>
struct JetParts {
  static constexpr bool jet = false;
};
template <class B, class D>
struct JetParts<Jet<B, D>> {
  static constexpr bool jet = true;
  using base = B;
  using deriv = D;
};

template <class F>
F make_field() {
  using T = typename F::value_type;
  if constexpr (JetParts<T>::jet) return F(make_field<Field<typename JetParts<T>::base>>());
  else if constexpr (std::is_same_v<F, Field<QTau>>) return F(kL);
  else return F{};
}

// The field that decides for F: F itself, or a jet's base field.
template <class F>
const auto& base_of(const F& f) {
  if constexpr (JetParts<typename F::value_type>::jet) return f.base;
  else return f;
}
template <class T>
const auto& value_of(const T& x) {
  if constexpr (JetParts<T>::jet) return x.value();
  else return x;
}

// What the contract promises of a field's decisions and results.
enum class Promise { exact, enclosure, tolerance };
template <class F>
constexpr Promise promise_of() {
  using Fb = std::remove_cvref_t<decltype(base_of(std::declval<const F&>()))>;
  return Fb::is_exact ? Promise::exact : Fb::is_rigorous ? Promise::enclosure : Promise::tolerance;
}

struct Report {
  std::vector<std::string> failures;
  int checks = 0;
  void expect(bool ok, const std::string& what) {
    ++checks;
    if (!ok) failures.push_back(what);
  }
};

template <class F>
long precision_of(const F& f) {
  const auto& b = base_of(f);
  if constexpr (requires { b.precision(); }) return b.precision();
  else return kBits;
}

// x stands for the rational q: equal, contained, or within 2^(12-p) relative.
template <class F, class T>
bool agrees(const F& f, const T& x, const Rational& q) {
  const auto& b = base_of(f);
  const auto& v = value_of(x);
  switch (promise_of<F>()) {
    case Promise::exact: return b.equal(v, b.from(q)) == Truth::yes;
    case Promise::enclosure: return b.enclose(v).contains(q);
    case Promise::tolerance: {
      const Ball diff = b.enclose(v) - Ball(q);  // in balls: the error is below double's resolution
      return std::fabs(diff.mid_double()) + diff.radius() <= std::exp2(12.0 - static_cast<double>(precision_of(f))) * (1 + std::fabs(q.approx_double()));
    }
  }
  return false;
}
// A derivative part stands for q (its own type: the base field's, or a double with its error bound).
template <class F, class D>
bool deriv_agrees(const F& f, const D& d, const Rational& q) {
  if constexpr (requires { d.mid; d.rad; }) return std::fabs(d.mid - q.approx_double()) <= d.rad + 1e-12 * (1 + std::fabs(q.approx_double()));
  else return agrees(base_of(f), d, q);
}

// A decision t on a statement whose truth is `holds`: exact fields decide
// it; the others may say unknown, never the wrong answer.
template <class F>
bool decides(Truth t, bool holds) {
  const Truth right = holds ? Truth::yes : Truth::no;
  if (promise_of<F>() == Promise::exact) return t == right;
  return t != (holds ? Truth::no : Truth::yes);
}

// An element of the field for the rational q; for jets an independent variable (index i).
template <class F>
typename F::value_type element(const F& f, const Rational& q, int i) {
  using T = typename F::value_type;
  if constexpr (JetParts<T>::jet) return T::variable(f.base.from(q), i);
  else return f.from(q);
}

Rational draw_rational(Rng& rng) {
  long n = 0;
  while (n == 0) n = rng.uniform_int(-40, 40);
  return Rational(n, static_cast<unsigned long>(rng.uniform_int(1, 12)));
}

template <class F>
void ring_laws(const F& f, Rng& rng, Report& rep) {
  using T = typename F::value_type;
  for (int t = 0; t < 20 * test::multiplier(); ++t) {
    const Rational qa = draw_rational(rng), qb = draw_rational(rng), qc = draw_rational(rng);
    const long n = rng.uniform_int(-8, 8);
    const T a = element(f, qa, 0), b = element(f, qb, 1), c = element(f, qc, 2);
    const T e = f.exp(Rational(n, kL));  // tau^n: not a rational
    const std::string at = " (a=" + qa.str() + ", b=" + qb.str() + ", c=" + qc.str() + ", tau^" + std::to_string(n) + ")";
    auto same = [&](const T& x, const T& y, const char* law) {
      rep.expect(decides<F>(f.equal(x, y), true), std::string(law) + at);
    };
    same(a + b, b + a, "a+b = b+a");
    same(a * e, e * a, "a e = e a");
    same((a + b) + c, a + (b + c), "(a+b)+c = a+(b+c)");
    same((a * b) * e, a * (b * e), "(ab)e = a(be)");
    same(e * (a + b), e * a + e * b, "e(a+b) = ea+eb");
    same(a / b * b, a, "(a/b)b = a");
    same(-(a - b), b - a, "-(a-b) = b-a");
    rep.expect(decides<F>(f.is_zero(a - b + b - a), true) || promise_of<F>() == Promise::tolerance, "a-b+b-a = 0" + at);
    // each result against its exact rational
    rep.expect(agrees(f, a + b * c, qa + qb * qc), "a+bc against Q" + at);
    rep.expect(agrees(f, (a - c) / b, (qa - qc) / qb), "(a-c)/b against Q" + at);
    rep.expect(agrees(f, f.abs(-a), qa.sign() < 0 ? -qa : qa), "|-a| against Q" + at);
    rep.expect(agrees(f, f.log(f.exp(Rational(n, kL))), Rational(n, kL)), "log exp(n/L) against Q" + at);
    // the decisions on elements whose relation is known
    rep.expect(decides<F>(f.is_positive(a), qa.sign() > 0), "sign of a" + at);
    rep.expect(decides<F>(f.equal(a, b), qa == qb), "a = b" + at);
    rep.expect(f.is_positive(f.from(qa * qa + Rational(1))) == Truth::yes, "a^2+1 > 0 decided" + at);
    rep.expect(f.equal(a, a + f.from(Rational(1))) == Truth::no, "a != a+1 decided" + at);
    if constexpr (JetParts<T>::jet) {
      // derivatives: d(ab)/da = b, d(a/b)/db = -a/b^2, d(exp(a/16))/da at a = qa
      rep.expect(deriv_agrees(f, (a * b).derivative(0), qb), "d(ab)/da" + at);
      rep.expect(deriv_agrees(f, (a / b).derivative(1), -qa / (qb * qb)), "d(a/b)/db" + at);
      rep.expect(deriv_agrees(f, (a + c).derivative(1), Rational(0)), "d(a+c)/db = 0" + at);
    }
  }
}

template <class F>
void zero_and_signs(const F& f, Report& rep) {
  const auto zero = f.from(Rational(0)), one = f.from(Rational(1));
  // exact fields and balls decide an exact zero; a float is never certainly zero
  const Truth z = f.is_zero(zero);
  rep.expect(promise_of<F>() == Promise::tolerance ? z != Truth::no : z == Truth::yes, "0 is zero");
  rep.expect(f.is_zero(one) == Truth::no, "1 is not zero");
  rep.expect(f.is_positive(one) == Truth::yes && f.is_positive(-one) == Truth::no, "the signs of 1 and -1");
  rep.expect(decides<F>(f.equal(one, f.exp(Rational(0))), true), "exp(0) = 1");
}

// A 2x2 system A X = B with rational entries, and a singular one.
template <class F>
void linear_solve(const F& f, Rng& rng, Report& rep) {
  using T = typename F::value_type;
  for (int t = 0; t < 5 * test::multiplier(); ++t) {
    Rational q[2][2], rhs[2];
    for (auto& row : q)
      for (auto& x : row) x = draw_rational(rng);
    for (auto& x : rhs) x = draw_rational(rng);
    const Rational det = q[0][0] * q[1][1] - q[0][1] * q[1][0];
    if (det.is_zero()) continue;
    Mat<T> A(2, 2), B(2, 1), X;
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) A(i, j) = element(f, q[i][j], 2 * i + j);
      B(i, 0) = element(f, rhs[i], 4 + i);
    }
    rep.expect(f.solve(X, A, B) == Truth::yes, "a nonsingular 2x2 solve decided");
    if (X.rows() != 2) continue;
    const Rational x0 = (rhs[0] * q[1][1] - q[0][1] * rhs[1]) / det, x1 = (q[0][0] * rhs[1] - q[1][0] * rhs[0]) / det;
    rep.expect(agrees(f, X(0, 0), x0) && agrees(f, X(1, 0), x1), "the 2x2 solution against Q");
    if constexpr (JetParts<T>::jet) rep.expect(deriv_agrees(f, X(0, 0).derivative(4), q[1][1] / det), "dx0/db0 = (A^-1)_00");
  }
  Mat<T> S(2, 2), B(2, 1), X;
  S(0, 0) = f.from(Rational(1)), S(0, 1) = f.from(Rational(2)), S(1, 0) = f.from(Rational(2)), S(1, 1) = f.from(Rational(4));
  B(0, 0) = B(1, 0) = f.from(Rational(1));
  rep.expect(decides<F>(f.solve(X, S, B), false), "a singular solve is not called nonsingular");
}

// (x + tau^-1)(x + tau^-3): the roots -tau^-1 and -tau^-3 (the form of a pole root).
template <class F>
void roots(const F& f, Report& rep) {
  const auto p = f.exp(Rational(-1, kL)), q = f.exp(Rational(-3, kL));
  const std::vector<typename F::value_type> c{p * q, p + q, f.from(Rational(1))};
  const auto r = f.real_roots(c);
  rep.expect(r.ok != Truth::no, "real_roots of two distinct real roots");
  if (r.ok != Truth::yes) return;
  rep.expect(r.roots.size() == 2, "two roots");
  int found = 0;
  for (const auto& x : r.roots) found += (f.equal(x, -p) != Truth::no) + (f.equal(x, -q) != Truth::no);
  rep.expect(found == 2, "the roots are -tau^-1 and -tau^-3");
}

// x^2 = t near x = 3/2 (t = 9/4): refine from a start off the root, then certify.
template <class U>
struct Square {
  U t;
  int unknowns() const { return 1; }
  int equations() const { return 1; }
  const U& target(int) const { return t; }
  template <class G>
  typename G::value_type model(const G&, const std::vector<typename G::value_type>& x, int) const {
    return x[0] * x[0];
  }
  template <class G>
  void jacobian(const G&, const std::vector<typename G::value_type>& x, Mat<typename G::value_type>& J) const {
    J = Mat<typename G::value_type>(1, 1);
    J(0, 0) = x[0] + x[0];
  }
  template <class G>
  void linear_part(const G&, std::vector<typename G::value_type>&) const {}
  template <class G>
  Truth admissible(const G& g, const std::vector<typename G::value_type>& x) const {
    return g.is_positive(x[0]);
  }
  template <class Fn>
  auto map_targets(Fn fn) const {
    return Square<decltype(fn(t))>{fn(t)};
  }
};

template <class F>
void refine_and_certify(const F& f, Report& rep) {
  using T = typename F::value_type;
  const Square<T> sys{element(f, Rational(9, 4), 0)};
  // exact fields compute the root exactly before they certify, balls filter
  // it closely and jets certify the run's own refined values; floats start
  // off the root and refine
  const bool off = promise_of<F>() == Promise::tolerance && !JetParts<T>::jet;
  std::vector<T> x{f.from(Rational(3, 2) + (off ? Rational(1, 64) : promise_of<F>() == Promise::enclosure ? Rational(1, 1UL << 60) : Rational(0)))};
  f.refine(sys, x);
  const Truth t = f.certify(sys, x);
  rep.expect(t == Truth::yes, "certify x^2 = 9/4 near 3/2");
  if (t != Truth::yes) return;
  rep.expect(agrees(f, x[0], Rational(3, 2)), "the certified root against 3/2");
  if constexpr (JetParts<T>::jet) rep.expect(deriv_agrees(f, x[0].derivative(0), Rational(1, 3)), "dx/dt = 1/(2x) = 1/3");
}

template <class F>
Report conformance(const F& f, std::uint64_t seed) {
  Report rep;
  Rng rng(seed);
  // a section that throws (Error(unable) where a decision cannot be made) fails where it stands
  auto section = [&](const char* name, auto&& body) {
    try {
      body();
    } catch (const std::exception& e) {
      rep.expect(false, std::string(name) + ": " + e.what());
    }
  };
  section("zero and signs", [&] { zero_and_signs(f, rep); });
  section("ring laws", [&] { ring_laws(f, rng, rep); });
  section("solve", [&] { linear_solve(f, rng, rep); });
  section("real roots", [&] { roots(f, rep); });
  section("refine and certify", [&] { refine_and_certify(f, rep); });
  return rep;
}

std::string shown(const Report& r) {
  std::string s;
  for (size_t i = 0; i < r.failures.size() && i < 12; ++i) s += "  " + r.failures[i] + "\n";
  return s;
}

// Controls: fields that break one promise each.
struct WrongConversion : Field<Ball> {  // from() off by 2^-40
  Ball from(const Rational& q) const { return Field<Ball>::from(q + Rational(1, 1UL << 40)); }
};
struct WrongSign : Field<Mpfr> {  // is_positive answers for -x
  Truth is_positive(const Mpfr& x) const { return Field<Mpfr>::is_positive(-x); }
};

}  // namespace

TEST_CASE_TEMPLATE("the Field contract holds for every number type", F, Field<QTau>, Field<Ball>, Field<Mpfr>, Field<double>, Field<Jet<Ball>>,
                   Field<Jet<Mpfr>>, Field<Jet<double>>, Field<JetMpfrD>) {
  PrecisionScope scope(kBits);
  const F f = make_field<F>();
  const Report rep = conformance(f, 20260 + static_cast<std::uint64_t>(F::tag));
  INFO("failures:\n" << shown(rep));
  CHECK(rep.checks > 200 * test::multiplier());  // the body ran in full
  CHECK(rep.failures.empty());
}

TEST_CASE("controls: a field that breaks the contract fails the same body") {
  PrecisionScope scope(kBits);
  const Report conversion = conformance(WrongConversion{}, 1);
  MESSAGE("wrong conversion: " << conversion.failures.size() << " of " << conversion.checks << " checks fail");
  CHECK(conversion.failures.size() > 10);
  const Report sign = conformance(WrongSign{}, 1);
  MESSAGE("wrong sign: " << sign.failures.size() << " of " << sign.checks << " checks fail");
  CHECK(sign.failures.size() > 10);
}

TEST_CASE("the skeleton a new arithmetic starts from meets the concept, and fails the contract until it is written") {
  static_assert(ArithField<Field<SkeletonNumber>>);
  const Report rep = conformance(Field<SkeletonNumber>{}, 1);
  CHECK(rep.failures.size() == static_cast<size_t>(rep.checks));  // every check fails: nothing is computed yet
}
