// QTau's +, -, * and / (arith/qtau_arith.cpp) return fmpz_poly_q's own
// results, representation included, on operands of every kind the fast
// routes single out (zero, rationals, monomials (u/v) tau^e, Laurent elements
// P / (c tau^s)) and on general ones, with common integer factors and powers
// of tau that must cancel, and with aliased operands.
#include <doctest/doctest.h>

#include <flint/fmpz_poly_q.h>

#include <string>
#include <vector>

#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/arith/ratio_sum.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/random.hpp"
#include "test_util.hpp"

using namespace mhaq;

namespace {
// Operands are built with fmpz_poly_q alone, so that the operators under test
// take no part in forming them.
QTau from_parts(const std::vector<std::pair<long, long>>& num, const std::vector<std::pair<long, long>>& den) {
  QTau x;
  fmpz_poly_q_struct* r = QTauAccess::raw(x);
  fmpz_poly_zero(r->num);
  fmpz_poly_zero(r->den);
  for (const auto& [e, c] : num) fmpz_poly_set_coeff_si(r->num, e, c);
  for (const auto& [e, c] : den) fmpz_poly_set_coeff_si(r->den, e, c);
  if (fmpz_poly_is_zero(r->den)) fmpz_poly_one(r->den);
  fmpz_poly_q_canonicalise(r);
  return x;
}

long nonzero(Rng& g, long lo, long hi) {
  long v = 0;
  while (v == 0) v = g.uniform_int(lo, hi);
  return v;
}
// Coefficients with shared small factors, so that contents cancel.
long coeff(Rng& g) { return nonzero(g, -4, 4) * (g.uniform_int(0, 2) == 0 ? 6 : 1); }

QTau random_of_kind(Rng& g, int kind) {
  const long deg = g.uniform_int(0, 40);
  switch (kind) {
    case 0: return QTau();
    case 1: return from_parts({{0, coeff(g)}}, {{0, nonzero(g, 1, 12)}});  // rational
    case 2: {                                                             // monomial, either sign of e
      const long e = g.uniform_int(0, 60);
      return g.uniform_int(0, 1) ? from_parts({{e, coeff(g)}}, {{0, nonzero(g, 1, 12)}}) : from_parts({{0, coeff(g)}}, {{e, nonzero(g, 1, 12)}});
    }
    case 3: {  // Laurent: few terms over c tau^s, numerator often divisible by tau
      std::vector<std::pair<long, long>> num;
      const long lo = g.uniform_int(0, 5);
      for (int t = 0, T = static_cast<int>(g.uniform_int(1, 5)); t < T; ++t) num.push_back({lo + g.uniform_int(0, deg), coeff(g)});
      return from_parts(num, {{g.uniform_int(0, 50), nonzero(g, 1, 24)}});
    }
    default: {  // general: sparse numerator and denominator, shared factors likely
      std::vector<std::pair<long, long>> num, den;
      for (int t = 0, T = static_cast<int>(g.uniform_int(1, 4)); t < T; ++t) num.push_back({g.uniform_int(0, deg), coeff(g)});
      for (int t = 0, T = static_cast<int>(g.uniform_int(2, 4)); t < T; ++t) den.push_back({g.uniform_int(0, deg), coeff(g)});
      QTau x = from_parts(num, den);
      if (g.uniform_int(0, 1)) {  // times a binomial factor shared with others drawn alike
        const QTau f = from_parts({{0, 1}, {3, 2}}, {{0, 1}});
        fmpz_poly_q_mul(QTauAccess::raw(x), QTauAccess::raw(x), QTauAccess::raw(f));
      }
      return x;
    }
  }
}

bool same(const QTau& a, const QTau& b) {
  return fmpz_poly_q_is_canonical(QTauAccess::raw(a)) && fmpz_poly_equal(QTauAccess::raw(a)->num, QTauAccess::raw(b)->num) &&
         fmpz_poly_equal(QTauAccess::raw(a)->den, QTauAccess::raw(b)->den);
}

// fmpz_poly_q's results, the reference
QTau ref(const QTau& a, const QTau& b, char op) {
  QTau r;
  fmpz_poly_q_struct* o = QTauAccess::raw(r);
  if (op == '+') fmpz_poly_q_add(o, QTauAccess::raw(a), QTauAccess::raw(b));
  if (op == '-') fmpz_poly_q_sub(o, QTauAccess::raw(a), QTauAccess::raw(b));
  if (op == '*') fmpz_poly_q_mul(o, QTauAccess::raw(a), QTauAccess::raw(b));
  if (op == '/') fmpz_poly_q_div(o, QTauAccess::raw(a), QTauAccess::raw(b));
  return r;
}
}  // namespace

