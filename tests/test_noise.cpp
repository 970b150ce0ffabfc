// Approximate oracles (claim 4 groundwork): a ball learner fed noisy answers
// (balls covering the noise) still contains the truth, and a float learner fed
// the same noisy answers lands inside those balls.
#include <doctest/doctest.h>

#include <cmath>

#include "mhaq/run/record_json.hpp"
#include "mhaq/stages/learner.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/recover.hpp"
#include "test_util.hpp"

using namespace mhaq;

TEST_CASE("noisy oracle: ball results contain the truth and the MPFR run on the same answers") {
  const int n = 3 * test::multiplier();
  test::Outcomes runs("noisy answers, balls and MPFR on the same answers");
  for (int t = 0; t < n; ++t) {
    GenerateOptions g = default_generate(Arith::ball);
    g.d = 3 + t % 2;
    g.heads = 2 + t % 2;
    g.seed = 70 + t;
    const Model m = generate_model(g);
    const OracleNoise noise{0, Rational::parse(t % 2 ? "1e-30" : "1e-20"), static_cast<std::uint64_t>(t + 1)};
    LearnOptions lo;
    lo.H = g.heads;
    lo.seed = 1000 + t;
    lo.tokens = default_tokens(Arith::ball);
    PrecisionScope scope(512);
    OracleStack<Ball> ob_stack = OracleStack<Ball>::model(m, lo.tokens.den, noise);
    Oracle<Ball>& ob = ob_stack.top();
    OracleStack<Mpfr> om_stack = OracleStack<Mpfr>::model(m, lo.tokens.den, noise);
    Oracle<Mpfr>& om = om_stack.top();
    const auto rb = learn<Ball>(ob, lo);
    const auto rm = learn<Mpfr>(om, lo);
    REQUIRE(rb.heads.size() == m.heads.size());
    REQUIRE(rm.heads.size() == m.heads.size());
    // truth inside the balls (up to permutation: match by containment of W(0,0))
    int contained = 0, mpfr_inside = 0;
    for (const auto& th : m.heads)
      for (const auto& bh : rb.heads) {
        bool in = true;
        for (int i = 0; i < g.d; ++i) {
          in = in && bh.v[i].contains(th.v[i]);
          for (int j = 0; j < g.d; ++j) in = in && bh.W(i, j).contains(th.W(i, j));
        }
        contained += in;
      }
    CHECK(contained == g.heads);
    for (const auto& bh : rb.heads)
      for (const auto& mh : rm.heads) {
        bool in = true;
        for (int i = 0; i < g.d; ++i)
          for (int j = 0; j < g.d; ++j) {
            Ball x;
            arb_set_interval_mpfr(x.raw(), mh.W(i, j).raw(), mh.W(i, j).raw(), 512);
            in = in && arb_contains(bh.W(i, j).raw(), x.raw());
          }
        mpfr_inside += in;
      }
    CHECK(mpfr_inside == g.heads);
    // the noise is visible: the MPFR result is not exact
    const auto r = recover(m, RecoverOptions{Arith::mpfr, 512, 0, 0, Schedule::paper, 3, {0, 0}, 0, noise.eps, 1});
    REQUIRE(r.judge.status == Status::ok);
    CHECK(r.truth.max_rel_error.value() > 1e-100);
    runs.count(contained == g.heads && mpfr_inside == g.heads ? "contained" : "missed");
  }
  runs.require(n, {"contained"});
}

TEST_CASE("an oracle rounding to 53 bits limits an MPFR learner to double-like accuracy") {
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = 4;
  g.heads = 2;
  g.seed = 1;
  const Model m = generate_model(g);
  RecoverOptions o;
  o.arith = Arith::mpfr;
  o.bits = 256;
  o.seed = 1;
  const auto full = recover(m, o);
  o.oracle_bits = 53;
  const auto rounded = recover(m, o);
  REQUIRE(full.judge.status == Status::ok);
  REQUIRE(rounded.judge.status == Status::ok);
  CHECK(full.truth.max_rel_error.value() < 1e-50);
  CHECK(rounded.truth.max_rel_error.value() > 1e-14);
  CHECK(rounded.truth.max_rel_error.value() < 1e-4);
  CHECK(rounded.oracle.bits == 53);
}

TEST_CASE("an exact learner fed approximate answers reports inconsistent, never parameters") {
  // Rounded or noisy answers are still elements of Q(tau) (rational
  // perturbations), so the exact learner runs; no exact model fits them.
  const int n = 2 * test::multiplier();
  test::Outcomes runs("exact learner, approximate answers");
  for (int t = 0; t < n; ++t) {
    GenerateOptions g;
    g.d = 2 + t % 2;
    g.heads = 1 + t % 2;
    g.seed = 40 + t;
    const Model m = generate_model(g);
    for (const bool rounding : {true, false}) {
      RecoverOptions o;
      o.arith = Arith::exact;
      o.seed = 5 + t;
      if (rounding) o.oracle_bits = 200;
      else o.noise_eps = Rational::parse("1e-40");
      const auto r = recover(m, o);
      INFO("trial " << t << (rounding ? " (200-bit oracle)" : " (noise 1e-40)") << ": " << record_json(r).dump());
      CHECK(r.judge.status != Status::ok);
      CHECK(r.evidence.heads_recovered == 0);
      if (r.judge.status != Status::degenerate) CHECK(r.judge.status == Status::inconsistent);
      runs.count(status_name(r.judge.status));
    }
  }
  runs.require(2 * n - 1, {"inconsistent"});
}

TEST_CASE("the noise study at the truth counts every query its learner asked, beyond the plan's") {
  // A two-head model with large W (from the blind float soak): the study's
  // learner at the truth asks queries beyond the plan's, whose columns the
  // sensitivity once read past its answers (a crash, 4 runs in 22,000).
  const char* text =
      R"({"format": "mhaq-model", "version": 1, "d": 2, "heads": [{"W": [["10", "-31"], ["-23", "45/2"]], "v": ["5/8", "-1/8"]}, )"
      R"({"W": [["8", "-51/2"], ["19/2", "27/2"]], "v": ["5/8", "-2"]}]})";
  RecoverOptions o;
  o.arith = Arith::ieee;
  o.heads = 2;
  o.oracle_bits = 32;
  o.noise_eps = Rational(1, 1L << 28);
  o.noise_seed = 831;
  o.seed = 639615;
  const RecoverResult r = recover_run(model_from_json_text(text), o);
  CHECK((r.status() == Status::ok || r.status() == Status::unable));
  REQUIRE(r.study.kappa.has_value());
  CHECK(std::isfinite(*r.study.kappa));
  CHECK(*r.study.kappa > 0);
}
