// Combining the images mod several primes: signatures, CRT, rational
// reconstruction of the coefficients.
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

}  // namespace mhaq::qtau_detail
