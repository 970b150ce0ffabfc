// Acceptance: exact recovery, ball containment, float accuracy,
// degenerate detection, oracle isolation.
#include <doctest/doctest.h>

#include <fstream>
#include <type_traits>

#include "mhaq/run/record_json.hpp"
#include "mhaq/stages/learner.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/recover.hpp"
#include "test_record.hpp"
#include "test_util.hpp"

using namespace mhaq;
using nlohmann::json;

namespace {
RecoverResult run_recover(const Model& m, Arith a, std::uint64_t seed, long bits = 256) {
  RecoverOptions o;
  o.arith = a;
  o.seed = seed;
  o.bits = bits;
  return recover(m, o);
}
}  // namespace

TEST_CASE("exact recovery: 30 random rational models, shared W and cancelling v included") {
  // 10 models for each (d, H); within each group, some have two heads sharing
  // W (merged by the canonical form) and some have two heads with the same W
  // and opposite v (dropped). A degenerate learner draw is legal (it is
  // reported, never wrong); the learner then redraws with a fresh seed, and
  // each run's query count is checked on its own.
  const int per = 10 * test::multiplier();
  int degenerate_runs = 0, runs = 0;
  test::Outcomes outcomes("exact recovery, 30 models, up to 4 learner seeds each");
  for (const auto& dh : {std::pair{2, 1}, std::pair{3, 2}, std::pair{4, 3}}) {
    const int d = dh.first, H = dh.second;  // not a structured binding: INFO captures it (clang 14)
    for (int t = 0; t < per; ++t) {
      GenerateOptions g;
      g.d = d;
      g.seed = 1000 * d + t;
      g.heads = H;
      if (t % 5 == 1) { g.heads = H + 1; g.share_w = true; }     // two heads share W
      if (t % 5 == 2) { g.heads = H + 2; g.cancel_v = true; }    // two heads cancel
      const Model m = generate_model(g);
      REQUIRE(static_cast<int>(m.canonical().heads.size()) == (t % 5 == 1 ? H : H));
      bool done = false;
      for (int attempt = 0; attempt < 4 && !done; ++attempt) {
        const std::uint64_t seed = 7 + t + 100 * attempt;
        const RecoverResult r = run_recover(m, Arith::exact, seed);
        ++runs;
        outcomes.count(status_name(r.judge.status));
        INFO("d=" << d << " H=" << H << " model seed=" << g.seed << " learner seed=" << seed << " " << record_json(r).dump().substr(0, 400));
        // a repaired run adds its witness queries (proofs/21), reported apart
        CHECK(r.evidence.queries == 4 * H * d * d - 2 * H + 1 + r.evidence.repair_queries.value_or(0L) + r.evidence.grid_witness_queries.value_or(0L));
        if (r.judge.status == Status::ok) CHECK(r.evidence.repair_queries.value_or(0L) == (r.evidence.repairs.value_or(0L) > 0 ? 3 : 0));
        CHECK(r.evidence.max_length == 2 * H + 1);
        CHECK(r.plan.paper_bound == 4 * H * d * d - 2 * H + 1);
        CHECK(r.truth.heads_true == H);
        if (r.judge.status == Status::degenerate) {
          ++degenerate_runs;
          CHECK(r.judge.message.size() > 10);
          continue;
        }
        REQUIRE(r.judge.status == Status::ok);
        CHECK(r.truth.exact_match == true);
        CHECK(r.evidence.heads_recovered == H);
        done = true;
      }
      CHECK(done);
    }
  }
  MESSAGE("exact runs: " << runs << ", degenerate draws reported: " << degenerate_runs);
  CHECK(degenerate_runs * 4 < runs);  // degenerate draws are the exception at the default token range
  outcomes.require(3 * per, {"ok"});  // every model recovered
}

