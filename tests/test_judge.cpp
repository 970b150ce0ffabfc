// The judge through the CLI: the float runs that once ended "ok" and wrong
// now end ok only when right, and every status has its exit code.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "mhaq/run/judge.hpp"
#include "mhaq/run/record_json.hpp"
#include "mhaq/run/report.hpp"
#include "test_util.hpp"

using nlohmann::json;
using namespace mhaq;

namespace {
const std::string bin = MHAQ_BINARY;

struct Ran {
  int code;
  json j;
};
Ran run(const std::string& args) {
  const auto r = test::run(bin + " " + args + " --json 2>/dev/null");
  REQUIRE_MESSAGE(!r.out.empty(), args);
  return {r.code, json::parse(r.out)};
}

// "ok" only with the canonical head count and an error within the stated
// tolerance; otherwise a non-ok status with its own non-zero exit code.
void check_honest(const Ran& r, const std::string& what) {
  INFO(what << ": " << r.j.dump().substr(0, 400));
  const std::string st = r.j["status"].get<std::string>();
  CHECK(r.code == status_exit_code(parse_status(st)));
  if (st != "ok") {
    CHECK(r.code != 0);
    CHECK(r.j.contains("remedy"));
    return;
  }
  CHECK(r.code == 0);
  CHECK(r.j["heads_recovered"] == r.j["heads_true"]);
  if (r.j.contains("tolerance")) {
    REQUIRE(r.j["max_rel_error"].is_number());
    CHECK(r.j["max_rel_error"].get<double>() <= r.j["tolerance"].get<double>());
  }
  if (r.j.contains("exact_match")) CHECK(r.j["exact_match"] == true);
  if (r.j.contains("contains_truth")) CHECK(r.j["contains_truth"] == true);
}

// Written into the test's temporary working directory (doctest_main).
std::string tmp_model(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::absolute(name);
  FILE* f = std::fopen(p.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return p.string();
}
const char* kEqualV = R"({"format":"mhaq-model","version":1,"d":2,"heads":[
 {"W":[["1/2","-1/4"],["1/4","3/4"]],"v":["1","-1/2"]},
 {"W":[["-1/4","1/2"],["0","-1/2"]],"v":["1","-1/2"]}]})";
}  // namespace

TEST_CASE("float runs that used to end ok and wrong: never ok and wrong") {
  // d = 12, H = 4 in double once said ok with max_rel_error 3.1
  check_honest(run("recover --d 12 --heads 4 --seed 1 --arith double"), "d=12 H=4 double");
  // two heads found of three under a bound H0 = 4, once ok
  const Ran b = run("recover --d 2 --heads 3 --seed 2 --arith double --max-heads 4");
  check_honest(b, "H0 bound in double");
  // a learner told fewer heads than the truth, once ok with one head of two (and a certificate)
  for (const char* a : {"mpfr", "double"}) {
    const std::string cert = tmp_model(std::string("cert_") + a + ".json", "");
    std::filesystem::remove(cert);
    const Ran r = run(std::string("recover --d 3 --heads 2 --seed 1 --arith ") + a + " --learner-heads 1 --certificate " + cert);
    check_honest(r, std::string("fewer heads, ") + a);
    CHECK(r.j["status"] != "ok");
    CHECK_FALSE(std::filesystem::exists(cert));
  }
  // the lean schedule on two heads with equal v_h (once ok with errors 0.55 and 2.7)
  const std::string eqv = tmp_model("equal_v.json", kEqualV);
  for (const char* a : {"mpfr", "double", "exact", "ball"})
    for (int seed = 1; seed <= 3; ++seed) {
      const Ran r = run("recover --model " + eqv + " --schedule lean --seed " + std::to_string(seed) + " --arith " + a);
      check_honest(r, std::string("lean equal v, ") + a);
    }
}

TEST_CASE("lean schedule with equal v_h: exact recovery through the fallback links, extra queries reported") {
  const std::string eqv = tmp_model("equal_v.json", kEqualV);
  for (int seed = 1; seed <= 4; ++seed) {
    const Ran r = run("recover --model " + eqv + " --schedule lean --seed " + std::to_string(seed));
    INFO(r.j.dump().substr(0, 300));
    if (r.j["status"] == "degenerate") continue;
    REQUIRE(r.j["status"] == "ok");
    CHECK(r.j["exact_match"] == true);
    REQUIRE(r.j.contains("fallback_queries"));
    // d = 2: one residue step per offset at b_2, each asking one across link of 2H queries
    CHECK(r.j["fallback_pairs"] == 2);
    CHECK(r.j["fallback_queries"] == 2 * 2 * 2);
    CHECK(r.j["queries"] == 1 + 2 * 2 * (2 * 2 + 2 - 1) + r.j["fallback_queries"].get<int>());
  }
}

