// The arithmetic seam. Every algorithm in mhaq is written once against
// Field<T>, a traits object in the spirit of CGAL's Algebraic_structure_traits,
// and checked against the ArithField concept below at compile time. Each field
// gives its number type the same vocabulary:
//
//   from(q)          a rational as a number of the field
//   exp(q), exp(x)   e^q of a rational, and e^x of a number the learner computed
//   log(r)           log of a positive number
//   is_zero, is_positive, equal     three-valued decisions (Truth)
//   solve            a linear system; Truth says whether it is nonsingular
//   solve_scaled     the same up to a common nonzero factor lambda of the field's
//                    choosing (exact: the least common denominator, so that the
//                    solution's entries are polynomials in tau and cheap to multiply)
//   real_roots       the roots of a polynomial with real distinct roots
//   common_roots     one root of each of several polynomials, chosen by a common
//                    value of a rational function (the compact schedule's pole solve)
//   relu             max(x, 0), with the field's sign decision (balls: the hull when undecided)
//   nearest          the multiple of 1/den nearest to x (approx_: a choice of the
//                    learner's, e.g. where to put a query, never a decision)
//   enclose          conversion to an Arb ball (an interval containing x)
//   str              a printable form (reporting only)
//   enclose_roots    roots of pole polynomials computed by fn from x, on
//                    enclosures when the field is exact (a rigorous filter whose
//                    roots are read as -tau^n; the caller checks them exactly)
//   filtered, refine, certify       the filter-then-certify strategy of a
//                    nonlinear square system (CGAL's Filtered_predicate),
//                    used by the pair fits (stages/3-fit)
//
// Rigor contracts, in Arb's wording:
//  * Field<QTau> (exact): every result is exact and every decision is made:
//    Truth is never unknown. Signs of non-constant elements of Q(tau) are
//    decided by evaluating them at tau = e^{1/L} in Arb balls at rising
//    precision; a nonzero element has a nonzero value (tau is transcendental,
//    proofs/08), so the loop ends.
//  * Field<Ball>: on success the exact result is contained in the output balls.
//    A decision the balls cannot make is Truth::unknown; callers turn it into
//    "unable", never into a guess.
//  * Field<Mpfr>, Field<double>: approx_ semantics. Decisions are judgements at
//    a stated tolerance: answers are taken to be accurate to a relative
//    2^acc (acc = -precision, or the error the oracle states); two numbers are
//    equal when they agree to 2^(acc/2) relative, different when they differ
//    by more than 2^(acc/8), and unknown in the wide margin between (a pair
//    whose poles lie far outside the sampled window loses many digits, and a
//    narrow margin would turn that loss into a wrong "different"). A float is
//    never certainly zero: is_zero is no for a nonzero float and unknown for
//    0 (compare with a scale through equal() instead).
#pragma once
#include <cmath>
#include <concepts>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mhaq/arith/solve/exact_solver.hpp"
#include "mhaq/arith/numbers.hpp"
#include "mhaq/arith/fit_starts.hpp"
#include "mhaq/arith/rational.hpp"
#include "mhaq/arith/truth.hpp"
#include "mhaq/base/error.hpp"

namespace mhaq {

enum class Arith { exact, ball, mpfr, ieee };
const char* arith_name(Arith a);
Arith parse_arith(const std::string& s);  // throws Error(usage)

// What differs between the arithmetics, as facts to read; code outside this
// table and the run layer's dispatch (run/arith_policy.hpp) reads these
// instead of comparing an Arith with a value (tests/stage_purity.sh).
struct ArithFacts {
  bool exact = false;        // answers in Q(tau), compared by equality; no precision
  bool rigorous = false;     // balls: every result encloses the truth
  bool floats = false;       // mpfr, double: decisions and the verdict at a tolerance
  bool chosen_bits = false;  // ball, mpfr: --bits sets the precision
  long fixed_bits = 0;       // double: 53
  // The precision a run at --bits `requested` computes at (exact: requested, unused).
  constexpr long bits(long requested) const { return fixed_bits > 0 ? fixed_bits : requested; }
  // Equality decided rather than judged at a tolerance (exact, balls).
  constexpr bool decides_equality() const { return exact || rigorous; }
  // Answers that are reals an external oracle can send (ball, mpfr, double).
  constexpr bool approximate() const { return !exact; }
};
constexpr ArithFacts arith_facts(Arith a) {
  switch (a) {
    case Arith::exact: return {true, false, false, false, 0};
    case Arith::ball: return {false, true, false, true, 0};
    case Arith::mpfr: return {false, false, true, true, 0};
    case Arith::ieee: return {false, false, true, false, 53};
  }
  return {};
}

template <class T>
class Mat {
 public:
  Mat() = default;
  Mat(int r, int c) : r_(r), c_(c), a_(static_cast<size_t>(r) * c) {}
  Mat(int r, int c, const T& fill) : r_(r), c_(c), a_(static_cast<size_t>(r) * c, fill) {}
  int rows() const { return r_; }
  int cols() const { return c_; }
  T& operator()(int i, int j) { return a_[static_cast<size_t>(i) * c_ + j]; }
  const T& operator()(int i, int j) const { return a_[static_cast<size_t>(i) * c_ + j]; }

