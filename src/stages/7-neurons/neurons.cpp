// Stage 7 (transformer): the sign system and the canonical neurons.
#include "mhaq/stages/7-neurons/neurons.hpp"

#include "mhaq/arith/all_fields.hpp"

#include <string>

namespace mhaq {

namespace {
// No sign vector fits: the path merged two neurons into one jump. Each
// hyperplane is crossed once (proofs/15), so their hyperplanes met the path
// closer together than its probes resolve, or coincide; the learner tells
// which (transformer_learner.cpp, merged_neurons).
[[noreturn]] void throw_unresolved_crossings() {
  throw_degenerate(std::string(kUnresolvedCrossings));
}
}  // namespace

template <ArithField F>
std::vector<LearnedNeuron<typename F::value_type>> neurons_from_path(const F& fld, const PathSearch<typename F::value_type>& path,
                                                                     const QVec& p, int d) {
  using T = typename F::value_type;
  const int K = static_cast<int>(path.crossings.size());
  std::vector<LearnedNeuron<T>> out;
  if (K == 0) return out;
  const std::vector<T> vs = path.start.flat(), ve = path.end.flat();
  const int n = static_cast<int>(vs.size());
  const int H = n / d;
  // the sign system by its normal equations: (J^T J) sigma = J^T (E(p) + E(-p))
  Mat<T> A(K, K), b(K, 1), sigma;
  for (int i = 0; i < K; ++i) {
    T s = fld.from(Rational(0));
    for (int c = 0; c < n; ++c) s = s + path.crossings[i].jump[c] * (vs[c] + ve[c]);
    b(i, 0) = s;
    for (int j = 0; j < K; ++j) {
      T g = fld.from(Rational(0));
      for (int c = 0; c < n; ++c) g = g + path.crossings[i].jump[c] * path.crossings[j].jump[c];
      A(i, j) = g;
    }
  }
  const Truth solved = fld.solve(sigma, A, b);
  if (solved == Truth::unknown) throw_unable("cannot decide whether the path's jumps are linearly independent at this precision");
  if (solved == Truth::no) {
    // Dependent jumps (more neurons than H d, or a chance relation): sigma is
    // still unique when no signed subset of the jumps sums to zero; every
    // sign vector is tried against the system itself (proofs/15).
    if (K > 14)
      throw_not_identifiable("the jumps along the path are linearly dependent and too many to enumerate their signs "
                             "(condition: the neurons' jumps u_j U_{.,j} are linearly independent)");
    std::vector<long> fits;  // sign vectors the system does not exclude
    int certain = 0;         // of them, those it certifies
    for (long mask = 0; mask < (1L << K); ++mask) {
      Truth all = Truth::yes;
      for (int c = 0; c < n && all != Truth::no; ++c) {
        T s = fld.from(Rational(0)), scale = fld.abs(vs[c] + ve[c]);
        for (int j = 0; j < K; ++j) {
          s = (mask >> j) & 1 ? s + path.crossings[j].jump[c] : s - path.crossings[j].jump[c];
          scale = scale + fld.abs(path.crossings[j].jump[c]);
        }
        all = truth_and(all, fld.equal(s, vs[c] + ve[c], scale));
      }
      if (all != Truth::no) fits.push_back(mask);
      certain += all == Truth::yes;
    }
    if (fits.empty()) throw_unresolved_crossings();
    if (certain > 1)
      throw_not_identifiable("the jumps along the path are linearly dependent and several sign choices fit E(p) + E(-p) "
                             "(condition: no signed subset of the jumps u_j U_{.,j} sums to zero)");
    if (fits.size() > 1) throw_unable("cannot decide the signs of the path's dependent jumps at this precision");
    sigma = Mat<T>(K, 1);
    for (int j = 0; j < K; ++j) sigma(j, 0) = (fits[0] >> j) & 1 ? fld.from(Rational(1)) : fld.from(Rational(-1));
  }
  // Each sigma_j is +1 or -1 (proofs/15), so excluding one value decides the
  // other: a ball that excludes -1 but not +1 is +1; the system check below
  // then confirms the whole solution.
  const T one = fld.from(Rational(1));
  std::vector<bool> on(K);  // sigma_j = +1: the neuron switches on along the path (inactive at p)
  for (int j = 0; j < K; ++j) {
    const Truth plus = fld.equal(sigma(j, 0), one), minus = fld.equal(sigma(j, 0), -one);
    if (plus == Truth::no && minus == Truth::no) throw_unresolved_crossings();
    if (plus != Truth::no && minus != Truth::no)
      throw_unable("cannot decide the sign of a neuron's jump at this precision");
    on[j] = minus == Truth::no;
    sigma(j, 0) = on[j] ? one : -one;
  }
  // the solution must satisfy the system itself (not only in the least-squares sense)
  for (int c = 0; c < n; ++c) {
    T s = fld.from(Rational(0)), scale = fld.abs(vs[c] + ve[c]);
    for (int j = 0; j < K; ++j) {
      s = s + sigma(j, 0) * path.crossings[j].jump[c];
      scale = scale + fld.abs(path.crossings[j].jump[c]);
    }
    if (fld.equal(s, vs[c] + ve[c], scale) == Truth::no) throw_unresolved_crossings();
  }
  for (int j = 0; j < K; ++j) {
    // w = sigma_j jump_j = u_j U_{.,j}; ubar-direction sum_h w_h = u_j ubar_j
    std::vector<T> w(n);
    for (int c = 0; c < n; ++c) w[c] = on[j] ? path.crossings[j].jump[c] : -path.crossings[j].jump[c];
    T side = fld.from(Rational(0));  // (sum_h w_h)^T p = u_j ubar_j^T p
    for (int h = 0; h < H; ++h)
      for (int a = 0; a < d; ++a)
        if (!p[a].is_zero()) side = side + w[h * d + a] * fld.from(p[a]);
    // active at p (switches off): ubar_j^T p > 0, so sign(u_j) = sign(side); inactive: the opposite
    const Truth pos = fld.is_positive(side);
    if (pos == Truth::no && fld.is_zero(side) == Truth::yes)
      throw_not_identifiable("a jump's hyperplane normal sum_h w_h is orthogonal to the path's start: the neuron's pre-activation does not "
                             "follow the final token (condition ubar_j = sum_h U_{h,j} != 0 fails)");
    if (pos == Truth::unknown || (pos == Truth::no && fld.is_zero(side) != Truth::no))
      throw_unable("cannot decide on which side of a neuron's hyperplane the path starts");
    const bool u_positive = (pos == Truth::yes) != on[j];
    LearnedNeuron<T> nr;
    nr.u = u_positive ? one : -one;
    nr.U.assign(H, std::vector<T>(d));
    for (int h = 0; h < H; ++h)
      for (int a = 0; a < d; ++a) nr.U[h][a] = u_positive ? w[h * d + a] : -w[h * d + a];
    out.push_back(std::move(nr));
  }
  return out;
}

template <ArithField F>
typename F::value_type evaluate_learned_transformer(const F& fld, const std::vector<Mat<typename F::value_type>>& W,
                                                    const std::vector<LearnedNeuron<typename F::value_type>>& neurons, const Query& q) {
  using T = typename F::value_type;
  const T zero = fld.from(Rational(0));
  const QVec& xN = q.back().token;
  const int d = static_cast<int>(xN.size()), H = static_cast<int>(W.size());
  std::vector<std::vector<T>> z(H, std::vector<T>(d, zero));
  for (int h = 0; h < H; ++h) {
    std::vector<T> Wx(d, zero);
    for (int a = 0; a < d; ++a)
      for (int b = 0; b < d; ++b)
        if (!xN[b].is_zero()) Wx[a] = Wx[a] + W[h](a, b) * fld.from(xN[b]);
    auto score = [&](const QVec& x) {
      T s = zero;
      for (int a = 0; a < d; ++a)
        if (!x[a].is_zero()) s = s + fld.from(x[a]) * Wx[a];
      return s;
    };
    const T sN = score(xN);
    T den = zero;
    std::vector<T> num(d, zero);
    for (const auto& run : q) {
      const T w = fld.exp(score(run.token) - sN) * fld.from(Rational(run.count));
      den = den + w;
      for (int a = 0; a < d; ++a)
        if (!run.token[a].is_zero()) num[a] = num[a] + w * fld.from(run.token[a]);
    }
    for (int a = 0; a < d; ++a) z[h][a] = num[a] / den;
  }
  T out = zero;
  for (const auto& n : neurons) {
    T g = zero;
    for (int h = 0; h < H; ++h)
      for (int a = 0; a < d; ++a) g = g + n.U[h][a] * z[h][a];
    out = out + n.u * fld.relu(g);
  }
  return out;
}

#define MHAQ_INSTANTIATE(F)                                                                                                  \
  template std::vector<LearnedNeuron<F::value_type>> neurons_from_path<F>(const F&, const PathSearch<F::value_type>&, const QVec&, \
                                                                          int);                                                  \
  template F::value_type evaluate_learned_transformer<F>(const F&, const std::vector<Mat<F::value_type>>&,                         \
                                                         const std::vector<LearnedNeuron<F::value_type>>&, const Query&);
MHAQ_FOR_EACH_TRANSFORMER_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
