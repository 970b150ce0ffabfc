// The machine check of proofs/02-interpolation.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

namespace {

// Symbolic, for H = 1, 2, 3: the determinant of the interpolation system, its
// factor list, and the recovery formulas for P, the poles and the residues.
void symbolic_interpolation(bool broken, LemmaCheck& out) {
  for (int H = 1; H <= 3; ++H) {
    // variables r_1..r_H, c_1..c_H, P
    Ctx c(2 * H + 1);
    std::vector<MP> r, cc;
    for (int h = 0; h < H; ++h) r.push_back(MP::gen(c, h));
    for (int h = 0; h < H; ++h) cc.push_back(MP::gen(c, H + h));
    const MP P = MP::gen(c, 2 * H);
    KPoly Q{MP(c, 1)};
    for (int h = 0; h < H; ++h) Q = kmul(Q, KPoly{MP(c, 1), r[h]});
    KPoly N = kscale(P, Q);
    for (int h = 0; h < H; ++h) {
      KPoly t{cc[h]};
      for (int g = 0; g < H; ++g)
        if (g != h) t = kmul(t, KPoly{MP(c, 1), r[g]});
      N = kadd(N, t);
    }
    while (N.size() < static_cast<size_t>(H + 1)) N.push_back(MP(c, 0));
    // Row k of the system, multiplied by Q(k) (> 0 for k >= 0):
    // [Q(k) k^m]_{m=0..H}, [-N(k) k^m]_{m=1..H}.
    const int n = 2 * H + 1;
    std::vector<std::vector<MP>> A(n, std::vector<MP>(n, MP(c, 0)));
    for (int k = 0; k < n; ++k) {
      const MP Qk = keval(Q, k), Nk = keval(N, k);
      long km = 1;
      for (int m = 0; m <= H; ++m) {
        A[k][m] = km * Qk;
        if (m >= 1) A[k][H + m] = -km * Nk;
        km *= k;
      }
    }
    const MP D = det_bareiss(A);
    // Expected: (-1)^{H(H-1)/2} * V * prod r_h * prod c_h * prod_{h<g} (r_h - r_g)^2,
    // V = prod_{0<=i<j<=2H} (j - i) the Vandermonde determinant of the nodes.
    long V = 1;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) V *= (j - i);
    const long sgn = ((H * (H - 1) / 2) % 2) ? -1 : 1;
    MP E(c, sgn * V);
    for (int h = 0; h < H; ++h) E = E * r[h] * cc[h];
    for (int h = 0; h < H; ++h)
      for (int g = h + 1; g < H; ++g) E = E * (r[h] - r[g]).pow(broken ? 1 : 2);
    require(D == E, "determinant of the H=" + std::to_string(H) + " system is not (-1)^{H(H-1)/2} V prod r prod c prod (r_h-r_g)^2");
    ++out.cases;
    // Factor it with FLINT and compare the factor list with the statement.
    fmpz_mpoly_factor_t fac;
    fmpz_mpoly_factor_init(fac, c.c);
    require(fmpz_mpoly_factor(fac, D.raw(), c.c) != 0, "fmpz_mpoly_factor failed");
    std::vector<std::pair<MP, long>> want;
    for (int h = 0; h < H; ++h) want.push_back({r[h], 1});
    for (int h = 0; h < H; ++h) want.push_back({cc[h], 1});
    for (int h = 0; h < H; ++h)
      for (int g = h + 1; g < H; ++g) want.push_back({r[h] - r[g], broken ? 1 : 2});
    bool ok = fac->num == static_cast<slong>(want.size());
    for (slong i = 0; ok && i < fac->num; ++i) {
      MP base(c);
      fmpz_mpoly_set(base.raw(), fac->poly + i, c.c);
      const long e = fmpz_get_si(fac->exp + i);
      bool hit = false;
      for (const auto& [w, we] : want) hit = hit || ((w == base || w == -base) && we == e);
      ok = hit;
    }
    {
      fmpz_t absc;
      fmpz_init(absc);
      fmpz_abs(absc, fac->constant);
      ok = ok && fmpz_equal_si(absc, V);
      fmpz_clear(absc);
    }
    fmpz_mpoly_factor_clear(fac, c.c);
    require(ok, "factorisation of the H=" + std::to_string(H) + " determinant does not match the stated factors");
    ++out.cases;
    // Recovery formulas: P = n_H / q_H; Q(rho_h) = 0 and r_h N(rho_h) = c_h Q'(rho_h)
    // at rho_h = -1/r_h (multiplied through by r_h^H to stay polynomial).
    require(N[H] == P * Q[H], "n_H != P q_H");
    const KPoly dQ = kderiv(Q);
    for (int h = 0; h < H; ++h) {
      const MP Nr = kreverse_at_neg_inv(N, r[h], H);        // r^H N(-1/r)
      const MP Qr = kreverse_at_neg_inv(Q, r[h], H);        // r^H Q(-1/r)
      const MP dQr = kreverse_at_neg_inv(dQ, r[h], H - 1);  // r^{H-1} Q'(-1/r)
      require(Qr.is_zero(), "Q(-1/r_h) != 0");
      // r N(rho) = c Q'(rho)  <=>  r^H N(rho) = c r^{H-1} Q'(rho)
      const MP lhs = broken ? r[h] * Nr : Nr;
      require(lhs == cc[h] * dQr, "residue formula fails for H=" + std::to_string(H));
    }
    ++out.cases;
  }
}

