// The machine check of proofs/19-known-residue-poles.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// 19: with the residues known, 2H-2 values determine the poles (H >= 3): the
// common roots of R_h(t) = Res_k(Q_t, N_t + c_h k Q_t') over C are exactly
// t = 0 (where q_H vanishes) and the truth t* = prod r_h. Broken: H = 2 with
// s = 2, where a second common root exists.
void check_known_residues(const ProveOptions& o, bool broken, LemmaCheck& out) {
  std::ostringstream det;
  Rng rng(o.seed ^ 0x1919);
  // (a) the pointwise elimination, symbolically: for every t,
  //     S_h = Qb M_t - (Nb + c k Qb') Q_t,  M_t = N_t + c k Q_t',
  //     so at a root rho of Q_t, S_h(rho) = Qb(rho) M_t(rho)
  for (int H = 2; H <= 4; ++H) {
    // variables: k, T, c, and the coefficients of Na, Nb (H each) and Qa, Qb (H+1 each)
    const slong nv = 3 + 2 * H + 2 * (H + 1);
    QCtx ctx(nv);
    const QP k = QP::gen(ctx, 0), T = QP::gen(ctx, 1), cc = QP::gen(ctx, 2);
    auto poly = [&](slong first, int len) {
      QP p(ctx, Rational(0));
      for (int i = 0; i < len; ++i) p = p + QP::gen(ctx, first + i) * k.pow(i);
      return p;
    };
    const QP Na = poly(3, H), Nb = poly(3 + H, H), Qa = poly(3 + 2 * H, H + 1), Qb = poly(3 + 3 * H + 1, H + 1);
    const QP Qt = Qa + T * Qb, Mt = Na + T * Nb + cc * k * Qt.deriv(0);
    const QP S = Na * Qb - Nb * Qa + cc * k * (Qa.deriv(0) * Qb - Qb.deriv(0) * Qa);
    require(S == Qb * Mt - (Nb + cc * k * Qb.deriv(0)) * Qt, "the pointwise elimination identity fails for H = " + std::to_string(H));
    ++out.cases;
  }
  det << "symbolic: S_h = Qb M_t - (Nb + c k Qb') Q_t for H = 2, 3, 4; ";
  // (b) uniqueness over C on random exact instances
  const long n = scaled(o, 12);
  long singular = 0;
  for (int H = broken ? 2 : 3; H <= (broken ? 2 : 5); ++H)
    for (long t = 0; t < (broken ? 3 * n : n); ++t) {
      std::vector<Rational> r, c;
      draw_pair(rng, H, r, c);
      QCtx ctx(2);  // k, t
      QP N(ctx), Q(ctx);
      if (!family_over_q(r, c, 1, ctx, N, Q)) {
        ++singular;
        continue;
      }
      const QP k = QP::gen(ctx, 0), tv = QP::gen(ctx, 1);
      QP G(ctx, Rational(0));
      for (int h = 0; h < H; ++h) {
        const QP R = QP::resultant(Q, N + c[h] * (k * Q.deriv(0)), 0);
        require(!R.is_zero() && R.degree(1) <= 2 * H, "R_h is zero or of degree above 2H");
        G = h == 0 ? R : QP::gcd(G, R);
      }
      Rational tstar(1);
      for (const auto& x : r) tstar *= x;
      QP q(ctx);
      while (G.divides(tv, q)) G = q;  // the root t = 0, where the family's degree drops
      require(G.monic() == tv - QP(ctx, tstar),
              "H=" + std::to_string(H) + " case " + std::to_string(t) + ": the common roots of the R_h are not only 0 and t* = prod r_h (gcd of degree " +
                  std::to_string(G.degree(1)) + " once t is divided out): the values do not determine the poles");
      ++out.cases;
    }
  det << out.cases - 3 << " random exact pairs (H = 3, 4, 5, s = 2H-2): gcd of the R_h = t^a (t - t*) over Q, so the known residues fix the poles"
      << " (" << singular << " singular family systems skipped); ";
  // (c) the running stage in Q(tau): exact equality of every pole
  const Field<QTau> F(8);
  for (long t = 0; t < n; ++t) {
    const int H = 1 + static_cast<int>(t % 5);
    std::vector<Rational> r, c;
    draw_pair(rng, H, r, c);
    std::vector<long> e;
    while (static_cast<int>(e.size()) < H) {
      const long x = rng.uniform_int(-30, 30);
      if (std::find(e.begin(), e.end(), x) == e.end()) e.push_back(x);
    }
    std::vector<QTau> f, cq;
    for (int kk = 0; kk <= compact_samples(H); ++kk) {
      QTau v(Rational(1, 3));
      for (int h = 0; h < H; ++h) v += QTau(c[h]) / (QTau(Rational(1)) + QTauAccess::tau_pow(e[h]) * QTau(Rational(kk)));
      f.push_back(v);
    }
    for (const auto& x : c) cq.push_back(QTau(x));
    const PairFit<QTau> fit = fit_known_residues(F, f, cq);
    for (int h = 0; h < H; ++h) require(QTauAccess::equal(fit.r[h], QTauAccess::tau_pow(e[h])), "fit_known_residues misses a pole exactly");
    ++out.cases;
  }
  det << n << " exact fit_known_residues runs in Q(tau) (H = 1..5), every pole equal";
  out.detail = det.str();
}

}  // namespace mhaq::proof
