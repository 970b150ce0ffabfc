// Stage 3: pair fits. For a pair (a, b) the answers to [a x k, b] are
//     f(k) = P + sum_h c_h / (1 + r_h k)          (docs/math/pairs.md, proofs/01)
// and 2H+1 values fix P, the poles r_h and the residues c_h (proofs/02).
//
// Rigor: exact -> exact; ball -> on success every output contains the truth;
// floats -> approx_. Failures are typed errors:
//   Error(degenerate)    the type-(H,H) system is singular (decided);
//   Error(inconsistent)  the values fit no type-(H,H) function of this form;
//   Error(unable)        a decision could not be made at this precision.
#pragma once
#include <map>
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

// The pair's own equations P + sum_h c_h / (1 + r_h t_k) = f_k, k < K, in the
// unknowns x = (P, r_1..r_H, c_1..c_H): the system the fields refine and
// certify (arith/field_refine.hpp). The nodes t_k are 0..K-1 (the paper
// schedule's counts) unless given: then any distinct rationals t_k >= 0 (the
// placed design's ratios of copy counts, proofs/37).
template <class T>
class PairSystem {
 public:
  PairSystem(std::vector<T> f, int H) : f_(std::move(f)), H_(H) {}
  PairSystem(std::vector<T> f, int H, std::vector<Rational> nodes) : f_(std::move(f)), H_(H), t_(std::move(nodes)) {}
  int unknowns() const { return 2 * H_ + 1; }
  int equations() const { return static_cast<int>(f_.size()); }
  const T& target(int k) const { return f_[k]; }
  Rational node(int k) const { return t_.empty() ? Rational(k) : t_[k]; }

