// The machine check of proofs/31-mean-value-certified-bound.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// Verified ball solves contain the exact solution; the mean-value bound is
// never below an observed error and is first-order tight.
void check_mean_value_bound(const ProveOptions& o, bool broken, LemmaCheck& out) {
  Rng rng(o.seed ^ 0x31);
  long solves = 0, runs = 0;
  {
    PrecisionScope scope(200);
    const Field<Ball> F;
    const long systems = 20 * o.multiplier;
    for (long t = 0; t < systems; ++t) {
      const int n = 2 + static_cast<int>(t % 7), k = 1 + static_cast<int>(t % 3);
      QMat A(n, n), Bq(n, k);
      for (int i = 0; i < n; ++i) {
        const long sc = rng.uniform_int(0, 40);
        for (int j = 0; j < n; ++j) A(i, j) = Rational(rng.uniform_int(-9, 9)) * Rational(1L << (sc / 2)) * Rational(1L << (sc - sc / 2));
        for (int j = 0; j < k; ++j) Bq(i, j) = Rational(rng.uniform_int(-9, 9));
      }
      QMat Ainv;
      if (!inverse(A, Ainv)) continue;
      Mat<Ball> Ab(n, n), Bb(n, k), X;
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
          Ab(i, j) = Ball(A(i, j));
          mag_t rr;  // radius 2^-60 relative: the midpoint system is one of those in the balls
          mag_init(rr);
          arb_get_mag(rr, Ab(i, j).raw());
          mag_mul_2exp_si(rr, rr, -60);
          arb_add_error_mag(Ab(i, j).raw(), rr);
          mag_clear(rr);
        }
        for (int j = 0; j < k; ++j) Bb(i, j) = Ball(Bq(i, j));
      }
      if (F.solve(X, Ab, Bb) != Truth::yes) continue;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < k; ++j) {
          Rational x(0);
          for (int c = 0; c < n; ++c) x += Ainv(i, c) * Bq(c, j);
          require(X(i, j).contains(x), "system " + std::to_string(t) + ": entry (" + std::to_string(i) + "," + std::to_string(j) + ") misses the exact solution");
        }
      ++solves;
    }
    require(solves >= systems / 2, "too few certified solves");
  }
  const char* epss[] = {"1e-30", "1e-24", "1e-18", "1e-12"};
  const long models = 4 * o.multiplier;
  for (long t = 0; t < models; ++t) {
    const auto draw = draw_sensitivity_model(rng, t);
    if (!draw) continue;
    const auto& m = draw->model;
    const auto& canon = draw->canon;
    const auto& lo = draw->lo;
    const auto& S = draw->S;
    for (const char* es : epss) {
      const Rational eps = Rational::parse(es);
      MeanValueBound mv;
      {
        PrecisionScope scope(256);
        mv = certified_mean_value_bound(canon, lo, lo.tokens.den, OracleNoise{0, eps, 1, NoisePattern::envelope, {}});
      }
      const double ke = S.kappa * eps.approx_double();
      if (!mv.ok) {
        require(ke > 1e-12, "model " + std::to_string(t) + ", eps " + es + ": no bound where kappa eps = " + std::to_string(ke) + " (" + mv.why + ")");
        continue;
      }
      const double bound = std::exp2(mv.log2_bound) * (broken ? 0.5 : 1.0);
      if (ke <= 1e-12) require(bound <= 1.01 * ke, "model " + std::to_string(t) + ", eps " + es + ": bound " + std::to_string(bound / ke) + " x kappa eps");
      for (int pattern = 0; pattern < 3; ++pattern) {
        OracleNoise nz;
        nz.eps = eps;
        nz.pattern = NoisePattern::signs;
        nz.signs = S.worst_signs();
        if (pattern > 0)
          for (auto& sg : nz.signs) sg = static_cast<signed char>(rng.uniform_int(0, 1) ? 1 : -1);
        PrecisionScope scope(512);
        OracleStack<Mpfr> oracle = OracleStack<Mpfr>::model(m, lo.tokens.den, nz);
        const double err = std::exp2(param_error_log2(learn<Mpfr>(oracle.top(), lo).heads, canon));
        require(err <= bound, "model " + std::to_string(t) + ", eps " + es + ", pattern " + std::to_string(pattern) + ": observed error " +
                                  std::to_string(err) + " above the bound " + std::to_string(bound));
        ++runs;
      }
    }
    ++out.cases;
  }
  require(out.cases >= models / 2, "too few non-degenerate models");
  out.detail = std::to_string(solves) + " verified ball solves (n = 2..8, scales up to 2^40) contain the exact solution; " + std::to_string(out.cases) +
               " models x 4 eps in [1e-30, 1e-12]: " + std::to_string(runs) +
               " runs (worst and random sign patterns) never above the mean-value bound, the bound <= 1.01 kappa eps";
}

}  // namespace mhaq::proof