TEST_CASE("misleading classes: the stated H, an empty canonical form, precision") {
  // told more heads than exist: not identifiable, in exact mode, on every seed
  for (int seed = 1; seed <= 3; ++seed) {
    const Ran r = run("recover --d 3 --heads 2 --seed " + std::to_string(seed) + " --learner-heads 3");
    if (r.j["status"] == "degenerate") continue;
    CHECK(r.j["status"] == "not_identifiable");
    CHECK(r.code == 9);
  }
  // every head cancels: the empty model is recovered, status ok, not "error"
  const Ran z = run("recover --d 3 --heads 2 --cancel-v --seed 1");
  CHECK(z.j["status"] == "ok");
  CHECK(z.j["heads_recovered"] == 0);
  CHECK(z.code == 0);
  // too little precision for an unknown head count is unable, not a bad draw
  for (int seed = 1; seed <= 3; ++seed) {
    const Ran r = run("recover --d 3 --heads 3 --seed " + std::to_string(seed) + " --arith mpfr --bits 53 --max-heads 5");
    check_honest(r, "H0 = 5 at 53 bits");
    CHECK(r.j["status"] != "degenerate");
  }
}

TEST_CASE("max_rel_error uses the best assignment and is defined for a head with W = 0") {
  const std::string m = tmp_model("zero_w.json", R"({"format":"mhaq-model","version":1,"d":2,"heads":[
 {"W":[["0","0"],["0","0"]],"v":["1","-1/2"]},
 {"W":[["1/2","-1/4"],["1/4","3/4"]],"v":["-1","2"]}]})");
  const Ran r = run("recover --model " + m + " --arith mpfr --bits 128");
  check_honest(r, "W = 0 head");
  REQUIRE(r.j["status"] == "ok");
  CHECK(r.j["max_rel_error"].is_number());
  CHECK(r.j["max_rel_error"].get<double>() < 1e-20);
}

TEST_CASE("the run record's JSON: set fields only, non-finite numbers as null, read back whole") {
  RecoverResult r;
  r.run.arith = Arith::ball;
  r.run.d = 2;
  r.run.seed = 3;
  r.evidence.queries = 7;
  r.study.kappa = 1.5;
  r.truth.max_radius = NAN;           // out of double's range: written as null
  r.study.certified_bound = INFINITY;  // likewise
  r.judge.message = "kept for a status other than ok";
  json j = record_json(r);
  CHECK(j["status"] == "ok");
  CHECK(j["arith"] == "ball");
  CHECK_FALSE(j.contains("message"));  // ok has no message and no remedy
  CHECK_FALSE(j.contains("remedy"));
  CHECK_FALSE(j.contains("heads_recovered"));  // never set: absent
  CHECK_FALSE(j.contains("model_kind"));       // attention is not written
  CHECK(j["queries"] == 7);
  CHECK(j["kappa"] == 1.5);
  CHECK(j["max_radius"].is_null());
  CHECK(j["certified_bound"].is_null());
  report_verdict(r, {Status::unable, "too coarse"});
  j = record_json(r);
  CHECK(j["status"] == "unable");
  CHECK(j["message"] == "too coarse");
  CHECK(j["remedy"] == status_remedy(Status::unable));
  // keys in nlohmann::json's sorted order, so the bytes do not depend on the order fields are filled
  CHECK(j.dump().find("\"arith\"") < j.dump().find("\"d\""));
  const RecoverResult b = record_from_json(json::parse(j.dump()));
  CHECK(b.judge.status == Status::unable);
  CHECK(b.judge.message == "too coarse");
  CHECK(b.run.arith == Arith::ball);
  CHECK(b.evidence.queries == 7L);
  CHECK(b.study.kappa == 1.5);
  CHECK_FALSE(b.truth.max_radius.has_value());  // null reads as absent
  CHECK_FALSE(b.evidence.heads_recovered.has_value());
  CHECK(b.exit_code() == status_exit_code(Status::unable));
  CHECK(json_text(NAN) == "null");
  CHECK(json_text(0.5) == "0.5");
  CHECK(json_text(std::vector<std::string>{"1/2", "3"}) == "[\"1/2\",\"3\"]");
  CHECK(finite_number(r.truth.max_radius) == std::nullopt);
  CHECK(finite_number(r.study.kappa) == 1.5);
  CHECK_THROWS_AS(record_from_json(json{{"status", "ok"}, {"schedule", "spiral"}}), Error);  // an unknown name is refused
  CHECK_THROWS_AS(record_from_json(json{{"queries", 3}}), Error);                            // no status
}

