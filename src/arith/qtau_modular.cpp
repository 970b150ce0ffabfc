// The modular solvers: images mod successive primes, CRT, the exact check,
// and the fallback to fflu.
#include "qtau_solve_internal.hpp"

#include <flint/fmpq.h>
#include <flint/fmpz_poly_mat.h>
#include <flint/nmod_vec.h>
#include <flint/ulong_extras.h>

#include <algorithm>
#include <utility>

#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/base/error.hpp"

namespace mhaq::qtau_detail {

namespace {
enum class Outcome { solved, singular, gave_up };

// One modular attempt: images for successive primes, CRT, rational
// reconstruction, exact check. `singular` means the images look singular
// (the caller decides exactly); `gave_up` means this mode cannot reconstruct
// the solution (too many terms for sparse; failures beyond the caps for dense).
Outcome modular_attempt(Mode mode, const Setup& S, Mat<QTau>& X) {
  const int n = S.n, k = S.k;
  // Dense: start from the largest entry size (deg num + deg den) plus slack;
  // pair systems need no more (their solutions are Laurent polynomials no
  // larger than one sample); anything else doubles, up to the Cramer bound.
  slong M = S.max_total_degree + 4;
  const slong M_cap = S.cramer_bound + 8;
  // Sparse: at most 512 points when the inputs are sparse themselves (their
  // evaluation then costs little), else 64.
  long terms = 0, length = 0;
  for (size_t s = 1; s < S.P.size(); ++s) {
    length += fmpz_poly_length(S.P[s].p);
    for (slong e = 0; e < fmpz_poly_length(S.P[s].p); ++e) terms += !fmpz_is_zero(S.P[s].p->coeffs + e);
  }
  const slong Nmax = 8 * terms <= length ? 512 : 64;
  const auto& ps = primes();
  Crt C;
  int any_nonsingular = 0, restarts = 0;
  for (size_t pi = 0; pi < ps.size(); ++pi) {
    nmod_t mod;
    nmod_init(&mod, ps[pi].p);
    Image im(mod);
    PrimeStatus st;
    if (mode == Mode::sparse) {
      st = run_prime_sparse(S, ps[pi], mod, mix64(ps[pi].p), Nmax, im, any_nonsingular);
    } else {
      for (;;) {
        st = run_prime(S, mod, M, mix64(ps[pi].p + static_cast<std::uint64_t>(M)), im, any_nonsingular);
        if (st != PrimeStatus::more_points || M > M_cap) break;
        M *= 2;
        bump(g_stats.point_doublings);
      }
    }
    bump(g_stats.primes);
    if (st == PrimeStatus::singular) return Outcome::singular;
    if (st == PrimeStatus::more_points) return Outcome::gave_up;
    if (st == PrimeStatus::bad_prime) continue;
    const std::vector<slong> sig = signature(im);
    if (C.primes > 0 && sig != C.sig) {
      // degrees or supports disagree: one of the primes is unlucky; start over from this one
      if (++restarts > 4) return Outcome::gave_up;
      C = Crt();
    }
    C.sig = sig;
    crt_add(C, im, ps[pi].p);
    FmpzPoly betaZ;
    std::vector<FmpzPoly> alphaZ;
    if (!crt_lift(C, betaZ, alphaZ)) continue;  // coefficients need more primes
    const std::int64_t t0 = now_ns();
    const bool ok = any_nonsingular && verify_exact(S, betaZ, alphaZ);
    g_stats.verify_ns.fetch_add(now_ns() - t0, std::memory_order_relaxed);
    if (!ok) {
      bump(g_stats.verify_failures);
      if (C.primes >= 8) return Outcome::gave_up;
      continue;
    }
    X = Mat<QTau>(n, k);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < k; ++c) set_canonical(X(i, c), alphaZ[static_cast<size_t>(i) * k + c].p, betaZ.p);
    return Outcome::solved;
  }
  return Outcome::gave_up;
}
}  // namespace

bool solve_modular(Mode first, Mat<QTau>& X, const Mat<QTau>& A, const Mat<QTau>& B) {
  bump(g_stats.modular_calls);
  Setup S;
  build_setup(S, A, B);
  Outcome o = modular_attempt(first, S, X);
  if (first == Mode::sparse) bump(o == Outcome::solved ? g_stats.sparse_ok : g_stats.sparse_gave_up, o == Outcome::singular ? 0 : 1);
  // A sparse attempt that gives up goes to fflu, not to the dense method:
  // solutions that are not sparse Laurent polynomials (the type-(m, m) fits
  // with m below the head count in --max-heads runs) have large dense
  // denominators, and there fflu was measured 7-18x faster than `modular`
  // (tests/bench/bench_exact_solve.cpp, case h0:...).
  if (o == Outcome::solved) {
    bump(g_stats.modular_ok);
    return true;
  }
  // The images look singular, or reconstruction kept failing: decide exactly.
  bump(o == Outcome::singular ? g_stats.fallback_singular : g_stats.fallback_other);
  return solve_fflu(X, A, B);
}

}  // namespace mhaq::qtau_detail
