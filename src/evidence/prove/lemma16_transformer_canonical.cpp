// The machine check of proofs/16-transformer-canonical.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// 16: the transformer's canonical form preserves T and is canonical.
void check_transformer_canonical(const ProveOptions& o, bool broken, LemmaCheck& out) {
  Rng rng(o.seed ^ 0x1616);
  const long n = scaled(o, 60);
  for (long t = 0; t < n; ++t) {
    const int d = static_cast<int>(rng.uniform_int(1, 3)), H = static_cast<int>(rng.uniform_int(1, 3)), m = static_cast<int>(rng.uniform_int(1, 4));
    TransformerModel T = random_transformer(rng, d, H, m, true);
    if (t % 2 == 0)
      for (auto& u : T.u) u *= Rational(3, 2);  // readouts of size != 1
    TransformerModel pre = T;
    if (broken)  // u_j -> sign(u_j) without scaling U_{.,j} by |u_j|
      for (auto& u : pre.u) u = Rational(u.sign());
    const TransformerModel c = pre.canonical();
    for (const auto& u : c.u) require(u == Rational(1) || u == Rational(-1), "canonical readout not +-1");
    for (int h = 0; h < c.heads(); ++h)
      for (int g = h + 1; g < c.heads(); ++g) require(!(c.W[h] == c.W[g]), "canonical form keeps a repeated W");
    for (int j = 0; j < c.neurons(); ++j) {
      const QVec vj = c.neuron_vector(j);
      bool zero = true;
      for (const auto& x : vj) zero = zero && x.is_zero();
      require(!zero, "canonical form keeps a zero neuron");
    }
    const long L = T.w_denominator();
    for (int k = 0; k < 5; ++k) {
      const Query q = random_query(rng, d, 2);
      require(QTauAccess::equal(evaluate_transformer_exact(T, q, L), evaluate_transformer_exact(c, q, L)), "T changes under canonicalisation");
    }
    require(transformer_equal_canonical(c, c.canonical()), "canonical form is not idempotent");
    ++out.cases;
  }
  out.detail = std::to_string(out.cases) + " random transformers (shared W, zero and parallel neurons, |u| != 1) x 5 sequences, exact in Q(tau)";
}

}  // namespace mhaq::proof