 private:
  int r_ = 0, c_ = 0;
  std::vector<T> a_;
};

// A x = b for a small dense double system (the placed design's own choices,
// never a learned value): the float fields' Gaussian elimination with partial
// pivoting on |x|, without their equilibration, so the design's choices do
// not move. x holds b on entry and the solution on return; false (x
// unchanged) when a pivot is zero.
bool solve_dense(std::vector<std::vector<double>> A, std::vector<double>& x);

// Roots of a polynomial that should have distinct real roots.
//   ok == yes: `roots` holds all of them, ascending;
//   ok == no: certainly not deg distinct real roots (of the expected form);
//   ok == unknown: undecided at this precision or tolerance.
template <class T>
struct Roots {
  Truth ok = Truth::unknown;
  std::vector<T> roots;
  std::string why;  // for no / unknown
};

// Roots of several polynomials chosen by a common value (the compact
// schedule's pole solve, proofs/19). Given S_0..S_{m-1} and a rational
// function phi = U/V, it seeks the value z such that every S_h has a root
// rho_h with phi(rho_h) = z, over all complex roots of all S_h.
//   ok == yes: exactly one such z, and for it exactly one root of each S_h;
//              roots[h] is that root of S_h, and it is real;
//   ok == no:  certainly no such z (fail = none), certainly more than one
//              (several), a polynomial with a multiple root, whose roots
//              cannot be told apart (multiple; exact), or (exact) the root
//              found is not of the form -tau^n that the root of a pole
//              polynomial has (unrepresentable);
//   ok == unknown: undecided at this precision or tolerance.
template <class T>
struct CommonRoots {
  enum class Fail { none, several, multiple, unrepresentable };
  Truth ok = Truth::unknown;
  Fail fail = Fail::none;
  std::vector<T> roots;
  std::string why;  // for no / unknown
};

template <class T>
struct Field;

// Decision thresholds of the floating-point fields (see the header comment).
struct FloatTolerance {
  double acc_log2 = std::numeric_limits<double>::quiet_NaN();  // NaN: -(working precision)
  double yes_log2(long prec) const { return acc(prec) / 2; }
  double no_log2(long prec) const { return acc(prec) / 8; }
  double acc(long prec) const { return std::isnan(acc_log2) ? -static_cast<double>(prec) : acc_log2; }
};

// ---------------------------------------------------------------- exact
template <>
struct Field<QTau> {
  using value_type = QTau;
  static constexpr Arith tag = Arith::exact;
  static constexpr bool is_exact = true;
  static constexpr bool is_rigorous = true;
  static constexpr bool least_squares = false;  // oversampled systems are interpolated, then checked

  Field() = default;
  // tau = e^{1/L}; Error(input) unless 1 <= L <= 2^40. `solver` is the
  // method of solve and solve_scaled (same result, different time).
  explicit Field(long L, ExactSolver solver = ExactSolver::sparse);
  ExactSolver solver() const { return solver_; }

  QTau from(const Rational& q) const { return QTau(q); }
  QTau exp(const Rational& s) const;  // Error(input) unless s L is an integer (a token off the grid)
  QTau exp(const QTau& s) const;      // Error(inconsistent) unless s is a rational in (1/L)Z
  QTau log(const QTau& r) const;      // Error(inconsistent) unless r = tau^n; then n / L
  QTau abs(const QTau& x) const;
  Truth is_zero(const QTau& x) const;
  Truth is_positive(const QTau& x) const;
  // a == b: canonical forms are unique, so this compares them (no subtraction)
  Truth equal(const QTau& a, const QTau& b) const;
  Truth equal(const QTau& a, const QTau& b, const QTau&) const { return equal(a, b); }
  Truth solve(Mat<QTau>& X, const Mat<QTau>& A, const Mat<QTau>& B) const;  // no: singular
  Truth solve_scaled(Mat<QTau>& X, QTau& lambda, const Mat<QTau>& A, const Mat<QTau>& B) const;  // X = lambda A^-1 B in Z[tau]
  Roots<QTau> real_roots(const std::vector<QTau>& c) const;  // roots -tau^-n, Newton polygon + exact check
  // Decided on enclosures at rising precision (the ball test below is rigorous
  // for the exact polynomials), the roots then found exactly as -tau^n and
  // checked by substitution. Never unknown: a choice still undecided at the
  // precision cap (values that coincide exactly) is reported as several.
  CommonRoots<QTau> common_roots(const std::vector<std::vector<QTau>>& S, const std::vector<QTau>& U, const std::vector<QTau>& V) const;
  QTau relu(const QTau& x) const;
  Rational nearest(const QTau& x, long den) const;
  Ball enclose(const QTau& x) const;
  std::string str(const QTau& x) const;

