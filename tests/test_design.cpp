// Query designs: the scaled draws, the first-order prediction, the
// tuned design's pilot (learner-side, counted) and its search, and recover
// --design.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "mhaq/run/record_json.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/stages/1-oracle/recording_oracle.hpp"
#include "mhaq/stages/2-schedule/design.hpp"
#include "mhaq/analysis/design_search.hpp"
#include "mhaq/evidence/golden.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/analysis/sensitivity.hpp"
#include "test_util.hpp"

using namespace mhaq;

namespace {
HeadsEstimate estimate_of(const Model& m) {
  HeadsEstimate e;
  e.d = m.d;
  for (const auto& h : m.heads) {
    std::vector<double> W, v;
    for (int i = 0; i < m.d; ++i) {
      v.push_back(h.v[i].approx_double());
      for (int j = 0; j < m.d; ++j) W.push_back(h.W(i, j).approx_double());
    }
    e.W.push_back(W);
    e.v.push_back(v);
  }
  return e;
}
double num(const std::optional<double>& x) { return finite_number(x).value_or(NAN); }
}  // namespace

TEST_CASE("scaled draws: orthogonal columns on the grid, offsets s(H) times longer, invertible") {
  const TokenSpec tok = default_tokens(Arith::mpfr);
  test::Outcomes draws("scaled draws, H = 1..8, d in {1, 3, 4}");
  for (int H = 1; H <= 8; ++H)
    for (int d : {1, 3, 4}) {
      Rng rng(100 + H * 10 + d);
      const Draws dr = draw_scaled(rng, d, H, tok);
      REQUIRE_FALSE(det(dr.B).is_zero());
      REQUIRE_FALSE(det(dr.Delta).is_zero());
      draws.count("invertible, checked");
      const double nb = std::sqrt(d / 3.0), s = design_offset_scale(H).approx_double();
      for (const QMat* M : {&dr.B, &dr.Delta}) {
        const double want = M == &dr.B ? nb : nb * s;
        for (int i = 0; i < d; ++i)
          for (int j = 0; j < d; ++j) {
            CHECK((M->operator()(i, j) * Rational(tok.den)).is_integer());  // on the grid
            double g = 0;
            for (int r = 0; r < d; ++r) g += M->operator()(r, i).approx_double() * M->operator()(r, j).approx_double();
            CHECK(std::fabs(g - (i == j ? want * want : 0.0)) <= 1e-5 * want * want);  // orthogonal up to the rounding
          }
      }
    }
  draws.require(24, {"invertible, checked"});
  CHECK(design_offset_scale(1) == Rational(2));
  CHECK(design_offset_scale(3) == Rational(5, 2));
  CHECK(design_offset_scale(8) == Rational(3));
  CHECK_THROWS_AS(parse_design("best"), Error);
}

TEST_CASE("the prediction equals the learner on jets, for paper, scaled and searched designs") {
  const int n = 3 * test::multiplier();
  test::Outcomes models("predicted kappa against jets, d = 3");
  for (int t = 0; t < n; ++t) {
    GenerateOptions g = default_generate(Arith::mpfr);
    g.d = 3;
    g.heads = 2 + t % 2;
    g.seed = 40 + t;
    const Model canon = generate_model(g).canonical();
    if (canon.num_heads() != g.heads) {
      models.count("merged heads (skipped)");
      continue;
    }
    models.count("compared");
    const HeadsEstimate est = estimate_of(canon);
    TunedOptions to;
    to.H = g.heads;
    to.seed = 9 + t;
    to.tokens = default_tokens(Arith::mpfr);
    to.candidates = 64;
    to.steps = 800;
    const TunedDesign td = search_design(est, to);
    for (int which = 0; which < 3; ++which) {
      LearnOptions lo;
      lo.H = g.heads;
      lo.seed = 70 + t;
      lo.tokens = to.tokens;
      Rng rng(lo.seed);
      if (which == 1) lo.draws = draw_scaled(rng, g.d, g.heads, lo.tokens);
      if (which == 2) lo.draws = td.draws;
      const Plan plan = learner_plan(g.d, lo);
      const Sensitivity S = sensitivity_from_model(canon, lo, lo.tokens.den);
      INFO("trial " << t << ", design " << which);
      CHECK(predicted_log2_kappa_rms(est, plan.B, plan.Delta) == doctest::Approx(std::log2(S.kappa_rms)).epsilon(1e-6));
      CHECK(predicted_log2_kappa(est, plan.B, plan.Delta) == doctest::Approx(std::log2(S.kappa)).epsilon(1e-6));
    }
    CHECK(td.log2_kappa_predicted <= td.log2_kappa_start);  // the search starts from the scaled draw and keeps the best
    // the closed-form pair sensitivities and the MPFR matrix inverse agree
    const auto a = pair_sensitivities(est, td.draws.Delta.col(0), td.draws.B.col(1), true);
    const auto b = pair_sensitivities(est, td.draws.Delta.col(0), td.draws.B.col(1), false);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i)
      for (size_t k = 0; k < a[i].size(); ++k) CHECK(a[i][k] == doctest::Approx(b[i][k]).epsilon(1e-8).scale(1e-300));
  }
  models.require(n, {"compared"});
}

