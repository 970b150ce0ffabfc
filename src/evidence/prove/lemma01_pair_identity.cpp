// The machine check of proofs/01-pair-identity.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// Pair identity f(k) = P + sum_h c_h / (1 + r_h k).
void check_pair_identity(const ProveOptions& o, bool broken, LemmaCheck& out) {
  std::ostringstream det;
  // (a) symbolic, H = 1..3. Variables: k, then per head E_a, E_b (the
  // exponentials e^{s_a}, e^{s_b}), V_a = v_h^T a, V_b = v_h^T b.
  for (int H = 1; H <= 3; ++H) {
    Ctx c(1 + 4 * H);
    const MP k = MP::gen(c, 0);
    std::vector<MP> Ea, Eb, Va, Vb, den;
    for (int h = 0; h < H; ++h) {
      Ea.push_back(MP::gen(c, 1 + 4 * h));
      Eb.push_back(MP::gen(c, 2 + 4 * h));
      Va.push_back(MP::gen(c, 3 + 4 * h));
      Vb.push_back(MP::gen(c, 4 + 4 * h));
      // softmax over [a x k, b]: weights k E_a (the k copies) and E_b (the final token itself)
      den.push_back(k * Ea[h] + Eb[h]);
    }
    auto prod_except = [&](int skip) {
      MP p(c, 1);
      for (int g = 0; g < H; ++g)
        if (g != skip) p = p * den[g];
      return p;
    };
    // left: sum_h (k E_a V_a + E_b V_b) / den_h, over the common denominator
    MP lhs(c, 0), P(c, 0), rhs(c, 0);
    for (int h = 0; h < H; ++h) {
      lhs = lhs + (k * Ea[h] * Va[h] + Eb[h] * Vb[h]) * prod_except(h);
      P = P + Va[h];
    }
    // right: P + sum c_h / (1 + r_h k), r_h = E_a / E_b, so 1/(1 + r_h k) = E_b / den_h
    rhs = P * prod_except(-1);
    for (int h = 0; h < H; ++h) {
      const MP ch = broken ? Va[h] - Vb[h] : Vb[h] - Va[h];
      rhs = rhs + ch * Eb[h] * prod_except(h);
    }
    require(lhs == rhs, "symbolic identity fails for H=" + std::to_string(H));
    ++out.cases;
  }
  det << "symbolic identity in Z[k, e^{s_a}, e^{s_b}, v^T a, v^T b] for H=1,2,3; ";
  // (b) exact randomized, through the real oracle code (evaluate_exact).
  Rng rng(o.seed ^ 0x101);
  const long n = scaled(o, 200);
  for (long t = 0; t < n; ++t) {
    const int d = 1 + static_cast<int>(rng.uniform_int(1, 3)), H = static_cast<int>(rng.uniform_int(1, 3));
    const Model m = random_model(rng, d, H);
    const long L = m.w_denominator();
    const QVec a = rand_vec(rng, d, 2), b = rand_vec(rng, d, 2);
    const long k = rng.uniform_int(0, 6);
    const QTau f = evaluate_exact(m, pair_query(a, k, b), L);
    QTau want(Rational(0));
    for (const auto& h : m.heads) {
      want += QTau(dot(h.v, a));
      const Rational s = dot(a - b, matvec(h.W, b)) * Rational(L);  // (a-b)^T W b, times L
      const QTau r = QTauAccess::tau_pow((broken ? -s : s).to_long());
      const Rational ch = dot(h.v, b - a);
      want += QTau(ch) / (QTau(Rational(1)) + r * QTau(Rational(k)));
    }
    require(QTauAccess::equal(f, want), "oracle answer differs from P + sum c/(1+rk) at case " + std::to_string(t));
    ++out.cases;
  }
  det << n << " exact Q(tau) comparisons with evaluate_exact (d=2..4, H=1..3, k=0..6)";
  out.detail = det.str();
}

}  // namespace mhaq::proof