  template <class Fn>
  std::optional<std::vector<QTau>> filtered(const std::vector<QTau>& f, Fn&& fn) const { return fn(*this, f); }
  // fn(Field<Ball>, enclosures of x) at 128..4096 bits: the ball computation
  // is rigorous for the exact x, so a root it returns is isolated around
  // one exact root; each is read as -tau^-n (pole_root_in). nullopt when the
  // balls cannot decide, fn fails in balls, or a root is not of that form:
  // the caller then runs fn in exact arithmetic. The caller checks the roots
  // it gets exactly.
  template <class Fn>
  std::optional<std::vector<QTau>> enclose_roots(const std::vector<QTau>& x, Fn&& fn) const;
  // The element -tau^-n in the negative ball rho: 1 (out set), 0 (the ball
  // does not pin n: more precision), -1 (no such element).
  int pole_root_in(const Ball& rho, QTau& out) const;
  template <class Sys>
  void refine(const Sys&, std::vector<QTau>&) const {}
  template <class Sys>
  Truth certify(const Sys&, std::vector<QTau>&) const { return Truth::yes; }

 private:
  friend struct QTauAccess;
  long L_ = 1;
  ExactSolver solver_ = ExactSolver::sparse;
};

// ---------------------------------------------------------------- balls
template <>
struct Field<Ball> {
  using value_type = Ball;
  static constexpr Arith tag = Arith::ball;
  static constexpr bool is_exact = false;
  static constexpr bool is_rigorous = true;
  static constexpr bool least_squares = false;

  Ball from(const Rational& q) const { return Ball(q); }
  Ball exp(const Rational& s) const;
  Ball exp(const Ball& s) const;
  Ball log(const Ball& r) const;  // Error(unable) unless r is certainly positive
  Ball abs(const Ball& x) const;
  Truth is_zero(const Ball& x) const;
  Truth is_positive(const Ball& x) const;
  Truth equal(const Ball& a, const Ball& b) const { return is_zero(a - b); }
  Truth equal(const Ball& a, const Ball& b, const Ball&) const { return equal(a, b); }
  Truth solve(Mat<Ball>& X, const Mat<Ball>& A, const Mat<Ball>& B) const;  // unknown unless certified nonsingular
  Truth solve_scaled(Mat<Ball>& X, Ball& lambda, const Mat<Ball>& A, const Mat<Ball>& B) const { lambda = from(Rational(1)); return solve(X, A, B); }
  Roots<Ball> real_roots(const std::vector<Ball>& c) const;  // interval Newton isolation
  // Rigorous for every choice of coefficients inside the balls: every root of
  // every S_h is isolated (Arb's root inclusion), a root is excluded when its
  // value ball meets none of another polynomial's value balls, and yes means
  // exactly one root of S_0 survives, with one partner in every other S_h.
  CommonRoots<Ball> common_roots(const std::vector<std::vector<Ball>>& S, const std::vector<Ball>& U, const std::vector<Ball>& V) const;
  Ball relu(const Ball& x) const;
  Rational nearest(const Ball& x, long den) const;
  Ball enclose(const Ball& x) const { return x; }
  std::string str(const Ball& x) const { return x.str(30); }