TEST_CASE("exact recovery returns the canonical heads with exact rational entries") {
  GenerateOptions g;
  g.d = 2;
  g.heads = 1;
  g.seed = 11;
  const Model m = generate_model(g);
  const RecoverResult r = run_recover(m, Arith::exact, 3);
  REQUIRE(r.judge.status == Status::ok);
  // The printed entries are the canonical rationals, equal as strings.
  for (int i = 0; i < 2; ++i) {
    CHECK(r.evidence.heads->at(0).v.at(i) == m.heads[0].v[i].str());
    for (int j = 0; j < 2; ++j) CHECK(r.evidence.heads->at(0).W.at(i).at(j) == m.heads[0].W(i, j).str());
  }
}

TEST_CASE("ball mode: d=8, H=4 at 256 bits contains the truth with small radii") {
  GenerateOptions g = default_generate(Arith::ball);
  g.d = 8;
  g.heads = 4;
  test::Outcomes runs("ball d = 8, H = 4 at 256 bits");
  for (int s = 1; s <= test::multiplier(); ++s) {
    g.seed = s;
    const RecoverResult r = run_recover(generate_model(g), Arith::ball, s, 256);
    INFO(record_json(r).dump().substr(0, 300));
    runs.count(status_name(r.judge.status));
    REQUIRE(r.judge.status == Status::ok);
    CHECK(r.truth.contains_truth == true);
    CHECK(r.truth.max_radius.value() <= 1e-30);
    CHECK(r.evidence.queries == 4 * 4 * 64 - 8 + 1);
    CHECK(r.evidence.max_length == 9);
  }
  runs.require(test::multiplier(), {"ok"});
}

TEST_CASE("ball mode: too little precision for H=6 is reported as unable, never as wrong numbers") {
  GenerateOptions g = default_generate(Arith::ball);
  g.d = 8;
  g.heads = 6;
  g.seed = 2;
  const Model m = generate_model(g);
  for (long bits : {48L, 64L, 96L}) {
    const RecoverResult r = run_recover(m, Arith::ball, 5, bits);
    INFO("bits=" << bits << " " << record_json(r).dump().substr(0, 300));
    CHECK(r.judge.status == Status::unable);
    CHECK(r.judge.remedy.value_or("").find("--bits") != std::string::npos);
    CHECK_FALSE(r.truth.contains_truth.has_value());
  }
  // and enough precision succeeds on the same model
  const RecoverResult ok = run_recover(m, Arith::ball, 5, 512);
  REQUIRE(ok.judge.status == Status::ok);
  CHECK(ok.truth.contains_truth == true);
}

TEST_CASE("ball mode: whenever it answers, it contains the truth") {
  GenerateOptions g = default_generate(Arith::ball);
  test::Outcomes runs("ball runs at 40 to 160 bits");
  for (int t = 0; t < 12 * test::multiplier(); ++t) {
    g.d = 2 + t % 4;
    g.heads = 1 + t % 4;
    g.seed = 500 + t;
    const long bits = 40 + 24 * (t % 6);
    const RecoverResult r = run_recover(generate_model(g), Arith::ball, t, bits);
    INFO(record_json(r).dump().substr(0, 300));
    CHECK(r.judge.status != Status::degenerate);
    runs.count(status_name(r.judge.status));
    if (r.judge.status == Status::ok) {
      CHECK(r.truth.contains_truth == true);
    } else {
      CHECK(r.judge.status == Status::unable);
    }
  }
  runs.require(4 * test::multiplier(), {"ok"});
}

TEST_CASE("mpfr 256 bits d=8 H=4 and double d=6 H=2 accuracy") {
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = 8;
  g.heads = 4;
  g.seed = 1;
  const RecoverResult r = run_recover(generate_model(g), Arith::mpfr, 1, 256);
  REQUIRE(r.judge.status == Status::ok);
  CHECK(r.truth.max_rel_error.value() <= 1e-40);
  CHECK(r.evidence.queries == 1017);

  GenerateOptions gd = default_generate(Arith::ieee);
  gd.d = 6;
  gd.heads = 2;
  gd.seed = 1;
  const RecoverResult rd = run_recover(generate_model(gd), Arith::ieee, 1);
  REQUIRE(rd.judge.status == Status::ok);
  CHECK(rd.truth.max_rel_error.value() <= 1e-6);
  CHECK(rd.evidence.queries == 4 * 2 * 36 - 4 + 1);
}