TEST_CASE("tuned: the pilot spends counted queries on the oracle only, and the design cuts the bits lost") {
  std::vector<double> cut;
  const int n = 4 * test::multiplier();
  test::Outcomes models("tuned pilots, d = 3, H = 3");
  for (int t = 0; t < n; ++t) {
    GenerateOptions g = default_generate(Arith::mpfr);
    g.d = 3;
    g.heads = 3;
    g.seed = 200 + t;
    const Model m = generate_model(g);
    const Model canon = m.canonical();
    if (canon.num_heads() != 3) {
      models.count("merged heads (skipped)");
      continue;
    }
    PrecisionScope scope(192);
    OracleStack<Mpfr> inner = OracleStack<Mpfr>::model(m, default_tokens(Arith::mpfr).den).recorded();
    Oracle<Mpfr>& black_box = inner.top();  // all the design ever gets
    TunedOptions to;
    to.H = 3;
    to.seed = 300 + t;
    to.tokens = default_tokens(Arith::mpfr);
    to.pilot_bits = 192;
    const TunedDesign td = choose_tuned_design(black_box, to);
    INFO("trial " << t << ": pilot " << td.pilot_status);
    REQUIRE(td.searched);
    CHECK(td.pilot_queries == black_box.queries());
    CHECK(td.pilot_queries >= lean_query_count(3, 3));  // the lean schedule (plus any fallback link it asked for)
    CHECK(td.pilot_heads == 3);
    // the same answers give the same design (deterministic), whatever the threads
    {
      OracleStack<Mpfr> again = OracleStack<Mpfr>::model(m, to.tokens.den);
      TunedOptions t2 = to;
      t2.threads = 2;
      const TunedDesign tt = choose_tuned_design<Mpfr>(again.top(), t2);
      CHECK(tt.draws.B == td.draws.B);
      CHECK(tt.draws.Delta == td.draws.Delta);
    }
    // kappa_rms at the truth: tuned against the paper's draw for the same learner seed
    LearnOptions lo;
    lo.H = 3;
    lo.seed = 300 + t;
    lo.tokens = to.tokens;
    const double paper = std::log2(sensitivity_from_model(canon, lo, lo.tokens.den).kappa_rms);
    lo.draws = td.draws;
    const double tuned = std::log2(sensitivity_from_model(canon, lo, lo.tokens.den).kappa_rms);
    CHECK(td.log2_kappa_predicted == doctest::Approx(tuned).epsilon(0.02));  // the pilot's estimate predicts the truth
    cut.push_back(1 - tuned / paper);
    models.count("searched");
  }
  models.require(n - 1, {"searched"});
  REQUIRE(cut.size() >= 3);
  std::sort(cut.begin(), cut.end());
  MESSAGE("d=3, H=3: tuned cuts log2 kappa_rms by (sorted) " << cut.front() << " .. " << cut.back());
  CHECK(cut[cut.size() / 2] >= 0.3);
}