  // Filter: the approximate solution is computed in MPFR from the midpoints,
  // or, for a route that names its head count (interpolate_pair's), taken
  // from `starts` when they hold a fit of these values (a replay of a float
  // run: analysis/ball_replay.hpp). certify() decides either way.
  template <class Fn>
  std::optional<std::vector<Ball>> filtered(const std::vector<Ball>& f, Fn&& fn) const;
  const FitStarts* starts = nullptr;
  // certify() first tries Krawczyk's test with a point inverse in double and
  // I - Y J(X) at 64 bits (the replay's cheap route); the other routes follow
  // when it fails. Off in ball runs, whose boxes it would change.
  bool point_inverse = false;
  template <class Fn>
  std::optional<std::vector<Ball>> enclose_roots(const std::vector<Ball>& x, Fn&& fn) const { return fn(*this, x); }
  template <class Sys>
  void refine(const Sys&, std::vector<Ball>&) const {}
  // Krawczyk test (proofs/10): yes when every choice of targets inside their
  // balls has exactly one solution near x; x is replaced by its enclosure.
  template <class Sys>
  Truth certify(const Sys& sys, std::vector<Ball>& x) const;
};

// ---------------------------------------------------------------- floats
template <>
struct Field<Mpfr> {
  using value_type = Mpfr;
  static constexpr Arith tag = Arith::mpfr;
  static constexpr bool is_exact = false;
  static constexpr bool is_rigorous = false;
  static constexpr bool least_squares = true;
  FloatTolerance tol;

  long precision() const { return working_precision(); }
  Mpfr from(const Rational& q) const { return Mpfr(q); }
  Mpfr exp(const Rational& s) const;
  Mpfr exp(const Mpfr& s) const;
  Mpfr log(const Mpfr& r) const;  // Error(unable) unless r > 0
  Mpfr abs(const Mpfr& x) const;
  Truth is_zero(const Mpfr& x) const;
  Truth is_positive(const Mpfr& x) const;
  Truth equal(const Mpfr& a, const Mpfr& b) const;
  Truth equal(const Mpfr& a, const Mpfr& b, const Mpfr& scale) const;
  Truth solve(Mat<Mpfr>& X, const Mat<Mpfr>& A, const Mat<Mpfr>& B) const;
  Truth solve_scaled(Mat<Mpfr>& X, Mpfr& lambda, const Mat<Mpfr>& A, const Mat<Mpfr>& B) const { lambda = from(Rational(1)); return solve(X, A, B); }
  Roots<Mpfr> real_roots(const std::vector<Mpfr>& c) const;
  CommonRoots<Mpfr> common_roots(const std::vector<std::vector<Mpfr>>& S, const std::vector<Mpfr>& U, const std::vector<Mpfr>& V) const;
  Mpfr relu(const Mpfr& x) const;
  Rational nearest(const Mpfr& x, long den) const;
  Ball enclose(const Mpfr& x) const;
  std::string str(const Mpfr& x) const { return x.str(30); }
  double log2_abs(const Mpfr& x) const;  // approx_ (pivoting, tolerances); -inf for 0

  template <class Fn>
  std::optional<std::vector<Mpfr>> filtered(const std::vector<Mpfr>& f, Fn&& fn) const { return fn(*this, f); }
  template <class Fn>
  std::optional<std::vector<Mpfr>> enclose_roots(const std::vector<Mpfr>& x, Fn&& fn) const { return fn(*this, x); }
  // Damped Gauss-Newton on the system's own equations (least squares when
  // it has more equations than unknowns), after re-solving its linear part.
  template <class Sys>
  void refine(const Sys& sys, std::vector<Mpfr>& x) const;
  // Accepts a refined solution that reproduces its targets at the tolerance;
  // Error(unable) when it does not (floats have no other route).
  template <class Sys>
  Truth certify(const Sys& sys, std::vector<Mpfr>& x) const;
};

template <>
struct Field<double> {
  using value_type = double;
  static constexpr Arith tag = Arith::ieee;
  static constexpr bool is_exact = false;
  static constexpr bool is_rigorous = false;
  static constexpr bool least_squares = true;
  FloatTolerance tol;

  long precision() const { return 53; }
  double from(const Rational& q) const { return q.approx_double(); }
  double exp(const Rational& s) const { return std::exp(s.approx_double()); }
  double exp(const double& s) const { return std::exp(s); }
  double log(const double& r) const;
  double abs(const double& x) const { return std::fabs(x); }
  Truth is_zero(const double& x) const;
  Truth is_positive(const double& x) const;
  Truth equal(const double& a, const double& b) const;
  Truth equal(const double& a, const double& b, const double& scale) const;
  Truth solve(Mat<double>& X, const Mat<double>& A, const Mat<double>& B) const;
  Truth solve_scaled(Mat<double>& X, double& lambda, const Mat<double>& A, const Mat<double>& B) const { lambda = 1.0; return solve(X, A, B); }
  Roots<double> real_roots(const std::vector<double>& c) const;
  // approx_ (both float fields): the values are compared at the tolerance; yes
  // when exactly one root of S_0 is not certainly excluded and each other S_h
  // has exactly one partner; never no (a float cannot tell none from rounding).
  CommonRoots<double> common_roots(const std::vector<std::vector<double>>& S, const std::vector<double>& U, const std::vector<double>& V) const;
  double relu(const double& x) const;
  Rational nearest(const double& x, long den) const;
  Ball enclose(const double& x) const;
  std::string str(const double& x) const;
  double log2_abs(const double& x) const { return x == 0.0 ? -std::numeric_limits<double>::infinity() : std::log2(std::fabs(x)); }

