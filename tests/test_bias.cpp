// Biases (docs/math/biases.md): the canonical form {(W_h, c_h, v_h)} plus beta,
// recovered in every arithmetic with the adjusted query counts, H known or
// only bounded; the bias-free paths untouched.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "mhaq/analysis/ball_replay.hpp"
#include "mhaq/check/certificate_check.hpp"
#include "mhaq/evidence/verify.hpp"
#include "mhaq/model/factored.hpp"
#include "mhaq/model/compare_heads.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "test_util.hpp"

using namespace mhaq;

namespace {
long bias_count(Schedule s, long d, long H) { return schedule_query_count(s, d, H, 0, true); }

// Queries beyond the plan: repairs and a small grid's witnesses (proofs/21, proofs/39).
long extra(const RecoverResult& r) { return r.evidence.repair_queries.value_or(0) + r.evidence.grid_witness_queries.value_or(0) + r.evidence.fallback_queries.value_or(0); }

HeadQ head(int d, std::initializer_list<long> w, std::initializer_list<long> v, std::initializer_list<long> c) {
  HeadQ h{QMat(d, d), QVec(static_cast<size_t>(d)), QVec(static_cast<size_t>(d))};
  auto wi = w.begin();
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) h.W(i, j) = Rational(*wi++, 4);
  auto vi = v.begin(), ci = c.begin();
  for (int i = 0; i < d; ++i) {
    h.v[static_cast<size_t>(i)] = Rational(*vi++, 8);
    h.c[static_cast<size_t>(i)] = Rational(*ci++, 4);
  }
  return h;
}
}  // namespace

TEST_CASE("the counts: paper 4Hd^2 + 4Hd - 2H + 1, lean 1 + 2H(d^2 + 2d - 1), compact + s_H d; each plan asks exactly that") {
  for (int d = 1; d <= 5; ++d)
    for (int H = 1; H <= 4; ++H) {
      CHECK(bias_count(Schedule::paper, d, H) == 4L * H * d * d + 4L * H * d - 2L * H + 1);
      CHECK(bias_count(Schedule::lean, d, H) == 1 + 2L * H * (d * d + 2 * d - 1));
      CHECK(bias_count(Schedule::compact, d, H) == compact_query_count(d, H) + static_cast<long>(compact_samples(H)) * d);
      LearnOptions lo;
      lo.H = H;
      lo.bias = true;
      lo.seed = static_cast<std::uint64_t>(10 * d + H);
      for (Schedule s : {Schedule::paper, Schedule::lean, Schedule::compact}) {
        lo.schedule = s;
        const Plan p = learner_plan(d, lo);
        INFO("d=" << d << " H=" << H << " " << std::string(schedule_name(s)));
        CHECK(p.bias);
        CHECK(p.finals() == d + 1);
        CHECK(p.query_count() == bias_count(s, d, H));
        long longest = 0;
        for (const Query& q : p.queries()) {
          long n = 0;
          for (const Run& r : q) n += r.count;
          longest = std::max(longest, n);
        }
        CHECK(longest <= 2 * H + 1);
        // without biases the plan is the paper's, on the same B and Delta
        LearnOptions plain = lo;
        plain.bias = false;
        const Plan q = learner_plan(d, plain);
        CHECK_FALSE(q.bias);
        CHECK(q.query_count() == schedule_query_count(s, d, H));
        for (int j = 0; j < d; ++j) CHECK(q.B.col(j) == p.B.col(j));
        CHECK(q.Delta == p.Delta);
      }
    }
}