TEST_CASE("the run record's JSON reads back every key it writes (a transformer's and an attention run's records, every group set)") {
  RecoverResult r;
  r.run = {oracle_protocol::ModelKind::transformer, BaselineMethod::orthogonal, Arith::mpfr, 128L, 3, 2, HeadsKnown::upper_bound, 4, 9, 5L, 1L, 2,
           "a note", ExactSolver::sparse, "orthogonal", std::vector<long>{1, 2}, 16};
  r.plan = {Schedule::compact, 69L, 70L, 33L, 12L, 5L, ExactCostRecord{4, 76, 520, 20000}};
  r.design.kind = Design::tuned;
  r.design.pilot_schedule = Schedule::lean;
  r.design.pilot_status = "ok";
  r.design.kappa_rms_predicted = 0.25;
  r.oracle = {"server", "abs 1e-9", 40L, "1/1024", 5ULL, NoisePattern::signs};
  r.evidence.queries = 33;
  r.evidence.self_check = SelfCheck::unknown;
  r.evidence.verification = Truth::yes;
  r.evidence.repaired_pairs = std::vector<RepairRecord>{{"(1, 2)", "a zero residue", "derived from its link", 3}};
  {
    using Row = std::vector<std::string>;
    HeadRecord h;
    h.W = {Row{"1/2", "0"}, Row{"1", "-1"}};
    h.v = Row{"3", "4"};
    h.c = Row{"1/4", "-1"};  // biases: c and beta, and the run's bias flag
    r.evidence.heads = std::vector<HeadRecord>{h};
  }
  r.evidence.beta = "-3/2";
  r.run.bias = true;
  {
    // Spelled out: nested braces of two string literals would pick std::string's iterator-pair constructor.
    using Row = std::vector<std::string>;
    TransformerRecord t;
    t.W = {std::vector<Row>{Row{"1", "0"}, Row{"0", "1"}}};
    TransformerRecord::Neuron n;
    n.u = "2";
    n.U = {Row{"1", "2"}, Row{"3", "4"}};
    t.neurons = {n};
    r.evidence.model = t;
  }
  r.evidence.queries_by_phase = PhaseQueries{10, 20, 30};
  r.evidence.path = PathRecord{1, 2, 3, 4};
  r.judge.status = Status::mismatch;
  r.judge.message = "differs";
  r.judge.blind_status = Status::ok;
  r.judge.tolerance = 0.5;
  r.truth.heads_true = 2;
  r.truth.functional_check = FunctionalCheck{20, 20, true};
  r.truth.exact_match = false;
  r.study.attempts = std::vector<PrecisionAttempt>{{64, Status::unable, NAN}, {128, Status::ok, 0.125}};
  r.study.target_error = "1/1000";
  ModelFileInfo info;
  info.format = "mhaq-model-factored";
  info.d = 3;
  info.heads = 2;
  info.d_k = 2;
  info.d_v = 2;
  info.d_out = 3;
  info.projection = "concatenated";
  info.scale = "1/2";
  info.conversion = "W_h = scale * K_h Q_h^T";
  r.output.model_conversion = info;
  r.output.certificate = "c.json";
  const std::string text = record_json(r).dump();
  const RecoverResult b = record_from_json(json::parse(text));
  CHECK(record_json(b).dump() == text);  // every key written is read back
  CHECK(b.run.kind == oracle_protocol::ModelKind::transformer);
  CHECK(b.plan.schedule == Schedule::compact);
  CHECK(b.design.kind == Design::tuned);
  CHECK(b.evidence.self_check == SelfCheck::unknown);
  CHECK(b.study.attempts->at(1).certified_relative_error == 0.125);
  CHECK(b.output.model_conversion->scale == "1/2");
  const json j = json::parse(text);
  CHECK(j["model_kind"] == "transformer");
  CHECK(j["heads_known"] == "upper bound H0");
  CHECK(j["functional_check"]["lengths"] == "1-8");
  CHECK(j["attempts"][0]["certified_relative_error"].is_null());
}

TEST_CASE("the float judge's estimate is never below the observed error (plain, rounded, noisy, ill-conditioned runs)") {
  // the estimate (proofs/32, proofs/33: MPFR values, double derivatives) is
  // first-order; every run here leaves a factor 2 between it and the error
  const char* cases[] = {
      "--d 3 --heads 2 --seed 1",
      "--d 5 --heads 3 --seed 2",
      "--d 6 --heads 2 --seed 3",
      "--d 8 --heads 3 --seed 4",                          // paper design, kappa ~ 5e13
      "--d 10 --heads 4 --seed 5",                         // kappa ~ 2e16
      "--d 5 --heads 3 --seed 7 --oracle-bits 100",
      "--d 4 --heads 2 --seed 8 --noise 1e-30",
      "--d 5 --heads 2 --seed 9 --noise 1e-20 --noise-pattern worst",
      "--d 6 --heads 3 --seed 10 --noise 1e-40 --noise-pattern worst",
      "--d 8 --heads 3 --seed 11 --bits 128",              // the replay at the run's own precision
      "--d 6 --heads 3 --seed 12 --design scaled",
      "--d 5 --heads 2 --seed 13 --noise 1e-12",           // ends unable: estimate above the tolerance
      "--d 4 --heads 2 --seed 14 --bias",                  // rows for c and beta (docs/math/biases.md)
      "--d 5 --heads 3 --seed 15 --bias --oracle-bits 120",
  };
  int estimated = 0;
  for (const char* c : cases) {
    const Ran r = run(std::string("recover --arith mpfr ") + c);
    check_honest(r, c);
    INFO(c << ": " << r.j.dump().substr(0, 300));
    if (!r.j.contains("error_estimate") || !r.j["error_estimate"].is_number() || !r.j["max_rel_error"].is_number()) continue;
    ++estimated;
    CHECK(r.j["error_estimate"].get<double>() >= 2 * r.j["max_rel_error"].get<double>());
  }
  CHECK(estimated == static_cast<int>(std::size(cases)));
}
