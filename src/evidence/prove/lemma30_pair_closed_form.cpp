// The machine check of proofs/30-pair-sensitivity-closed-form.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

namespace {

// Random pairs (H = 1..4): the closed-form d log r_h / d f(k) and
// PairSystem::inverse_jacobian overlap arb_mat_inv of the Jacobian. Returns
// the number of entries compared.
long closed_form_pairs(const ProveOptions& o, bool broken, Rng& rng, LemmaCheck& out) {
  long entries = 0;
  {
    PrecisionScope scope(256);
    const Field<Ball> F;
    const long pairs = 12 * o.multiplier;
    for (long t = 0; t < pairs; ++t) {
      const int H = 1 + static_cast<int>(t % 4), n = 2 * H + 1;
      std::vector<Ball> x(n);
      x[0] = Ball(Rational(rng.uniform_int(-1000, 1000), 1000));
      std::vector<long> lr;
      for (int h = 0; h < H; ++h) {
        long v;
        do v = rng.uniform_int(-3000, 3000);
        while (std::find(lr.begin(), lr.end(), v) != lr.end());
        lr.push_back(v);
        x[1 + h] = F.exp(Rational(v, 1000));
        const long c = rng.uniform_int(200, 2000) * (rng.uniform_int(0, 1) ? 1 : -1);
        x[1 + H + h] = Ball(Rational(c, 1000));
      }
      const PairSystem<Ball> sys(std::vector<Ball>(n, Ball(0L)), H);
      Mat<Ball> J(n, n), Yc;
      sys.jacobian(F, x, J);
      flint::ArbMat a(n, n), inv(n, n);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) arb_set(arb_mat_entry(a.m, i, j), J(i, j).raw());
      require(arb_mat_inv(inv.m, a.m, 256), "pair " + std::to_string(t) + ": the Jacobian is not certified invertible");
      require(sys.inverse_jacobian(F, x, Yc), "inverse_jacobian refused a square system");
      // the check's own evaluation of d log r_h / d f(k) (broken: G_h not squared)
      for (int h = 0; h < H; ++h) {
        const Ball rho = -(Ball(1L) / x[1 + h]);
        Ball G(1L);
        for (int g = 0; g < H; ++g)
          if (g != h) {
            const Ball tt = Ball(1L) - x[1 + g] / x[1 + h];
            G = broken ? G * tt : G * tt * tt;
          }
        for (int k = 0; k < n; ++k) {
          Ball q(1L), lk(1L);
          for (int g = 0; g < H; ++g) q = q * (Ball(1L) + x[1 + g] * Ball(static_cast<long>(k)));
          for (int m = 0; m < n; ++m)
            if (m != k) lk = lk * (rho - Ball(static_cast<long>(m))) / Ball(static_cast<long>(k - m));
          const Ball mine = q * q * lk / (x[1 + H + h] * G);
          Ball ref;
          arb_div(ref.raw(), arb_mat_entry(inv.m, 1 + h, k), x[1 + h].raw(), 256);
          require(arb_overlaps(mine.raw(), ref.raw()), "pair " + std::to_string(t) + ": d log r_" + std::to_string(h) + " / d f(" + std::to_string(k) +
                                                            ") by the formula " + mine.str() + " vs the inverted Jacobian " + ref.str());
          ++entries;
        }
      }
      for (int i = 0; i < n; ++i)
        for (int k = 0; k < n; ++k) {
          require(arb_overlaps(Yc(i, k).raw(), arb_mat_entry(inv.m, i, k)),
                  "pair " + std::to_string(t) + ": PairSystem::inverse_jacobian entry (" + std::to_string(i) + "," + std::to_string(k) + ") misses the inverse");
          ++entries;
        }
      ++out.cases;
    }
  }
  return entries;
}

}  // namespace

// A pair's inverse Jacobian in closed form equals the inverted Jacobian; the
// double-precision prediction route equals its MPFR matrix inverse; the
// predicted kappa_rms of a design equals the learner's on jets.
void check_pair_closed_form(const ProveOptions& o, bool broken, LemmaCheck& out) {
  Rng rng(o.seed ^ 0x30);
  long entries = closed_form_pairs(o, broken, rng, out), designs = 0;
  // the prediction's double route against its MPFR matrix inverse, and the
  // predicted kappa_rms against the learner on jets
  const long models = 6 * o.multiplier;
  for (long t = 0; t < models; ++t) {
    GenerateOptions g = default_generate(Arith::mpfr);
    g.d = 2 + static_cast<int>(t % 2);
    g.heads = 1 + static_cast<int>(t % 3);
    g.seed = rng.next();
    const Model canon = generate_model(g).canonical();
    if (canon.num_heads() != g.heads) continue;
    HeadsEstimate est;
    est.d = g.d;
    for (const auto& h : canon.heads) {
      std::vector<double> W, v;
      for (int i = 0; i < g.d; ++i) {
        v.push_back(h.v[i].approx_double());
        for (int j = 0; j < g.d; ++j) W.push_back(h.W(i, j).approx_double());
      }
      est.W.push_back(W);
      est.v.push_back(v);
    }
    for (int which = 0; which < 2; ++which) {
      LearnOptions lo;
      lo.H = g.heads;
      lo.seed = rng.next();
      lo.tokens = default_tokens(Arith::mpfr);
      if (which == 1) {
        Rng r2(lo.seed);
        lo.draws = draw_scaled(r2, g.d, g.heads, lo.tokens);
      }
      const Plan plan = learner_plan(g.d, lo);
      const auto closed = pair_sensitivities(est, plan.Delta.col(0), plan.B.col(0), true);
      const auto matrix = pair_sensitivities(est, plan.Delta.col(0), plan.B.col(0), false);
      require(!closed.empty() && closed.size() == matrix.size(), "pair sensitivities missing");
      for (size_t i = 0; i < closed.size(); ++i) {
        double mx = 0;
        for (double v : matrix[i]) mx = std::max(mx, std::fabs(v));
        for (size_t k = 0; k < closed[i].size(); ++k) {
          require(std::fabs(closed[i][k] - matrix[i][k]) <= 1e-8 * mx, "model " + std::to_string(t) + ": closed-form sensitivity (" + std::to_string(i) + "," +
                                                                            std::to_string(k) + ") " + std::to_string(closed[i][k]) + " vs " +
                                                                            std::to_string(matrix[i][k]));
          ++entries;
        }
      }
      Sensitivity S;
      try {
        S = sensitivity_from_model(canon, lo, lo.tokens.den);
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::degenerate) continue;
        throw;
      }
      const double pred = predicted_log2_kappa_rms(est, plan.B, plan.Delta);
      require(std::fabs(pred - std::log2(S.kappa_rms)) <= 1e-6 * std::max(1.0, std::fabs(pred)),
              "model " + std::to_string(t) + " (" + (which ? "scaled" : "paper") + "): predicted log2 kappa_rms " + std::to_string(pred) +
                  ", the learner on jets " + std::to_string(std::log2(S.kappa_rms)));
      ++designs;
    }
  }
  require(designs >= models, "too few non-degenerate designs");
  out.detail = std::to_string(out.cases) + " pairs (H = 1..4) whose closed-form inverse Jacobian overlaps arb_mat_inv at 256 bits, " +
               std::to_string(designs) + " designs (paper and scaled) whose predicted kappa_rms equals the learner's on jets to 1e-6; " +
               std::to_string(entries) + " entries compared";
}

}  // namespace mhaq::proof