namespace {
// A model whose first head's v is orthogonal to the learner's delta_1 for
// the given --seed: the residue c_1(1, j) = -v_1^T delta_1 is zero.
Model zero_residue_model(std::uint64_t seed, long* out_den = nullptr) {
  Rng rng(learner_seed(seed));
  const Draws dr = draw_tokens(rng, 2, default_tokens(Arith::exact));
  const QVec d1 = dr.Delta.col(0);
  Model m;
  m.d = 2;
  HeadQ h0{QMat(2, 2), QVec{d1[1], -d1[0]}};
  h0.W(0, 0) = Rational(1, 2);
  h0.W(1, 1) = Rational(-1, 4);
  HeadQ h1{QMat(2, 2), QVec{Rational(1), Rational(2)}};
  h1.W(0, 1) = Rational(3, 4);
  h1.W(1, 0) = Rational(-1, 2);
  m.heads = {h0, h1};
  if (out_den) *out_den = 1;
  return m;
}
}  // namespace

TEST_CASE("degenerate draw: a zero residue is reported as degenerate without repairs, and repaired by a fresh offset with them") {
  const Model m = zero_residue_model(42);
  REQUIRE(m.canonical().heads.size() == 2);
  for (Arith a : {Arith::exact, Arith::ball}) {
    const RecoverResult r = run_recover(m, a, 42, 128);
    INFO(arith_name(a) << " " << record_json(r).dump().substr(0, 300));
    if (a == Arith::exact) {
      CHECK(r.judge.status == Status::ok);  // the first offset drawn afresh
      CHECK(r.truth.exact_match == true);
      CHECK(r.evidence.repair_queries.value() > 0);
      RecoverOptions o;
      o.seed = 42;
      o.repair = false;
      const RecoverResult n = recover(m, o);
      CHECK(n.judge.status == Status::degenerate);
      CHECK(n.judge.message.find("singular") != std::string::npos);
      CHECK(n.exit_code() == 4);
    } else {
      // the ball learner draws other tokens (finer grid), so it must simply succeed
      CHECK(r.judge.status == Status::ok);
      CHECK(r.truth.contains_truth == true);
    }
  }
}

TEST_CASE("degenerate draw through the CLI: message and exit code 4; malformed files exit 3") {
  const Model m = zero_residue_model(42);
  const std::string path = "test_recover_zero_residue.json";
  {
    std::ofstream f(path);
    f << model_to_json_text(m);
  }
  auto r = test::run(std::string(MHAQ_BINARY) + " recover --model " + path + " --seed 42 --no-repair --json 2>/dev/null");
  CHECK(r.code == 4);
  CHECK(test::record_of(r.out).judge.status == Status::degenerate);
  r = test::run(std::string(MHAQ_BINARY) + " recover --model " + path + " --seed 42 --no-repair 2>&1 >/dev/null");
  CHECK(r.code == 4);
  CHECK(r.out.find("degenerate") != std::string::npos);
  r = test::run(std::string(MHAQ_BINARY) + " recover --model " + path + " --seed 42 2>/dev/null");
  CHECK(r.code == 0);  // repaired: delta_1 drawn afresh
  CHECK(r.out.find("drawn afresh") != std::string::npos);

  const std::string bad = "test_recover_bad.json";
  for (const std::string& text :
       {std::string("{not json"), std::string(R"({"format":"mhaq-model","version":1,"d":2,"heads":[{"W":[["1","0"]],"v":["1","1"]}]})"),
        std::string(R"({"format":"mhaq-model","version":1,"d":1,"heads":[{"W":[[0.1]],"v":["1"]}]})"), std::string(R"({"format":"mhaq-model","version":1,"d":1,"heads":[{"W":[["1/0"]],"v":["1"]}]})"),
        std::string(R"({"format":"mhaq-model","version":1,"d":1,"heads":[{"W":[["1"]],"v":["1"],"bias":["0"]}]})")}) {
    {
      std::ofstream f(bad);
      f << text;
    }
    r = test::run(std::string(MHAQ_BINARY) + " recover --model " + bad + " 2>&1");
    INFO(text << " -> " << r.out);
    CHECK(r.code == 3);
    CHECK(r.out.find("input error") != std::string::npos);
  }
  // a model file names its format and version (either missing: exit 3, naming it)
  for (const std::string& key : {std::string("format"), std::string("version")}) {
    {
      std::ofstream f(bad);
      f << (key == "format" ? R"({"version":1,"d":1,"heads":[{"W":[["1"]],"v":["1"]}]})" : R"({"format":"mhaq-model","d":1,"heads":[{"W":[["1"]],"v":["1"]}]})");
    }
    r = test::run(std::string(MHAQ_BINARY) + " recover --model " + bad + " 2>&1");
    INFO(r.out);
    CHECK(r.code == 3);
    CHECK(r.out.find(key + ": missing") != std::string::npos);
  }
  r = test::run(std::string(MHAQ_BINARY) + " recover --model does-not-exist.json 2>&1");
  CHECK(r.code == 3);
  CHECK(r.out.find("cannot open") != std::string::npos);
}