// Exact randomized: interpolate_pair over Q(tau) on exact data (this also
// runs Field<QTau>::real_roots, the Newton-polygon root finder).
void random_interpolation(const ProveOptions& o, LemmaCheck& out, std::ostringstream& det) {
  Rng rng(o.seed ^ 0x202);
  const Field<QTau> F(4);
  const long n = scaled(o, 100);
  long newton = 0, round = 0, singular = 0;
  for (long t = 0; t < n; ++t) {
    const int H = static_cast<int>(rng.uniform_int(1, 4));
    std::vector<long> ns;
    while (static_cast<int>(ns.size()) < H) {
      const long x = rng.uniform_int(-8, 8);
      if (std::find(ns.begin(), ns.end(), x) == ns.end()) ns.push_back(x);
    }
    std::vector<Rational> cs;
    for (int h = 0; h < H; ++h) cs.push_back(rand_q_nonzero(rng, 20, 4));
    const Rational P = rand_q(rng, 20, 4);
    // Newton polygon of Q = prod (1 + tau^{n_h} k): vertex m at (m, sum of the m smallest n_h).
    std::vector<QTau> Q{QTau(Rational(1))};
    for (int h = 0; h < H; ++h) {
      std::vector<QTau> nq(Q.size() + 1, QTau(Rational(0)));
      for (size_t m = 0; m < Q.size(); ++m) {
        nq[m] += Q[m];
        nq[m + 1] += Q[m] * QTauAccess::tau_pow(ns[h]);
      }
      Q = nq;
    }
    std::vector<long> sorted = ns;
    std::sort(sorted.begin(), sorted.end());
    long partial = 0;
    for (int m = 1; m <= H; ++m) {
      partial += sorted[m - 1];
      require(QTauAccess::valuation(Q[m]) == partial, "valuation of q_m is not the sum of the m smallest exponents");
    }
    const Roots<QTau> rr = F.real_roots(Q);
    require(rr.ok == Truth::yes, "Newton polygon roots: " + rr.why);
    const std::vector<QTau>& roots = rr.roots;
    require(static_cast<int>(roots.size()) == H, "real_roots returned the wrong number of roots");
    for (int m = 0; m < H; ++m) require(QTauAccess::equal(roots[m], -QTauAccess::tau_pow(-sorted[m])), "root m is not -tau^{-n_(m)}");
    ++newton;
    // Round trip through the code's interpolation.
    std::vector<QTau> f;
    for (int k = 0; k <= 2 * H; ++k) {
      QTau x(P);
      for (int h = 0; h < H; ++h) x += QTau(cs[h]) / (QTau(Rational(1)) + QTauAccess::tau_pow(ns[h]) * QTau(Rational(k)));
      f.push_back(x);
    }
    const PairFit<QTau> fit = interpolate_pair(F, f, H);
    require(QTauAccess::equal(fit.P, QTau(P)), "interpolate_pair: wrong limit P");
    require(static_cast<int>(fit.r.size()) == H, "interpolate_pair: wrong number of poles");
    std::vector<bool> used(H, false);
    for (int h = 0; h < H; ++h) {
      bool hit = false;
      for (int g = 0; g < H && !hit; ++g)
        if (!used[g] && QTauAccess::equal(fit.r[g], QTauAccess::tau_pow(ns[h])) && QTauAccess::equal(fit.c[g], QTau(cs[h]))) hit = used[g] = true;
      require(hit, "interpolate_pair: pole/residue pair not recovered");
    }
    ++round;
    // Converse: a zero residue or a repeated pole makes the system singular.
    if (H >= 2) {
      std::vector<QTau> g;
      const bool zero_c = rng.uniform_int(0, 1) == 0;
      for (int k = 0; k <= 2 * H; ++k) {
        QTau x(P);
        for (int h = 0; h < H; ++h) {
          const long nh = (!zero_c && h == 1) ? ns[0] : ns[h];
          const Rational ch = (zero_c && h == 1) ? Rational(0) : cs[h];
          x += QTau(ch) / (QTau(Rational(1)) + QTauAccess::tau_pow(nh) * QTau(Rational(k)));
        }
        g.push_back(x);
      }
      bool threw = false;
      try {
        (void)interpolate_pair(F, g, H);
      } catch (const Error& e) {
        threw = e.kind() == ErrorKind::degenerate;
      }
      require(threw, std::string("system with ") + (zero_c ? "a zero residue" : "a repeated pole") + " was not reported singular");
      ++singular;
    }
  }
  out.cases += newton + round + singular;
  det << newton << " Newton-polygon root checks, " << round << " interpolate_pair round trips (H=1..4), " << singular
      << " singular systems detected";
}

}  // namespace

// Interpolation: determinant, recovery formulas, Newton polygon, code round trip.
void check_interpolation(const ProveOptions& o, bool broken, LemmaCheck& out) {
  std::ostringstream det;
  symbolic_interpolation(broken, out);
  det << "symbolic: det, factor list and recovery formulas for H=1,2,3; ";
  random_interpolation(o, out, det);
  out.detail = det.str();
}

}  // namespace mhaq::proof
