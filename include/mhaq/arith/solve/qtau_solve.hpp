// Exact linear solves over Q(tau) (FLINT fmpz_poly_q), behind Field<QTau>::solve.
//
//  * fflu     clear denominators row by row, fraction-free LU over Z[tau]
//             (fmpz_poly_mat_solve_fflu). The reference algorithm.
//  * modular  evaluation/interpolation: for word-size primes p and points
//             tau = alpha in Z/p, solve A(alpha) x = B(alpha) over Z/p;
//             rebuild each entry as a rational function mod p (interpolation,
//             then a rational-reconstruction step of Euclid's algorithm with
//             early termination: it stops at the first quotient of degree
//             >= 2, i.e. once more points are known than the entry needs),
//             with a common denominator shared by all entries; combine primes
//             by CRT and reconstruct the rational coefficients; then VERIFY
//             A X == B exactly with integer polynomial arithmetic.
//  * sparse   the same modular pipeline, but each entry is rebuilt by sparse
//             interpolation (Ben-Or/Tiwari: Berlekamp-Massey on values at a
//             geometric progression, roots, discrete logs, transposed
//             Vandermonde) with early termination; needs ~2T+4 points for an
//             entry with T terms. Systems whose solution is not a sparse
//             Laurent polynomial in tau go to fflu. Pair systems'
//             solutions are (q_m = e_m(tau^{n_1}, ..., tau^{n_H})); the
//             type-(m, m) fits with m < H of --max-heads runs are not, and for
//             those fflu beats `modular` (large dense denominators make its
//             reconstruction quadratic and its point count double).
//
// Default: sparse (the fastest correct method on every schedule measured).
//
// Rigor of `modular` and `sparse`. The modular steps only propose a candidate; the answer
// is returned only after (1) an exact check that A X = B in Q(tau) and (2) a
// proof that A is nonsingular: A(alpha) was invertible mod p at some point
// where every denominator is nonzero, so det of the denominator-cleared matrix
// is a nonzero element of Z[tau]. A solution of a nonsingular system is
// unique, so the candidate is THE solution and equals fflu's, entry by entry,
// in canonical form. Singularity is never decided from images: when the images
// look singular (or reconstruction keeps failing, or the candidate fails the
// exact check) the solve falls back to fflu, which decides exactly.
// Integer arithmetic only (no floating point).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mhaq/arith/solve/exact_solver.hpp"
#include "mhaq/arith/field.hpp"

namespace mhaq {

// Exact solution X of A X = B over Q(tau) (A square). Returns false iff A is
// singular (decided exactly); X is then left empty.
bool qtau_solve(ExactSolver s, Mat<QTau>& X, const Mat<QTau>& A, const Mat<QTau>& B);

// Structured pair interpolation: samples f[k] = f(k), k = 0..2H, of a type-(H, H)
// function; N (H+1 coefficients) and Q (H+1 coefficients, Q[0] = 1) with
// N(k) = f(k) Q(k) for every k. Same system, same result and same exactness
// rules as qtau_solve on interpolate_linear's matrix; false iff singular.
bool qtau_rational_interpolate(ExactSolver s, const std::vector<QTau>& f, int H, std::vector<QTau>& N, std::vector<QTau>& Q);

// Counters for benchmarks and tests (process-wide, relaxed atomics).
struct ExactSolveStats {
  long calls = 0;            // qtau_solve calls, any method
  long modular_calls = 0;    // calls that ran the modular method
  long modular_ok = 0;       // ... and returned its own verified result
  long sparse_ok = 0;        // solved by the sparse attempt itself
  long sparse_gave_up = 0;   // sparse attempt found no sparse solution and left the system to fflu
  long fallback_singular = 0;  // modular images looked singular: fflu decided
  long fallback_other = 0;     // reconstruction or verification kept failing: fflu
  long primes = 0;           // primes used by modular calls
  long point_doublings = 0;  // evaluation point count doubled (early termination not reached)
  long verify_failures = 0;  // candidates rejected by the exact check
  std::int64_t nanoseconds = 0;         // wall time inside qtau_solve
  std::int64_t verify_nanoseconds = 0;  // wall time in the exact check
};
ExactSolveStats exact_solve_stats();
void reset_exact_solve_stats();

// Benchmark hook: when set, every qtau_solve call first passes its (A, B) to
// the observer (single-threaded use only).
using ExactSolveObserver = void (*)(const Mat<QTau>& A, const Mat<QTau>& B, void* ctx);
void set_exact_solve_observer(ExactSolveObserver fn, void* ctx);

}  // namespace mhaq

// ------------------------------------------------------------------------
// Helpers for the exact run's other hot paths. qtau_fraction_sum_equals
// decides the learner's self-check (equal_ratio_sum, arith/ratio_sum.hpp);
// QTau's own operators (arith/qtau_arith.cpp) take Laurent and monomial
// routes like the others here, which stay as tested references. Each returns
// exactly what plain fmpz_poly_q arithmetic returns, by a cheaper route:
// elements whose denominator is c * tau^s ("Laurent" elements: every answer
// term, every pole and every pair solution is one) are combined with integer
// polynomial shifts and additions, and fractions are combined by
// cross-multiplication, with at most one gcd at the end instead of one per
// operation. (A canonical sum of fractions with a single gcd at the end was
// measured 3x slower than today's incremental fmpz_poly_q sums: one gcd of
// the full products costs more than several small ones; not kept.)
namespace mhaq {

// sum_i q_i tau^{n_i}, exactly (one content gcd, no polynomial gcd).
QTau qtau_laurent(const std::vector<std::pair<long, Rational>>& terms);

// sum_m c[m] x^m. Fast when x = q tau^e and every c[m] is Laurent (the roots
// check and the residues of Field<QTau>::real_roots / interpolate_linear);
// otherwise Horner in fmpz_poly_q.
QTau qtau_poly_eval(const std::vector<QTau>& c, const QTau& x);

// a * b. Fast when one factor is q tau^e and the other is Laurent.
QTau qtau_mul(const QTau& a, const QTau& b);

// a / b. Fast when a and b are Laurent with proportional numerators (the
// residue c_h = r N(rho) / Q'(rho) of an exact fit is a rational); otherwise
// fmpz_poly_q_div.
QTau qtau_div(const QTau& a, const QTau& b);

// Decides sum_h num[h] / den[h] == value exactly by cross-multiplication in
// Z[tau] (no gcd at all): the exact self-check of the learner, answer by answer.
bool qtau_fraction_sum_equals(const std::vector<QTau>& num, const std::vector<QTau>& den, const QTau& value);

}  // namespace mhaq
