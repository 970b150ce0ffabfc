// Exact solves over Q(tau): every method returns fflu's result by exact
// equality (canonical fmpz_poly_q forms), and singular systems are reported
// as singular by every method, including singular systems whose right-hand
// side lies in the range (a solution exists but is not unique).
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/arith/solve/qtau_solve.hpp"
#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/random.hpp"
#include "test_util.hpp"

using namespace mhaq;

// Exact equality of Q(tau) elements, for comparisons in this file (the
// learner itself has only Field<QTau>::equal).
namespace mhaq {
inline bool operator==(const QTau& a, const QTau& b) { return QTauAccess::equal(a, b); }
}  // namespace mhaq

namespace {
const ExactSolver kMethods[] = {ExactSolver::modular, ExactSolver::sparse};

QTau rat(long p, long q = 1) { return QTau(Rational(p, static_cast<unsigned long>(q))); }

// Random polynomial in tau of degree <= deg with coefficients in [-c, c].
QTau rand_poly(Rng& g, long deg, long c) {
  QTau x;
  fmpz_poly_zero(QTauAccess::raw(x)->num);
  for (long i = 0; i <= deg; ++i) fmpz_poly_set_coeff_si(QTauAccess::raw(x)->num, i, g.uniform_int(-c, c));
  fmpz_poly_one(QTauAccess::raw(x)->den);
  return x;
}
// Random element of Q(tau): mixed degrees, rational constants, negative powers of tau, zeros.
QTau rand_elem(Rng& g, long maxdeg) {
  switch (g.uniform_int(0, 5)) {
    case 0: return QTau();                                        // zero
    case 1: return rat(g.uniform_int(-9, 9), g.uniform_int(1, 7));  // rational constant
    case 2: return rand_poly(g, g.uniform_int(0, maxdeg), 5) * QTauAccess::tau_pow(-g.uniform_int(1, 2 * maxdeg));
    default: {
      QTau d = rand_poly(g, g.uniform_int(0, maxdeg), 4);
      if (QTauAccess::is_zero(d)) d = rat(1);
      return rand_poly(g, g.uniform_int(0, maxdeg), 6) * rat(1, g.uniform_int(1, 5)) / d;
    }
  }
}

bool same(const Mat<QTau>& a, const Mat<QTau>& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  for (int i = 0; i < a.rows(); ++i)
    for (int j = 0; j < a.cols(); ++j)
      if (!(a(i, j) == b(i, j))) return false;
  return true;
}
// A X == B, checked independently of the solvers with fmpz_poly_q arithmetic.
bool solves(const Mat<QTau>& A, const Mat<QTau>& X, const Mat<QTau>& B) {
  for (int i = 0; i < A.rows(); ++i)
    for (int c = 0; c < B.cols(); ++c) {
      QTau s;
      for (int j = 0; j < A.cols(); ++j) s += A(i, j) * X(j, c);
      if (!(s == B(i, c))) return false;
    }
  return true;
}

// The learner's pair system (interpolate_linear) for f(k) = P + sum c_h / (1 + tau^{n_h} k).
void pair_system(const std::vector<long>& nh, const std::vector<QTau>& c, const QTau& P, Mat<QTau>& A, Mat<QTau>& rhs,
                 std::vector<QTau>* samples = nullptr) {
  const int H = static_cast<int>(nh.size()), n = 2 * H + 1;
  A = Mat<QTau>(n, n);
  rhs = Mat<QTau>(n, 1);
  if (samples) samples->clear();
  for (int k = 0; k < n; ++k) {
    QTau f = P;
    for (int h = 0; h < H; ++h) f += c[h] / (rat(1) + QTauAccess::tau_pow(nh[h]) * rat(k));
    long km = 1;
    for (int m = 0; m <= H; ++m) {
      A(k, m) = rat(km);
      if (m >= 1) A(k, H + m) = -(f * rat(km));
      km *= k;
    }
    rhs(k, 0) = f;
    if (samples) samples->push_back(f);
  }
}

std::vector<long> distinct_exponents(Rng& g, int H, long range) {
  std::vector<long> nh;
  while (static_cast<int>(nh.size()) < H) {
    const long e = g.uniform_int(-range, range);
    if (std::find(nh.begin(), nh.end(), e) == nh.end()) nh.push_back(e);
  }
  return nh;
}
}  // namespace

