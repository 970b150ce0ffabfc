// The machine check of proofs/36-scaled-queries.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// 36: (1) a single token's answer is positively homogeneous, T([(c y) x k]) =
// c T([y x k]) for c > 0; (2) the pair [(c x + c delta) x k, c x] obeys the
// region-value identity of proofs/14 at x's active set S(x), with poles
// e^{c^2 delta^T W_h x} and offset c delta. The broken variant takes c < 0 in (1).
void check_scaled_queries(const ProveOptions& o, bool broken, LemmaCheck& out) {
  Rng rng(o.seed ^ 0x3636);
  const long n = scaled(o, 40);
  const std::vector<Rational> cs = {Rational(2), Rational(4), Rational(3, 2), Rational(1, 2), Rational(1, 4)};
  long singles = 0, pairs = 0, tried = 0;
  while (pairs < n && tried < 20 * n) {
    ++tried;
    const int d = static_cast<int>(rng.uniform_int(1, 3)), H = static_cast<int>(rng.uniform_int(1, 2)), m = static_cast<int>(rng.uniform_int(1, 4));
    const TransformerModel T = random_transformer(rng, d, H, m, tried % 3 == 0);
    // every exponent below has a denominator dividing 16 w_den (tokens are
    // integers times 1, 2, 4, 3/2, 1/2 or 1/4; a score is a product of two)
    const long L = 16 * T.w_denominator();
    const Field<QTau> F(L);
    // (1) single tokens
    const QVec y = rand_vec(rng, d, 2);
    const long k = rng.uniform_int(1, 3);
    const QTau base = evaluate_transformer_exact(T, {Run{y, k}}, L);
    for (const Rational& c0 : cs) {
      const Rational c = broken ? -c0 : c0;
      QVec cy = y;
      for (auto& v : cy) v *= c;
      const QTau got = evaluate_transformer_exact(T, {Run{cy, k}}, L);
      require(QTauAccess::equal(got, F.from(c) * base), "T([(c y) x k]) differs from c T([y x k]) at c = " + c.str());
      ++singles;
    }
    // (2) a pair moved to c x with offset c delta
    QVec x = rand_vec(rng, d, 2);
    for (auto& v : x) v *= Rational(3);
    const QVec delta = rand_vec(rng, d, 1);
    const Rational c = rng.uniform_int(0, 1) ? Rational(1, 2) : Rational(1, 4);
    std::vector<bool> act(T.neurons());
    bool ok = true;
    for (int j = 0; j < T.neurons(); ++j) {
      const Rational g = dot(T.ubar(j), x);
      ok = ok && !g.is_zero();
      act[j] = g.sign() > 0;
    }
    if (!ok) continue;
    QVec cx = x, cdelta = delta, cxd(d);
    for (auto& v : cx) v *= c;
    for (auto& v : cdelta) v *= c;
    for (int a = 0; a < d; ++a) cxd[a] = cx[a] + cdelta[a];
    std::vector<QTau> r(T.heads());
    for (int h = 0; h < T.heads(); ++h) {
      Rational e(0);
      for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b) e += delta[a] * T.W[h](a, b) * x[b];
      r[h] = F.exp(F.from(c * c * e));
    }
    const QTau f0 = evaluate_transformer_exact(T, {Run{cx, 1}}, L);
    std::vector<QTau> want;
    for (long kk = 1; kk <= 3 && ok; ++kk) {
      std::vector<QTau> alpha(T.heads());
      for (int h = 0; h < T.heads(); ++h) alpha[h] = F.from(Rational(kk)) * r[h] / (F.from(Rational(1)) + F.from(Rational(kk)) * r[h]);
      QTau sum = F.from(Rational(0));
      for (int j = 0; j < T.neurons() && ok; ++j) {
        // the pre-activation at the last token of the pair stays on x's side
        QTau g = F.from(dot(T.ubar(j), cx));
        for (int h = 0; h < T.heads(); ++h) g = g + alpha[h] * F.from(dot(T.U[h][j], cdelta));
        ok = F.is_positive(g) == (act[j] ? Truth::yes : Truth::no) && F.is_zero(g) == Truth::no;
        if (act[j])
          for (int h = 0; h < T.heads(); ++h) sum = sum + alpha[h] * F.from(T.u[j] * dot(T.U[h][j], cdelta));
      }
      want.push_back(sum);
    }
    if (!ok) continue;
    for (long kk = 1; kk <= 3; ++kk) {
      const QTau fk = evaluate_transformer_exact(T, {Run{cxd, kk}, Run{cx, 1}}, L);
      require(QTauAccess::equal(fk - f0, want[kk - 1]), "the pair at c x with offset c delta misses the region-value identity at S(x)");
    }
    ++pairs;
  }
  require(pairs == n, "too few sign-stable pairs drawn");
  out.cases = singles + pairs;
  out.detail = std::to_string(singles) +  " single-token answers at c in {2, 4, 3/2, 1/2, 1/4} and " + std::to_string(pairs) +
               " sign-stable pairs at c x (c = 1/2, 1/4) x 3 samples, exact in Q(tau)";
}

}  // namespace mhaq::proof
