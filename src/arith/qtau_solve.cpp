// Exact linear solves over Q(tau): fraction-free LU, and evaluation/interpolation
// modulo word-size primes with an exact check (see qtau_solve.hpp).
#include "mhaq/arith/qtau_solve.hpp"
#include "mhaq/arith/flint_wrappers.hpp"
#include "mhaq/arith/qtau_access.hpp"

#include <flint/fmpq.h>
#include <flint/fmpz.h>
#include <flint/fmpz_poly.h>
#include <flint/fmpz_poly_mat.h>
#include <flint/nmod_poly.h>
#include <flint/nmod_vec.h>
#include <flint/ulong_extras.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <utility>
#include <cstdio>
#include <cstdlib>

#include "mhaq/base/error.hpp"

namespace mhaq {

// ------------------------------------------------------------ selection, stats
namespace {
std::atomic<ExactSolveObserver> g_observer{nullptr};
std::atomic<void*> g_observer_ctx{nullptr};

struct Counters {
  std::atomic<long> calls{0}, modular_calls{0}, modular_ok{0}, sparse_ok{0}, sparse_gave_up{0}, fallback_singular{0},
      fallback_other{0}, primes{0}, point_doublings{0}, verify_failures{0};
  std::atomic<std::int64_t> ns{0}, verify_ns{0};
};
Counters g_stats;
void bump(std::atomic<long>& c, long by = 1) { c.fetch_add(by, std::memory_order_relaxed); }

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

const char* exact_solver_name(ExactSolver s) {
  switch (s) {
    case ExactSolver::fflu: return "fflu";
    case ExactSolver::modular: return "modular";
    case ExactSolver::sparse: return "sparse";
  }
  return "?";
}
ExactSolver parse_exact_solver(const std::string& s) {
  if (s == "fflu") return ExactSolver::fflu;
  if (s == "modular") return ExactSolver::modular;
  if (s == "sparse") return ExactSolver::sparse;
  throw Error(ErrorKind::usage, "unknown exact solver \"" + s + "\" (expected fflu, modular or sparse)");
}

ExactSolveStats exact_solve_stats() {
  ExactSolveStats s;
  s.calls = g_stats.calls.load();
  s.modular_calls = g_stats.modular_calls.load();
  s.modular_ok = g_stats.modular_ok.load();
  s.sparse_ok = g_stats.sparse_ok.load();
  s.sparse_gave_up = g_stats.sparse_gave_up.load();
  s.fallback_singular = g_stats.fallback_singular.load();
  s.fallback_other = g_stats.fallback_other.load();
  s.primes = g_stats.primes.load();
  s.point_doublings = g_stats.point_doublings.load();
  s.verify_failures = g_stats.verify_failures.load();
  s.nanoseconds = g_stats.ns.load();
  s.verify_nanoseconds = g_stats.verify_ns.load();
  return s;
}
void reset_exact_solve_stats() {
  for (auto* c : {&g_stats.calls, &g_stats.modular_calls, &g_stats.modular_ok, &g_stats.sparse_ok, &g_stats.sparse_gave_up,
                  &g_stats.fallback_singular, &g_stats.fallback_other,
                  &g_stats.primes, &g_stats.point_doublings, &g_stats.verify_failures})
    c->store(0);
  g_stats.ns.store(0);
  g_stats.verify_ns.store(0);
}
void set_exact_solve_observer(ExactSolveObserver fn, void* ctx) {
  g_observer_ctx.store(ctx);
  g_observer.store(fn);
}

// ------------------------------------------------------------ RAII helpers
namespace {
using flint::Fmpz;
using flint::FmpzPoly;
using flint::FmpzPolyMat;
using flint::NmodPoly;

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
}  // namespace

// ------------------------------------------------------------ fflu
namespace {
bool solve_fflu(Mat<QTau>& X, const Mat<QTau>& A, const Mat<QTau>& B) {
  // Clear denominators row by row, then fraction-free LU over Z[tau]
  // (FLINT fmpz_poly_mat_solve_fflu).
  const int n = A.rows(), k = B.cols();
  FmpzPolyMat a(n, n), b(n, k), x(n, k);
  FmpzPoly lcm, t, den;
  for (int i = 0; i < n; ++i) {
    fmpz_poly_one(lcm.p);
    for (int j = 0; j < n; ++j) fmpz_poly_lcm(lcm.p, lcm.p, QTauAccess::raw(A(i, j))->den);
    for (int j = 0; j < k; ++j) fmpz_poly_lcm(lcm.p, lcm.p, QTauAccess::raw(B(i, j))->den);
    for (int j = 0; j < n + k; ++j) {
      const QTau& e = j < n ? A(i, j) : B(i, j - n);
      fmpz_poly_div(t.p, lcm.p, QTauAccess::raw(e)->den);
      fmpz_poly_mul(j < n ? fmpz_poly_mat_entry(a.m, i, j) : fmpz_poly_mat_entry(b.m, i, j - n), t.p, QTauAccess::raw(e)->num);
    }
  }
  if (!fmpz_poly_mat_solve_fflu(x.m, den.p, a.m, b.m)) {
    X = Mat<QTau>();
    return false;
  }
  X = Mat<QTau>(n, k);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) {
      fmpz_poly_set(QTauAccess::raw(X(i, j))->num, fmpz_poly_mat_entry(x.m, i, j));
      fmpz_poly_set(QTauAccess::raw(X(i, j))->den, den.p);
      fmpz_poly_q_canonicalise(QTauAccess::raw(X(i, j)));
    }
  return true;
}
}  // namespace

// ------------------------------------------------------------ modular
namespace {

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

int intern(Setup& S, const fmpz_poly_t p, fmpz_t c) {
  // p = c * P[index]
  const slong len = fmpz_poly_length(p);
  if (len == 0) { fmpz_zero(c); return -1; }
  if (len == 1) { fmpz_poly_get_coeff_fmpz(c, p, 0); return 0; }
  _fmpz_vec_content(c, p->coeffs, len);
  if (fmpz_sgn(p->coeffs + len - 1) < 0) fmpz_neg(c, c);
  FmpzPoly prim;
  fmpz_poly_scalar_divexact_fmpz(prim.p, p, c);
  for (size_t s = 1; s < S.P.size(); ++s)
    if (fmpz_poly_length(S.P[s].p) == len && fmpz_poly_equal(S.P[s].p, prim.p)) return static_cast<int>(s);
  S.P.push_back(prim);
  S.is_den.push_back(0);
  return static_cast<int>(S.P.size() - 1);
}

void build_setup(Setup& S, const Mat<QTau>& A, const Mat<QTau>& B) {
  S.n = A.rows();
  S.k = B.cols();
  S.P.assign(1, FmpzPoly());
  fmpz_poly_one(S.P[0].p);
  S.is_den.assign(1, 0);
  S.terms.assign(static_cast<size_t>(S.n) * (S.n + S.k), Term());
  long cramer = 0;
  for (int i = 0; i < S.n; ++i) {
    long row_num = 0;  // max deg num in the row
    std::vector<int> dens;
    long den_deg = 0;  // degree of the product of the distinct denominators (>= the row lcm)
    for (int j = 0; j < S.n + S.k; ++j) {
      const QTau& e = j < S.n ? A(i, j) : B(i, j - S.n);
      Term& t = S.terms[static_cast<size_t>(i) * (S.n + S.k) + j];
      t.num = intern(S, QTauAccess::raw(e)->num, t.cn.v);
      if (t.num < 0) continue;
      t.den = intern(S, QTauAccess::raw(e)->den, t.cd.v);
      S.is_den[t.den] = 1;
      const long dn = fmpz_poly_degree(QTauAccess::raw(e)->num), dd = fmpz_poly_degree(QTauAccess::raw(e)->den);
      S.max_total_degree = std::max(S.max_total_degree, dn + dd);
      row_num = std::max(row_num, dn - dd);
      if (std::find(dens.begin(), dens.end(), t.den) == dens.end()) {
        dens.push_back(t.den);
        den_deg += dd;
      }
    }
    cramer += std::max(0L, row_num + den_deg);
  }
  // Cramer: each solution entry is det_j / det of the cleared matrix, whose
  // row i has degree <= row_num + den_deg.
  S.cramer_bound = 2 * cramer;
}

// Deterministic word-size primes p = c 2^40 + 1 < 2^62, each with an element
// g of multiplicative order exactly 2^40 (sparse interpolation takes discrete
// logarithms to the base g). Shared by all threads.
constexpr int kTwoAdic = 40;
struct PrimeInfo {
  mp_limb_t p, g;
};
const std::vector<PrimeInfo>& primes() {
  static const std::vector<PrimeInfo> ps = [] {
    std::vector<PrimeInfo> v;
    for (mp_limb_t c = (UWORD(1) << (62 - kTwoAdic)) - 1; v.size() < 64 && c > 0; --c) {
      const mp_limb_t p = (c << kTwoAdic) + 1;
      if (!n_is_prime(p)) continue;
      nmod_t mod;
      nmod_init(&mod, p);
      for (mp_limb_t x = 3;; ++x) {
        const mp_limb_t g = n_powmod2_ui_preinv(x, c, p, mod.ninv);
        if (n_powmod2_ui_preinv(g, UWORD(1) << (kTwoAdic - 1), p, mod.ninv) == p - 1) {
          v.push_back({p, g});
          break;
        }
      }
    }
    return v;
  }();
  return ps;
}

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// In-place inverses of v[0..n) (Montgomery's trick); zeros are left as zero
// and reported through `zero`.
void batch_inverse(mp_limb_t* v, slong n, nmod_t mod, std::vector<char>& zero) {
  std::vector<mp_limb_t> pre(n);
  mp_limb_t acc = 1;
  for (slong i = 0; i < n; ++i) {
    pre[i] = acc;
    if (v[i] == 0) zero[i] = 1;
    else acc = nmod_mul(acc, v[i], mod);
  }
  mp_limb_t inv = nmod_inv(acc, mod);
  for (slong i = n - 1; i >= 0; --i) {
    if (v[i] == 0) continue;
    const mp_limb_t vi = v[i];
    v[i] = nmod_mul(inv, pre[i], mod);
    inv = nmod_mul(inv, vi, mod);
  }
}

// Division-free Gaussian elimination of the n x (n + k) row-major matrix M
// over Z/p. On success, x(:, c) = Xn(:, c) / D. False if singular mod p.
bool solve_point(std::vector<mp_limb_t>& M, int n, int k, nmod_t mod, std::vector<mp_limb_t>& Xn, mp_limb_t& D) {
  const int w = n + k;
  for (int c = 0; c < n; ++c) {
    int r = c;
    while (r < n && M[static_cast<size_t>(r) * w + c] == 0) ++r;
    if (r == n) return false;
    if (r != c)
      for (int j = c; j < w; ++j) std::swap(M[static_cast<size_t>(r) * w + j], M[static_cast<size_t>(c) * w + j]);
    const mp_limb_t piv = M[static_cast<size_t>(c) * w + c];
    const mp_limb_t* pr = &M[static_cast<size_t>(c) * w];
    for (int i = c + 1; i < n; ++i) {
      mp_limb_t* ri = &M[static_cast<size_t>(i) * w];
      const mp_limb_t f = ri[c];
      if (f == 0) continue;
      for (int j = c + 1; j < w; ++j) ri[j] = nmod_sub(nmod_mul(piv, ri[j], mod), nmod_mul(f, pr[j], mod), mod);
      ri[c] = 0;
    }
  }
  // back substitution with one common denominator D
  Xn.assign(static_cast<size_t>(n) * k, 0);
  D = 1;
  for (int i = n - 1; i >= 0; --i) {
    const mp_limb_t* ri = &M[static_cast<size_t>(i) * w];
    const mp_limb_t u = ri[i];
    for (int c = 0; c < k; ++c) {
      mp_limb_t s = nmod_mul(ri[n + c], D, mod);
      for (int j = i + 1; j < n; ++j) s = nmod_sub(s, nmod_mul(ri[j], Xn[static_cast<size_t>(j) * k + c], mod), mod);
      for (int j = i + 1; j < n; ++j) Xn[static_cast<size_t>(j) * k + c] = nmod_mul(Xn[static_cast<size_t>(j) * k + c], u, mod);
      Xn[static_cast<size_t>(i) * k + c] = s;
    }
    D = nmod_mul(D, u, mod);
  }
  return true;
}

// Rational reconstruction mod Z (deg Z = number of points): a/b with
// a = b R mod Z, from Euclid's remainder sequence on (Z, R), stopping at the
// first quotient of degree >= 2 (at least one point more than a/b needs).
// b is made monic. False if no such quotient occurs.
bool rational_reconstruct(nmod_poly_t a, nmod_poly_t b, const nmod_poly_t R, const nmod_poly_t Z) {
  const nmod_t mod = R->mod;
  if (nmod_poly_is_zero(R)) {
    nmod_poly_zero(a);
    nmod_poly_one(b);
    return true;
  }
  NmodPoly r0(mod), r1(mod), t0(mod), t1(mod), q(mod), r2(mod), t2(mod), tmp(mod);
  nmod_poly_set(r0.p, Z);
  nmod_poly_set(r1.p, R);
  nmod_poly_one(t1.p);
  while (!nmod_poly_is_zero(r1.p)) {
    if (nmod_poly_degree(r0.p) - nmod_poly_degree(r1.p) >= 2) {
      const mp_limb_t c = nmod_inv(*nmod_poly_lead(t1.p), mod);
      nmod_poly_scalar_mul_nmod(a, r1.p, c);
      nmod_poly_scalar_mul_nmod(b, t1.p, c);
      return true;
    }
    nmod_poly_divrem(q.p, r2.p, r0.p, r1.p);
    nmod_poly_mul(tmp.p, q.p, t1.p);
    nmod_poly_sub(t2.p, t0.p, tmp.p);
    nmod_poly_swap(r0.p, r1.p);
    nmod_poly_swap(r1.p, r2.p);
    nmod_poly_swap(t0.p, t1.p);
    nmod_poly_swap(t1.p, t2.p);
  }
  return false;
}

// The solution mod p: X(j) = alpha[j] / beta, beta monic (the lcm of the
// entries' reduced denominators), j = i * k + c.
struct Image {
  NmodPoly beta;
  std::vector<NmodPoly> alpha;
  explicit Image(nmod_t mod) : beta(mod) {}
};

enum class PrimeStatus { ok, more_points, singular, bad_prime };

PrimeStatus run_prime(const Setup& S, nmod_t mod, slong M, std::uint64_t seed, Image& out, int& any_nonsingular) {
  const int n = S.n, k = S.k, w = n + k;
  const size_t nt = S.terms.size();
  // scalars cn / cd mod p
  std::vector<mp_limb_t> sc(nt, 0);
  for (size_t t = 0; t < nt; ++t) {
    const Term& T = S.terms[t];
    if (T.num < 0) continue;
    const mp_limb_t cd = fmpz_fdiv_ui(T.cd.v, mod.n);
    if (cd == 0) return PrimeStatus::bad_prime;
    sc[t] = nmod_mul(fmpz_fdiv_ui(T.cn.v, mod.n), nmod_inv(cd, mod), mod);
  }
  // points: an arithmetic progression with a pseudo-random start and step
  // (distinct for M < p); a few spare points replace bad ones.
  const slong Mx = M + 4;
  std::vector<mp_limb_t> xs(Mx);
  {
    const mp_limb_t start = mix64(seed) % mod.n, step = 1 + mix64(seed ^ 0x5851F42D4C957F2DULL) % (mod.n - 1);
    mp_limb_t x = start;
    for (slong i = 0; i < Mx; ++i, x = nmod_add(x, step, mod)) xs[i] = x;
  }
  // values of every stored polynomial at every point (denominators inverted)
  const size_t np = S.P.size();
  std::vector<std::vector<mp_limb_t>> val(np), inv(np);
  std::vector<char> bad(Mx, 0);
  {
    Tree tree(xs.data(), Mx, mod);
    NmodPoly red(mod);
    for (size_t s = 1; s < np; ++s) {
      fmpz_poly_get_nmod_poly(red.p, S.P[s].p);
      if (nmod_poly_length(red.p) != fmpz_poly_length(S.P[s].p)) return PrimeStatus::bad_prime;  // p divides a leading coefficient
      val[s].resize(Mx);
      _nmod_poly_evaluate_nmod_vec_fast_precomp(val[s].data(), red.p->coeffs, red.p->length, tree.t, Mx, mod);
      if (S.is_den[s]) {
        inv[s] = val[s];
        batch_inverse(inv[s].data(), Mx, mod, bad);
      }
    }
  }
  // solve at each good point
  std::vector<mp_limb_t> good_x;
  std::vector<std::vector<mp_limb_t>> y(static_cast<size_t>(n) * k);
  std::vector<mp_limb_t> Ds;
  std::vector<mp_limb_t> Mat_(static_cast<size_t>(n) * w), Xn;
  long singular = 0;
  for (slong i = 0; i < Mx && static_cast<slong>(good_x.size()) < M; ++i) {
    if (bad[i]) continue;
    for (size_t t = 0; t < nt; ++t) {
      const Term& T = S.terms[t];
      if (T.num < 0) { Mat_[t] = 0; continue; }
      mp_limb_t v = sc[t];
      if (T.num > 0) v = nmod_mul(v, val[T.num][i], mod);
      if (T.den > 0) v = nmod_mul(v, inv[T.den][i], mod);
      Mat_[t] = v;
    }
    mp_limb_t D;
    if (!solve_point(Mat_, n, k, mod, Xn, D)) {
      ++singular;
      if (good_x.empty() && singular >= 4) return PrimeStatus::singular;
      continue;
    }
    any_nonsingular = 1;  // A(alpha) invertible with all denominators nonzero: det A != 0 exactly
    good_x.push_back(xs[i]);
    Ds.push_back(D);
    for (size_t j = 0; j < y.size(); ++j) y[j].push_back(Xn[j]);
  }
  if (static_cast<slong>(good_x.size()) < M) return singular > 4 ? PrimeStatus::singular : PrimeStatus::bad_prime;
  {
    std::vector<char> z(M, 0);
    batch_inverse(Ds.data(), M, mod, z);
    for (auto& yj : y)
      for (slong i = 0; i < M; ++i) yj[i] = nmod_mul(yj[i], Ds[i], mod);
  }
  // interpolate, reconstruct with a common denominator beta
  Tree tree(good_x.data(), M, mod);
  std::vector<mp_limb_t> wts(M), buf(M), bval(M, 1);
  _nmod_poly_interpolation_weights(wts.data(), tree.t, M, mod);
  NmodPoly Z(mod), R(mod), a(mod), b(mod), tmp(mod);
  nmod_poly_product_roots_nmod_vec(Z.p, good_x.data(), M);
  nmod_poly_one(out.beta.p);
  out.alpha.assign(y.size(), NmodPoly(mod));
  bool beta_one = true;
  for (size_t j = 0; j < y.size(); ++j) {
    if (beta_one) std::copy(y[j].begin(), y[j].end(), buf.begin());
    else
      for (slong i = 0; i < M; ++i) buf[i] = nmod_mul(y[j][i], bval[i], mod);
    nmod_poly_fit_length(R.p, M);
    _nmod_poly_interpolate_nmod_vec_fast_precomp(R.p->coeffs, buf.data(), tree.t, wts.data(), M, mod);
    R.p->length = M;
    _nmod_poly_normalise(R.p);
    if (!rational_reconstruct(a.p, b.p, R.p, Z.p)) return PrimeStatus::more_points;
    if (!nmod_poly_is_one(b.p)) {
      // new denominator factor: beta *= b, and earlier numerators with it
      nmod_poly_mul(out.beta.p, out.beta.p, b.p);
      for (size_t jj = 0; jj < j; ++jj) nmod_poly_mul(out.alpha[jj].p, out.alpha[jj].p, b.p);
      if (nmod_poly_degree(out.beta.p) >= M) return PrimeStatus::more_points;
      _nmod_poly_evaluate_nmod_vec_fast_precomp(bval.data(), out.beta.p->coeffs, out.beta.p->length, tree.t, M, mod);
      beta_one = false;
    }
    nmod_poly_swap(out.alpha[j].p, a.p);
  }
  return PrimeStatus::ok;
}

// Degrees of an image, to check that primes agree.
// ---- sparse interpolation (Ben-Or/Tiwari, Prony) with early termination.
// The points are alpha_i = gamma g^i (g of order 2^40). A solution entry that
// is a Laurent polynomial sum_e c_e tau^e with T terms gives the sequence
// x(alpha_i) = sum_e (c_e gamma^e) (g^e)^i, of linear complexity exactly T:
// Berlekamp-Massey on 2T + 4 values finds its generator, whose roots are the
// g^e (discrete logarithms give e), and a transposed Vandermonde solve gives
// the c_e. The pair systems' solutions are such polynomials with at most
// C(H, H/2) terms (q_m = e_m(tau^{n_1}, ..., tau^{n_H})), so a few dozen points
// replace the thousands a dense interpolation needs. Anything else (a
// non-monomial denominator, too many terms) is detected and left to the dense
// method.

// Berlekamp-Massey: connection polynomial C (C[0] = 1, degree <= L) of the
// shortest linear recurrence generating s; returns L.
int berlekamp_massey(const std::vector<mp_limb_t>& seq, nmod_t mod, std::vector<mp_limb_t>& C) {
  std::vector<mp_limb_t> Bp{1}, T;
  C.assign(1, 1);
  int L = 0, m = 1;
  mp_limb_t b = 1;
  for (size_t n = 0; n < seq.size(); ++n) {
    mp_limb_t d = seq[n];
    for (int i = 1; i <= L && i < static_cast<int>(C.size()); ++i) d = nmod_add(d, nmod_mul(C[i], seq[n - i], mod), mod);
    if (d == 0) {
      ++m;
      continue;
    }
    const mp_limb_t coef = nmod_mul(d, nmod_inv(b, mod), mod);
    const bool grow = 2 * L <= static_cast<int>(n);
    if (grow) T = C;
    if (C.size() < Bp.size() + m) C.resize(Bp.size() + m, 0);
    for (size_t i = 0; i < Bp.size(); ++i) C[i + m] = nmod_sub(C[i + m], nmod_mul(coef, Bp[i], mod), mod);
    if (grow) {
      L = static_cast<int>(n) + 1 - L;
      Bp.swap(T);
      b = d;
      m = 1;
    } else {
      ++m;
    }
  }
  C.resize(L + 1, 0);
  return L;
}

// Discrete logarithm to the base g (order 2^40) by Pohlig-Hellman; false if
// w is not in the subgroup generated by g.
bool dlog2(mp_limb_t w, const std::vector<mp_limb_t>& ginv_pow2, nmod_t mod, std::uint64_t& e) {
  e = 0;
  mp_limb_t h = w;
  for (int i = 0; i < kTwoAdic; ++i) {
    mp_limb_t z = h;
    for (int j = 0; j < kTwoAdic - 1 - i; ++j) z = nmod_mul(z, z, mod);
    if (z == mod.n - 1) {
      e |= std::uint64_t(1) << i;
      h = nmod_mul(h, ginv_pow2[i], mod);
    } else if (z != 1) {
      return false;
    }
  }
  return h == 1;
}

mp_limb_t pow_signed(mp_limb_t x, long e, nmod_t mod) {
  if (e >= 0) return n_powmod2_ui_preinv(x, static_cast<ulong>(e), mod.n, mod.ninv);
  return n_powmod2_ui_preinv(nmod_inv(x, mod), static_cast<ulong>(-e), mod.n, mod.ninv);
}

PrimeStatus run_prime_sparse(const Setup& S, const PrimeInfo& pr, nmod_t mod, std::uint64_t seed, slong Nmax, Image& out,
                             int& any_nonsingular) {
  const int n = S.n, k = S.k, w = n + k;
  const size_t nt = S.terms.size();
  std::vector<mp_limb_t> sc(nt, 0);
  for (size_t t = 0; t < nt; ++t) {
    const Term& T = S.terms[t];
    if (T.num < 0) continue;
    const mp_limb_t cd = fmpz_fdiv_ui(T.cd.v, mod.n);
    if (cd == 0) return PrimeStatus::bad_prime;
    sc[t] = nmod_mul(fmpz_fdiv_ui(T.cn.v, mod.n), nmod_inv(cd, mod), mod);
  }
  const mp_limb_t gamma = 1 + mix64(seed) % (mod.n - 1);
  // every stored polynomial as its nonzero terms c_e gamma^e, stepping by g^e
  const size_t np = S.P.size();
  std::vector<std::vector<std::pair<mp_limb_t, mp_limb_t>>> terms(np);  // (current value, ratio)
  for (size_t s = 1; s < np; ++s) {
    const fmpz_poly_struct* P = S.P[s].p;
    mp_limb_t gp = 1, cp = 1;  // g^e, gamma^e
    slong last = 0;
    for (slong e = 0; e < P->length; ++e) {
      if (fmpz_is_zero(P->coeffs + e)) continue;
      const mp_limb_t c = fmpz_fdiv_ui(P->coeffs + e, mod.n);
      const slong gap = e - last;
      if (gap == 1) {
        gp = nmod_mul(gp, pr.g, mod);
        cp = nmod_mul(cp, gamma, mod);
      } else if (gap > 1) {
        gp = nmod_mul(gp, n_powmod2_ui_preinv(pr.g, gap, mod.n, mod.ninv), mod);
        cp = nmod_mul(cp, n_powmod2_ui_preinv(gamma, gap, mod.n, mod.ninv), mod);
      }
      last = e;
      if (c != 0) terms[s].push_back({nmod_mul(c, cp, mod), gp});
    }
  }
  std::vector<std::vector<mp_limb_t>> y(static_cast<size_t>(n) * k);
  std::vector<mp_limb_t> Mat_(static_cast<size_t>(n) * w), Xn;
  std::vector<std::vector<mp_limb_t>> C(y.size());
  std::vector<int> Ls(y.size(), 0);
  slong N = 0, target = 16;
  long singular = 0;
  const int delta = 4;
  for (;;) {
    const slong B = target - N;  // new points N .. target-1
    std::vector<std::vector<mp_limb_t>> val(np), inv(np);
    std::vector<char> bad(B, 0);
    for (size_t s = 1; s < np; ++s) {
      val[s].assign(B, 0);
      for (slong i = 0; i < B; ++i) {
        mp_limb_t acc = 0;
        for (auto& tr : terms[s]) {
          acc = nmod_add(acc, tr.first, mod);
          tr.first = nmod_mul(tr.first, tr.second, mod);
        }
        val[s][i] = acc;
      }
      if (S.is_den[s]) {
        inv[s] = val[s];
        batch_inverse(inv[s].data(), B, mod, bad);
      }
    }
    std::vector<mp_limb_t> Ds;
    std::vector<std::vector<mp_limb_t>> xb(y.size());
    for (slong i = 0; i < B; ++i) {
      if (bad[i]) return PrimeStatus::bad_prime;  // a denominator vanishes at a point: try another prime and shift
      for (size_t t = 0; t < nt; ++t) {
        const Term& T = S.terms[t];
        if (T.num < 0) { Mat_[t] = 0; continue; }
        mp_limb_t v = sc[t];
        if (T.num > 0) v = nmod_mul(v, val[T.num][i], mod);
        if (T.den > 0) v = nmod_mul(v, inv[T.den][i], mod);
        Mat_[t] = v;
      }
      mp_limb_t D;
      if (!solve_point(Mat_, n, k, mod, Xn, D)) {
        ++singular;
        if (!any_nonsingular && singular >= 4) return PrimeStatus::singular;
        if (any_nonsingular) return PrimeStatus::bad_prime;  // a sporadic singular point: the points must be consecutive
        continue;
      }
      if (singular > 0) return PrimeStatus::bad_prime;
      any_nonsingular = 1;  // A(alpha) invertible with all denominators nonzero: det A != 0 exactly
      Ds.push_back(D);
      for (size_t j = 0; j < y.size(); ++j) xb[j].push_back(Xn[j]);
    }
    if (singular > 0) return PrimeStatus::bad_prime;
    {
      std::vector<char> z(Ds.size(), 0);
      batch_inverse(Ds.data(), static_cast<slong>(Ds.size()), mod, z);
      for (size_t j = 0; j < y.size(); ++j)
        for (size_t i = 0; i < Ds.size(); ++i) y[j].push_back(nmod_mul(xb[j][i], Ds[i], mod));
    }
    N = target;
    bool done = true;
    for (size_t j = 0; j < y.size() && done; ++j) {
      Ls[j] = berlekamp_massey(y[j], mod, C[j]);
      done = N >= 2 * Ls[j] + delta;
    }
    if (done) break;
    if (target >= Nmax) return PrimeStatus::more_points;
    target = std::min(2 * target, Nmax);
  }
  // terms of every entry
  std::vector<mp_limb_t> ginv_pow2(kTwoAdic);
  ginv_pow2[0] = nmod_inv(pr.g, mod);
  for (int i = 1; i < kTwoAdic; ++i) ginv_pow2[i] = nmod_mul(ginv_pow2[i - 1], ginv_pow2[i - 1], mod);
  std::vector<std::vector<std::pair<long, mp_limb_t>>> ent(y.size());
  long shift = 0;
  NmodPoly Lam(mod);
  for (size_t j = 0; j < y.size(); ++j) {
    const int L = Ls[j];
    if (L == 0) continue;
    if (C[j][L] == 0) return PrimeStatus::more_points;
    nmod_poly_zero(Lam.p);
    for (int i = 0; i <= L; ++i) nmod_poly_set_coeff_ui(Lam.p, i, C[j][L - i]);  // z^L C(1/z), monic
    std::vector<mp_limb_t> roots(L);
    if (!nmod_poly_find_distinct_nonzero_roots(roots.data(), Lam.p)) return PrimeStatus::more_points;
    for (mp_limb_t r : roots) {
      std::uint64_t e;
      if (!dlog2(r, ginv_pow2, mod, e)) return PrimeStatus::more_points;
      const long es = e >= (std::uint64_t(1) << (kTwoAdic - 1)) ? static_cast<long>(e) - (1L << kTwoAdic) : static_cast<long>(e);
      if (es > (1L << 30) || es < -(1L << 30)) return PrimeStatus::more_points;
      // coefficient: transposed Vandermonde via Lam / (z - r)
      std::vector<mp_limb_t> q(L);
      q[L - 1] = 1;
      for (int i = L - 1; i >= 1; --i) q[i - 1] = nmod_add(Lam.p->coeffs[i], nmod_mul(r, q[i], mod), mod);
      mp_limb_t num = 0, den = 0, rp = 1;
      for (int i = 0; i < L; ++i) {
        num = nmod_add(num, nmod_mul(q[i], y[j][i], mod), mod);
        den = nmod_add(den, nmod_mul(q[i], rp, mod), mod);
        rp = nmod_mul(rp, r, mod);
      }
      if (den == 0) return PrimeStatus::more_points;
      const mp_limb_t c = nmod_mul(nmod_mul(num, nmod_inv(den, mod), mod), pow_signed(gamma, -es, mod), mod);
      ent[j].push_back({es, c});
      shift = std::max(shift, -es);
    }
  }
  nmod_poly_zero(out.beta.p);
  nmod_poly_set_coeff_ui(out.beta.p, shift, 1);
  out.alpha.assign(y.size(), NmodPoly(mod));
  for (size_t j = 0; j < y.size(); ++j)
    for (const auto& [e, c] : ent[j]) nmod_poly_set_coeff_ui(out.alpha[j].p, e + shift, c);
  return PrimeStatus::ok;
}

// Degrees and numbers of nonzero coefficients of an image, to check that primes agree.
std::vector<slong> signature(const Image& im) {
  std::vector<slong> s;
  auto add = [&](const nmod_poly_struct* q) {
    slong nz = 0;
    for (slong i = 0; i < q->length; ++i) nz += q->coeffs[i] != 0;
    s.push_back(q->length);
    s.push_back(nz);
  };
  add(im.beta.p);
  for (const auto& a : im.alpha) add(a.p);
  return s;
}

// Accumulated CRT residues of every coefficient of beta and the alphas.
struct Crt {
  Fmpz m;                                 // product of the primes so far
  std::vector<std::vector<Fmpz>> coeffs;  // [0] beta, [1 + j] alpha_j
  std::vector<slong> sig;
  int primes = 0;
};

void crt_add(Crt& C, const Image& im, mp_limb_t p) {
  std::vector<const nmod_poly_struct*> polys{im.beta.p};
  for (const auto& a : im.alpha) polys.push_back(a.p);
  if (C.primes == 0) {
    C.coeffs.assign(polys.size(), {});
    for (size_t i = 0; i < polys.size(); ++i) {
      C.coeffs[i].resize(polys[i]->length);
      for (slong c = 0; c < polys[i]->length; ++c) fmpz_set_ui(C.coeffs[i][c].v, polys[i]->coeffs[c]);
    }
    fmpz_set_ui(C.m.v, p);
  } else {
    for (size_t i = 0; i < polys.size(); ++i)
      for (slong c = 0; c < polys[i]->length; ++c) fmpz_CRT_ui(C.coeffs[i][c].v, C.coeffs[i][c].v, C.m.v, polys[i]->coeffs[c], p, 0);
    fmpz_mul_ui(C.m.v, C.m.v, p);
  }
  ++C.primes;
}

// Rational reconstruction of every coefficient, then integer polynomials
// betaZ, alphaZ[j] with a common scale. False if some coefficient fails.
bool crt_lift(const Crt& C, FmpzPoly& betaZ, std::vector<FmpzPoly>& alphaZ) {
  std::vector<std::vector<Fmpz>> num(C.coeffs.size()), den(C.coeffs.size());
  Fmpz L;
  fmpz_one(L.v);
  for (size_t i = 0; i < C.coeffs.size(); ++i) {
    num[i].resize(C.coeffs[i].size());
    den[i].resize(C.coeffs[i].size());
    for (size_t c = 0; c < C.coeffs[i].size(); ++c) {
      if (fmpz_is_zero(C.coeffs[i][c].v)) { fmpz_one(den[i][c].v); continue; }
      if (!_fmpq_reconstruct_fmpz(num[i][c].v, den[i][c].v, C.coeffs[i][c].v, C.m.v)) return false;
      if (!fmpz_is_one(den[i][c].v)) fmpz_lcm(L.v, L.v, den[i][c].v);
    }
  }
  Fmpz t;
  auto build = [&](size_t i, FmpzPoly& out) {
    fmpz_poly_zero(out.p);
    for (size_t c = C.coeffs[i].size(); c-- > 0;) {
      if (fmpz_is_zero(num[i][c].v)) continue;
      fmpz_divexact(t.v, L.v, den[i][c].v);
      fmpz_mul(t.v, t.v, num[i][c].v);
      fmpz_poly_set_coeff_fmpz(out.p, static_cast<slong>(c), t.v);
    }
  };
  build(0, betaZ);
  alphaZ.assign(C.coeffs.size() - 1, FmpzPoly());
  for (size_t j = 0; j + 1 < C.coeffs.size(); ++j) build(j + 1, alphaZ[j]);
  return !fmpz_poly_is_zero(betaZ.p);
}

// out = a * b; schoolbook over the nonzero terms when both factors are sparse
// (the pair systems' polynomials have at most 2^H terms), else FLINT's product.
void mul_sparse_aware(fmpz_poly_t out, const fmpz_poly_t a, const fmpz_poly_t b) {
  const slong la = fmpz_poly_length(a), lb = fmpz_poly_length(b);
  if (la == 0 || lb == 0) {
    fmpz_poly_zero(out);
    return;
  }
  std::vector<slong> ia, ib;
  for (slong i = 0; i < la; ++i)
    if (!fmpz_is_zero(a->coeffs + i)) ia.push_back(i);
  for (slong i = 0; i < lb; ++i)
    if (!fmpz_is_zero(b->coeffs + i)) ib.push_back(i);
  if (static_cast<slong>(ia.size() * ib.size()) > 2 * (la + lb)) {
    fmpz_poly_mul(out, a, b);
    return;
  }
  FmpzPoly r;
  fmpz_poly_fit_length(r.p, la + lb - 1);
  _fmpz_vec_zero(r.p->coeffs, la + lb - 1);
  for (slong i : ia)
    for (slong j : ib) fmpz_addmul(r.p->coeffs + i + j, a->coeffs + i, b->coeffs + j);
  _fmpz_poly_set_length(r.p, la + lb - 1);
  _fmpz_poly_normalise(r.p);
  fmpz_poly_swap(out, r.p);
}

// Exact check of A X = B with X(j) = alphaZ[j] / betaZ, in Z[tau]: row i times
// the lcm of its denominators, entries grouped by their (numerator,
// denominator) polynomials, one product per group.
bool verify_exact(const Setup& S, const FmpzPoly& betaZ, const std::vector<FmpzPoly>& alphaZ) {
  const int n = S.n, k = S.k;
  FmpzPoly ell, cof, G, acc, prod, negb;
  fmpz_poly_neg(negb.p, betaZ.p);
  Fmpz Lint, sc;
  for (int i = 0; i < n; ++i) {
    // row lcm: integer part and polynomial part
    fmpz_one(Lint.v);
    std::vector<int> dens;
    for (int j = 0; j < n + k; ++j) {
      const Term& T = S.at(i, j);
      if (T.num < 0) continue;
      fmpz_lcm(Lint.v, Lint.v, T.cd.v);
      if (std::find(dens.begin(), dens.end(), T.den) == dens.end()) dens.push_back(T.den);
    }
    std::sort(dens.begin(), dens.end());
    fmpz_poly_one(ell.p);
    for (int d : dens)
      if (d > 0) fmpz_poly_lcm(ell.p, ell.p, S.P[d].p);
    for (int c = 0; c < k; ++c) {
      fmpz_poly_zero(acc.p);
      // groups keyed by (den, num)
      std::vector<std::pair<int, int>> keys;
      for (int j = 0; j <= n; ++j) {
        const Term& T = j < n ? S.at(i, j) : S.at(i, n + c);
        if (T.num < 0) continue;
        if (std::find(keys.begin(), keys.end(), std::make_pair(T.den, T.num)) == keys.end()) keys.push_back({T.den, T.num});
      }
      std::sort(keys.begin(), keys.end());
      for (size_t g = 0; g < keys.size();) {
        const int den = keys[g].first;
        FmpzPoly inner;
        for (; g < keys.size() && keys[g].first == den; ++g) {
          const int num = keys[g].second;
          fmpz_poly_zero(G.p);
          for (int j = 0; j <= n; ++j) {
            const Term& T = j < n ? S.at(i, j) : S.at(i, n + c);
            if (T.num != num || T.den != den) continue;
            const fmpz_poly_struct* x = j < n ? alphaZ[static_cast<size_t>(j) * k + c].p : negb.p;
            fmpz_divexact(sc.v, Lint.v, T.cd.v);
            fmpz_mul(sc.v, sc.v, T.cn.v);
            fmpz_poly_scalar_addmul_fmpz(G.p, x, sc.v);
          }
          if (num > 0) {
            mul_sparse_aware(prod.p, S.P[num].p, G.p);
            fmpz_poly_add(inner.p, inner.p, prod.p);
          } else {
            fmpz_poly_add(inner.p, inner.p, G.p);
          }
        }
        if (den == 0) {
          mul_sparse_aware(prod.p, ell.p, inner.p);
          fmpz_poly_add(acc.p, acc.p, prod.p);
        } else if (dens.size() == 1 || (dens.size() == 2 && dens[0] == 0 && fmpz_poly_equal(ell.p, S.P[den].p))) {
          fmpz_poly_add(acc.p, acc.p, inner.p);  // ell / P[den] = 1
        } else {
          fmpz_poly_div(cof.p, ell.p, S.P[den].p);
          mul_sparse_aware(prod.p, cof.p, inner.p);
          fmpz_poly_add(acc.p, acc.p, prod.p);
        }
      }
      if (!fmpz_poly_is_zero(acc.p)) return false;
    }
  }
  return true;
}

// num / den in canonical form (fast path when den is c * tau^e).
void set_canonical(QTau& x, const fmpz_poly_t num, const fmpz_poly_t den) {
  fmpz_poly_q_struct* r = QTauAccess::raw(x);
  if (fmpz_poly_is_zero(num)) {
    fmpz_poly_zero(r->num);
    fmpz_poly_one(r->den);
    return;
  }
  const slong dl = fmpz_poly_length(den);
  bool monomial = true;
  for (slong i = 0; i + 1 < dl && monomial; ++i) monomial = fmpz_is_zero(den->coeffs + i);
  if (!monomial) {
    fmpz_poly_set(r->num, num);
    fmpz_poly_set(r->den, den);
    fmpz_poly_q_canonicalise(r);
    return;
  }
  // den = c tau^e: cancel the common power of tau and the integer content
  slong v = 0;
  while (fmpz_is_zero(num->coeffs + v)) ++v;
  const slong e = dl - 1, s = std::min(v, e);
  Fmpz g;
  _fmpz_vec_content(g.v, num->coeffs, fmpz_poly_length(num));
  fmpz_gcd(g.v, g.v, den->coeffs + e);
  if (fmpz_sgn(den->coeffs + e) < 0) fmpz_neg(g.v, g.v);
  fmpz_poly_shift_right(r->num, num, s);
  fmpz_poly_scalar_divexact_fmpz(r->num, r->num, g.v);
  fmpz_poly_zero(r->den);
  Fmpz c;
  fmpz_divexact(c.v, den->coeffs + e, g.v);
  fmpz_poly_set_coeff_fmpz(r->den, e - s, c.v);
}

enum class Mode { dense, sparse };
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

}  // namespace

// ------------------------------------------------------------ fast exact helpers
namespace {
// P / (D tau^s) with P in Z[tau], D > 0, s >= 0.
struct Laurent {
  FmpzPoly P;
  Fmpz D;
  slong s = 0;
};

// x as a Laurent element, if its denominator is c * tau^s.
bool as_laurent(const QTau& x, Laurent& out) {
  const fmpz_poly_struct* den = QTauAccess::raw(x)->den;
  const slong dl = fmpz_poly_length(den);
  for (slong i = 0; i + 1 < dl; ++i)
    if (!fmpz_is_zero(den->coeffs + i)) return false;
  fmpz_poly_set(out.P.p, QTauAccess::raw(x)->num);
  fmpz_set(out.D.v, den->coeffs + dl - 1);  // positive in canonical form
  out.s = dl - 1;
  return true;
}

// Canonical QTau of a Laurent element.
void from_laurent(QTau& x, const Laurent& l) {
  FmpzPoly den;
  fmpz_poly_set_coeff_fmpz(den.p, l.s, l.D.v);
  set_canonical(x, l.P.p, den.p);
}

// acc += y (exact; common denominator lcm, common shift max).
void laurent_add(Laurent& acc, const Laurent& y) {
  if (fmpz_poly_is_zero(y.P.p)) return;
  if (fmpz_poly_is_zero(acc.P.p)) {
    acc = y;
    return;
  }
  Fmpz L, fa, fy;
  fmpz_lcm(L.v, acc.D.v, y.D.v);
  fmpz_divexact(fa.v, L.v, acc.D.v);
  fmpz_divexact(fy.v, L.v, y.D.v);
  const slong s = std::max(acc.s, y.s);
  FmpzPoly t;
  fmpz_poly_scalar_mul_fmpz(acc.P.p, acc.P.p, fa.v);
  fmpz_poly_shift_left(acc.P.p, acc.P.p, s - acc.s);
  fmpz_poly_scalar_mul_fmpz(t.p, y.P.p, fy.v);
  fmpz_poly_shift_left(t.p, t.p, s - y.s);
  fmpz_poly_add(acc.P.p, acc.P.p, t.p);
  fmpz_set(acc.D.v, L.v);
  acc.s = s;
}

// y *= (u / v) tau^e, v > 0.
void laurent_scale(Laurent& y, const fmpz_t u, const fmpz_t v, slong e) {
  fmpz_poly_scalar_mul_fmpz(y.P.p, y.P.p, u);
  fmpz_mul(y.D.v, y.D.v, v);
  y.s -= e;
  if (y.s < 0) {
    fmpz_poly_shift_left(y.P.p, y.P.p, -y.s);
    y.s = 0;
  }
}

// x = (u / v) tau^e exactly? (canonical form: one of num, den is a constant)
bool as_monomial(const QTau& x, Fmpz& u, Fmpz& v, slong& e) {
  const fmpz_poly_struct* num = QTauAccess::raw(x)->num;
  const fmpz_poly_struct* den = QTauAccess::raw(x)->den;
  const slong nl = fmpz_poly_length(num), dl = fmpz_poly_length(den);
  if (nl == 0) return false;
  for (slong i = 0; i + 1 < nl; ++i)
    if (!fmpz_is_zero(num->coeffs + i)) return false;
  for (slong i = 0; i + 1 < dl; ++i)
    if (!fmpz_is_zero(den->coeffs + i)) return false;
  fmpz_set(u.v, num->coeffs + nl - 1);
  fmpz_set(v.v, den->coeffs + dl - 1);
  e = (nl - 1) - (dl - 1);
  return true;
}
}  // namespace

QTau qtau_laurent(const std::vector<std::pair<long, Rational>>& terms) {
  QTau out;
  if (terms.empty()) return out;
  Laurent l;
  fmpz_one(l.D.v);
  long lo = 0;
  for (const auto& t : terms) {
    fmpz_lcm(l.D.v, l.D.v, fmpq_denref(t.second.raw()));
    lo = std::min(lo, t.first);
  }
  l.s = -lo;
  Fmpz c, prev;
  for (const auto& t : terms) {
    fmpz_divexact(c.v, l.D.v, fmpq_denref(t.second.raw()));
    fmpz_mul(c.v, c.v, fmpq_numref(t.second.raw()));
    fmpz_poly_get_coeff_fmpz(prev.v, l.P.p, t.first + l.s);
    fmpz_add(c.v, c.v, prev.v);
    fmpz_poly_set_coeff_fmpz(l.P.p, t.first + l.s, c.v);
  }
  from_laurent(out, l);
  return out;
}

QTau qtau_poly_eval(const std::vector<QTau>& c, const QTau& x) {
  if (c.empty()) return QTau();
  Fmpz u, v;
  slong e = 0;
  std::vector<Laurent> lc(c.size());
  bool fast = as_monomial(x, u, v, e);
  for (size_t m = 0; fast && m < c.size(); ++m) fast = as_laurent(c[m], lc[m]);
  if (!fast) {
    QTau acc = c.back();
    for (size_t m = c.size() - 1; m-- > 0;) acc = acc * x + c[m];
    return acc;
  }
  // sum_m c_m (u/v)^m tau^{m e}
  Laurent acc;
  fmpz_one(acc.D.v);
  Fmpz um, vm;
  fmpz_one(um.v);
  fmpz_one(vm.v);
  for (size_t m = 0; m < c.size(); ++m) {
    if (m > 0) {
      fmpz_mul(um.v, um.v, u.v);
      fmpz_mul(vm.v, vm.v, v.v);
    }
    laurent_scale(lc[m], um.v, vm.v, static_cast<slong>(m) * e);
    laurent_add(acc, lc[m]);
  }
  QTau out;
  from_laurent(out, acc);
  return out;
}

QTau qtau_mul(const QTau& a, const QTau& b) {
  Fmpz u, v;
  slong e = 0;
  Laurent l;
  for (int side = 0; side < 2; ++side) {
    const QTau& m = side ? a : b;
    const QTau& o = side ? b : a;
    if (as_monomial(m, u, v, e) && as_laurent(o, l)) {
      laurent_scale(l, u.v, v.v, e);
      QTau out;
      from_laurent(out, l);
      return out;
    }
  }
  QTau out;
  fmpz_poly_q_mul(QTauAccess::raw(out), QTauAccess::raw(a), QTauAccess::raw(b));
  return out;
}

QTau qtau_div(const QTau& a, const QTau& b) {
  if (QTauAccess::is_zero(b)) throw_internal("Q(tau) division by zero");
  Laurent la, lb;
  if (!QTauAccess::is_zero(a) && as_laurent(a, la) && as_laurent(b, lb)) {
    // a = tau^va A' / (alpha tau^i), b = tau^vb B' / (beta tau^j), A'(0), B'(0) != 0
    const fmpz_poly_struct *A = la.P.p, *Bp = lb.P.p;
    slong va = 0, vb = 0;
    while (fmpz_is_zero(A->coeffs + va)) ++va;
    while (fmpz_is_zero(Bp->coeffs + vb)) ++vb;
    const slong len = A->length - va;
    bool prop = len == Bp->length - vb;
    const fmpz* ha = A->coeffs + A->length - 1;
    const fmpz* hb = Bp->coeffs + Bp->length - 1;
    Fmpz x, y;
    for (slong i = 0; prop && i < len; ++i) {  // hb A' == ha B'
      fmpz_mul(x.v, hb, A->coeffs + va + i);
      fmpz_mul(y.v, ha, Bp->coeffs + vb + i);
      prop = fmpz_equal(x.v, y.v);
    }
    if (prop) {
      // a / b = (ha beta) / (hb alpha) tau^{va - i - vb + j}
      Fmpz n, d, g;
      fmpz_mul(n.v, ha, lb.D.v);
      fmpz_mul(d.v, hb, la.D.v);
      if (fmpz_sgn(d.v) < 0) {
        fmpz_neg(n.v, n.v);
        fmpz_neg(d.v, d.v);
      }
      fmpz_gcd(g.v, n.v, d.v);
      fmpz_divexact(n.v, n.v, g.v);
      fmpz_divexact(d.v, d.v, g.v);
      const slong e = va - la.s - vb + lb.s;
      QTau out;
      fmpz_poly_zero(QTauAccess::raw(out)->num);
      fmpz_poly_zero(QTauAccess::raw(out)->den);
      fmpz_poly_set_coeff_fmpz(QTauAccess::raw(out)->num, std::max<slong>(e, 0), n.v);
      fmpz_poly_set_coeff_fmpz(QTauAccess::raw(out)->den, std::max<slong>(-e, 0), d.v);
      return out;
    }
  }
  QTau out;
  fmpz_poly_q_div(QTauAccess::raw(out), QTauAccess::raw(a), QTauAccess::raw(b));
  return out;
}

namespace {
// Numerator and denominator of sum_h num[h]/den[h] as integer polynomials,
// without any gcd: x_h = (a_h d_h) / (b_h c_h) for num = a/b, den = c/d.
void fraction_sum_parts(const std::vector<QTau>& num, const std::vector<QTau>& den, FmpzPoly& top, FmpzPoly& bottom) {
  const size_t H = num.size();
  if (den.size() != H) throw_internal("qtau_fraction_sum_equals: size mismatch");
  std::vector<FmpzPoly> nu(H), de(H);
  for (size_t h = 0; h < H; ++h) {
    if (QTauAccess::is_zero(den[h])) throw_internal("Q(tau) division by zero");
    mul_sparse_aware(nu[h].p, QTauAccess::raw(num[h])->num, QTauAccess::raw(den[h])->den);
    mul_sparse_aware(de[h].p, QTauAccess::raw(num[h])->den, QTauAccess::raw(den[h])->num);
  }
  // prefix products of the denominators; top = sum_h nu_h prod_{g != h} de_g
  fmpz_poly_zero(top.p);
  fmpz_poly_one(bottom.p);
  FmpzPoly t;
  for (size_t h = 0; h < H; ++h) {
    // top/bottom + nu_h/de_h = (top de_h + nu_h bottom) / (bottom de_h)
    mul_sparse_aware(top.p, top.p, de[h].p);
    mul_sparse_aware(t.p, nu[h].p, bottom.p);
    fmpz_poly_add(top.p, top.p, t.p);
    mul_sparse_aware(bottom.p, bottom.p, de[h].p);
  }
}
}  // namespace

bool qtau_fraction_sum_equals(const std::vector<QTau>& num, const std::vector<QTau>& den, const QTau& value) {
  FmpzPoly top, bottom, l, r;
  fraction_sum_parts(num, den, top, bottom);
  // top / bottom == e / f  <=>  top f == e bottom  (bottom, f nonzero)
  mul_sparse_aware(l.p, top.p, QTauAccess::raw(value)->den);
  mul_sparse_aware(r.p, QTauAccess::raw(value)->num, bottom.p);
  return fmpz_poly_equal(l.p, r.p);
}

bool qtau_solve(ExactSolver s, Mat<QTau>& X, const Mat<QTau>& A, const Mat<QTau>& B) {
  if (A.rows() != A.cols() || B.rows() != A.rows()) throw_internal("qtau_solve: shape mismatch");
  if (ExactSolveObserver obs = g_observer.load()) obs(A, B, g_observer_ctx.load());
  bump(g_stats.calls);
  const std::int64_t t0 = now_ns();
  bool ok;
  if (A.rows() == 0) {
    X = Mat<QTau>(0, B.cols());
    ok = true;
  } else {
    switch (s) {
      case ExactSolver::fflu: ok = solve_fflu(X, A, B); break;
      case ExactSolver::modular: ok = solve_modular(Mode::dense, X, A, B); break;
      case ExactSolver::sparse: ok = solve_modular(Mode::sparse, X, A, B); break;
      default: throw_internal("qtau_solve: unknown solver");
    }
  }
  g_stats.ns.fetch_add(now_ns() - t0, std::memory_order_relaxed);
  return ok;
}

bool qtau_rational_interpolate(ExactSolver s, const std::vector<QTau>& f, int H, std::vector<QTau>& N, std::vector<QTau>& Q) {
  const int n = 2 * H + 1;
  if (H < 1 || static_cast<int>(f.size()) != n) throw_internal("qtau_rational_interpolate: need 2H+1 samples");
  Mat<QTau> A(n, n), rhs(n, 1), x;
  for (int k = 0; k < n; ++k) {
    long km = 1;
    for (int m = 0; m <= H; ++m) {
      A(k, m) = QTau(Rational(km));
      if (m >= 1) A(k, H + m) = -(f[k] * QTau(Rational(km)));
      km *= k;
    }
    rhs(k, 0) = f[k];
  }
  if (!qtau_solve(s, x, A, rhs)) return false;
  N.clear();
  Q.assign(1, QTau(Rational(1)));
  for (int m = 0; m <= H; ++m) N.push_back(x(m, 0));
  for (int m = 1; m <= H; ++m) Q.push_back(x(H + m, 0));
  return true;
}

}  // namespace mhaq