TEST_CASE("solver names parse and unknown names are usage errors") {
  for (ExactSolver s : {ExactSolver::fflu, ExactSolver::modular, ExactSolver::sparse}) CHECK(parse_exact_solver(exact_solver_name(s)) == s);
  try {
    parse_exact_solver("gauss");
    FAIL("no exception");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
  }
  // the field carries the choice: two fields with different solvers coexist
  const Field<QTau> dflt(3), fflu(3, ExactSolver::fflu);
  CHECK(dflt.solver() == ExactSolver::sparse);
  CHECK(fflu.solver() == ExactSolver::fflu);
  CHECK(Field<QTau>().solver() == ExactSolver::sparse);
}

TEST_CASE("pair systems: modular equals fflu, Q is the product of (1 + r_h k), and the modular path does the work") {
  Rng g(20240514);
  const int iters = 12 * test::multiplier();
  reset_exact_solve_stats();
  test::Outcomes systems("random pair systems");
  for (int it = 0; it < iters; ++it) {
    const int H = 1 + it % 4;
    const long range = it % 3 == 0 ? 300 : 40;  // some large tau-degrees
    const std::vector<long> nh = distinct_exponents(g, H, range);
    std::vector<QTau> c;
    for (int h = 0; h < H; ++h) {
      long p = 0;
      while (p == 0) p = g.uniform_int(-300, 300);
      c.push_back(rat(p, g.uniform_int(1, 16)));
    }
    const QTau P = rat(g.uniform_int(-500, 500), g.uniform_int(1, 16));
    Mat<QTau> A, rhs, X0, X1;
    std::vector<QTau> f;
    pair_system(nh, c, P, A, rhs, &f);
    REQUIRE(qtau_solve(ExactSolver::fflu, X0, A, rhs));
    for (ExactSolver s : kMethods) {
      CAPTURE(exact_solver_name(s));
      CAPTURE(it);
      REQUIRE(qtau_solve(s, X1, A, rhs));
      CHECK(same(X0, X1));
    }
    // q_m = e_m(tau^{n_1}, ..., tau^{n_H})
    std::vector<QTau> e{rat(1)};
    for (int h = 0; h < H; ++h) {
      e.push_back(QTau());
      for (int m = h + 1; m >= 1; --m) e[m] += e[m - 1] * QTauAccess::tau_pow(nh[h]);
    }
    for (int m = 1; m <= H; ++m) CHECK(X1(H + m, 0) == e[m]);
    CHECK(solves(A, X1, rhs));
    std::vector<QTau> N, Q;
    REQUIRE(qtau_rational_interpolate(ExactSolver::sparse, f, H, N, Q));
    for (int m = 0; m <= H; ++m) CHECK(N[m] == X0(m, 0));
    for (int m = 1; m <= H; ++m) CHECK(Q[m] == X0(H + m, 0));
    systems.count("solved, every method alike");
  }
  systems.require(iters, {"solved, every method alike"});
  const ExactSolveStats st = exact_solve_stats();
  CHECK(st.modular_calls >= 3 * iters);        // modular, sparse, and qtau_rational_interpolate (sparse)
  CHECK(st.modular_ok == st.modular_calls);    // no fallback to fflu on regular pair systems
  CHECK(st.sparse_ok >= 2 * iters);            // ... and the sparse method never needed the dense one
  CHECK(st.sparse_gave_up == 0);
  CHECK(st.fallback_other == 0);
}

TEST_CASE("degenerate pairs (zero residue, colliding poles) are singular for every method") {
  Rng g(77);
  const int iters = 6 * test::multiplier();
  test::Outcomes systems("degenerate pair systems");
  for (int it = 0; it < iters; ++it) {
    const int H = 2 + it % 3;
    std::vector<long> nh = distinct_exponents(g, H, 50);
    std::vector<QTau> c;
    for (int h = 0; h < H; ++h) c.push_back(rat(g.uniform_int(1, 40), g.uniform_int(1, 8)));
    if (it % 2 == 0) c[g.uniform_int(0, H - 1)] = QTau();  // a head invisible at this pair
    else nh[1] = nh[0];                                     // two heads with one pole
    Mat<QTau> A, rhs, X;
    pair_system(nh, c, rat(g.uniform_int(-50, 50), 3), A, rhs);
    bool singular = !qtau_solve(ExactSolver::fflu, X, A, rhs);
    CHECK(singular);
    for (ExactSolver s : kMethods) {
      CAPTURE(exact_solver_name(s));
      const bool si = !qtau_solve(s, X, A, rhs);
      CHECK(si);
      singular = singular && si;
    }
    systems.count(singular ? "singular for every method" : "solved");
  }
  systems.require(iters, {"singular for every method"});
}

