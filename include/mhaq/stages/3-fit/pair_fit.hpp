// Stage 3: pair fits. For a pair (a, b) the answers to [a x k, b] are
//     f(k) = P + sum_h c_h / (1 + r_h k)          (ALGORITHM.md section 3, proofs/01)
// and 2H+1 values fix P, the poles r_h and the residues c_h (proofs/02).
//
// Rigor: exact -> exact; ball -> on success every output contains the truth;
// floats -> approx_. Failures are typed errors:
//   Error(degenerate)    the type-(H,H) system is singular (decided);
//   Error(inconsistent)  the values fit no type-(H,H) function of this form;
//   Error(unable)        a decision could not be made at this precision.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"

namespace mhaq {

template <class T>
struct PairFit {
  T P;
  std::vector<T> r;  // poles in the r-parametrisation, r_h > 0
  std::vector<T> c;  // residues c_h = v_h^T (b - a)
  int heads() const { return static_cast<int>(r.size()); }
};

// The pair's own equations P + sum_h c_h / (1 + r_h k) = f(k), k < K, in the
// unknowns x = (P, r_1..r_H, c_1..c_H): the system the fields refine and
// certify (arith/field_refine.hpp).
template <class T>
class PairSystem {
 public:
  PairSystem(std::vector<T> f, int H) : f_(std::move(f)), H_(H) {}
  int unknowns() const { return 2 * H_ + 1; }
  int equations() const { return static_cast<int>(f_.size()); }
  const T& target(int k) const { return f_[k]; }

  template <class G>
  typename G::value_type model(const G& F, const std::vector<typename G::value_type>& x, int k) const {
    const auto one = F.from(Rational(1)), kk = F.from(Rational(k));
    auto v = x[0];
    for (int h = 0; h < H_; ++h) v = v + x[1 + H_ + h] / (one + x[1 + h] * kk);
    return v;
  }
  template <class G>
  void jacobian(const G& F, const std::vector<typename G::value_type>& x, Mat<typename G::value_type>& J) const {
    const auto one = F.from(Rational(1));
    for (int k = 0; k < equations(); ++k) {
      const auto kk = F.from(Rational(k));
      J(k, 0) = one;
      for (int h = 0; h < H_; ++h) {
        const auto inv = one / (one + x[1 + h] * kk);
        J(k, 1 + h) = -(x[1 + H_ + h] * kk * inv * inv);
        J(k, 1 + H_ + h) = inv;
      }
    }
  }
  // P and c by least squares with the poles held fixed (the model is linear in them).
  template <class G>
  void linear_part(const G& F, std::vector<typename G::value_type>& x) const;
  // Poles positive and pairwise distinct, residues nonzero: then the solution
  // is the pair's type-(H,H) interpolant, up to the order of heads (proofs/02).
  template <class G>
  Truth admissible(const G& F, const std::vector<typename G::value_type>& x) const {
    Truth t = Truth::yes;
    for (int h = 0; h < H_; ++h) {
      t = truth_and(t, F.is_positive(x[1 + h]));
      t = truth_and(t, truth_not(F.is_zero(x[1 + H_ + h])));
      for (int g = h + 1; g < H_; ++g) t = truth_and(t, truth_not(F.equal(x[1 + h], x[1 + g])));
    }
    return t;
  }
  template <class Fn>
  auto map_targets(Fn fn) const {
    using U = decltype(fn(f_[0]));
    std::vector<U> g;
    for (const auto& v : f_) g.push_back(fn(v));
    return PairSystem<U>(std::move(g), H_);
  }

 private:
  std::vector<T> f_;
  int H_;
};

// The fit of f(0..K-1) with H heads (K >= 2H+1; more values are oversampling:
// floats fit them by least squares, exact and ball fits interpolate 2H+1 and
// must agree with the rest, else Error(inconsistent)).
template <ArithField F>
PairFit<typename F::value_type> interpolate_pair(const F& fld, const std::vector<typename F::value_type>& f, int H);

// Minimal-type interpolant through the values (proofs/07): the least m <= H0
// whose type-(m,m) fit on k = 0..2m reproduces all values (the field's
// equality decision). m = 0 is the constant f(0). Error(unable) when the
// agreement cannot be decided, Error(inconsistent) when no m <= H0 fits.
template <ArithField F>
PairFit<typename F::value_type> interpolate_pair_minimal(const F& fld, const std::vector<typename F::value_type>& f, int H0);

// f(k) of a fit.
template <ArithField F>
typename F::value_type fit_value(const F& fld, const PairFit<typename F::value_type>& fit, long k);

// Chaining (proofs/04): v^T delta_i from the limits of the base pairs
// (i, 1), then f(0) = v^T b for any final token b from Delta lambda = b - b_1,
// with lambda exact in Q.
template <class T>
struct Chaining {
  T fb1;                 // the answer to [b_1]
  std::vector<T> vdelta;  // v^T delta_i = P(i, 1) - v^T b_1
  QMat DeltaInv;
  QVec b1;
  template <class F>
  T f0(const F& fld, const QVec& b) const {
    const QVec lambda = matvec(DeltaInv, b - b1);
    T s = fb1;
    for (size_t i = 0; i < lambda.size(); ++i)
      if (!lambda[i].is_zero()) s = s + fld.from(lambda[i]) * vdelta[i];
    return s;
  }
};

}  // namespace mhaq
