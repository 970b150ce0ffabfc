// The machine check of proofs/11-first-order-sensitivity.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// J from per-pair Jacobians, chaining and the final solves equals the
// derivative of the running learner: a one-answer perturbation of size
// 2^-300 moves every parameter by J[:, j] 2^-300 (to far below the tolerance).
void check_sensitivity(const ProveOptions& o, bool broken, LemmaCheck& out) {
  Rng rng(o.seed ^ 0x11);
  long columns = 0, entries = 0;
  const long models = 6 * o.multiplier;
  for (long t = 0; t < models; ++t) {
    const auto draw = draw_sensitivity_model(rng, t, broken ? 0 : -1);
    if (!draw) continue;
    const auto& g = draw->g;
    const auto& m = draw->model;
    const auto& canon = draw->canon;
    const auto& lo = draw->lo;
    const auto& S = draw->S;
    const Plan plan = learner_plan(g.d, lo);
    PrecisionScope scope(1024);
    const Rational eps(Rational(1) / Rational::parse("2037035976334486086268445688409378161051468393665936250636140449354381299763336706183397376"));  // 2^-300
    auto run = [&](long j, int sign) {
      OracleNoise nz;
      nz.eps = eps;
      nz.pattern = NoisePattern::signs;
      nz.signs.assign(S.columns, 0);
      if (j >= 0) nz.signs[j] = static_cast<signed char>(sign);
      OracleStack<Mpfr> oracle = OracleStack<Mpfr>::model(m, lo.tokens.den, nz);
      return learn<Mpfr>(oracle.top(), lo).heads;
    };
    const auto base = run(-1, 0);
    // recovered head for canonical head h: the nearest (heads are well apart here)
    std::vector<int> map(canon.num_heads());
    for (int h = 0; h < canon.num_heads(); ++h) {
      double best = INFINITY;
      for (size_t gi = 0; gi < base.size(); ++gi) {
        const double e = std::fabs((base[gi].v[0] - Mpfr(canon.heads[h].v[0])).to_double());
        if (e < best) { best = e; map[h] = static_cast<int>(gi); }
      }
    }
    // columns: answer 0, a query of base pair (1,1) (it reaches W through the
    // chaining of every f(0) at b_s, s > 1), and random base-pair queries
    std::vector<long> cols{0, plan.query_index(1, 1), plan.query_index(1, 2)};
    for (int k = 0; k < 3; ++k) cols.push_back(plan.query_index(rng.uniform_int(0, g.d * g.d - 1), rng.uniform_int(1, 2 * g.heads)));
    for (long j : cols) {
      const auto pert = run(j, 1);
      ++columns;
      double colmax = 0;
      for (int r = 0; r < S.rows(); ++r) colmax = std::max(colmax, std::fabs(S.J[static_cast<size_t>(r) * S.columns + j]));
      for (int h = 0; h < canon.num_heads(); ++h) {
        const auto& a = pert[map[h]];
        const auto& b = base[map[h]];
        for (int i = 0; i < g.d; ++i)
          for (int c = 0; c <= g.d; ++c) {
            const Mpfr diff = c < g.d ? a.W(i, c) - b.W(i, c) : a.v[i] - b.v[i];
            const double fd = (diff / Mpfr(eps)).to_double();
            const int row = c < g.d ? S.row_W(h, i, c) : S.row_v(h, i);
            const double jv = S.J[static_cast<size_t>(row) * S.columns + j];
            ++entries;
            require(std::fabs(fd - jv) <= 1e-9 * std::max(1.0, colmax),
                    "model " + std::to_string(t) + ", answer " + std::to_string(j) + ", row " + std::to_string(row) + ": finite difference " +
                        std::to_string(fd) + " vs J " + std::to_string(jv));
          }
      }
    }
    ++out.cases;
  }
  out.detail = std::to_string(out.cases) + " models, " + std::to_string(columns) + " answers perturbed by 2^-300 at 1024 bits, " +
               std::to_string(entries) + " parameter derivatives equal to J to 1e-9 of the column";
  require(out.cases >= models / 2, "too few non-degenerate models");
}

}  // namespace mhaq::proof