TEST_CASE("exact: drawn biased models (d <= 6, H <= 3, shared and cancelling heads) recovered by equality with the adjusted count") {
  test::Outcomes runs("drawn biased models, exact");
  const int n = 18 * test::multiplier();
  for (int t = 0; t < n; ++t) {
    GenerateOptions g;
    g.d = 1 + t % 6;
    g.heads = 1 + (t / 2) % 3;
    g.seed = 500 + static_cast<std::uint64_t>(t);
    g.bias = true;
    const int variant = t % 3;  // plain, shared W and c, cancelling pair
    if (variant == 1) {
      g.heads += 1;
      g.share_w = true;
    } else if (variant == 2) {
      g.heads += 2;
      g.cancel_v = true;
    }
    if (g.d >= 5 && g.heads > 3) g.heads = 3;
    const Model m = generate_model(g);
    REQUIRE(m.has_bias());
    const Model canon = m.canonical();
    const int H = canon.num_heads(), d = g.d;
    if (H == 0) {
      runs.count("no canonical heads");
      continue;
    }
    RecoverOptions o;
    o.seed = 70 + static_cast<std::uint64_t>(t);
    const RecoverResult r = recover_run(m, o);
    INFO("trial " << t << ": d=" << d << " H=" << H << " variant " << variant << ": " << std::string(status_name(r.judge.status)) << " " << r.judge.message);
    REQUIRE(r.run.bias == true);
    REQUIRE(r.judge.status != Status::mismatch);
    REQUIRE(r.judge.status != Status::inconsistent);
    runs.count(std::string(status_name(r.judge.status)));
    if (r.judge.status == Status::degenerate) continue;
    REQUIRE(r.judge.status == Status::ok);
    CHECK(r.truth.exact_match == true);
    CHECK(r.evidence.self_check == SelfCheck::yes);
    CHECK(r.evidence.queries == bias_count(Schedule::paper, d, H) + extra(r));
    if (extra(r) == 0) CHECK(r.evidence.queries == 4L * H * d * d + 4L * H * d - 2L * H + 1);
    CHECK(r.evidence.max_length <= 2 * H + 1);
    REQUIRE(r.evidence.beta);
    CHECK(*r.evidence.beta == canon.beta.str());
    REQUIRE(r.evidence.heads);
    for (const HeadRecord& h : *r.evidence.heads) CHECK(h.c.value_or(std::vector<std::string>{}).size() == static_cast<size_t>(d));
  }
  runs.require(n * 3 / 4, {"ok"});
}

TEST_CASE("exact: heads with equal W and different c stay two heads; equal (W, c) merge") {
  Model m;
  m.d = 2;
  m.heads = {head(2, {1, 2, -1, 3}, {3, -1}, {1, 0}), head(2, {1, 2, -1, 3}, {-2, 5}, {-1, 2}), head(2, {1, 2, -1, 3}, {1, 1}, {1, 0})};
  m.beta = Rational(5, 3);
  const Model c = m.canonical();
  REQUIRE(c.num_heads() == 2);
  CHECK(c.heads[0].v == QVec{Rational(4, 8), Rational(0)});  // heads 1 and 3 merged: v summed
  CHECK(c.beta == Rational(5, 3));
  CHECK(canonical_summary(m).str().find("equal W and c") != std::string::npos);
  test::Outcomes runs("equal W, different c");
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    RecoverOptions o;
    o.seed = seed;
    const RecoverResult r = recover_run(m, o);
    INFO(status_name(r.judge.status) << " " << r.judge.message);
    REQUIRE((r.judge.status == Status::ok || r.judge.status == Status::degenerate));
    runs.count(std::string(status_name(r.judge.status)));
    if (r.judge.status != Status::ok) continue;
    CHECK(r.evidence.heads_recovered == 2);
    CHECK(r.truth.exact_match == true);
    CHECK(r.evidence.beta == "5/3");
  }
  runs.require(2, {"ok"});
}

