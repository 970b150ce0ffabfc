// The machine check of proofs/17-baselines.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// The prior-work baselines: the two-token sigmoid identity, the isolation of
// a head inside its own orthogonal subspace, and the lift back to R^d.
void check_baselines(const ProveOptions& o, bool broken, LemmaCheck& out) {
  std::ostringstream det;
  Rng rng(o.seed ^ 0x1414);
  // (a) f([u + e_j, e_j]) = v_j + sigmoid(u^T W e_j) v^T u, for one head (exact, in Q(tau))
  const long n = scaled(o, 100);
  for (long t = 0; t < n; ++t) {
    const int d = static_cast<int>(rng.uniform_int(1, 4));
    const Model m = random_model(rng, d, 1);
    const long L = m.w_denominator();
    const QVec u = rand_vec(rng, d, 3);
    const int j = static_cast<int>(rng.uniform_int(0, d - 1));
    QVec e(d);
    e[j] = Rational(1);
    const QTau f = evaluate_exact(m, Query{Run{u + e, 1}, Run{e, 1}}, L);
    const Rational s = dot(u, matvec(m.heads[0].W, e)) * Rational(L);  // u^T W e_j, times L
    const QTau r = QTauAccess::tau_pow((broken ? -s : s).to_long());
    const QTau want = QTau(m.heads[0].v[j]) + r / (QTau(Rational(1)) + r) * QTau(dot(m.heads[0].v, u));
    require(QTauAccess::equal(f, want), "two-token identity fails at case " + std::to_string(t));
    ++out.cases;
  }
  det << n << " exact two-token identities (d=1..4); ";
  // (b) isolation and (c) lift: on orthogonal-subspace models, a query inside
  // head h's subspace answers as head h alone, and W_h = P G^-1 (P^T W_h P) G^-1 P^T
  const long n2 = scaled(o, 40);
  for (long t = 0; t < n2; ++t) {
    GenerateOptions g;
    g.heads = static_cast<int>(rng.uniform_int(2, 3));
    g.d = g.heads + static_cast<int>(rng.uniform_int(0, 2));
    g.seed = rng.next();
    std::vector<QMat> bases;
    const Model m = generate_orthogonal_model(g, bases);
    const long L = m.w_denominator();
    const int h = static_cast<int>(rng.uniform_int(0, g.heads - 1));
    const QMat& P = bases[h];
    const int k = P.cols();
    const QVec x1 = matvec(P, rand_vec(rng, k, 2)), x2 = matvec(P, rand_vec(rng, k, 2));
    Model alone{m.d, {m.heads[h]}};
    const Query q{Run{x1, 2}, Run{x2, 1}};
    require(QTauAccess::equal(evaluate_exact(m, q, L), evaluate_exact(alone, q, L)), "a query inside head " + std::to_string(h) + "'s subspace sees other heads");
    QMat G(k, k), Gi;
    for (int a = 0; a < k; ++a)
      for (int c = 0; c < k; ++c) G(a, c) = dot(P.col(a), P.col(c));
    require(inverse(G, Gi), "basis Gram matrix singular");
    QMat M(m.d, k);  // P G^-1 (broken: P G)
    for (int r = 0; r < m.d; ++r)
      for (int c = 0; c < k; ++c)
        for (int s = 0; s < k; ++s) M(r, c) = M(r, c) + P(r, s) * (broken ? G(s, c) : Gi(s, c));
    const QMat& W = m.heads[h].W;
    QMat W2(m.d, m.d);
    for (int r = 0; r < m.d; ++r)
      for (int c = 0; c < m.d; ++c)
        for (int a = 0; a < k; ++a)
          for (int b = 0; b < k; ++b) W2(r, c) = W2(r, c) + M(r, a) * dot(P.col(a), matvec(W, P.col(b))) * M(c, b);
    require(W2 == W, "the lift P G^-1 A G^-1 P^T does not return W_h at case " + std::to_string(t));
    out.cases += 2;
  }
  det << n2 << " orthogonal-subspace models (H=2,3): exact isolation of a head inside its subspace and the exact lift of W_h";
  out.detail = det.str();
}

}  // namespace mhaq::proof
