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
#include "mhaq/run/recover_options.hpp"
#include "mhaq/run/report.hpp"
#include "test_util.hpp"

using nlohmann::json;
using namespace mhaq;

namespace {
const std::string bin = MHAQ_BINARY;

// A run through the CLI: its exit code, its --json output, and the typed
// record read back from it (the tests read the record's fields).
struct Ran {
  int code;
  std::string text;
  RecoverResult rec;
  Status status() const { return rec.judge.status; }
};
Ran run(const std::string& args) {
  const auto r = test::run(bin + " " + args + " --json 2>/dev/null");
  REQUIRE_MESSAGE(!r.out.empty(), args);
  return {r.code, r.out, record_from_json(json::parse(r.out))};
}

// "ok" only with the canonical head count and an error within the stated
// tolerance; otherwise a non-ok status with its own non-zero exit code.
void check_honest(const Ran& r, const std::string& what) {
  INFO(what << ": " << r.text.substr(0, 400));
  CHECK(r.code == status_exit_code(r.status()));
  if (r.status() != Status::ok) {
    CHECK(r.code != 0);
    CHECK(r.rec.judge.remedy.has_value());
    return;
  }
  CHECK(r.code == 0);
  CHECK(r.rec.evidence.heads_recovered == r.rec.truth.heads_true);
  if (r.rec.judge.tolerance) {
    REQUIRE(r.rec.truth.max_rel_error.has_value());
    CHECK(*r.rec.truth.max_rel_error <= *r.rec.judge.tolerance);
  }
  if (r.rec.truth.exact_match) CHECK(*r.rec.truth.exact_match);
  if (r.rec.truth.contains_truth) CHECK(*r.rec.truth.contains_truth);
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
    CHECK(r.status() != Status::ok);
    CHECK_FALSE(std::filesystem::exists(cert));
  }
  // the lean schedule on two heads with equal v_h (once ok with errors 0.55 and 2.7)
  const std::string eqv = tmp_model("equal_v.json", kEqualV);
  test::Outcomes lean("lean equal v, 4 arithmetics x seeds 1-3");
  for (const char* a : {"mpfr", "double", "exact", "ball"})
    for (int seed = 1; seed <= 3; ++seed) {
      const Ran r = run("recover --model " + eqv + " --schedule lean --seed " + std::to_string(seed) + " --arith " + a);
      check_honest(r, std::string("lean equal v, ") + a);
      lean.count(status_name(r.status()));
    }
  lean.require(6, {"ok"});  // an ok is checked against the truth; honest non-ok statuses alone would assert little
}

TEST_CASE("lean schedule with equal v_h: exact recovery through the fallback links, extra queries reported") {
  const std::string eqv = tmp_model("equal_v.json", kEqualV);
  test::Outcomes runs("lean equal v, exact, seeds 1-4");
  for (int seed = 1; seed <= 4; ++seed) {
    const Ran r = run("recover --model " + eqv + " --schedule lean --seed " + std::to_string(seed));
    INFO(r.text.substr(0, 300));
    runs.count(status_name(r.status()));
    if (r.status() == Status::degenerate) continue;
    REQUIRE(r.status() == Status::ok);
    CHECK(r.rec.truth.exact_match == true);
    REQUIRE(r.rec.evidence.fallback_queries.has_value());
    // d = 2: one residue step per offset at b_2, each asking one across link of 2H queries
    CHECK(r.rec.evidence.fallback_pairs == 2L);
    CHECK(r.rec.evidence.fallback_queries == 2L * 2 * 2);
    CHECK(r.rec.evidence.queries == 1 + 2 * 2 * (2 * 2 + 2 - 1) + *r.rec.evidence.fallback_queries);
  }
  runs.require(3, {"ok"});
}

TEST_CASE("misleading classes: the stated H, an empty canonical form, precision") {
  // told more heads than exist: not identifiable, in exact mode, on every seed
  test::Outcomes told("H = 3 for 2 canonical heads, seeds 1-3");
  for (int seed = 1; seed <= 3; ++seed) {
    const Ran r = run("recover --d 3 --heads 2 --seed " + std::to_string(seed) + " --learner-heads 3");
    told.count(status_name(r.status()));
    if (r.status() == Status::degenerate) continue;
    CHECK(r.status() == Status::not_identifiable);
    CHECK(r.code == 9);
  }
  told.require(2, {"not_identifiable"});
  // every head cancels: the empty model is recovered, status ok, not "error"
  const Ran z = run("recover --d 3 --heads 2 --cancel-v --seed 1");
  CHECK(z.status() == Status::ok);
  CHECK(z.rec.evidence.heads_recovered == 0);
  CHECK(z.code == 0);
  // too little precision for an unknown head count is unable, not a bad draw
  test::Outcomes coarse("H0 = 5 at 53 bits, seeds 1-3");
  for (int seed = 1; seed <= 3; ++seed) {
    const Ran r = run("recover --d 3 --heads 3 --seed " + std::to_string(seed) + " --arith mpfr --bits 53 --max-heads 5");
    check_honest(r, "H0 = 5 at 53 bits");
    CHECK(r.status() != Status::degenerate);
    coarse.count(status_name(r.status()));
  }
  coarse.require(3, {"ok", "unable"});  // every run decided: right, or honestly unable
}