  template <class G>
  typename G::value_type model(const G& F, const std::vector<typename G::value_type>& x, int k) const {
    const auto one = F.from(Rational(1)), kk = F.from(node(k));
    auto v = x[0];
    for (int h = 0; h < H_; ++h) v = v + x[1 + H_ + h] / (one + x[1 + h] * kk);
    return v;
  }
  template <class G>
  void jacobian(const G& F, const std::vector<typename G::value_type>& x, Mat<typename G::value_type>& J) const {
    const auto one = F.from(Rational(1));
    for (int k = 0; k < equations(); ++k) {
      const auto kk = F.from(node(k));
      J(k, 0) = one;
      for (int h = 0; h < H_; ++h) {
        const auto inv = one / (one + x[1 + h] * kk);
        J(k, 1 + h) = -(x[1 + H_ + h] * kk * inv * inv);
        J(k, 1 + H_ + h) = inv;
      }
    }
  }
  // The inverse of the Jacobian of the square system (K = 2H+1 values) in
  // closed form (proofs/30): with Q(x) = prod_g (1 + r_g x), rho_h = -1/r_h
  // and the Lagrange basis l_k of the nodes t_0..t_2H (0..2H unless given;
  // the same formulas hold at any distinct nodes, proofs/37), writing k for t_k,
  //   d P   / d f(k) = Q(k)^2 / (prod_{m != k} (k - m) prod_g r_g^2),
  //   d r_h / d f(k) = r_h Q(k)^2 l_k(rho_h) / (c_h G_h),   G_h = prod_{g != h} (1 - r_g/r_h)^2,
  //   d c_h / d f(k) = c_h (d r_h / d f(k)) / r_h
  //                    + Q(k)^2 l_k(rho_h) (sum_{m != k} 1/(rho_h - m) - sum_{g != h} 2 r_g/(1 + r_g rho_h)) / (r_h G_h).
  // A product form without cancellation: evaluated in balls over a box of
  // solutions it stays tight where an interval solve with the Jacobian would
  // not (near-colliding poles; jets over a box of answers, proofs/31).
  // False for an oversampled (non-square) system.
  template <class G>
  bool inverse_jacobian(const G& F, const std::vector<typename G::value_type>& x, Mat<typename G::value_type>& Y) const {
    using U = typename G::value_type;
    const int H = H_, n = 2 * H_ + 1;
    if (equations() != n) return false;
    const U one = F.from(Rational(1)), two = F.from(Rational(2)), zero = F.from(Rational(0));
    // the nodes (0..2H unless given) in the field, converted once
    std::vector<U> node;
    for (int k = 0; k < n; ++k) node.push_back(F.from(this->node(k)));
    std::vector<U> Q2, lead;
    U pr2 = one;
    for (int g = 0; g < H; ++g) pr2 = pr2 * x[1 + g] * x[1 + g];
    for (int k = 0; k < n; ++k) {
      U q = one;
      for (int g = 0; g < H; ++g) q = q * (one + x[1 + g] * node[k]);
      Q2.push_back(q * q);
      lead.push_back(F.from(node_product(k)));
    }
    Y = Mat<U>(n, n);
    for (int k = 0; k < n; ++k) Y(0, k) = Q2[k] / (lead[k] * pr2);
    for (int h = 0; h < H; ++h) {
      const U& r = x[1 + h];
      const U& c = x[1 + H + h];
      const U rho = -(one / r);
      U Gh = one, dG = zero;
      for (int g = 0; g < H; ++g) {
        if (g == h) continue;
        const U t = one - x[1 + g] / r;
        Gh = Gh * t * t;
        dG = dG + two * x[1 + g] / (one + x[1 + g] * rho);
      }
      // rho - m and 1 / (rho - m) do not depend on k: formed once per head,
      // then multiplied and summed for each k in the same order as before
      std::vector<U> tm, inv_tm;
      for (int m = 0; m < n; ++m) {
        tm.push_back(rho - node[m]);
        inv_tm.push_back(one / tm.back());
      }
      for (int k = 0; k < n; ++k) {
        U lk = one, dl = zero;
        for (int m = 0; m < n; ++m)
          if (m != k) {
            lk = lk * tm[m];
            dl = dl + inv_tm[m];
          }
        const U base = Q2[k] * lk / lead[k];
        const U dlog = base / (c * Gh);
        Y(1 + h, k) = r * dlog;
        Y(1 + H + h, k) = c * dlog + base * (dl - dG) / (r * Gh);
      }
    }
    return true;
  }
  // For Krawczyk's slope form (arith/field_refine.hpp): an enclosure of
  //   { Y d^2 f / dx_j dx_l (x) : x in X },   X = xt +- w,
  // a vector over the rows of Y, or false when d^2 f / dx_j dx_l = 0. The
  // second derivatives are nonzero only for (r_h, r_h), 2 c_h phi_2(r_h), and
  // (r_h, c_h), -phi_1(r_h), with phi_m(r)(k) = k^m / (1 + r k)^{m+1}; since
  // d^q phi_m / dr^q = (-1)^q (m+q)!/m! phi_{m+q}, Y phi_m on the interval is
  // its Taylor polynomial at the centre, each coefficient Y phi_{m+q}(r_t) a
  // product at a point (where the rows of Y, large near colliding poles,
  // cancel), plus |Y| |phi_{m+4}(X)| C(m+4, 4) w^4 (proofs/31).
  template <class G>
  bool applied_second_derivative(const G& F, const Mat<typename G::value_type>& Y, const std::vector<typename G::value_type>& xt,
                                 const std::vector<typename G::value_type>& X, const std::vector<typename G::value_type>& dX, int j, int l,
                                 std::vector<typename G::value_type>& out) const {
    using U = typename G::value_type;
    if (j > l) std::swap(j, l);
    if (j < 1 || j > H_) return false;  // P and the residues enter linearly
    const int h = j - 1;
    if (l != j && l != 1 + H_ + h) return false;
    const int n = unknowns(), m = l == j ? 2 : 1, Q = 4;
    const U one = F.from(Rational(1));
    auto phi = [&](int mm, const U& r, int k) {
      const U kk = F.from(node(k));
      const U inv = one / (one + r * kk);
      U v = inv;
      for (int t = 0; t < mm; ++t) v = v * kk * inv;
      return v;
    };
    auto binom = [](int a, int b) {
      Rational c(1);
      for (int t = 1; t <= b; ++t) c = c * Rational(a - b + t) / Rational(t);
      return c;
    };
    out.assign(Y.rows(), F.from(Rational(0)));
    U dq = one;  // (r - r_t)^q over the box
    for (int q = 0; q < Q; ++q) {
      const U coef = F.from(binom(m + q, q) * Rational(q % 2 ? -1 : 1)) * dq;
      for (int i = 0; i < Y.rows(); ++i) {
        U s = F.from(Rational(0));
        for (int k = 0; k < n; ++k) s = s + Y(i, k) * phi(m + q, xt[1 + h], k);
        out[i] = out[i] + coef * s;
      }
      dq = dq * dX[1 + h];
    }
    // remainder: sum_k |Y_ik| |phi_{m+Q}(X_r)(k)| C(m+Q, Q) |dX_r|^Q
    const U cq = F.from(binom(m + Q, Q));
    for (int i = 0; i < Y.rows(); ++i) {
      U s = F.from(Rational(0));
      for (int k = 0; k < n; ++k) s = s + F.abs(Y(i, k)) * F.abs(phi(m + Q, X[1 + h], k));
      out[i] = out[i] + s * cq * dq;  // dq is a ball centred at 0
    }
    if (l == j)
      for (auto& v : out) v = F.from(Rational(2)) * X[1 + H_ + h] * v;
    else
      for (auto& v : out) v = -v;
    return true;
  }
  // prod_{m != k} (t_k - t_m) over the 2H+1 nodes: at the nodes 0..2H it is
  // (-1)^(2H-k) k! (2H-k)!, formed in integers while that fits.
  Rational node_product(int k) const {
    const int n = 2 * H_ + 1;
    if (t_.empty() && n <= 20) {
      long w = 1;
      for (int m = 1; m <= k; ++m) w *= m;
      for (int m = 1; m <= n - 1 - k; ++m) w *= -m;
      return Rational(w);
    }
    Rational w(1);
    for (int m = 0; m < n; ++m)
      if (m != k) w *= node(k) - node(m);
    return w;
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
    return PairSystem<U>(std::move(g), H_, t_);
  }