  template <class Fn>
  std::optional<std::vector<double>> filtered(const std::vector<double>& f, Fn&& fn) const { return fn(*this, f); }
  template <class Fn>
  std::optional<std::vector<double>> enclose_roots(const std::vector<double>& x, Fn&& fn) const { return fn(*this, x); }
  template <class Sys>
  void refine(const Sys& sys, std::vector<double>& x) const;
  template <class Sys>
  Truth certify(const Sys& sys, std::vector<double>& x) const;
};

// ---------------------------------------------------------------- the concept
// What the one learner needs of an arithmetic. Every field above, and the jet
// fields of arith/jet.hpp, satisfy it (static_asserts below and in jet.hpp).
template <class F>
concept ArithField = requires(const F& f, const typename F::value_type& x, const Rational& q, Mat<typename F::value_type>& X,
                              const Mat<typename F::value_type>& A, const std::vector<typename F::value_type>& c,
                              const std::vector<std::vector<typename F::value_type>>& S, typename F::value_type& y) {
  typename F::value_type;
  requires std::copyable<typename F::value_type>;
  { F::tag } -> std::convertible_to<Arith>;
  { F::is_exact } -> std::convertible_to<bool>;
  { F::is_rigorous } -> std::convertible_to<bool>;
  { F::least_squares } -> std::convertible_to<bool>;
  { x + x } -> std::same_as<typename F::value_type>;
  { x - x } -> std::same_as<typename F::value_type>;
  { x * x } -> std::same_as<typename F::value_type>;
  { x / x } -> std::same_as<typename F::value_type>;
  { -x } -> std::same_as<typename F::value_type>;
  { f.from(q) } -> std::same_as<typename F::value_type>;
  { f.exp(q) } -> std::same_as<typename F::value_type>;
  { f.exp(x) } -> std::same_as<typename F::value_type>;
  { f.log(x) } -> std::same_as<typename F::value_type>;
  { f.abs(x) } -> std::same_as<typename F::value_type>;
  { f.is_zero(x) } -> std::same_as<Truth>;
  { f.is_positive(x) } -> std::same_as<Truth>;
  { f.equal(x, x) } -> std::same_as<Truth>;
  { f.equal(x, x, x) } -> std::same_as<Truth>;
  { f.solve(X, A, A) } -> std::same_as<Truth>;
  { f.solve_scaled(X, y, A, A) } -> std::same_as<Truth>;
  { f.real_roots(c) } -> std::same_as<Roots<typename F::value_type>>;
  { f.common_roots(S, c, c) } -> std::same_as<CommonRoots<typename F::value_type>>;
  { f.relu(x) } -> std::same_as<typename F::value_type>;
  { f.nearest(x, 1L) } -> std::same_as<Rational>;
  { f.enclose(x) } -> std::same_as<Ball>;
  { f.str(x) } -> std::same_as<std::string>;
};

static_assert(ArithField<Field<QTau>>);
static_assert(ArithField<Field<Ball>>);
static_assert(ArithField<Field<Mpfr>>);
static_assert(ArithField<Field<double>>);

// ---------------------------------------------------------------- generic helpers
template <class T>
T poly_eval(const std::vector<T>& c, const T& x) {
  T acc = c.back();
  for (size_t m = c.size() - 1; m-- > 0;) acc = acc * x + c[m];
  return acc;
}
template <class F>
std::vector<typename F::value_type> poly_derivative(const F& fld, const std::vector<typename F::value_type>& c) {
  std::vector<typename F::value_type> d;
  for (size_t m = 1; m < c.size(); ++m) d.push_back(c[m] * fld.from(Rational(static_cast<long>(m))));
  if (d.empty()) d.push_back(fld.from(Rational(0)));
  return d;
}

// Maps a Truth to an error of the stated kind, or does nothing for yes:
//   no -> Error(on_no, what), unknown -> Error(unable, what + the precision note).
void require_truth(Truth t, ErrorKind on_no, const std::string& what);

}  // namespace mhaq

#include "mhaq/arith/field_refine.hpp"