TEST_CASE("general systems over Q(tau): modular equals fflu; singular ones are singular") {
  Rng g(999331);
  const int iters = 40 * test::multiplier();
  int nonsingular = 0, singular = 0, modular_own = 0;
  test::Outcomes systems("general systems");
  for (int it = 0; it < iters; ++it) {
    const int n = 1 + it % 5, k = 1 + it % 2;
    const long maxdeg = 1 + it % 4;
    Mat<QTau> A(n, n), B(n, k), X0, X1;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) A(i, j) = rand_elem(g, maxdeg);
      for (int j = 0; j < k; ++j) B(i, j) = rand_elem(g, maxdeg);
    }
    const int kind = it % 4;  // 0, 1: as drawn; 2: a dependent row; 3: dependent row and B in the range
    if (kind >= 2 && n >= 2) {
      const QTau a = rand_elem(g, 2), b = rand_elem(g, 2) + rat(1);
      for (int j = 0; j < n; ++j) A(n - 1, j) = a * A(0, j) + b * A(n - 2, j);
      if (kind == 3)
        for (int j = 0; j < k; ++j) B(n - 1, j) = a * B(0, j) + b * B(n - 2, j);
    }
    const bool ok0 = qtau_solve(ExactSolver::fflu, X0, A, B);
    if (ok0) ++nonsingular; else ++singular;
    systems.count(ok0 ? "nonsingular" : "singular");
    for (ExactSolver s : kMethods) {
      CAPTURE(exact_solver_name(s));
      CAPTURE(it);
      const long own0 = exact_solve_stats().modular_ok;
      const bool ok1 = qtau_solve(s, X1, A, B);
      if (s == ExactSolver::modular && exact_solve_stats().modular_ok > own0) ++modular_own;
      REQUIRE(ok1 == ok0);
      if (ok0) {
        CHECK(same(X0, X1));
        CHECK(solves(A, X1, B));
      }
    }
  }
  systems.require(iters / 3 + 1, {"nonsingular"});
  systems.require(iters / 5 + 1, {"singular"});
  CHECK(modular_own * 10 >= nonsingular * 9);  // the dense method solved these itself, not through fflu
}

TEST_CASE("a solution of a singular system is never returned as the solution") {
  // [[1, tau], [tau, tau^2]] x = [1 + tau, tau + tau^2]: x = (1, 1) solves it, but so does (1 + tau, 0).
  Mat<QTau> A(2, 2), B(2, 1), X;
  const QTau t = QTauAccess::tau_pow(1);
  A(0, 0) = rat(1); A(0, 1) = t; A(1, 0) = t; A(1, 1) = t * t;
  B(0, 0) = rat(1) + t; B(1, 0) = t + t * t;
  for (ExactSolver s : {ExactSolver::fflu, ExactSolver::modular, ExactSolver::sparse}) CHECK_FALSE(qtau_solve(s, X, A, B));
}

TEST_CASE("Field<QTau>::solve dispatches to the field's solver and decides singular systems (Truth::no)") {
  Mat<QTau> A(2, 2), B(2, 1), X;
  A(0, 0) = QTauAccess::tau_pow(-3); A(0, 1) = rat(2, 3); A(1, 0) = rat(1); A(1, 1) = QTauAccess::tau_pow(5);
  B(0, 0) = rat(1); B(1, 0) = QTauAccess::tau_pow(2);
  Mat<QTau> Xf;
  REQUIRE(qtau_solve(ExactSolver::fflu, Xf, A, B));
  for (ExactSolver s : {ExactSolver::fflu, ExactSolver::modular, ExactSolver::sparse}) {
    const Field<QTau> F(1, s);
    reset_exact_solve_stats();
    CHECK(F.solve(X, A, B) == Truth::yes);
    CHECK(same(X, Xf));
    CHECK(exact_solve_stats().modular_calls == (s == ExactSolver::fflu ? 0 : 1));
  }
  A(1, 0) = A(0, 0) * rat(3);
  A(1, 1) = A(0, 1) * rat(3);
  for (ExactSolver s : {ExactSolver::fflu, ExactSolver::modular, ExactSolver::sparse}) {
    const Field<QTau> F(1, s);
    CHECK(F.solve(X, A, B) == Truth::no);
  }
}