 private:
  std::vector<T> f_;
  int H_;
  std::vector<Rational> t_;  // the nodes; empty: 0..K-1
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
  // lambda = Delta^{-1} (b - b_1) of final tokens given to remember(): the
  // O(d^2) rational part of f0, computed once per token instead of once per
  // pair (f0 then costs O(d) field operations; its value is unchanged).
  // Entries are valid for this DeltaInv and b1 only: remember after setting them.
  std::map<QVec, QVec> lambdas;
  ClearedQMat cleared;  // DeltaInv over one denominator, built by the first remember()
  void remember(const QVec& b) {
    if (lambdas.find(b) != lambdas.end()) return;
    if (cleared.empty()) cleared = ClearedQMat(DeltaInv);
    lambdas.emplace(b, cleared.apply(b - b1));
  }
  // the remembered lambdas as field numbers (fld.from of each entry, made
  // once per token by convert() instead of once per pair; the same numbers
  // at the same working precision)
  std::map<QVec, std::vector<T>> lambda_values;
  // f(0) of every remembered token, formed by convert() once per token (many
  // pairs share a final token); f0() returns the kept number, the same
  // operations on the same numbers. convert() after vdelta and fb1 are set.
  std::map<QVec, T> f0_kept;
  template <class F>
  void convert(const F& fld) {
    for (const auto& [b, lambda] : lambdas) {
      std::vector<T> v;
      v.reserve(lambda.size());
      for (const Rational& x : lambda) v.push_back(fld.from(x));
      lambda_values.insert_or_assign(b, std::move(v));
    }
    f0_kept.clear();
    for (const auto& e : lambdas) f0_kept.insert_or_assign(e.first, f0(fld, e.first));
  }
  template <class F>
  T f0(const F& fld, const QVec& b) const {
    if (const auto kept = f0_kept.find(b); kept != f0_kept.end()) return kept->second;
    const auto it = lambdas.find(b);
    QVec fresh;
    if (it == lambdas.end()) fresh = cleared.empty() ? matvec(DeltaInv, b - b1) : cleared.apply(b - b1);
    const QVec& lambda = it == lambdas.end() ? fresh : it->second;
    const auto kept = it == lambdas.end() ? lambda_values.end() : lambda_values.find(b);
    T s = fb1;
    for (size_t i = 0; i < lambda.size(); ++i)
      if (!lambda[i].is_zero()) s = s + (kept != lambda_values.end() ? kept->second[i] : fld.from(lambda[i])) * vdelta[i];
    return s;
  }
};

}  // namespace mhaq
