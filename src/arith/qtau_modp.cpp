// Arithmetic modulo the word-size primes of the modular solvers: the primes,
// batched inverses, and the system at one point.
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

bool scalars_mod_p(const Setup& S, nmod_t mod, std::vector<mp_limb_t>& sc) {
  const size_t nt = S.terms.size();
  sc.assign(nt, 0);
  for (size_t t = 0; t < nt; ++t) {
    const Term& T = S.terms[t];
    if (T.num < 0) continue;
    const mp_limb_t cd = fmpz_fdiv_ui(T.cd.v, mod.n);
    if (cd == 0) return false;
    sc[t] = nmod_mul(fmpz_fdiv_ui(T.cn.v, mod.n), nmod_inv(cd, mod), mod);
  }
  return true;
}

void point_matrix(const Setup& S, const std::vector<mp_limb_t>& sc, const std::vector<std::vector<mp_limb_t>>& val,
                  const std::vector<std::vector<mp_limb_t>>& inv, slong i, nmod_t mod, std::vector<mp_limb_t>& M) {
  for (size_t t = 0; t < S.terms.size(); ++t) {
    const Term& T = S.terms[t];
    if (T.num < 0) { M[t] = 0; continue; }
    mp_limb_t v = sc[t];
    if (T.num > 0) v = nmod_mul(v, val[T.num][i], mod);
    if (T.den > 0) v = nmod_mul(v, inv[T.den][i], mod);
    M[t] = v;
  }
}

}  // namespace mhaq::qtau_detail
