// The machine check of proofs/20-compact-limits.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// 20: what blocks further savings. (a) The closed form of the ratio to the
// floor: at most 1.5 for every d iff H <= 4, and for H = 5..8 iff d <= 9, 6,
// 5, 4. (b) s = H values do not determine H poles: at H = 2, s = 2, a second
// member of the family with two positive poles and the same residues fits on
// some instances. (c) s = 2H-1-m with m = 2: the eliminant of two R_h in the
// remaining parameter, and its degree.
void check_compact_limits(const ProveOptions& o, bool broken, LemmaCheck& out) {
  std::ostringstream det;
  long cells = 0;
  for (long d = 1; d <= 64; ++d)
    for (long H = 1; H <= compact_max_heads; ++H) {
      // C <= 1.5 H (d^2 + d)  <=>  2 C <= 3 H (d^2 + d)
      const bool within = 2 * compact_query_count(d, H) <= 3 * H * (d * d + d);
      const long dmax = H <= 4 ? 64 : H == 5 ? 9 : H == 6 ? 6 : H == 7 ? 5 : 4;
      const bool predicted = broken ? (H <= 5 || d <= dmax) : d <= dmax;
      require(within == predicted, "ratio closed form wrong at d=" + std::to_string(d) + " H=" + std::to_string(H));
      ++cells;
    }
  out.cases += cells;
  det << cells << " (d, H) cells (d <= 64): ratio <= 1.5 iff H <= 4, or d <= 9, 6, 5, 4 for H = 5..8; ";
  // (b) H = 2, s = 2: the common roots of R_1, R_2 besides 0 are t* and t2,
  // both rational (G = (t - t*)(t - t2) has rational coefficients). The
  // member Q_{t2} = t2 k^2 + q_1 k + 1 is a second model with the same
  // residues and limit, fitting the same values, when it has two distinct
  // negative roots (two positive poles): t2 > 0, q_1 > 0, q_1^2 > 4 t2.
  Rng rng(o.seed ^ 0x2020);
  const long n = scaled(o, 40);
  long second = 0, valid = 0, tried = 0;
  for (long t = 0; t < n; ++t) {
    std::vector<Rational> r, c;
    draw_pair(rng, 2, r, c);
    QCtx ctx(2);
    QP N(ctx), Q(ctx);
    if (!family_over_q(r, c, 1, ctx, N, Q)) continue;
    ++tried;
    const QP k = QP::gen(ctx, 0), tv = QP::gen(ctx, 1);
    QP G = QP::gcd(QP::resultant(Q, N + c[0] * (k * Q.deriv(0)), 0), QP::resultant(Q, N + c[1] * (k * Q.deriv(0)), 0));
    QP q(ctx);
    while (G.divides(tv, q)) G = q;
    Rational tstar = r[0] * r[1];
    QP lin(ctx);
    require(G.monic().divides(tv - QP(ctx, tstar), lin), "t* is not a common root at H = 2");
    if (lin.degree(1) != 1) continue;
    ++second;
    const Rational t2 = Rational(0) - lin.value({Rational(0), Rational(0)});  // lin = t - t2
    const QP Q2 = Q.at(1, t2);
    const Rational q1 = Q2.deriv(0).value({Rational(0), Rational(0)});
    if (t2.sign() > 0 && q1.sign() > 0 && q1 * q1 > Rational(4) * t2 && !(t2 == tstar)) ++valid;
  }
  out.cases += tried;
  require(valid > 0, "no instance with a second valid model at s = H = 2");
  det << tried << " H = 2 instances with s = 2: " << second << " have a second common value, " << valid
      << " of them a second valid model (two positive poles, the same residues): s = H does not determine the poles; ";
  // (c) m = 2 (s = 2H-3): the two-parameter family, R_h(t1, t2) of total
  // degree <= 2H, and the eliminant E(t1) = Res_t2(R_1, R_2), of degree up to
  // (2H)^2, that a univariate route would have to solve
  long emax = 0, emin = 1L << 30, spurious = 0, checked = 0, m2cases = 0;
  const long m2 = 2 * std::max(1L, o.multiplier);
  for (long t = 0; t < m2; ++t) {
    const int H = 4;
    std::vector<Rational> r, c;
    draw_pair(rng, H, r, c);
    QCtx ctx(3);  // k, t1 = q_H, t2 = q_{H-1}
    QP N(ctx), Q(ctx);
    if (!family_over_q(r, c, 2, ctx, N, Q)) continue;
    const QP k = QP::gen(ctx, 0), t1 = QP::gen(ctx, 1);
    std::vector<QP> R;
    for (int h = 0; h < H; ++h) R.push_back(QP::resultant(Q, N + c[h] * (k * Q.deriv(0)), 0));
    Rational tstar(1);
    for (const auto& x : r) tstar *= x;
    // eliminants of head 1 with each other head; their gcd holds every t1
    // that some common point (t1, t2) of all the R_h has
    QP G(ctx);
    for (int h = 1; h < H; ++h) {
      const QP E = QP::resultant(R[0], R[h], 2);
      require(!E.is_zero(), "an eliminant vanishes identically");
      require(E.value({Rational(0), tstar, Rational(0)}).is_zero(), "the truth t1* = prod r_h is not a root of an eliminant");
      const long de = E.degree(1);
      require(de <= 4L * H * H, "an eliminant's degree exceeds (2H)^2");
      emax = std::max(emax, de);
      emin = std::min(emin, de);
      G = h == 1 ? E : QP::gcd(G, E);
    }
    QP q(ctx);
    while (G.divides(t1, q)) G = q;
    // t1* is a simple common value; every other one is a double root of the
    // gcd, and (checked exactly where it is rational) a member whose Q has a
    // double root that N shares: H - 1 poles, no model, yet every R_h vanishes
    bool truth_simple = false;
    for (const auto& [fac, mult] : G.factors()) {
      if (fac.monic() == t1 - QP(ctx, tstar)) {
        truth_simple = mult == 1;
        continue;
      }
      require(mult >= 2, "a spurious common value of multiplicity 1");
      spurious += fac.degree(1);
      if (fac.degree(1) != 1) continue;
      const QP mono = fac.monic();  // t1 - a0
      const Rational a0 = Rational(0) - mono.value({Rational(0), Rational(0), Rational(0)});
      QP gb = QP::gcd(R[0].at(1, a0), R[1].at(1, a0)).monic();  // b - b0
      if (gb.degree(2) != 1) continue;
      const Rational b0 = Rational(0) - gb.value({Rational(0), Rational(0), Rational(0)});
      const QP Qm = Q.at(1, a0).at(2, b0), Nm = N.at(1, a0).at(2, b0);
      require(QP::gcd(QP::gcd(Qm, Qm.deriv(0)), Nm).degree(0) >= 1, "a spurious common value whose member has no double root shared by N");
      ++checked;
    }
    require(truth_simple, "t1* is not a simple common value");
    ++out.cases;
    ++m2cases;
  }
  det << "m = 2 at H = 4 (s = 5 = H + 1), " << m2cases << " cases: eliminants Res_t2(R_1, R_h) of degree " << emin << ".." << emax
      << " in t1 (Bezout bound (2H)^2 = 64; the one-parameter route solves degree 2H - 2 = 6); besides t1* (simple) their common values are "
      << spurious << " spurious ones, all double, " << checked
      << " of them rational and checked to be members with a double root shared by N (H - 1 poles, no model): s = H + 1 would fix the poles, "
         "at the price of this elimination and the exclusion of such members";
  out.detail = det.str();
}

}  // namespace mhaq::proof
