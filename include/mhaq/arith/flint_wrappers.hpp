// RAII owners of the FLINT and Arb objects the library works with directly:
// init in the constructor, clear in the destructor, so an exception (every
// mhaq error is one) never leaks a C object. The C value is the public member
// (v: scalars and vectors, p: polynomials, m: matrices) and is passed to the
// C functions as it is, e.g. fmpz_add(a.v, b.v, c.v).
//
// Moves leave a valid object behind: scalars and polynomials swap with a
// freshly initialised value, vectors and matrices hand over their storage and
// the destructor skips a moved-from one. Vectors and matrices are not copied
// (no caller needs it; an accidental copy of a large one would be costly).
//
// The certificate checker (src/check) keeps its own small wrappers on purpose:
// it shares no code with this library (tests/check_separation.sh).
#pragma once
#include <acb.h>
#include <acb_poly.h>
#include <arb.h>
#include <arb_mat.h>
#include <arb_poly.h>
#include <flint/fmpq.h>
#include <flint/fmpq_mat.h>
#include <flint/fmpz.h>
#include <flint/fmpz_poly.h>
#include <flint/fmpz_poly_mat.h>
#include <flint/nmod_poly.h>

#include <algorithm>

namespace mhaq::flint {

// A copyable, movable owner of one C value of type C_t (an array type of
// length one, as FLINT declares them), given its init, clear, set and swap.
#define MHAQ_FLINT_VALUE(Name, C_t, member, init, clear, set, swap)              \
  struct Name {                                                                  \
    C_t member;                                                                  \
    Name() { init(member); }                                                     \
    Name(const Name& o) { init(member); set(member, o.member); }                 \
    Name(Name&& o) noexcept { init(member); swap(member, o.member); }            \
    Name& operator=(const Name& o) { if (this != &o) set(member, o.member); return *this; } \
    Name& operator=(Name&& o) noexcept { swap(member, o.member); return *this; } \
    ~Name() { clear(member); }                                                   \
  };

MHAQ_FLINT_VALUE(Fmpz, fmpz_t, v, fmpz_init, fmpz_clear, fmpz_set, fmpz_swap)
MHAQ_FLINT_VALUE(Fmpq, fmpq_t, v, fmpq_init, fmpq_clear, fmpq_set, fmpq_swap)
MHAQ_FLINT_VALUE(FmpzPoly, fmpz_poly_t, p, fmpz_poly_init, fmpz_poly_clear, fmpz_poly_set, fmpz_poly_swap)
MHAQ_FLINT_VALUE(Arb, arb_t, v, arb_init, arb_clear, arb_set, arb_swap)
MHAQ_FLINT_VALUE(Acb, acb_t, v, acb_init, acb_clear, acb_set, acb_swap)
MHAQ_FLINT_VALUE(Mag, mag_t, v, mag_init, mag_clear, mag_set, mag_swap)
MHAQ_FLINT_VALUE(ArbPoly, arb_poly_t, p, arb_poly_init, arb_poly_clear, arb_poly_set, arb_poly_swap)
MHAQ_FLINT_VALUE(AcbPoly, acb_poly_t, p, acb_poly_init, acb_poly_clear, acb_poly_set, acb_poly_swap)
#undef MHAQ_FLINT_VALUE

// A polynomial over Z/nZ: it carries its modulus, so it has no default value.
struct NmodPoly {
  nmod_poly_t p;
  explicit NmodPoly(const nmod_t& mod) { nmod_poly_init_mod(p, mod); }
  NmodPoly(const NmodPoly& o) { nmod_poly_init_mod(p, o.p->mod); nmod_poly_set(p, o.p); }
  NmodPoly(NmodPoly&& o) noexcept { nmod_poly_init_mod(p, o.p->mod); nmod_poly_swap(p, o.p); }
  NmodPoly& operator=(const NmodPoly& o) { if (this != &o) nmod_poly_set(p, o.p); return *this; }
  NmodPoly& operator=(NmodPoly&& o) noexcept { nmod_poly_swap(p, o.p); return *this; }
  ~NmodPoly() { nmod_poly_clear(p); }
};

// A vector of n complex balls (_acb_vec_init); at least one entry is
// allocated, so v is never null while the object owns storage.
struct AcbVec {
  acb_ptr v = nullptr;
  long n = 0;
  explicit AcbVec(long len) : v(_acb_vec_init(std::max(len, 1L))), n(std::max(len, 1L)) {}
  AcbVec(AcbVec&& o) noexcept : v(o.v), n(o.n) { o.v = nullptr; o.n = 0; }
  AcbVec& operator=(AcbVec&& o) noexcept { std::swap(v, o.v); std::swap(n, o.n); return *this; }
  AcbVec(const AcbVec&) = delete;
  AcbVec& operator=(const AcbVec&) = delete;
  ~AcbVec() { if (v) _acb_vec_clear(v, n); }
};

// Matrices: r x c, fixed at construction. A move hands over the entries
// (the C structs are swapped); the moved-from object owns nothing.
#define MHAQ_FLINT_MATRIX(Name, C_t, init, clear)                                 \
  struct Name {                                                                  \
    C_t m;                                                                       \
    Name(long r, long c) { init(m, r, c); }                                      \
    Name(Name&& o) noexcept : m{*o.m}, owns_(o.owns_) { o.owns_ = false; }       \
    Name& operator=(Name&& o) noexcept { std::swap(*m, *o.m); std::swap(owns_, o.owns_); return *this; } \
    Name(const Name&) = delete;                                                  \
    Name& operator=(const Name&) = delete;                                       \
    ~Name() { if (owns_) clear(m); }                                             \
                                                                                 \
   private:                                                                      \
    bool owns_ = true;                                                           \
  };

MHAQ_FLINT_MATRIX(FmpzPolyMat, fmpz_poly_mat_t, fmpz_poly_mat_init, fmpz_poly_mat_clear)
MHAQ_FLINT_MATRIX(FmpqMat, fmpq_mat_t, fmpq_mat_init, fmpq_mat_clear)
MHAQ_FLINT_MATRIX(ArbMat, arb_mat_t, arb_mat_init, arb_mat_clear)
#undef MHAQ_FLINT_MATRIX

}  // namespace mhaq::flint