TEST_CASE("exact: unknown H with biases, only H0 = H + 1 known, asks the count at H0") {
  test::Outcomes runs("unknown H with biases, H0 = H + 1");
  const int n = 4 * test::multiplier();
  for (int t = 0; t < n; ++t) {
    GenerateOptions g;
    g.d = 2 + t % 2;
    g.heads = 1 + t % 2;
    g.seed = 800 + static_cast<std::uint64_t>(t);
    g.bias = true;
    const Model m = generate_model(g);
    const int H = m.canonical().num_heads(), H0 = H + 1;
    RecoverOptions o;
    o.max_heads = H0;
    o.seed = 3 + static_cast<std::uint64_t>(t);
    const RecoverResult r = recover_run(m, o);
    INFO("trial " << t << ": " << std::string(status_name(r.judge.status)) << " " << r.judge.message);
    REQUIRE((r.judge.status == Status::ok || r.judge.status == Status::degenerate));
    runs.count(std::string(status_name(r.judge.status)));
    CHECK(r.evidence.queries == bias_count(Schedule::paper, g.d, H0) + extra(r));
    if (r.judge.status != Status::ok) continue;
    CHECK(r.evidence.heads_found == H);
    CHECK(r.truth.exact_match == true);
  }
  runs.require(n / 2, {"ok"});
}

TEST_CASE("lean and compact with biases: exact by equality with their counts, fallbacks through the affine across link") {
  // heads 1 and 2 have equal v: residues cannot label, so both schedules ask their fallbacks
  Model m;
  m.d = 2;
  m.heads = {head(2, {1, -2, 0, 3}, {3, -5}, {2, 1}), head(2, {-1, 1, 2, 1}, {3, -5}, {-1, 1})};
  m.beta = Rational(-7, 2);
  GenerateOptions g;
  g.d = 3;
  g.heads = 2;
  g.seed = 31;
  g.bias = true;
  const Model drawn = generate_model(g);
  for (Schedule s : {Schedule::lean, Schedule::compact}) {
    test::Outcomes runs(std::string("biases, ") + std::string(schedule_name(s)));
    int fell_back = 0;
    for (std::uint64_t seed = 1; seed <= 3; ++seed)
      for (const Model* model : {static_cast<const Model*>(&m), &drawn}) {
        RecoverOptions o;
        o.schedule = s;
        o.seed = seed;
        const RecoverResult r = recover_run(*model, o);
        INFO(std::string(schedule_name(s)) << " seed " << seed << ": " << std::string(status_name(r.judge.status)) << " " << r.judge.message);
        REQUIRE((r.judge.status == Status::ok || r.judge.status == Status::degenerate));
        runs.count(std::string(status_name(r.judge.status)));
        if (r.judge.status != Status::ok) continue;
        CHECK(r.truth.exact_match == true);
        CHECK(r.evidence.queries == bias_count(s, model->d, 2) + r.evidence.fallback_queries.value_or(0));
        if (model == &m) CHECK(r.evidence.fallback_queries.value_or(0) > 0);
        fell_back += r.evidence.fallback_queries.value_or(0) > 0;
      }
    runs.require(4, {"ok"});
    CHECK(fell_back >= 1);
  }
}

TEST_CASE("balls contain the truth; mpfr and double are ok only with a certified bound on [W c], v and beta") {
  for (Arith a : {Arith::ball, Arith::mpfr, Arith::ieee}) {
    GenerateOptions g = default_generate(a);
    g.d = 3;
    g.heads = 2;
    g.seed = 44;
    g.bias = true;
    const Model m = generate_model(g);
    RecoverOptions o;
    o.arith = a;
    o.bits = 256;
    o.seed = 2;
    const RecoverResult r = recover_run(m, o);
    INFO(std::string(arith_name(a)) << ": " << std::string(status_name(r.judge.status)) << " " << r.judge.message);
    REQUIRE(r.judge.status == Status::ok);
    CHECK(r.evidence.queries == bias_count(Schedule::paper, 3, 2));
    REQUIRE(r.evidence.beta);
    if (a == Arith::ball) {
      CHECK(r.truth.contains_truth == true);
    } else {
      REQUIRE(r.judge.error_estimate);
      CHECK(*r.truth.max_rel_error <= *r.judge.tolerance);
      CHECK(*r.truth.max_rel_error <= 64 * *r.judge.error_estimate);
      // the judge's certified bound covers c and beta as max_rel_error does
      REQUIRE(r.judge.certified_error);
      CHECK(*r.judge.certified_error <= *r.judge.tolerance);
      CHECK(*r.truth.max_rel_error <= *r.judge.certified_error);
    }
  }
}