TEST_CASE("QTau operators return fmpz_poly_q's canonical results on every kind of operand") {
  Rng g(2611);
  const int iters = 400 * test::multiplier();
  test::Outcomes pairs("operand pairs of every kind");
  for (int it = 0; it < iters; ++it) {
    for (int ka = 0; ka < 5; ++ka)
      for (int kb = 0; kb < 5; ++kb) {
        const QTau a = random_of_kind(g, ka), b = random_of_kind(g, kb);
        CAPTURE(it);
        CAPTURE(ka);
        CAPTURE(kb);
        CAPTURE(QTauAccess::str(a));
        CAPTURE(QTauAccess::str(b));
        CHECK(same(a + b, ref(a, b, '+')));
        CHECK(same(a - b, ref(a, b, '-')));
        CHECK(same(a * b, ref(a, b, '*')));
        if (!QTauAccess::is_zero(b)) CHECK(same(a / b, ref(a, b, '/')));
        else CHECK_THROWS_AS(a / b, Error);
        // aliased operands
        QTau x = a;
        x += x;
        CHECK(same(x, ref(a, a, '+')));
        x = a;
        x -= x;
        CHECK(same(x, QTau()));
        x = a;
        x *= x;
        CHECK(same(x, ref(a, a, '*')));
        if (!QTauAccess::is_zero(a)) {
          x = a;
          x /= x;
          CHECK(same(x, QTau(Rational(1))));
        }
        pairs.count(QTauAccess::is_zero(b) ? "checked, zero divisor" : "checked");
      }
  }
  pairs.require(25 * iters * 3 / 4, {"checked"});
  CHECK(pairs.total() == 25 * iters);
}

TEST_CASE("QTau operators: cancellations the fast routes must make") {
  const QTau t5 = from_parts({{5, 1}}, {{0, 1}});              // tau^5
  const QTau l = from_parts({{2, 6}, {7, 4}}, {{3, 10}});        // (6 tau^2 + 4 tau^7) / (10 tau^3) = (3 + 2 tau^5) / (5 tau)
  const QTau m = from_parts({{0, 5}}, {{1, 2}});                 // 5 / (2 tau)
  CHECK(same(l, from_parts({{0, 3}, {5, 2}}, {{1, 5}})));
  CHECK(same(l * m, from_parts({{0, 3}, {5, 2}}, {{2, 2}})));   // (3 + 2 tau^5) / (2 tau^2)
  CHECK(same(l / l, QTau(Rational(1))));
  CHECK(same(l - l, QTau()));
  CHECK(same((l * t5) / l, t5));
  CHECK(same(l + l, from_parts({{0, 6}, {5, 4}}, {{1, 5}})));
  // Laurent over Laurent with a common polynomial factor (3 + 2 tau^5)
  const QTau l2 = from_parts({{1, 9}, {6, 6}}, {{0, 4}});       // 3 tau (3 + 2 tau^5) / 4
  CHECK(same(l / l2, from_parts({{0, 4}}, {{2, 15}})));         // 4 / (15 tau^2)
  // a negative divisor's sign moves to the numerator
  CHECK(same(m / from_parts({{0, -3}}, {{0, 1}}), from_parts({{0, -5}}, {{1, 6}})));
}

TEST_CASE("equal_ratio_sum over Q(tau) decides as the plain sum does") {
  Rng g(77);
  const Field<QTau> fld(4);
  test::Outcomes sums("ratio sums decided");
  for (int it = 0; it < 300 * test::multiplier(); ++it) {
    std::vector<QTau> num, den;
    for (int h = 0, H = static_cast<int>(g.uniform_int(1, 4)); h < H; ++h) {
      num.push_back(random_of_kind(g, static_cast<int>(g.uniform_int(0, 4))));
      QTau d = random_of_kind(g, static_cast<int>(g.uniform_int(1, 4)));
      den.push_back(d);
    }
    QTau sum;
    for (size_t h = 0; h < num.size(); ++h) sum += num[h] / den[h];
    const QTau other = g.uniform_int(0, 1) ? sum + random_of_kind(g, static_cast<int>(g.uniform_int(1, 4))) : sum * random_of_kind(g, 2);
    for (const QTau* v : std::vector<const QTau*>{&sum, &other}) {
      const Truth fast = equal_ratio_sum(fld, num, den, *v);
      CHECK(fast == equal_ratio_sum<Field<QTau>>(fld, num, den, *v));  // the plain sum, then equal
      sums.count(fast == Truth::yes ? "equal" : "different");
    }
  }
  sums.require(301, {"equal"});
  sums.require(51, {"different"});
  std::vector<QTau> num{QTau(Rational(1))}, den{QTau()};
  CHECK_THROWS_AS(equal_ratio_sum(fld, num, den, QTau()), Error);
}
