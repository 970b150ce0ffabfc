// Internals of the exact Q(tau) solvers (qtau_solve.hpp), shared by the
// files that each do one job: qtau_fflu.cpp (fraction-free LU), qtau_setup.cpp
// (the system in stored form), qtau_modp.cpp (arithmetic mod p),
// qtau_dense.cpp and qtau_sparse.cpp (the solution's image mod one prime),
// qtau_crt.cpp (combining primes), qtau_verify.cpp (the exact check) and
// qtau_modular.cpp (the modular driver). Not installed.
#pragma once
#include <flint/fmpz.h>
#include <flint/fmpz_poly.h>
#include <flint/nmod_poly.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "mhaq/arith/flint_wrappers.hpp"
#include "mhaq/arith/qtau_solve.hpp"

namespace mhaq::qtau_detail {

using flint::Fmpz;
using flint::FmpzPoly;
using flint::NmodPoly;

// ---- counters behind exact_solve_stats()
struct Counters {
  std::atomic<long> calls{0}, modular_calls{0}, modular_ok{0}, sparse_ok{0}, sparse_gave_up{0}, fallback_singular{0},
      fallback_other{0}, primes{0}, point_doublings{0}, verify_failures{0};
  std::atomic<std::int64_t> ns{0}, verify_ns{0};
};
extern Counters g_stats;
inline void bump(std::atomic<long>& c, long by = 1) { c.fetch_add(by, std::memory_order_relaxed); }
inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ---- the reference solver
// Clears denominators row by row, then fraction-free LU over Z[tau]. False
// (and X empty) iff A is singular.
bool solve_fflu(Mat<QTau>& X, const Mat<QTau>& A, const Mat<QTau>& B);

// ---- the system in stored form
// Entry of the augmented matrix [A | B] as cn * P[num] / (cd * P[den]), with
// P[0] = 1 and every other P[s] primitive with positive leading coefficient.
// Polynomials shared by several entries (up to a constant) are stored and
// evaluated once: in a pair system row k is 1, k, k^2, ... and -k^m f(k), so a
// whole row needs only f(k)'s numerator and denominator.
struct Term {
  int num = -1;  // -1: the entry is zero
  int den = 0;
  Fmpz cn, cd;
};

struct Setup {
  int n = 0, k = 0;            // A is n x n, B is n x k
  std::vector<FmpzPoly> P;           // P[0] = 1
  std::vector<char> is_den;    // P[s] occurs as a denominator
  std::vector<Term> terms;     // row-major n x (n + k)
  long max_total_degree = 0;   // max over entries of deg num + deg den
  long cramer_bound = 0;       // rigorous bound on deg num + deg den of any solution entry
  const Term& at(int i, int j) const { return terms[static_cast<size_t>(i) * (n + k) + j]; }
};

// The stored form of [A | B].
void build_setup(Setup& S, const Mat<QTau>& A, const Mat<QTau>& B);

// ---- arithmetic mod p
// Deterministic word-size primes p = c 2^40 + 1 < 2^62, each with an element
// g of multiplicative order exactly 2^40 (sparse interpolation takes discrete
// logarithms to the base g). Shared by all threads.
constexpr int kTwoAdic = 40;
struct PrimeInfo {
  mp_limb_t p, g;
};
const std::vector<PrimeInfo>& primes();

// A 64-bit mixing function (splitmix64's finaliser): seeds from primes.
std::uint64_t mix64(std::uint64_t x);

// In-place inverses of v[0..n) (Montgomery's trick); zeros are left as zero
// and reported through `zero`.
void batch_inverse(mp_limb_t* v, slong n, nmod_t mod, std::vector<char>& zero);

// Division-free Gaussian elimination of the n x (n + k) row-major matrix M
// over Z/p. On success, x(:, c) = Xn(:, c) / D. False if singular mod p.
bool solve_point(std::vector<mp_limb_t>& M, int n, int k, nmod_t mod, std::vector<mp_limb_t>& Xn, mp_limb_t& D);

// The scalars cn / cd of every entry mod p; false when p divides some cd.
bool scalars_mod_p(const Setup& S, nmod_t mod, std::vector<mp_limb_t>& sc);

// The matrix [A | B] at point number i, row-major into M, from the scalars
// and the values (val) and inverted values (inv) of the stored polynomials.
void point_matrix(const Setup& S, const std::vector<mp_limb_t>& sc, const std::vector<std::vector<mp_limb_t>>& val,
                  const std::vector<std::vector<mp_limb_t>>& inv, slong i, nmod_t mod, std::vector<mp_limb_t>& M);

// A subproduct tree over points (FLINT's fast multipoint evaluation and
// interpolation), freed on scope exit.
struct Tree {
  mp_ptr* t = nullptr;
  slong len = 0;
  Tree(mp_srcptr xs, slong n, nmod_t mod) : len(n) {
    if (n > 0) {
      t = _nmod_poly_tree_alloc(n);
      _nmod_poly_tree_build(t, xs, n, mod);
    }
  }
  ~Tree() { if (t) _nmod_poly_tree_free(t, len); }
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;
};

// ---- the solution mod one prime
// The solution mod p: X(j) = alpha[j] / beta, beta monic (the lcm of the
// entries' reduced denominators), j = i * k + c.
struct Image {
  NmodPoly beta;
  std::vector<NmodPoly> alpha;
  explicit Image(nmod_t mod) : beta(mod) {}
};

enum class PrimeStatus { ok, more_points, singular, bad_prime };

// Dense: evaluation at M points of an arithmetic progression, interpolation
// and rational reconstruction with a common denominator.
PrimeStatus run_prime(const Setup& S, nmod_t mod, slong M, std::uint64_t seed, Image& out, int& any_nonsingular);

// Sparse: Ben-Or/Tiwari interpolation at up to Nmax points of a geometric
// progression (qtau_sparse.cpp); the solution must be Laurent in tau.
PrimeStatus run_prime_sparse(const Setup& S, const PrimeInfo& pr, nmod_t mod, std::uint64_t seed, slong Nmax, Image& out,
                             int& any_nonsingular);

// ---- combining primes
// Degrees and numbers of nonzero coefficients of an image, to check that primes agree.
std::vector<slong> signature(const Image& im);

// Accumulated CRT residues of every coefficient of beta and the alphas.
struct Crt {
  Fmpz m;                                 // product of the primes so far
  std::vector<std::vector<Fmpz>> coeffs;  // [0] beta, [1 + j] alpha_j
  std::vector<slong> sig;
  int primes = 0;
};
void crt_add(Crt& C, const Image& im, mp_limb_t p);

// Rational reconstruction of every coefficient, then integer polynomials
// betaZ, alphaZ[j] with a common scale. False if some coefficient fails.
bool crt_lift(const Crt& C, FmpzPoly& betaZ, std::vector<FmpzPoly>& alphaZ);

// ---- the exact check and the canonical result
// out = a * b; schoolbook over the nonzero terms when both factors are sparse
// (the pair systems' polynomials have at most 2^H terms), else FLINT's product.
void mul_sparse_aware(fmpz_poly_t out, const fmpz_poly_t a, const fmpz_poly_t b);

// Exact check of A X = B with X(j) = alphaZ[j] / betaZ, in Z[tau]: row i times
// the lcm of its denominators, entries grouped by their (numerator,
// denominator) polynomials, one product per group.
bool verify_exact(const Setup& S, const FmpzPoly& betaZ, const std::vector<FmpzPoly>& alphaZ);

// num / den in canonical form (fast path when den is c * tau^e).
void set_canonical(QTau& x, const fmpz_poly_t num, const fmpz_poly_t den);

// ---- the modular driver
enum class Mode { dense, sparse };

// The modular solve in the given mode; when it cannot finish (the images
// look singular, or reconstruction keeps failing) it decides with fflu.
bool solve_modular(Mode first, Mat<QTau>& X, const Mat<QTau>& A, const Mat<QTau>& B);

}  // namespace mhaq::qtau_detail