TEST_CASE("max_rel_error uses the best assignment and is defined for a head with W = 0") {
  const std::string m = tmp_model("zero_w.json", R"({"format":"mhaq-model","version":1,"d":2,"heads":[
 {"W":[["0","0"],["0","0"]],"v":["1","-1/2"]},
 {"W":[["1/2","-1/4"],["1/4","3/4"]],"v":["-1","2"]}]})");
  const Ran r = run("recover --model " + m + " --arith mpfr --bits 128");
  check_honest(r, "W = 0 head");
  // a W ball around 0 cannot bound that head's scale away from zero, so the
  // certified judge has no bound on the relative error (proofs/40): unable
  CHECK((r.status() == Status::ok || r.status() == Status::unable));
  REQUIRE(r.rec.truth.max_rel_error.has_value());
  CHECK(*r.rec.truth.max_rel_error < 1e-20);
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
  RecoverOptions ro;
  ro.arith = Arith::ball;
  report_verdict(r, {Status::unable, "too coarse"}, ro);
  j = record_json(r);
  CHECK(j["status"] == "unable");
  CHECK(j["message"] == "too coarse");
  CHECK(j["remedy"] == run_remedy(r, {Status::unable, "too coarse"}, ro));
  CHECK(j["remedy"] == "precision too low: raise --bits, or --arith exact");
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
    INFO(c << ": " << r.text.substr(0, 300));
    if (!r.rec.judge.error_estimate || !r.rec.truth.max_rel_error) continue;
    ++estimated;
    CHECK(*r.rec.judge.error_estimate >= 2 * *r.rec.truth.max_rel_error);
  }
  CHECK(estimated == static_cast<int>(std::size(cases)));
}

TEST_CASE("every remedy names only options that apply to the run's own options") {
  // Over every status a run can end in and every combination of the options
  // a remedy may name: no --arith exact where exact mode refuses the run (an
  // external oracle, a chosen design, --target-error) or turns it into
  // inconsistent (rounded or noisy answers); no --oracle-bits, --noise,
  // --design or --token-range where the command has no such option; no
  // "raise --bits" for double; no --oracle-error or --max-queries without
  // --oracle; no "approximate answers" for exact answers.
  ExternalRun ext;
  test::Outcomes checked("remedies over the option grid");
  const char* messages[] = {"undecided at this precision", "cannot decide whether a type-(1,1) function fits all 5 values at this precision (balls never certify an exact agreement)",
                            "exact answers would reach tau-degree 3e+04", "the plan needs 999 queries, more than --max-queries 10: refused before asking any",
                            "exact mode: the learner's H = 16 exceeds the cost bound of the stated H, 8 heads", "small token grid: the plan's answers fit more than one model"};
  for (Status st : {Status::degenerate, Status::unable, Status::inconsistent, Status::not_identifiable, Status::over_budget, Status::oracle_failed})
    for (Arith a : {Arith::exact, Arith::ball, Arith::mpfr, Arith::ieee})
      for (int kind = 0; kind < 3; ++kind)  // attention, transformer, baseline
        for (bool external : {false, true})
          for (Design design : {Design::paper, Design::scaled, Design::placed})
            for (int accuracy = 0; accuracy < 3; ++accuracy)  // exact answers, --oracle-bits 53, --noise
              for (bool bound : {false, true})
                for (const char* m : messages) {
                  if (external && (a == Arith::exact || accuracy > 0 || kind == 2)) continue;  // refused as usage errors
                  if (a == Arith::exact && design != Design::paper) continue;
                  if (kind != 0 && (bound || design == Design::placed)) continue;  // attention options
                  const std::string msg = m;
                  // messages only runs with these options can end with
                  if (msg.find("--max-queries") != std::string::npos && !external) continue;
                  if (msg.find("cost bound") != std::string::npos && (a != Arith::exact || kind == 2)) continue;
                  if (msg.find("small token grid") != std::string::npos && kind == 2) continue;  // the baselines have no grid guard
                  if (st == Status::oracle_failed && !external) continue;
                  RecoverOptions o;
                  o.arith = a;
                  o.design = design;
                  o.external = external ? &ext : nullptr;
                  o.oracle_bits = accuracy == 1 ? 53 : 0;
                  o.noise_eps = accuracy == 2 ? Rational(1, 1000000) : Rational(0);
                  o.max_heads = bound ? 3 : 0;
                  RecoverResult r;
                  if (kind == 1) r.run.kind = oracle_protocol::ModelKind::transformer;
                  if (kind == 2) r.run.method = BaselineMethod::single_head;
                  const std::string remedy = run_remedy(r, {st, m}, o);
                  const std::string where = std::string(status_name(st)) + ", " + arith_name(a) + ", kind " + std::to_string(kind) + ", external " +
                                            std::to_string(external) + ", design " + design_name(design) + ", accuracy " + std::to_string(accuracy) +
                                            ", bound " + std::to_string(bound) + ", message \"" + msg + "\": " + remedy;
                  INFO(where);
                  CHECK(!remedy.empty());
                  const bool exact_ok = !external && design == Design::paper && accuracy == 0;
                  if (!exact_ok) CHECK(remedy.find("--arith exact") == std::string::npos);
                  if (external) CHECK(remedy.find("--oracle-bits") == std::string::npos);
                  if (external) CHECK(remedy.find("--noise") == std::string::npos);
                  if (!external) CHECK(remedy.find("--oracle-error") == std::string::npos);
                  if (!external) CHECK(remedy.find("--max-queries") == std::string::npos);
                  if (a == Arith::ieee) CHECK(remedy.find("raise --bits") == std::string::npos);
                  if (a == Arith::ieee) CHECK(remedy.find("more --bits") == std::string::npos);
                  if (kind == 2) CHECK(remedy.find("--design") == std::string::npos);
                  if (kind == 2) CHECK(remedy.find("--token-range") == std::string::npos);
                  if (kind == 2) CHECK(remedy.find("--learner-heads") == std::string::npos);
                  if (kind != 0) CHECK(remedy.find("--max-heads") == std::string::npos);
                  if (!bound) CHECK(remedy.find("--max-heads") == std::string::npos);
                  if (!external && accuracy == 0) CHECK(remedy.find("approximate") == std::string::npos);
                  if (a != Arith::ball) CHECK(remedy.find("--target-error") == std::string::npos);
                  checked.count(status_name(st));
                }
  checked.require(1000, {"degenerate", "unable", "inconsistent", "not_identifiable", "over_budget", "oracle_failed"});
}

