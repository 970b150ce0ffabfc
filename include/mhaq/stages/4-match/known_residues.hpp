// Stage 4, compact schedule: a pair whose residues are already known from
// the matched heads of the pair (i, 1) (proofs/19); its poles are matched to
// those residues, so it sits with the matching. A pair (i, j) has the
// residues c_h = -v_h^T delta_i of the pair (i, 1), its f(0) is chained
// and P = f(0) - sum_h c_h, so only its H poles are unknown. With
// g(k) = f(k) - P = N(k)/Q(k), deg N <= H-1,
// Q(0) = 1 and N(0) = sum_h c_h, the values k = 1..s give s linear equations
// N(k) = g(k) Q(k) in the 2H-1 unknowns n_1..n_{H-1}, q_1..q_H:
//
//   s >= 2H-1 (the linear route): one solution; the poles are the roots of Q,
//     each matched to its residue -N(rho)/(rho Q'(rho));
//   s = 2H-2, H >= 3 (the family route): the solutions are N_a + t N_b,
//     Q_a + t Q_b with t = q_H. At a pole rho of the true member,
//     N(rho) + c_h rho Q'(rho) = 0; eliminating t at rho, every pole of head h
//     is a root of S_h(k) = (A(k) + c_h B(k)) / k, where
//         A = N_a Q_b - N_b Q_a,   B = k (Q_a' Q_b - Q_b' Q_a),
//     and t = -Q_a(rho)/Q_b(rho) is the same for every head.
//     Field::common_roots finds the one choice of roots with a common t.
//
// Rigor as in the pair fit (stages/3-fit): exact -> exact; ball -> on success every output
// contains the truth (the choice is rigorous, then tightened by a Krawczyk
// test on the pair's own equations k = 1..H); floats -> approx_, refined on
// those equations. Failures are typed errors:
//   Error(degenerate)    no single choice fits at this draw (colliding poles,
//                        a singular system, several choices);
//   Error(inconsistent)  the values fit no such function with these residues;
//   Error(unable)        undecided at this precision.
#pragma once
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/stages/3-fit/pair_fit.hpp"

namespace mhaq {

// The pair's own equations with its residues and limit given: unknowns
// x = (P, r_1..r_H, c_1..c_H) as in PairSystem; equations
//   P + sum_h c_h / (1 + r_h k) = f(k),  k = 1..H,
//   c_h = given c_h,  P = given P,
// a square system, so floats refine it, balls certify it and jets
// differentiate it (the derivatives with respect to c and P included).
template <class T>
class KnownResidueSystem {
 public:
  // targets: f(1..H), c_1..c_H, P
  KnownResidueSystem(std::vector<T> targets, int H) : t_(std::move(targets)), H_(H) {}
  int unknowns() const { return 2 * H_ + 1; }
  int equations() const { return 2 * H_ + 1; }
  const T& target(int k) const { return t_[k]; }

  template <class G>
  typename G::value_type model(const G& F, const std::vector<typename G::value_type>& x, int e) const {
    if (e >= H_) return e < 2 * H_ ? x[1 + H_ + (e - H_)] : x[0];
    const auto one = F.from(Rational(1)), kk = F.from(Rational(e + 1));
    auto v = x[0];
    for (int h = 0; h < H_; ++h) v = v + x[1 + H_ + h] / (one + x[1 + h] * kk);
    return v;
  }
  template <class G>
  void jacobian(const G& F, const std::vector<typename G::value_type>& x, Mat<typename G::value_type>& J) const {
    const auto one = F.from(Rational(1)), zero = F.from(Rational(0));
    for (int e = 0; e < equations(); ++e)
      for (int u = 0; u < unknowns(); ++u) J(e, u) = zero;
    for (int e = 0; e < H_; ++e) {
      const auto kk = F.from(Rational(e + 1));
      J(e, 0) = one;
      for (int h = 0; h < H_; ++h) {
        const auto inv = one / (one + x[1 + h] * kk);
        J(e, 1 + h) = -(x[1 + H_ + h] * kk * inv * inv);
        J(e, 1 + H_ + h) = inv;
      }
    }
    for (int h = 0; h < H_; ++h) J(H_ + h, 1 + H_ + h) = one;
    J(2 * H_, 0) = one;
  }
  // the residues and the limit are pinned to their targets
  template <class G>
  void linear_part(const G&, std::vector<typename G::value_type>& x) const {
    for (int h = 0; h < H_; ++h) x[1 + H_ + h] = t_[H_ + h];
    x[0] = t_[2 * H_];
  }
  template <class G>
  Truth admissible(const G& F, const std::vector<typename G::value_type>& x) const {
    return PairSystem<typename G::value_type>({}, H_).admissible(F, x);
  }
  template <class Fn>
  auto map_targets(Fn fn) const {
    using U = decltype(fn(t_[0]));
    std::vector<U> g;
    for (const auto& v : t_) g.push_back(fn(v));
    return KnownResidueSystem<U>(std::move(g), H_);
  }

 private:
  std::vector<T> t_;
  int H_;
};

// The fit of a pair from f(0..s) with its residues c (heads in c's order):
// P = f(0) - sum c, and the poles by the linear route (s >= 2H-1) or the
// family route (s = 2H-2, H >= 3). Values beyond the route's must agree with
// the fit (else Error(inconsistent)). The output's heads are in c's order.
template <ArithField F>
PairFit<typename F::value_type> fit_known_residues(const F& fld, const std::vector<typename F::value_type>& f,
                                                   const std::vector<typename F::value_type>& c);

// The compact fallback (equal residues at this offset, proofs/19): the pair's
// poles and residues from 2H values f(0..2H-1) with P = f(0) - sum c known,
// by the linear route, heads in the order of the roots of Q (the residues are
// computed, not matched to c: two of them may be equal).
template <ArithField F>
PairFit<typename F::value_type> fit_known_limit(const F& fld, const std::vector<typename F::value_type>& f,
                                                const std::vector<typename F::value_type>& c);

}  // namespace mhaq