TEST_CASE("the float judge's certified distance counts c and beta, as max_rel_error does") {
  // one head W = 1, v = 1, c = 2 and beta = 4, exact balls; the run's head
  // equal but for c or beta
  const Field<double> F{};
  LearnedHead<Ball> b{Mat<Ball>(1, 1, Ball(1L)), {Ball(1L)}, {Ball(2L)}};
  const Ball bb(4L);
  LearnedHead<double> g{Mat<double>(1, 1, 1.0), {1.0}, {2.0}};
  double beta = 4;
  const std::vector<LearnedHead<Ball>> balls{b};
  CHECK(certified_distance_log2(F, std::vector<LearnedHead<double>>{g}, balls, &beta, &bb) < -60);
  beta = 4.5;  // |beta - 4| / 4 = 2^-3
  const double off_beta = certified_distance_log2(F, std::vector<LearnedHead<double>>{g}, balls, &beta, &bb);
  CHECK(off_beta >= -3);
  CHECK(off_beta < -2.9);
  beta = 4;
  g.c[0] = 2.5;  // |c - 2| / ||[1 2]|| = 2^-1 / sqrt(5)
  const double off_c = certified_distance_log2(F, std::vector<LearnedHead<double>>{g}, balls, &beta, &bb);
  CHECK(off_c >= -1 - std::log2(std::sqrt(5.0)));
  CHECK(off_c < -2.1);
  // a beta on one side only is no bound
  CHECK(std::isinf(certified_distance_log2(F, std::vector<LearnedHead<double>>{g}, balls, &beta, nullptr)));
}

TEST_CASE("a wrong beta or c is caught by the truth comparison, never reported ok") {
  GenerateOptions g;
  g.d = 2;
  g.heads = 2;
  g.seed = 9;
  g.bias = true;
  const Model m = generate_model(g);
  RecoverOptions o;
  o.seed = 1;
  const RecoverResult r = recover_run(m, o);
  REQUIRE(r.judge.status == Status::ok);
  // the learner's answers are those of m; compared with a model that differs
  // only in beta, or only in one c entry, the same run's heads disagree
  LearnOptions lo;
  lo.H = 2;
  lo.bias = true;
  lo.seed = 123;
  OracleStack<QTau> oracle = OracleStack<QTau>::model(m, 1);
  const LearnResult<QTau> res = learn(oracle.top(), lo);
  REQUIRE(res.beta);
  CHECK(exact_heads_match(res.heads, m.canonical(), &*res.beta));
  Model other = m;
  other.beta += Rational(1, 1000);
  CHECK_FALSE(exact_heads_match(res.heads, other.canonical(), &*res.beta));
  other = m;
  other.heads[0].c[1] += Rational(1, 1000);
  CHECK_FALSE(exact_heads_match(res.heads, other.canonical(), &*res.beta));
  CHECK_FALSE(exact_heads_match(res.heads, m.canonical(), nullptr));  // a nonzero beta must be recovered
}

TEST_CASE("a model without biases, learned with biases, gives c = 0 and beta = 0 exactly; without --bias its run is unchanged") {
  GenerateOptions g;
  g.d = 3;
  g.heads = 2;
  g.seed = 12;
  const Model m = generate_model(g);
  REQUIRE_FALSE(m.has_bias());
  RecoverOptions o;
  o.seed = 5;
  o.bias = true;
  const RecoverResult r = recover_run(m, o);
  REQUIRE(r.judge.status == Status::ok);
  CHECK(r.truth.exact_match == true);
  CHECK(r.evidence.beta == "0");
  for (const HeadRecord& h : *r.evidence.heads)
    for (const std::string& x : h.c.value_or(std::vector<std::string>{})) CHECK(x == "0");
  o.bias.reset();
  const RecoverResult plain = recover_run(m, o);
  CHECK_FALSE(plain.run.bias);
  CHECK_FALSE(plain.evidence.beta);
  CHECK(plain.evidence.queries == paper_query_bound(3, 2));
}

