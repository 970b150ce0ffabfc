// The solution of a Q(tau) system modulo one prime by dense evaluation and
// interpolation: values at an arithmetic progression of points, Newton
// interpolation on a subproduct tree, rational reconstruction.
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
}  // namespace

PrimeStatus run_prime(const Setup& S, nmod_t mod, slong M, std::uint64_t seed, Image& out, int& any_nonsingular) {
  const int n = S.n, k = S.k, w = n + k;
  std::vector<mp_limb_t> sc;
  if (!scalars_mod_p(S, mod, sc)) return PrimeStatus::bad_prime;
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
    point_matrix(S, sc, val, inv, i, mod, Mat_);
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

}  // namespace mhaq::qtau_detail