TEST_CASE("the issue's remedies: --max-heads with --oracle, a placed run, a decimal exponent out of range") {
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string m = dir + "/mhaq_remedy_model.json";
  REQUIRE(test::run(bin + " generate --d 2 --heads 1 --seed 3 -o " + m).code == 0);
  // balls with only a bound: they never certify the smallest type; exact mode refuses --oracle
  const Ran b = run("recover --oracle \"" + bin + " oracle --model " + m + " --arith ball --bits 256\" --model " + m + " --max-heads 2 --arith ball");
  INFO(b.text.substr(0, 600));
  CHECK(b.status() == Status::unable);
  CHECK(b.rec.judge.remedy.value_or("").find("--arith exact") == std::string::npos);
  CHECK(b.rec.judge.message.find("--arith exact") == std::string::npos);
  CHECK(b.rec.judge.remedy.value_or("").find("--arith mpfr") != std::string::npos);
  // the model's own oracle: there exact mode is an alternative
  const Ran e = run("recover --model " + m + " --max-heads 2 --arith ball");
  CHECK(e.status() == Status::unable);
  CHECK(e.rec.judge.remedy.value_or("").find("--arith exact") != std::string::npos);
  // rounded answers limit the run: more --oracle-bits, not more --bits or exact answers
  const Ran o = run("recover --d 4 --heads 3 --seed 1 --arith mpfr --bits 256 --oracle-bits 53");
  CHECK(o.status() == Status::unable);
  CHECK(o.rec.judge.remedy.value_or("").find("--oracle-bits 53") != std::string::npos);
  CHECK(o.rec.judge.remedy.value_or("").find("--arith exact") == std::string::npos);
  CHECK(o.rec.judge.remedy.value_or("").find("raise --bits") == std::string::npos);
  // placed rounds that stop at the budget with poles still off their places
  // (d = 4, H = 4, seed 4: three rounds, about 4 s): the message says so, and
  // the remedy names the budget, never exact mode or more --bits
  const Ran pl = run("recover --d 4 --heads 4 --seed 4 --arith mpfr --bits 256 --oracle-bits 53 --design placed --threads 1");
  INFO(pl.text.substr(0, 600));
  CHECK(pl.status() == Status::unable);
  CHECK(pl.rec.judge.message.find("did not hold together within its budget") != std::string::npos);
  CHECK(pl.rec.judge.remedy.value_or("").find("budget of 2490 queries (10 (4Hd^2-2H+1))") != std::string::npos);
  CHECK(pl.rec.judge.remedy.value_or("").find("--arith exact") == std::string::npos);
  CHECK(pl.rec.judge.remedy.value_or("").find("raise --bits") == std::string::npos);
  // a decimal exponent out of range is named as such, not as a malformed number
  for (const std::string& eps : {std::string("1e-999999"), std::string("1e-10001"), std::string("1e99999999")}) {
    const auto r = test::run(bin + " recover --d 2 --heads 1 --arith mpfr --noise " + eps + " 2>&1");
    INFO(eps << ": " << r.out);
    CHECK((r.code == 2 || r.code == 3));
    CHECK(r.out.find("exponent out of range") != std::string::npos);
    CHECK(r.out.find("not an exact rational") == std::string::npos);
  }
  std::remove(m.c_str());
}