TEST_CASE("a learner told there are no biases never returns a model of a biased one") {
  test::Outcomes runs("biased models learned without biases");
  const int n = 6 * test::multiplier();
  for (int t = 0; t < n; ++t) {
    GenerateOptions g;
    g.d = 2 + t % 2;
    g.heads = 1 + t % 2;
    g.seed = 60 + static_cast<std::uint64_t>(t);
    g.bias = true;
    const Model m = generate_model(g);
    RecoverOptions o;
    o.seed = static_cast<std::uint64_t>(t);
    o.bias = false;
    const RecoverResult r = recover_run(m, o);
    INFO("trial " << t << ": " << std::string(status_name(r.judge.status)) << " " << r.judge.message);
    CHECK(r.judge.status != Status::ok);
    runs.count(std::string(status_name(r.judge.status)));
  }
  CHECK(runs.of("ok") == 0);
  runs.require(n, {"inconsistent", "degenerate"});  // docs/math/biases.md: never heads
}

TEST_CASE("model files: c and beta (plain), q_bias, k_bias, v_bias, out_bias (factored), converted exactly") {
  const std::string plain = R"({"format":"mhaq-model","version":1,"d":2,"heads":[{"W":[["1","0"],["0","1"]],"v":["1","2"],"c":["1/2","0"]}],"beta":"-3"})";
  ModelFileInfo info;
  const Model m = model_from_json_text(plain, &info);
  CHECK(info.biases);
  CHECK(m.heads[0].c == QVec{Rational(1, 2), Rational(0)});
  CHECK(m.beta == Rational(-3));
  CHECK(model_from_json_text(model_to_json_text(m)).heads[0].c == m.heads[0].c);
  // zero biases are no biases
  const Model z = model_from_json_text(R"({"format":"mhaq-model","version":1,"d":1,"heads":[{"W":[["1"]],"v":["1"],"c":["0"]}],"beta":"0"})", &info);
  CHECK_FALSE(info.biases);
  CHECK(z.heads[0].c.empty());
  CHECK(model_to_json_text(z).find("beta") == std::string::npos);
  for (const char* bad : {R"({"format":"mhaq-model","version":1,"d":1,"heads":[{"W":[["1"]],"v":["1"],"c":["0","1"]}]})", R"({"format":"mhaq-model","version":1,"d":1,"heads":[{"W":[["1"]],"v":["1"],"bias":["0"]}]})",
                          R"({"format":"mhaq-model","version":1,"d":1,"heads":[{"W":[["1"]],"v":["1"]}],"b_o":"1"})", R"({"format":"mhaq-model","version":1,"d":1,"heads":[{"W":[["1"]],"v":["1"]}],"beta":0.5})"}) {
    INFO(bad);
    CHECK(test::error_of([&] { model_from_json_text(bad); }).first == static_cast<int>(ErrorKind::input));
  }
  // factored: d = 2, one head with d_k = d_v = d_out = 1, scale 1/2
  const std::string fact =
      R"({"format":"mhaq-model-factored","version":1,"d":2,"d_k":1,"d_v":1,"scale":"1/2",
         "heads":[{"Q":[["1"],["2"]],"K":[["3"],["-1"]],"V":[["1"],["1"]],"q_bias":["4"],"k_bias":["7"],"v_bias":["5"]}],
         "O":[["2"]],"readout":["3"],"out_bias":["-1"]})";
  const Model f = model_from_json_text(fact, &info);
  CHECK(info.biases);
  CHECK(info.conversion.find("b_q,h") != std::string::npos);
  // c = scale K b_q = (1/2) (3, -1) 4; beta = b_v O u + b_out u = 5*2*3 - 3
  CHECK(f.heads[0].c == QVec{Rational(6), Rational(-2)});
  CHECK(f.beta == Rational(27));
  CHECK(f.heads[0].W(0, 1) == Rational(3));  // scale K Q^T: (1/2) 3 2
  const auto err = test::error_of([&] { model_from_json_text(std::string(fact).replace(fact.find("\"q_bias\":[\"4\"]"), 14, "\"q_bias\":[\"4\",\"1\"]")); });
  CHECK(err.second.find("heads[0].q_bias: expected d_k = 1 entries") != std::string::npos);
  CHECK(test::error_of([&] { model_from_json_text(std::string(fact).replace(fact.find("k_bias"), 6, "b_k")); }).second.find("q_bias") != std::string::npos);
}