TEST_CASE("the learner reaches the model only through Oracle<T>") {
  // learn() accepts an Oracle<T>& and nothing that exposes parameters.
  static_assert(std::is_invocable_v<decltype(&learn<QTau>), Oracle<QTau>&, const LearnOptions&>);
  static_assert(!std::is_invocable_v<decltype(&learn<QTau>), Model&, const LearnOptions&>);
  static_assert(!std::is_invocable_v<decltype(&learn<Ball>), const Model&, const LearnOptions&>);
  // Oracles are neither copyable nor convertible to a model.
  static_assert(!std::is_copy_constructible_v<Oracle<Mpfr>>);
  static_assert(!std::is_convertible_v<ModelOracle<double>&, Model&>);
  // The oracle counts every query the learner sends.
  GenerateOptions g;
  g.d = 2;
  g.heads = 1;
  g.seed = 5;
  OracleStack<QTau> oracle_stack = OracleStack<QTau>::model(generate_model(g), 1);
  Oracle<QTau>& oracle = oracle_stack.top();
  LearnOptions lo;
  lo.H = 1;
  lo.seed = 9;
  lo.tokens = default_tokens(Arith::exact);
  const auto res = learn<QTau>(oracle, lo);
  CHECK(oracle.queries() == static_cast<long>(res.plan.queries().size()));
  CHECK(oracle.queries() == paper_query_bound(2, 1));
}

TEST_CASE("lean schedule: 1 + 2H(d^2+d-1) queries and exact recovery") {
  GenerateOptions g;
  g.d = 3;
  g.heads = 2;
  g.seed = 21;
  const Model m = generate_model(g);
  RecoverOptions o;
  o.schedule = Schedule::lean;
  o.seed = 4;
  const RecoverResult r = recover(m, o);
  INFO(record_json(r).dump().substr(0, 300));
  CHECK(r.evidence.queries == lean_query_count(3, 2));
  if (r.judge.status == Status::ok) CHECK(r.truth.exact_match == true);
  else CHECK(r.judge.status == Status::degenerate);
}

TEST_CASE("model files round-trip exactly") {
  GenerateOptions g;
  g.d = 3;
  g.heads = 2;
  g.seed = 77;
  const Model m = generate_model(g);
  const Model back = model_from_json_text(model_to_json_text(m));
  REQUIRE(back.heads.size() == m.heads.size());
  for (size_t h = 0; h < m.heads.size(); ++h) {
    CHECK(back.heads[h].W == m.heads[h].W);
    CHECK(back.heads[h].v == m.heads[h].v);
  }
  CHECK(Rational::parse("-1.25e-1") == Rational(-1, 8));
  CHECK(Rational::parse("6/4") == Rational(3, 2));
  CHECK_THROWS_AS(Rational::parse("1/2/3"), Error);
  CHECK_THROWS_AS(Rational::parse("abc"), Error);
}
