// The float judge (proofs/40-float-judge.md) on the runs that once ended ok
// and wrong, estimated below their error, ignored the answers' error
// (transformers), or ended inconsistent from honest answers. Each run's status
// is decided blind (from the answers: --oracle, or the model's own answers
// with the truth compared only afterwards), then held against the truth: ok
// within its tolerance, unable or degenerate; never ok and wrong (mismatch),
// never inconsistent or not_identifiable from honest answers. Where the judge
// certifies a bound, the bound holds: at least the true max_rel_error.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mhaq/base/random.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/run/recover.hpp"
#include "test_util.hpp"

using nlohmann::json;
using namespace mhaq;

namespace {
const std::string bin = MHAQ_BINARY;
const std::string examples = std::string(MHAQ_SOURCE_DIR) + "/examples/oracles";

std::string write_file(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::absolute(name);
  FILE* f = std::fopen(p.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return p.string();
}

json run_json(const std::string& args) {
  const auto r = test::run(bin + " " + args + " --json 2>/dev/null");
  INFO(args);
  REQUIRE(!r.out.empty());
  return json::parse(r.out);
}

// A blind status held against the truth (the run knew the model only to
// compare with afterwards): ok within the tolerance, unable or degenerate.
void check_true(const json& j, const std::string& what, test::Outcomes& out) {
  INFO(what << ": " << j.dump().substr(0, 600));
  const std::string st = j["status"].get<std::string>();
  out.count(st);
  CHECK((st == "ok" || st == "unable" || st == "degenerate"));
  if (j.contains("blind_status")) CHECK(j["blind_status"] == j["status"]);
  const bool err_known = j.contains("max_rel_error") && j["max_rel_error"].is_number();
  if (st == "ok") {
    REQUIRE(err_known);
    CHECK(j["max_rel_error"].get<double>() <= j["tolerance"].get<double>());
  }
  // a certified bound holds, whatever the status
  if (err_known && j.contains("certified_error") && j["certified_error"].is_number())
    CHECK(j["certified_error"].get<double>() >= j["max_rel_error"].get<double>());
}

std::string python() {
  for (const char* p : {"python3", "/usr/bin/python3"})
    if (test::run(std::string(p) + " -c 'import torch' >/dev/null 2>&1 && echo yes").out == "yes\n") return p;
  return "";
}

const char* kModelOne =
    R"({"format": "mhaq-model", "version": 1, "d": 1, "heads": [{"W": [["3/4"]], "v": ["15/8"]}, {"W": [["35/2"]], "v": ["-15/8"]}, )"
    R"({"W": [["97/128"]], "v": ["-7/8"]}]})";
const char* kModelF =
    R"({"format": "mhaq-model", "version": 1, "d": 3, "heads": [{"W": [["-5/2", "-35/2", "-35/2"], ["-3/2", "0", "-3/2"], ["3/4", "1/2", "0"]], )"
    R"("v": ["1/8", "3/8", "-2"]}, {"W": [["-3/2", "-1/4", "35/2"], ["1", "25/2", "-10"], ["-3/4", "1/4", "-1/4"]], "v": ["1/2", "13/8", "7/8"]}]})";
const char* kCloseD1 = R"({"format": "mhaq-model", "version": 1, "d": 1, "heads": [{"W": [["1/4"]], "v": ["-15/8"]}, {"W": [["17/64"]], "v": ["11/8"]}]})";
}  // namespace

TEST_CASE("model 1 (poles that nearly collide): not ok, its certified bound above the true error, where the first-order estimate was 2,500 times low") {
  const std::string m1 = write_file("model1.json", kModelOne);
  test::Outcomes out("model 1 through mhaq oracle");
  // through the protocol, with a stated error and without one
  const std::string oracle = "--oracle \"" + bin + " oracle --model " + m1 + " --arith mpfr --bits ";
  for (const std::string& o : {oracle + "256\" --oracle-error rel:5.421010862427522e-20", oracle + "64\""}) {
    const json blind = run_json("recover " + o + " --d 1 --heads 3 --arith mpfr --bits 64 --seed 3");
    const json j = run_json("recover " + o + " --model " + m1 + " --arith mpfr --bits 64 --seed 3");
    CHECK(blind["status"] == j["status"]);  // the truth changes nothing in the status
    CHECK(j["status"] != "ok");
    check_true(j, o, out);
  }
  out.require(2, {"unable", "degenerate"});
  // the model's own answers, through the library
  RecoverOptions ro;
  ro.arith = Arith::mpfr;
  ro.bits = 64;
  ro.seed = 3;
  const RecoverResult r = recover_run(model_from_json_text(kModelOne), ro);
  CHECK(r.status() == Status::unable);
  REQUIRE(r.judge.certified_error.has_value());
  REQUIRE(r.truth.max_rel_error.has_value());
  CHECK(*r.judge.certified_error >= *r.truth.max_rel_error);
  CHECK(*r.judge.error_estimate < *r.truth.max_rel_error / 1000);  // the estimate alone would have said ok
  CHECK(r.judge.answer_assumption.has_value());
}

TEST_CASE("estimates below the true error: the runs end ok within the tolerance or unable, their bounds above the error") {
  const std::string f = write_file("model_f.json", kModelF), c = write_file("close_d1.json", kCloseD1);
  test::Outcomes out("estimates below the error");
  for (const std::string& a : {std::string("--model ") + f + " --arith mpfr --bits 128 --seed 3",
                               std::string("--model ") + f + " --arith mpfr --bits 128 --seed 3 --schedule compact",
                               std::string("--model ") + c + " --arith double --seed 11", std::string("--model ") + c + " --arith double --seed 23"})
    check_true(run_json("recover " + a), a, out);
  out.require(4, {"ok", "unable", "degenerate"});
}

TEST_CASE("honest float answers never end inconsistent: random models through mhaq oracle at 20 to 64 bits") {
  // the learner at its own precision, the oracle's answers rounded to fewer
  // bits (stated by its hello); a failed decision is unable, not inconsistent
  test::Outcomes out("honest answers through mhaq oracle");
  Rng rng(37);
  const int runs = 12 * test::multiplier();
  for (int t = 0; t < runs; ++t) {
    GenerateOptions g = default_generate(Arith::mpfr);
    g.d = 1 + static_cast<int>(rng.next() % 3);
    g.heads = 1 + static_cast<int>(rng.next() % 3);
    g.seed = rng.next() % 100000 + 1;
    const std::string m = write_file("random_" + std::to_string(t) + ".json", model_to_json_text(generate_model(g)));
    const int answer_bits = 20 + static_cast<int>(rng.next() % 45);
    const std::string learner = t % 2 ? "--arith double" : "--arith mpfr --bits 64";
    const std::string a = "recover --oracle \"" + bin + " oracle --model " + m + " --arith mpfr --bits " + std::to_string(answer_bits) +
                          "\" --model " + m + " " + learner + " --seed " + std::to_string(t + 1);
    check_true(run_json(a), a, out);
  }
  out.require(runs, {"ok", "unable", "degenerate"});
  out.require(runs / 3, {"ok"});
}

TEST_CASE("transformers: the judge carries the answers' error (torch transformers through mhaq oracle and torch itself)") {
  const std::string py = python();
  if (py.empty()) {
    MESSAGE("no python3 with torch: skipped");
    return;
  }
  test::Outcomes out("torch transformers");
  const std::string ex = examples + "/torch_transformer.py";
  // 31-bit answers with their stated error: once ok with a U error of 1.6e-3
  // against an estimate of 7.5e-70 (seeds 2, 3), once inconsistent (seed 4)
  for (int seed : {2, 3, 4}) {
    const std::string t = "t" + std::to_string(seed) + ".json";
    REQUIRE(test::run(py + " " + ex + " --d 3 --heads 2 --neurons 3 --seed " + std::to_string(seed) + " --write-model " + t).code == 0);
    const std::string a = "recover --oracle \"" + bin + " oracle --model " + t + " --arith mpfr --bits 31\" --oracle-error rel:9.3e-10 --model " +
                          t + " --design scaled --arith mpfr";
    const json j = run_json(a);
    check_true(j, a, out);
    if (j.contains("certified_error") && j["certified_error"].is_number()) CHECK(j["certified_error"].get<double>() > 1e-12);
  }
  // torch in float32 (its default statement: abs 1e-4 up to 17 tokens with
  // entries of at most 17, measured): once inconsistent at 4 of 5 seeds
  for (int seed = 1; seed <= 5; ++seed) {
    const std::string s = " --d 3 --heads 2 --neurons 3 --seed " + std::to_string(seed) + " --dtype float32";
    const std::string t = "t32_" + std::to_string(seed) + ".json";
    REQUIRE(test::run(py + " " + ex + s + " --write-model " + t).code == 0);
    const std::string a = "recover --oracle \"" + py + " " + ex + s + "\" --model " + t + " --design scaled --arith mpfr";
    check_true(run_json(a), a, out);
  }
  // answers perturbed by up to 1e-9 relative (stated): once ok with a U
  // error of 0.024 against a tolerance of 4.9e-4
  const std::string perturbed = write_file("perturbed.py", "import random, sys, torch\nsys.path.insert(0, '" + examples +
                                                               "')\nimport mhaq_oracle\nfrom torch_transformer import Transformer\n"
                                                               "torch.manual_seed(2)\nt = Transformer(3, 2, 4, 3)\nrng = random.Random(1)\n"
                                                               "def f(X):\n    with torch.no_grad():\n"
                                                               "        y = float(t(torch.tensor(X, dtype=torch.float64)))\n"
                                                               "    return y * (1 + 1e-9 * (2 * rng.random() - 1))\n"
                                                               "mhaq_oracle.serve(f, d=3, name='perturbed torch transformer')\n");
  for (const char* design : {"paper", "scaled"}) {
    const std::string a = "recover --oracle \"" + py + " " + perturbed + "\" --oracle-error abs:5e-14,rel:1.1e-9 --model t2.json --design " +
                          design + " --arith mpfr";
    check_true(run_json(a), a, out);
  }
  out.require(10, {"ok", "unable", "degenerate"});
}

TEST_CASE("transformers from the model's own answers: ok within the tolerance with a certified bound, in mpfr and double") {
  test::Outcomes out("generated transformers");
  int certified = 0;
  for (int seed = 1; seed <= 4; ++seed)
    for (const char* a : {"--arith mpfr --bits 256", "--arith double"}) {
      const std::string m = "g" + std::to_string(seed) + ".json";
      REQUIRE(test::run(bin + " generate --d 2 --heads 2 --ffn 2 --seed " + std::to_string(seed) + " -o " + m + " >/dev/null").code == 0);
      const json j = run_json("recover --model " + m + " --seed 1 " + a);
      check_true(j, m + " " + a, out);
      certified += j.contains("certified_error") && j["certified_error"].is_number();
    }
  out.require(6, {"ok"});
  CHECK(certified >= 6);
}

TEST_CASE("a float run told only a bound H0 that finds fewer heads is unable, and says to state the count; with the count stated it is ok") {
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = 2;
  g.heads = 1;
  g.seed = 1;
  const Model m = generate_model(g);
  RecoverOptions o;
  o.arith = Arith::mpfr;
  o.bits = 128;
  o.seed = 1;
  o.max_heads = 2;
  const RecoverResult bound = recover_run(m, o);
  CHECK(bound.status() == Status::unable);
  CHECK(bound.judge.judge_note.value_or("").find("--heads 1") != std::string::npos);
  CHECK_FALSE(bound.judge.certified_error.has_value());
  o.max_heads = 0;
  o.heads = 1;
  const RecoverResult stated = recover_run(m, o);
  CHECK(stated.status() == Status::ok);
  REQUIRE(stated.judge.certified_error.has_value());
  CHECK(*stated.judge.certified_error >= stated.truth.max_rel_error.value_or(INFINITY));
}