TEST_CASE("biases change the oracle's answers by c^T x_i in the scores and beta at the end") {
  Model m;
  m.d = 1;
  HeadQ h{QMat(1, 1), QVec{Rational(2)}, QVec{Rational(1)}};
  h.W(0, 0) = Rational(0);
  m.heads = {h};
  m.beta = Rational(1, 2);
  // [x1, x2] with W = 0, c = 1: weights softmax(x1, x2), answer 2 (x1 e^x1 + x2 e^x2) / (e^x1 + e^x2) + 1/2
  const Query q{Run{QVec{Rational(1)}, 1}, Run{QVec{Rational(0)}, 1}};
  const Ball b = evaluate_ball(m, q);
  Ball e(1L);
  arb_exp(e.raw(), e.raw(), working_precision());
  Ball want = Ball(2L) * e / (e + Ball(1L)) + Ball(Rational(1, 2));
  CHECK(arb_overlaps(b.raw(), want.raw()));
  const QTau x = evaluate_exact(m, q, 1);
  CHECK(arb_overlaps(Field<QTau>(1).enclose(x).raw(), want.raw()));
}

TEST_CASE("certificates of runs with biases: the separate checker accepts them and names every tamper") {
  for (Arith a : {Arith::exact, Arith::ball}) {
    GenerateOptions g;
    g.d = 2;
    g.heads = 3;
    g.seed = 41;
    g.bias = true;
    g.share_w = true;
    const Model m = generate_model(g);
    RecoverOptions o;
    o.arith = a;
    o.bits = 128;
    o.seed = 6;
    std::string text;
    o.certificate = &text;
    const RecoverResult r = recover_run(m, o);
    INFO(std::string(arith_name(a)) << ": " << std::string(status_name(r.judge.status)) << " " << r.judge.message);
    REQUIRE(r.judge.status == Status::ok);
    REQUIRE_FALSE(text.empty());
    const check::CertificateReport ok = check::check_certificate(text);
    CHECK(ok.ok());
    const nlohmann::json doc = nlohmann::json::parse(text);
    CHECK(doc["inputs"]["bias"] == true);
    CHECK(doc["claims"]["query_formula"] == "4Hd^2+4Hd-2H+1");
    CHECK(doc["plan"]["B"][0].size() == 3);  // d + 1 final tokens
    // a tamper is rejected at its path: beta, a head's c, the model's c and beta
    struct Tamper {
      const char* path;
      std::function<void(nlohmann::json&)> edit;
    };
    const std::string one = a == Arith::exact ? "\"7/3\"" : "{\"mid\": \"7/4\", \"rad\": \"0\"}";
    const std::vector<Tamper> tampers{
        {"beta", [&](nlohmann::json& j) { j["beta"] = nlohmann::json::parse(one); }},
        {"heads[0].c[1]", [&](nlohmann::json& j) { j["heads"][0]["c"][1] = nlohmann::json::parse(one); }},
        {"answers[", [](nlohmann::json& j) { j["model"]["beta"] = "1/7"; }},
        {"answers[", [](nlohmann::json& j) { j["model"]["heads"][2]["c"] = {"1/3", "0"}; }},
        {"queries[", [](nlohmann::json& j) { j["plan"]["B"][1][2] = j["plan"]["B"][0][2]; }}};
    for (const Tamper& t : tampers) {
      nlohmann::json j = doc;
      t.edit(j);
      const check::CertificateReport rep = check::check_certificate(j.dump());
      INFO("tamper at " << t.path);
      REQUIRE_FALSE(rep.ok());
      bool named = false;
      for (const auto& f : rep.failures) named = named || f.path.find(t.path) == 0;
      CHECK(named);
    }
    // without inputs.bias the file does not parse as a run with biases
    nlohmann::json j = doc;
    j["inputs"].erase("bias");
    CHECK_THROWS_AS(check::check_certificate(j.dump()), check::InputError);
  }
}

