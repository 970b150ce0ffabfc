// The machine check of proofs/13-odd-part.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// 13: T(X) - T(-X) is the attention model with the same W_h and value vectors
// v_h = sum_j u_j U_{h,j} (ReLU(a) - ReLU(-a) = a; scores are even in X).
void check_odd_part(const ProveOptions& o, bool broken, LemmaCheck& out) {
  Rng rng(o.seed ^ 0x1313);
  const long n = scaled(o, 60);
  for (long t = 0; t < n; ++t) {
    const int d = static_cast<int>(rng.uniform_int(1, 3)), H = static_cast<int>(rng.uniform_int(1, 3)), m = static_cast<int>(rng.uniform_int(1, 4));
    const TransformerModel T = random_transformer(rng, d, H, m, true);
    Model A;
    A.d = d;
    for (int h = 0; h < T.heads(); ++h) {
      HeadQ hq{T.W[h], QVec(d)};
      for (int j = 0; j < T.neurons(); ++j)
        for (int a = 0; a < d; ++a) hq.v[a] += (broken ? Rational(1) : T.u[j]) * T.U[h][j][a];
      A.heads.push_back(hq);
    }
    const long L = T.w_denominator();
    for (int k = 0; k < 4; ++k) {
      const Query q = random_query(rng, d, 2);
      const QTau odd = evaluate_transformer_exact(T, q, L) - evaluate_transformer_exact(T, negate_query(q), L);
      require(QTauAccess::equal(odd, evaluate_exact(A, q, L)), "T(X) - T(-X) differs from the attention model with v_h = sum_j u_j U_{h,j}");
    }
    ++out.cases;
  }
  out.detail = std::to_string(out.cases) + " random transformers (d <= 3, H <= 3, m <= 4, shared W, zero and parallel neurons) x 4 sequences, exact in Q(tau)";
}

}  // namespace mhaq::proof
