// The machine check of proofs/35-replay-reuses-fits.md (the registry: registry.cpp).
#include "prove_common.hpp"

#include "mhaq/oracle/jet_oracle.hpp"

namespace mhaq::proof {

namespace {

std::vector<Mpfr> packed(const PairFit<Mpfr>& f) {
  std::vector<Mpfr> x{f.P};
  x.insert(x.end(), f.r.begin(), f.r.end());
  x.insert(x.end(), f.c.begin(), f.c.end());
  return x;
}

bool same(const Mpfr& a, const Mpfr& b) { return mpfr_equal_p(a.raw(), b.raw()) != 0; }

bool same_jet(const JetMpfrD& a, const JetMpfrD& b) {
  if (!same(a.value(), b.value()) || a.grad().size() != b.grad().size()) return false;
  for (size_t k = 0; k < a.grad().size(); ++k) {
    const auto& [i, x] = a.grad()[k];
    const auto& [j, y] = b.grad()[k];
    if (i != j || x.mid != y.mid || x.rad != y.rad) return false;
  }
  return true;
}

// The learner replayed on jets (values in MPFR at the working precision,
// derivatives in double: the estimate's jets) over `answers`, with or
// without a memo of fits.
std::vector<LearnedHead<JetMpfrD>> replay_heads(int d, const LearnOptions& lo, const std::vector<Query>& queries, const std::vector<Mpfr>& answers,
                                               const FitMemo<Mpfr>* memo) {
  LearnOptions l = lo;
  l.self_check = false;
  l.keep_fit_samples = false;
  ReplayOracle<Mpfr> replay(d, Field<Mpfr>{}, queries, answers);
  JetOracle<Mpfr, ErrDouble> oracle(replay, -1, memo);
  return learn<JetMpfrD>(oracle, l).heads;
}

}  // namespace

// MPFR runs at 256 bits that keep their fits' samples:
// 1. the memo holds one fit per pair, and fitting the same samples again at
//    the same precision gives that fit bit for bit;
// 2. the replay that takes its fits from the memo and the replay that fits
//    every pair again give the same heads, values and every derivative entry
//    (mid and bound) bit for bit, and their values are the run's heads;
// 3. the estimate through the memo equals the estimate replayed at the run's
//    precision without it: kappa, kappa_rel and kappa_rms as the same doubles.
// Broken: the memo served at another precision (the run's fits looked up by
// their samples rounded to 128 bits, in a replay at 128 bits: "a fit is a fit
// at any precision"), which must change the replay's values.
void check_replay_reuses_fits(const ProveOptions& o, bool broken, LemmaCheck& out) {
  Rng rng(o.seed ^ 0x35);
  const long p = 256, low = 128;
  long runs = 0, pairs = 0;
  const long models = 5 * o.multiplier;
  for (long t = 0; t <= models; ++t) {
    GenerateOptions g = default_generate(Arith::mpfr);
    const bool big = t == models;  // the paper design at d = 8
    g.d = big ? 8 : 3 + static_cast<int>(t % 4);
    g.heads = big ? 3 : 1 + static_cast<int>(t % 3);
    PrecisionScope scope(p);
    RecordedMpfrRun run;
    if (!record_mpfr_run(g, rng, run, true)) continue;
    const LearnOptions& lo = run.lo;
    const LearnResult<Mpfr>& res = run.res;
    const Field<Mpfr> F;
    const std::string at = "model " + std::to_string(t) + " (d = " + std::to_string(g.d) + ", H = " + std::to_string(g.heads) + ")";
    ++runs;
    ++out.cases;
    if (broken) {
      FitMemo<Mpfr> wrong(low);
      for (size_t q = 0; q < res.fit_samples.size(); ++q) {
        if (res.fit_samples[q].empty()) continue;
        PrecisionScope s(low);
        std::vector<Mpfr> f;
        for (const Mpfr& v : res.fit_samples[q]) f.push_back(v + Mpfr(0L));
        wrong.add(std::move(f), res.fits[q].heads(), packed(res.fits[q]));
      }
      PrecisionScope s(low);
      std::vector<Mpfr> rounded;
      for (const Mpfr& a : run.answers) rounded.push_back(a + Mpfr(0L));
      const auto a = replay_heads(g.d, lo, run.queries, rounded, &wrong);
      const auto b = replay_heads(g.d, lo, run.queries, rounded, nullptr);
      for (size_t h = 0; h < a.size() && h < b.size(); ++h)
        for (int i = 0; i < g.d; ++i) {
          require(same_jet(a[h].v[i], b[h].v[i]), at + ": at 128 bits the run's fits change v_" + std::to_string(h + 1));
          for (int j = 0; j < g.d; ++j) require(same_jet(a[h].W(i, j), b[h].W(i, j)), at + ": at 128 bits the run's fits change W_" + std::to_string(h + 1));
        }
      continue;
    }
    // 1. the memo's fits are the fits of their samples
    const FitMemo<Mpfr> memo = fit_memo(res);
    require(memo.size() > 0, at + ": the run kept no samples");
    for (size_t q = 0; q < res.fit_samples.size(); ++q) {
      if (res.fit_samples[q].empty()) continue;
      const std::vector<Mpfr>& f = res.fit_samples[q];
      const std::vector<Mpfr>* x = memo.find(f, lo.H);
      require(x != nullptr, at + ": pair " + std::to_string(q) + " not found by its own samples");
      const std::vector<Mpfr> again = packed(interpolate_pair(F, f, lo.H));
      require(again.size() == x->size(), at + ": pair " + std::to_string(q) + " fitted to another size");
      for (size_t k = 0; k < again.size(); ++k) require(same(again[k], (*x)[k]), at + ": pair " + std::to_string(q) + " fitted again differs");
      ++pairs;
    }
    // 2. the two replays are the same computation
    const auto a = replay_heads(g.d, lo, run.queries, run.answers, &memo);
    const auto b = replay_heads(g.d, lo, run.queries, run.answers, nullptr);
    require(a.size() == res.heads.size() && b.size() == res.heads.size(), at + ": a replay found another head count");
    for (size_t h = 0; h < a.size(); ++h)
      for (int i = 0; i < g.d; ++i) {
        require(same_jet(a[h].v[i], b[h].v[i]) && same(a[h].v[i].value(), res.heads[h].v[i]), at + ": v_" + std::to_string(h + 1) + " differs");
        for (int j = 0; j < g.d; ++j)
          require(same_jet(a[h].W(i, j), b[h].W(i, j)) && same(a[h].W(i, j).value(), res.heads[h].W(i, j)), at + ": W_" + std::to_string(h + 1) + " differs");
      }
    // 3. the estimate
    const Sensitivity with = sensitivity_from_answers(F, g.d, lo, run.queries, run.answers, &res.heads, p, kEstimateBits, true, false, &memo);
    const Sensitivity without = sensitivity_from_answers(F, g.d, lo, run.queries, run.answers, &res.heads, p, p, true, false);
    require(with.bits == p, at + ": the estimate through the memo ran at " + std::to_string(with.bits) + " bits");
    require(with.kappa == without.kappa && with.kappa_rel == without.kappa_rel && with.kappa_rms == without.kappa_rms,
            at + ": kappa " + std::to_string(with.kappa) + " through the memo vs " + std::to_string(without.kappa));
  }
  require(runs >= models / 2, "too few models ran: " + std::to_string(runs));
  out.detail = std::to_string(runs) + " runs, " + std::to_string(pairs) + " pair fits reused bit for bit";
}

}  // namespace mhaq::proof
