// The machine check of proofs/38-composed-estimate.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

namespace {

// One MPFR run at the current precision that keeps its fits' samples, with
// the paper or the lean schedule, on drawn tokens of `range` / `den`.
bool record_run(const GenerateOptions& g, Rng& rng, Schedule s, const TokenSpec& design, RecordedMpfrRun& out) {
  const auto adjust = [&](LearnOptions& lo) {
    lo.schedule = s;
    Rng draw(lo.seed);
    lo.draws = draw_tokens(draw, g.d, design);
  };
  return record_mpfr_run(g, rng, out, true, adjust, true);
}

double gap(double a, double b) { return std::fabs(a - b) / std::fabs(b); }

}  // namespace

// MPFR runs at 256 bits (d = 2..6 and the paper design at d = 8; H = 1..3;
// paper and lean schedules; designs drawn from three token grids): the
// composition applies to every run without a repair; its kappa, kappa_rel,
// kappa_rms and pair_cond are within twice their stated bound (+ 2^-40) of
// the replay with MPFR derivatives at the run's precision (the reference),
// and within 1e-6 of the float judge's replay through the run's fits
// (proofs/35), both ways. Broken: the chained f(0) taken as constants, which
// must leave kappa short of the replay's.
void check_composed_estimate(const ProveOptions& o, bool broken, LemmaCheck& out) {
  Rng rng(o.seed ^ 0x37);
  const long p = 256;
  const TokenSpec grids[] = {{1 << 20, 1 << 20}, {4, 8}, {3, 4}};
  long runs = 0, composed = 0;
  double worst = 0;
  const long models = 8 * o.multiplier;
  for (long t = 0; t <= models; ++t) {
    GenerateOptions g = default_generate(Arith::mpfr);
    const bool big = t == models;
    g.d = big ? 8 : 2 + static_cast<int>(t % 5);
    g.heads = big ? 3 : 1 + static_cast<int>(t % 3);
    const Schedule s = t % 4 == 3 ? Schedule::lean : Schedule::paper;
    PrecisionScope scope(p);
    RecordedMpfrRun run;
    if (!record_run(g, rng, s, grids[t % 3], run)) continue;
    const LearnResult<Mpfr>& res = run.res;
    const Field<Mpfr> F;
    const std::string at = "model " + std::to_string(t) + " (d = " + std::to_string(g.d) + ", H = " + std::to_string(g.heads) + ", " +
                           schedule_name(s) + ")";
    ++runs;
    ++out.cases;
    const std::optional<Sensitivity> c = composed_sensitivity(F, run.lo, res, run.answers, true, !broken);
    require(c.has_value() || !res.repairs.empty(), at + ": the composition did not apply to a run without repairs");
    if (!c) continue;
    ++composed;
    require(c->J.empty() && c->derivative_bits == 53 && c->bits == p, at + ": the composition's bookkeeping");
    require(c->kappa_err_rel <= std::exp2(-static_cast<double>(kEstimateDerivBits)), at + ": accepted with a bound beyond 2^-8");
    // the reference: the replay at the run's precision with MPFR derivatives
    const Sensitivity ref = sensitivity_from_answers(F, g.d, run.lo, run.queries, run.answers);
    const double allow = 2 * c->kappa_err_rel + 0x1p-40;
    const double g1 = gap(c->kappa, ref.kappa), g2 = gap(c->kappa_rel, ref.kappa_rel), g3 = gap(c->kappa_rms, ref.kappa_rms),
                 g4 = gap(c->pair_cond, ref.pair_cond);
    worst = std::max({worst, g1, g2, g3});
    require(g1 <= allow && g2 <= allow && g3 <= allow,
            at + ": composed kappa " + std::to_string(c->kappa) + " vs the replay's " + std::to_string(ref.kappa) + " (bound " + std::to_string(c->kappa_err_rel) + ")");
    // pair_cond: the replay fits each pair again from samples regenerated from
    // its fit, so it agrees to the rounding of that refit
    require(g4 <= 1e-6, at + ": pair_cond " + std::to_string(c->pair_cond) + " vs " + std::to_string(ref.pair_cond));
    // the estimate as the float judge computed it before (proofs/35)
    const FitMemo<Mpfr> memo = fit_memo(res);
    const Sensitivity est = sensitivity_from_answers(F, g.d, run.lo, run.queries, run.answers, &res.heads, p, kEstimateBits, true, false, &memo);
    require(gap(c->kappa, est.kappa) <= 1e-6 && gap(c->kappa_rel, est.kappa_rel) <= 1e-6,
            at + ": composed kappa " + std::to_string(c->kappa) + " vs the judge's replay " + std::to_string(est.kappa));
  }
  require(runs >= models / 2, "too few models ran: " + std::to_string(runs));
  require(composed >= runs / 2, "the composition applied to too few runs: " + std::to_string(composed) + " of " + std::to_string(runs));
  out.detail = std::to_string(composed) + "/" + std::to_string(runs) + " runs composed, largest relative gap to the MPFR replay 2^" +
               std::to_string(static_cast<int>(std::floor(std::log2(std::max(worst, 0x1p-200)))));
}

}  // namespace mhaq::proof
