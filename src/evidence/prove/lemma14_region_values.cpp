// The machine check of proofs/14-region-values.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// 14: on a pair [(x + delta) x k, x] whose neurons keep their sign at x for
// every k checked, f(k) - f(0) = sum_h alpha_h(k) e_h(S)^T delta with
// alpha_h(k) = k r_h / (1 + k r_h), r_h = e^{delta^T W_h x}, S the neurons active at x.
void check_region_values(const ProveOptions& o, bool broken, LemmaCheck& out) {
  Rng rng(o.seed ^ 0x1414);
  const long n = scaled(o, 40);
  long stable = 0, tried = 0;
  while (stable < n && tried < 20 * n) {
    ++tried;
    const int d = static_cast<int>(rng.uniform_int(1, 3)), H = static_cast<int>(rng.uniform_int(1, 2)), m = static_cast<int>(rng.uniform_int(1, 4));
    const TransformerModel T = random_transformer(rng, d, H, m, false);
    const long L = T.w_denominator();
    const Field<QTau> F(L);
    QVec x = rand_vec(rng, d, 2);
    for (auto& c : x) c *= Rational(3);
    const QVec delta = rand_vec(rng, d, 1);
    // the active set at x, and the sign of every pre-activation at k = 1..3
    std::vector<bool> act(T.neurons());
    bool ok = true;
    for (int j = 0; j < T.neurons(); ++j) {
      const Rational g = dot(T.ubar(j), x);
      ok = ok && !g.is_zero();
      act[j] = g.sign() > 0;
    }
    if (!ok) continue;
    std::vector<QTau> r(T.heads());
    for (int h = 0; h < T.heads(); ++h) {
      QVec Wx(d);
      for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b) Wx[a] += T.W[h](a, b) * x[b];
      r[h] = F.exp(F.from(dot(delta, Wx)));
    }
    const QTau f0 = evaluate_transformer_exact(T, {Run{x, 1}}, L);
    std::vector<QTau> want;
    for (long k = 1; k <= 3 && ok; ++k) {
      QTau sum = F.from(Rational(0));
      std::vector<QTau> alpha(T.heads());
      for (int h = 0; h < T.heads(); ++h) alpha[h] = F.from(Rational(k)) * r[h] / (F.from(Rational(1)) + F.from(Rational(k)) * r[h]);
      for (int j = 0; j < T.neurons() && ok; ++j) {
        QTau g = F.from(dot(T.ubar(j), x));
        for (int h = 0; h < T.heads(); ++h) g = g + alpha[h] * F.from(dot(T.U[h][j], delta));
        ok = F.is_positive(g) == (act[j] ? Truth::yes : Truth::no) && F.is_zero(g) == Truth::no;
        if (act[j] || broken)
          for (int h = 0; h < T.heads(); ++h) sum = sum + alpha[h] * F.from(T.u[j] * dot(T.U[h][j], delta));
      }
      want.push_back(sum);
    }
    if (!ok) continue;
    for (long k = 1; k <= 3; ++k) {
      const QTau fk = evaluate_transformer_exact(T, {Run{x + delta, k}, Run{x, 1}}, L);
      require(QTauAccess::equal(fk - f0, want[k - 1]), "f(k) - f(0) differs from sum_h alpha_h(k) e_h(S)^T delta on a sign-stable pair");
    }
    ++stable;
    ++out.cases;
  }
  require(stable == n, "too few sign-stable pairs drawn");
  out.detail = std::to_string(stable) + " sign-stable pairs (signs decided exactly at k = 1..3) x 3 samples, exact in Q(tau)";
}

}  // namespace mhaq::proof
