// The machine check of proofs/34-placed-poles.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// (a) [a x k, b x m] answers P + sum_h c_h / (1 + r_h k / m);
// (b) the placed offset delta = M G^{-1} t + (z - M G^{-1} M^T z), with
//     M = [W_1 b .. W_H b] and G = M^T M, has delta^T W_h b = t_h exactly.
void check_placed_poles(const ProveOptions& o, bool broken, LemmaCheck& out) {
  std::ostringstream det;
  Rng rng(o.seed ^ 0x333);
  const long n = scaled(o, 120);
  for (long t = 0; t < n; ++t) {
    const int d = 1 + static_cast<int>(rng.uniform_int(1, 3)), H = static_cast<int>(rng.uniform_int(1, 3));
    const Model m = random_model(rng, d, H);
    const long L = m.w_denominator();
    const QVec a = rand_vec(rng, d, 2), b = rand_vec(rng, d, 2);
    const long k = rng.uniform_int(0, 6), reps = rng.uniform_int(1, 5);
    const QTau f = evaluate_exact(m, Query{Run{a, k}, Run{b, reps}}, L);
    // broken: the final token forgotten among the copies of b (t = k / (m + 1))
    const Rational ratio(k, static_cast<unsigned long>(broken ? reps + 1 : reps));
    QTau want(Rational(0));
    for (const auto& h : m.heads) {
      want += QTau(dot(h.v, a));
      const Rational s = dot(a - b, matvec(h.W, b)) * Rational(L);
      const QTau r = QTauAccess::tau_pow(s.to_long());
      want += QTau(dot(h.v, b - a)) / (QTau(Rational(1)) + r * QTau(ratio));
    }
    require(QTauAccess::equal(f, want),
            "answer to [a x " + std::to_string(k) + ", b x " + std::to_string(reps) + "] differs from f(k/m) at case " + std::to_string(t));
    ++out.cases;
  }
  det << n
      << " exact Q(tau) comparisons of [a x k, b x m] with f(k/m) (d=2..4, "
         "H=1..3, k=0..6, m=1..5); ";
  long placed = 0;
  for (long t = 0; t < n; ++t) {
    const int d = 2 + static_cast<int>(rng.uniform_int(0, 3));
    const int H = 1 + static_cast<int>(rng.uniform_int(0, d - 1));
    const Model m = random_model(rng, d, H);
    const QVec b = rand_vec(rng, d, 3);
    QMat M(d, H), G(H, H), Gi;
    for (int h = 0; h < H; ++h) {
      const QVec w = matvec(m.heads[h].W, b);
      for (int r = 0; r < d; ++r) M(r, h) = w[r];
    }
    for (int x = 0; x < H; ++x)
      for (int y = 0; y < H; ++y)
        for (int r = 0; r < d; ++r) G(x, y) += M(r, x) * M(r, y);
    if (!inverse(G, Gi)) continue;  // dependent W_h b: the lemma's hypothesis fails
    QVec tg(H), z = rand_vec(rng, d, 3), y(H), u(H), mz(H);
    for (int h = 0; h < H; ++h) tg[h] = rand_q(rng, 20, 4);
    for (int x = 0; x < H; ++x)
      for (int r = 0; r < d; ++r) mz[x] += M(r, x) * z[r];
    for (int x = 0; x < H; ++x)
      for (int c = 0; c < H; ++c) {
        y[x] += Gi(x, c) * tg[c];
        u[x] += Gi(x, c) * mz[c];
      }
    QVec delta(d);
    for (int r = 0; r < d; ++r) {
      Rational lin(0), proj(0);
      for (int x = 0; x < H; ++x) {
        lin += M(r, x) * y[x];
        proj += M(r, x) * u[x];
      }
      // broken: z added without removing its part along the W_h b
      delta[r] = lin + (broken ? z[r] : z[r] - proj);
    }
    for (int h = 0; h < H; ++h)
      require(dot(delta, matvec(m.heads[h].W, b)) == tg[h],
              "placed offset misses its target for head " + std::to_string(h + 1) + " at case " + std::to_string(t));
    ++placed;
    ++out.cases;
  }
  require(placed > n / 2, "too few placements with independent W_h b to be a check");
  det << placed << " exact placements delta^T W_h b = t_h in Q (d=2..5, H <= d)";
  out.detail = det.str();
}

}  // namespace mhaq::proof