TEST_CASE("verify --bias: claims 1-4 hold in exact mode on drawn biased models, counted with the bias formula") {
  VerifyOptions o;
  o.trials = 12 * test::multiplier();
  o.seed = 38;
  o.max_d = 3;
  o.max_h = 2;
  o.bias = true;
  const std::optional<VerifyResult> got = verify(o);
  REQUIRE(got);
  const VerifyResult& v = *got;
  INFO(verify_report(v));
  CHECK(v.ok);
  REQUIRE(v.claims.size() == 4);
  int decided = 0;
  for (const ClaimRow& c : v.claims) {
    CHECK(c.failures == 0);
    CHECK(c.unable == 0);
    if (c.id == "1") {
      decided = c.passes + c.repaired;
      CHECK(c.text.find("(W_h, c_h, v_h) and beta") != std::string::npos);
    }
    if (c.id == "2") CHECK(c.text.find("4Hd^2 + 4Hd - 2H + 1") != std::string::npos);
    if (c.id == "4") CHECK(c.text.find("4H0d^2 + 4H0d - 2H0 + 1") != std::string::npos);
  }
  MESSAGE(decided << " of " << o.trials << " trials decided (the rest degenerate draws)");
  CHECK(decided * 2 > o.trials);
  CHECK(v.schwartz_zippel.bound_applies == false);
  CHECK(v.distribution.find("biases") != std::string::npos);
  // the tally asserts the bias count: the same records judged against the bias-free formula fail claim 2
  VerifyOptions plain = o;
  plain.bias = false;
  std::vector<VerifyTrial> records;
  for (int i = 0; i < 3; ++i) records.push_back(verify_trial(o, i));
  const VerifyResult wrong = verify_tally(plain, records);
  CHECK_FALSE(wrong.ok);
  CHECK(test::error_of([&] {
          VerifyOptions r = o;
          r.claim = 4;
          verify(r);
        }).first == static_cast<int>(ErrorKind::usage));
  CHECK(test::error_of([&] { rate_study(o, {1, 2}); }).second.find("--bias") != std::string::npos);
}

TEST_CASE("the rank schedule takes no biases: recover and verify refuse them, saying to leave out --rank") {
  GenerateOptions g;
  g.d = 3;
  g.heads = 1;
  g.seed = 7;
  g.bias = true;
  const Model m = generate_model(g);
  RecoverOptions o;
  o.schedule = Schedule::rank;
  o.rank = 1;
  const std::pair<int, std::string> e = test::error_of([&] { recover_run(m, o); });
  CHECK(e.first == static_cast<int>(ErrorKind::usage));
  CHECK(e.second.find("leave out --rank") != std::string::npos);
  // the same model told there are no biases is the user's choice: not refused as an option
  o.bias = false;
  CHECK(test::error_of([&] { recover_run(m, o); }).first != static_cast<int>(ErrorKind::usage));
  VerifyOptions v;
  v.trials = 1;
  v.bias = true;
  v.schedule = Schedule::rank;
  v.rank = 1;
  v.min_d = 2;
  const std::pair<int, std::string> ve = test::error_of([&] { verify(v); });
  CHECK(ve.first == static_cast<int>(ErrorKind::usage));
  CHECK(ve.second.find("--rank") != std::string::npos);
}
