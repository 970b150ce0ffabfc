// The machine check of proofs/32-low-precision-estimate.md (the registry: registry.cpp).
#include "prove_common.hpp"


namespace mhaq::proof {

namespace {

std::vector<LearnedHead<Jet<Mpfr>>> as_jets(const std::vector<LearnedHead<Mpfr>>& hs) {
  std::vector<LearnedHead<Jet<Mpfr>>> out;
  for (const auto& h : hs) {
    const int d = static_cast<int>(h.v.size());
    LearnedHead<Jet<Mpfr>> j{Mat<Jet<Mpfr>>(d, d), {}};
    for (int i = 0; i < d; ++i) {
      j.v.emplace_back(h.v[i]);
      for (int k = 0; k < d; ++k) j.W(i, k) = Jet<Mpfr>(h.W(i, k));
    }
    out.push_back(std::move(j));
  }
  return out;
}

bool close(double a, double b, double rel) { return std::fabs(a - b) <= rel * std::fabs(b); }

}  // namespace

// A run at 384 bits: the estimate's replay at 128 (or 256) bits, accepted by
// the agreement check, gives kappa, kappa_rel and kappa_rms equal to the
// replay at the run's own precision to 2^-16 relative; the agreement check
// accepts the run's own heads and rejects them moved by 2^-20 of their scale.
// Broken: the replay at 16 bits without the agreement check ("kappa needs only
// a few bits"), which must miss or fail.
void check_low_precision_estimate(const ProveOptions& o, bool broken, LemmaCheck& out) {
  Rng rng(o.seed ^ 0x32);
  const long p = 384;
  long low = 0, runs = 0;
  const long models = 6 * o.multiplier;
  for (long t = 0; t < models; ++t) {
    GenerateOptions g = default_generate(Arith::mpfr);
    g.d = 3 + static_cast<int>(t % 4);
    g.heads = 1 + static_cast<int>(t % 3);
    PrecisionScope scope(p);
    RecordedMpfrRun run;
    if (!record_mpfr_run(g, rng, run)) continue;
    const LearnOptions& lo = run.lo;
    const LearnResult<Mpfr>& res = run.res;
    const Field<Mpfr> F;
    const std::string at = "model " + std::to_string(t) + " (d = " + std::to_string(g.d) + ", H = " + std::to_string(g.heads) + ")";
    const Sensitivity full = sensitivity_from_answers(F, g.d, lo, run.queries, run.answers);
    Sensitivity est;
    if (!broken) {
      // the replay as this lemma states it: MPFR derivatives (the double
      // derivatives are proofs/33's)
      est = sensitivity_from_answers(F, g.d, lo, run.queries, run.answers, &res.heads, p, kEstimateBits, false);
      // the agreement check itself
      require(estimate_agrees(F, as_jets(res.heads), res.heads, kEstimateAgreeBits), at + ": the run's own heads are not accepted");
      std::vector<LearnedHead<Mpfr>> moved = res.heads;
      double sw = -1e300;
      for (int i = 0; i < g.d; ++i)
        for (int j = 0; j < g.d; ++j) sw = std::max(sw, F.log2_abs(moved[0].W(i, j)));
      Mpfr delta;
      mpfr_set_d(delta.raw(), std::exp2(sw - 20), MPFR_RNDN);
      moved[0].W(g.d - 1, 0) = moved[0].W(g.d - 1, 0) + delta;
      require(!estimate_agrees(F, as_jets(res.heads), moved, kEstimateAgreeBits), at + ": heads moved by 2^-20 of their scale are accepted");
    } else {
      try {
        PrecisionScope s16(16);
        std::vector<Mpfr> rounded;
        for (const Mpfr& a : run.answers) {
          Mpfr x;
          mpfr_set(x.raw(), a.raw(), MPFR_RNDN);
          rounded.push_back(std::move(x));
        }
        est = sensitivity_from_answers(Field<Mpfr>{}, g.d, lo, run.queries, rounded);
      } catch (const Error& e) {
        require(false, at + ": the replay at 16 bits fails: " + e.what());
      }
    }
    if (est.bits < p) ++low;
    const double tol = std::exp2(-16);
    require(close(est.kappa, full.kappa, tol) && close(est.kappa_rel, full.kappa_rel, tol) && close(est.kappa_rms, full.kappa_rms, tol),
            at + ": kappa " + std::to_string(est.kappa) + " at " + std::to_string(est.bits) + " bits vs " + std::to_string(full.kappa) + " at " +
                std::to_string(full.bits) + " (kappa_rel " + std::to_string(est.kappa_rel) + " vs " + std::to_string(full.kappa_rel) + ")");
    ++runs;
    ++out.cases;
  }
  require(runs >= models / 2, "too few models ran: " + std::to_string(runs));
  require(low >= 1, "no estimate ran below the run's precision");
  out.detail = std::to_string(runs) + " runs at " + std::to_string(p) + " bits, " + std::to_string(low) + " estimated below it";
}

}  // namespace mhaq::proof