TEST_CASE("recover --design: JSON fields, the pilot in the count, exact refused, the paper count unchanged") {
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = 3;
  g.heads = 2;
  g.seed = 5;
  const Model m = generate_model(g);
  RecoverOptions o;
  o.arith = Arith::mpfr;
  o.bits = 128;
  o.seed = 3;
  const auto paper = recover(m, o);
  REQUIRE(paper.judge.status == Status::ok);
  CHECK(paper.design.kind == Design::paper);
  CHECK(paper.evidence.queries == paper_query_bound(3, 2));
  CHECK(paper.evidence.max_length == 5);
  o.design = Design::scaled;
  const auto scaled = recover(m, o);
  REQUIRE(scaled.judge.status == Status::ok);
  CHECK(scaled.evidence.queries == paper_query_bound(3, 2));  // non-adaptive: the same count
  CHECK(scaled.study.kappa_rms.has_value());
  o.design = Design::tuned;
  const auto tuned = recover(m, o);
  INFO(record_json(tuned).dump(-1).substr(0, 800));
  REQUIRE(tuned.judge.status == Status::ok);
  CHECK(tuned.design.design_queries == paper_query_bound(3, 2));
  CHECK(tuned.evidence.queries == tuned.design.design_queries.value() + tuned.design.pilot_queries.value());
  CHECK(tuned.design.pilot_queries.value() >= lean_query_count(3, 2));
  CHECK(tuned.design.pilot_status == std::string("ok"));
  CHECK(num(tuned.design.kappa_rms_predicted) == doctest::Approx(num(tuned.study.kappa_rms)).epsilon(0.2));
  CHECK(num(tuned.study.kappa_rms) < num(scaled.study.kappa_rms) * 10);  // not worse than the scaled start by much (it is searched from it)
  CHECK(num(tuned.truth.max_rel_error) <= num(paper.truth.max_rel_error));
  // threads do not change the bytes
  o.threads = 2;
  CHECK(record_json(recover(m, o)).dump() == record_json(tuned).dump());
  // exact runs stay on the paper design; certificates record it only
  o.threads = 1;
  RecoverOptions ex;
  ex.design = Design::scaled;
  CHECK_THROWS_AS(recover(m, ex), Error);
  ex.design = Design::tuned;
  CHECK_THROWS_AS(recover(m, ex), Error);
  std::string cert;
  o.certificate = &cert;
  CHECK_THROWS_AS(recover(m, o), Error);
}

TEST_CASE("golden export --design: scaled and tuned on the quarter grid, re-derived by golden check; a changed plan is named") {
  for (Design dsg : {Design::scaled, Design::tuned}) {
    GenerateOptions g;
    g.d = 2;
    g.heads = 2;
    g.seed = 3;
    GoldenInputs in;
    in.model = generate_model(g);
    in.model_source = "generated";
    in.generate = g;
    in.seed = 3;
    in.design = dsg;
    in.arith = Arith::mpfr;
    in.bits = 128;
    const std::string text = golden_export(in);
    const auto doc = nlohmann::json::parse(text);
    INFO(design_name(dsg) << ": " << doc["inputs"].dump());
    CHECK(doc["inputs"]["design"] == design_name(dsg));
    CHECK(doc["inputs"]["token_den"] == 4);
    CHECK(doc["summary"]["exact_match"] == true);
    CHECK(doc["summary"]["queries"] == paper_query_bound(2, 2));
    CHECK(doc["inputs"].contains("pilot_queries") == (dsg == Design::tuned));
    const GoldenCheckResult ok = golden_check(text);
    CHECK(ok.ok());
    // another B in the file: the re-derived design differs
    auto bad = doc;
    bad["plan"]["B"][0][0] = bad["plan"]["B"][0][0] == "1" ? "3/4" : "1";
    const GoldenCheckResult no = golden_check(bad.dump());
    CHECK_FALSE(no.ok());
  }
  GoldenInputs paper;
  GenerateOptions g;
  g.d = 2;
  g.heads = 1;
  g.seed = 4;
  paper.model = generate_model(g);
  CHECK(nlohmann::json::parse(golden_export(paper))["inputs"].contains("design") == false);  // paper files are unchanged
}
