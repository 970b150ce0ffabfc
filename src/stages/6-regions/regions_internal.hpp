// Stage 6 (transformer): small helpers shared by the region values and the
// path search (internal to src/stages/6-regions).
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "mhaq/stages/6-regions/regions.hpp"

namespace mhaq::regions_internal {

template <ArithField F>
typename F::value_type dot_q(const F& fld, const QVec& x, const std::vector<typename F::value_type>& y) {
  auto s = fld.from(Rational(0));
  for (size_t i = 0; i < x.size(); ++i)
    if (!x[i].is_zero()) s = s + fld.from(x[i]) * y[i];
  return s;
}

template <class T>
Truth equal_values(const Field<T>& fld, const RegionValues<T>& a, const RegionValues<T>& b) {
  // against the regions' overall scale: a head block that is zero in one
  // region is still compared with the others' size
  T scale = fld.from(Rational(0));
  const std::vector<T> fa = a.flat(), fb = b.flat();
  for (size_t i = 0; i < fa.size(); ++i) scale = scale + fld.abs(fa[i]) + fld.abs(fb[i]);
  Truth t = Truth::yes;
  for (size_t i = 0; i < fa.size() && t != Truth::no; ++i) t = truth_and(t, fld.equal(fa[i], fb[i], scale));
  return t;
}


// sqrt(x . x) to about 2^-10, by an integer square root: sizes for placing
// test points (choices, made without floats).
inline Rational approx_norm(const QVec& x) {
  const Rational s = dot(x, x) * Rational(1L << 40);
  const Rational r = s.isqrt_floor() / Rational(1L << 20);
  if (!r.is_zero()) return r;
  return max_abs(x);  // a tiny vector: its largest entry, never zero for a nonzero vector
}

inline QVec scaled(const QVec& x, const Rational& c) {
  QVec y = x;
  for (auto& v : y) v *= c;
  return y;
}

inline QVec plus(const QVec& x, const QVec& y, const Rational& c) {  // x + c y
  QVec z = x;
  for (size_t i = 0; i < z.size(); ++i) z[i] += c * y[i];
  return z;
}

inline QVec to_grid(const QVec& x, long den) {
  QVec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] * Rational(den) + Rational(1, 2)).floor() / Rational(den);
  return y;
}

// The direction of a jump's normal n on the 1/fine grid. A largest entry
// below 1/16 is first brought to [1/2, 1) by a power of two 2^s (exact in
// every field), so a small neuron's jump keeps its direction to 16/fine
// relative or better, as a large one's does. s stops at max_shift; a vector
// still rounding to zero there is returned as zero.
template <class T>
QVec direction_on_grid(const Field<T>& fld, const std::vector<T>& n, long fine, int max_shift = 4096) {
  QVec q(n.size());
  Rational scale(1);
  for (int shift = 0;;) {
    Rational m(0);
    for (size_t i = 0; i < n.size(); ++i) {
      q[i] = fld.nearest(n[i] * fld.from(scale), fine);
      m = std::max(m, q[i].sign() < 0 ? -q[i] : q[i]);
    }
    if (!(m < Rational(1, 16)) || shift >= max_shift) return q;
    // up to 2^24 at once while the rounded entries are zero; else exactly to [1/2, 1)
    int k = m.is_zero() ? 24 : 0;
    for (Rational t = m; !m.is_zero() && t < Rational(1, 2); t *= Rational(2)) ++k;
    k = std::min(k, max_shift - shift);  // at most 24
    shift += k;
    scale *= Rational(1L << k);
  }
}

template <class T>
std::string vec_str(const Field<T>& fld, const std::vector<T>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + fld.str(v[i]);
  return s + ")";
}

inline std::string qvec_str(const QVec& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i].str();
  return s + ")";
}

}  // namespace mhaq::regions_internal