namespace {
// Random Laurent element: a few terms q tau^e, e of either sign.
QTau rand_laurent(Rng& g, int terms, long range) {
  QTau x;
  for (int i = 0; i < terms; ++i) x += rat(g.uniform_int(-20, 20), g.uniform_int(1, 9)) * QTauAccess::tau_pow(g.uniform_int(-range, range));
  return x;
}
QTau rand_monomial(Rng& g, long range) {
  long p = 0;
  while (p == 0) p = g.uniform_int(-7, 7);
  return rat(p, g.uniform_int(1, 5)) * QTauAccess::tau_pow(g.uniform_int(-range, range));
}
}  // namespace

TEST_CASE("fast exact helpers equal plain fmpz_poly_q arithmetic, fast paths and fallbacks alike") {
  Rng g(4242);
  const int iters = 60 * test::multiplier();
  test::Outcomes helpers("fast exact helpers, random operands");
  for (int it = 0; it < iters; ++it) {
    CAPTURE(it);
    // qtau_laurent
    std::vector<std::pair<long, Rational>> terms;
    QTau ref;
    for (int i = 0, T = static_cast<int>(g.uniform_int(0, 6)); i < T; ++i) {
      const long e = g.uniform_int(-40, 40);
      const Rational q(g.uniform_int(-30, 30), static_cast<unsigned long>(g.uniform_int(1, 12)));
      terms.push_back({e, q});
      ref += QTau(q) * QTauAccess::tau_pow(e);
    }
    CHECK(qtau_laurent(terms) == ref);
    // qtau_poly_eval: Laurent coefficients at a monomial (fast), and general ones (Horner)
    std::vector<QTau> c;
    for (int m = 0, deg = static_cast<int>(g.uniform_int(0, 4)); m <= deg; ++m) c.push_back(it % 3 == 2 ? rand_elem(g, 3) : rand_laurent(g, 3, 30));
    const QTau x = it % 4 == 3 ? rand_elem(g, 2) : rand_monomial(g, 25);
    QTau horner = c.back();
    for (size_t m = c.size() - 1; m-- > 0;) horner = horner * x + c[m];
    CHECK(qtau_poly_eval(c, x) == horner);
    // a root: (x - rho) * c(x) vanishes at rho
    const QTau rho = rand_monomial(g, 25);
    std::vector<QTau> p(c.size() + 1);
    for (size_t m = 0; m < c.size(); ++m) {
      p[m + 1] += c[m];
      p[m] -= c[m] * rho;
    }
    CHECK(QTauAccess::is_zero(qtau_poly_eval(p, rho)));
    // qtau_mul, qtau_div (proportional numerators, and general)
    const QTau a = rand_laurent(g, 3, 30), m = rand_monomial(g, 20);
    CHECK(qtau_mul(a, m) == a * m);
    CHECK(qtau_mul(m, a) == a * m);
    const QTau e1 = rand_elem(g, 3), e2 = rand_elem(g, 3);
    CHECK(qtau_mul(e1, e2) == e1 * e2);
    if (!QTauAccess::is_zero(a)) {
      CHECK(qtau_div(a * m, a) == m);
      CHECK(qtau_div(a, a * m) == rat(1) / m);
      const QTau b = rand_laurent(g, 2, 30);
      if (!QTauAccess::is_zero(b)) CHECK(qtau_div(a, b) == a / b);
    }
    if (!QTauAccess::is_zero(e2)) CHECK(qtau_div(e1, e2) == e1 / e2);
    // fraction sums and the equality test
    std::vector<QTau> nu, de;
    QTau sum;
    for (int h = 0, H = static_cast<int>(g.uniform_int(1, 4)); h < H; ++h) {
      nu.push_back(it % 2 ? rand_laurent(g, 4, 30) : rand_elem(g, 3));
      QTau d = it % 2 ? rand_laurent(g, 3, 30) : rand_elem(g, 3);
      if (QTauAccess::is_zero(d)) d = rat(3);
      de.push_back(d);
      sum += nu.back() / d;
    }
    CHECK(qtau_fraction_sum_equals(nu, de, sum));
    CHECK_FALSE(qtau_fraction_sum_equals(nu, de, sum + rat(1, 7)));
    CHECK_FALSE(qtau_fraction_sum_equals(nu, de, sum * QTauAccess::tau_pow(1) + rat(1)));
    helpers.count(QTauAccess::is_zero(a) ? "checked, a = 0" : "checked");
  }
  helpers.require(iters / 2, {"checked"});
}
