// Golden vectors for one-layer transformers (tests/golden/SCHEMA.md,
// "Transformer files"): export -> check round trips, the checker's own exact
// evaluator against direct formulas, tamper detection with JSON paths,
// malformed files as input errors, the committed fixture byte for byte.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "mhaq/base/error.hpp"
#include "mhaq/check/golden_transformer.hpp"
#include "mhaq/model/transformer.hpp"
#include "mhaq/evidence/golden.hpp"
#include "test_util.hpp"

using namespace mhaq;
using nlohmann::json;

namespace {

GoldenInputs drawn(int d, int heads, int neurons, std::uint64_t seed, long digits = 60) {
  GoldenInputs in;
  in.is_transformer = true;
  TransformerGenerateOptions g;
  g.d = d;
  g.heads = heads;
  g.neurons = neurons;
  g.seed = seed;
  in.transformer = generate_transformer(g);
  in.transformer_generate = g;
  in.model_source = "generated";
  in.seed = seed;
  in.digits = digits;
  return in;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool has_mismatch_at(const GoldenCheckResult& r, const std::string& path) {
  for (const auto& m : r.mismatches)
    if (m.rfind(path + ":", 0) == 0) return true;
  return false;
}

std::string all(const GoldenCheckResult& r) {
  std::string s;
  for (const auto& m : r.mismatches) s += m + "\n";
  return s;
}

ErrorKind kind_of(const std::string& text) {
  try {
    (void)golden_check(text);
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::internal;
}

const std::string kFixture = std::string(MHAQ_SOURCE_DIR) + "/tests/golden/transformer_d2_h1_m2_seed8.json";

}  // namespace

TEST_CASE("transformer golden: export -> check round trip, byte-identical re-export") {
  for (const auto& in : {drawn(2, 1, 2, 8), drawn(2, 1, 1, 1, 30), drawn(1, 1, 2, 1)}) {
    const std::string a = golden_export(in);
    CHECK(a == golden_export(in));
    const GoldenCheckResult r = golden_check(a);
    CHECK_MESSAGE(r.ok(), all(r));
    CHECK(r.fields_checked > 100);
    const json j = json::parse(a);
    CHECK(j["format"] == "mhaq-golden");
    CHECK(j["model_kind"] == "transformer");
    CHECK(j["model"]["format"] == "mhaq-transformer");
    CHECK(j["queries"].size() == j["answers"].size());
    CHECK(j["summary"]["queries"] == j["queries"].size());
    CHECK(j["summary"]["exact_match"] == true);
    CHECK(golden_check(j.dump(2)).ok());  // the layout does not matter
  }
  {  // drawn with more heads than a golden file's learner may have: their canonical form has fewer
    GoldenInputs in = drawn(2, 7, 1, 1);
    in.transformer_generate.share_w = true;
    in.transformer = generate_transformer(in.transformer_generate);
    const std::string a = golden_export(in);
    const json j = json::parse(a);
    CHECK(j["inputs"]["generate"]["heads"] == 7);
    CHECK(j["inputs"]["heads_learner"].get<long>() <= 6);
    const GoldenCheckResult r = golden_check(a);
    CHECK_MESSAGE(r.ok(), all(r));
  }
  // the thread count does not change the bytes
  GoldenInputs t = drawn(2, 1, 2, 8);
  t.threads = 2;
  CHECK(golden_export(t) == golden_export(drawn(2, 1, 2, 8)));
}

TEST_CASE("transformer golden: the checker's evaluator applies the ReLU exactly") {
  const json doc = json::parse(read_text(kFixture));
  const check::TransformerGoldenAnswers a = check::transformer_golden_answers(doc);
  CHECK(a.failures.empty());
  REQUIRE(a.answers.size() == doc["queries"].size());
  CHECK(a.L == doc["L"].get<long>());
  // On a query of one token, alpha = 1 and z_h = x: T = sum_j u_j max(0, sum_h U_{h,j}^T x),
  // computed here with rationals. The fixture has such queries on both sides of each hyperplane.
  const json& m = doc["model"];
  int singles = 0, clipped = 0, zeros = 0;
  for (size_t i = 0; i < doc["queries"].size(); ++i) {
    const json& q = doc["queries"][i];
    if (q["length"] == 1) {
      QVec x;
      for (const auto& e : q["runs"][0]["token"]) x.push_back(Rational::parse(e.get<std::string>()));
      Rational T(0L);
      for (const auto& n : m["neurons"]) {
        Rational g(0L);
        for (const auto& Uh : n["U"])
          for (size_t k = 0; k < x.size(); ++k) g = g + Rational::parse(Uh[k].get<std::string>()) * x[k];
        if (g.sign() > 0) T = T + Rational::parse(n["u"].get<std::string>()) * g;
        else ++clipped;
      }
      const json& got = a.answers[i]["exact"];
      CHECK(got["den"].size() == 1);
      const Rational num = got["num"].empty() ? Rational(0L) : Rational::parse(got["num"][0].get<std::string>());
      CHECK(got["num"].size() <= 1);
      CHECK(num / Rational::parse(got["den"][0].get<std::string>()) == T);
      ++singles;
    }
    if (a.answers[i]["exact"]["num"].empty()) ++zeros;
  }
  CHECK(singles >= 4);
  CHECK(clipped >= 2);  // some neuron is cut off by its ReLU
  CHECK(zeros >= 1);    // and on some queries both are
  // the checker re-derives exactly what the file records (the exporter's oracle)
  CHECK(json::parse(a.answers.dump()) == doc["answers"]);
}

TEST_CASE("transformer golden: a tampered field is rejected at its path") {
  const json orig = json::parse(read_text(kFixture));
  auto check_tamper = [&](const std::function<void(json&)>& edit, const std::string& path) {
    json j = orig;
    edit(j);
    const GoldenCheckResult r = golden_check(j.dump(1));
    CHECK_FALSE(r.ok());
    CHECK_MESSAGE(has_mismatch_at(r, path), "expected a mismatch at " << path << ", got:\n" << all(r).substr(0, 2000));
  };
  // an answer with a non-constant exact value
  size_t i = 0;
  while (orig["answers"][i]["exact"]["num"].size() < 3) ++i;
  SUBCASE("an exact answer coefficient") {
    check_tamper([&](json& j) {
      auto& c = j["answers"][i]["exact"]["num"][1];
      c = c.get<std::string>() == "1" ? "2" : "1";
    }, "answers[" + std::to_string(i) + "].exact.num[1]");
  }
  SUBCASE("a decimal answer, last digit") {
    check_tamper([&](json& j) {
      std::string s = j["answers"][i]["decimal"];
      const size_t e = s.find('e');
      s[e - 1] = s[e - 1] == '1' ? '2' : '1';
      j["answers"][i]["decimal"] = s;
    }, "answers[" + std::to_string(i) + "].decimal");
  }
  SUBCASE("an answer forced to zero (a ReLU wrongly applied)") {
    check_tamper([&](json& j) { j["answers"][i]["exact"] = json{{"num", json::array()}, {"den", json::array({"1"})}}; },
                 "answers[" + std::to_string(i) + "].exact.num");
  }
  SUBCASE("a model entry: U") {
    check_tamper([](json& j) { j["model"]["neurons"][1]["U"][0][1] = "-3/2"; }, "model.neurons[1].U[0][1]");
  }
  SUBCASE("a model entry: W") {
    check_tamper([](json& j) { j["model"]["heads"][0]["W"][0][1] = "1/2"; }, "model.heads[0].W[0][1]");
  }
  SUBCASE("a model entry of a file model changes the answers") {
    // with model_source "file" there is no draw to compare with: the answers show it
    json j = orig;
    j["inputs"]["model_source"] = "file";
    j["inputs"].erase("generate");
    CHECK_MESSAGE(golden_check(j.dump()).ok(), "the untampered file-source variant must pass");
    j["model"]["neurons"][0]["u"] = "3";
    const GoldenCheckResult r = golden_check(j.dump());
    int answer_paths = 0;
    for (const auto& m : r.mismatches) answer_paths += m.rfind("answers[", 0) == 0;
    CHECK(answer_paths > 0);
    CHECK(has_mismatch_at(r, "model_canonical.neurons[0].U[0][0]"));
  }
  SUBCASE("a query token") {
    check_tamper([](json& j) {
      auto& t = j["queries"][3]["runs"][0]["token"][0];
      t = t.get<std::string>() == "0" ? "1/16" : "0";
    }, "queries[3].runs[0].token[0]");
  }
  SUBCASE("a learned neuron") {
    check_tamper([](json& j) {
      auto& u = j["learned"]["neurons"][0]["u"];
      u = u.get<std::string>() == "1" ? "-1" : "1";
    }, "learned.neurons[0].u");
  }
  SUBCASE("the summary") {
    check_tamper([](json& j) { j["summary"]["neurons_recovered"] = 3; }, "summary.neurons_recovered");
  }
  SUBCASE("a dropped answer") {
    check_tamper([](json& j) { j["answers"].erase(j["answers"].size() - 1); }, "answers");
  }
}

TEST_CASE("transformer golden: malformed files are input errors, sizes checked first") {
  const json orig = json::parse(read_text(kFixture));
  auto edited = [&](const std::function<void(json&)>& edit) {
    json j = orig;
    edit(j);
    return kind_of(j.dump());
  };
  CHECK(edited([](json& j) { j["model_kind"] = "mlp"; }) == ErrorKind::input);
  CHECK(edited([](json& j) { j.erase("model"); }) == ErrorKind::input);
  CHECK(edited([](json& j) { j["model"]["format"] = "mhaq-model"; }) == ErrorKind::input);
  CHECK(edited([](json& j) { j["model"]["d"] = 65; }) == ErrorKind::input);
  CHECK(edited([](json& j) { j["model"]["heads"][0]["W"][0][0] = 0.5; }) == ErrorKind::input);
  CHECK(edited([](json& j) { j["model"]["neurons"][0]["U"] = json::array(); }) == ErrorKind::input);
  CHECK(edited([](json& j) { j["arith"] = "ball"; }) == ErrorKind::input);
  CHECK(edited([](json& j) { j["digits"] = 0; }) == ErrorKind::input);
  CHECK(edited([](json& j) { j["inputs"]["heads_learner"] = 2; }) == ErrorKind::input);
  CHECK(edited([](json& j) { j["inputs"]["token_den"] = 32; }) == ErrorKind::input);
  CHECK(edited([](json& j) { j["queries"] = "none"; }) == ErrorKind::input);
  CHECK(edited([](json& j) { j["queries"][2]["runs"][0]["token"][0] = "1/17"; }) == ErrorKind::input);   // off the grid
  CHECK(edited([](json& j) { j["queries"][2]["runs"][0]["token"][0] = "100000"; }) == ErrorKind::input); // tau-degree above 2^20
  CHECK(edited([](json& j) { j["queries"][2]["runs"][0]["token"][0] = "1/0"; }) == ErrorKind::input);
  CHECK(edited([](json& j) { j["queries"][2]["runs"][0]["count"] = 0; }) == ErrorKind::input);
  CHECK(edited([](json& j) { j["queries"][2]["runs"] = json::array(); }) == ErrorKind::input);
  {  // a malformed answer is a mismatch at its path (answers are re-derived, not read)
    json j = orig;
    j["answers"][0]["exact"]["den"] = "x";
    const GoldenCheckResult r = golden_check(j.dump());
    CHECK(has_mismatch_at(r, "answers[0].exact.den"));
  }
  {  // the checker's arithmetic is bounded from the shapes, before any token is read:
     // d = 64, 256 neurons, 16 queries of 4096 runs is past max_golden_eval_work
    json j = orig;
    const int d = 64;
    json W = json::array(), U = json::array();
    for (int a = 0; a < d; ++a) {
      json row = json::array();
      for (int b = 0; b < d; ++b) row.push_back(a == b ? "1" : "0");
      W.push_back(row);
      U.push_back(a == 0 ? "1" : "0");
    }
    json neurons = json::array();
    for (int k = 0; k < 256; ++k) neurons.push_back(json{{"u", "1"}, {"U", json::array({U})}});
    j["model"] = json{{"format", "mhaq-transformer"}, {"version", 1}, {"d", d}, {"heads", json::array({json{{"W", W}}})}, {"neurons", neurons}};
    j["inputs"]["model_source"] = "file";
    j["inputs"].erase("generate");
    json runs = json::array();
    for (int r = 0; r < 4096; ++r) runs.push_back(json::object());
    j["queries"] = json::array();
    for (int q = 0; q < 16; ++q) j["queries"].push_back(json{{"index", q}, {"runs", runs}});
    try {
      (void)golden_check(j.dump());
      FAIL("expected an input error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::input);
      CHECK(std::string(e.what()).find("multiply-adds") != std::string::npos);
    }
  }
  // the message names the path
  json j = orig;
  j["queries"][4]["runs"][0]["token"][1] = "1/17";
  try {
    (void)golden_check(j.dump());
    FAIL("expected an input error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("queries[4].runs[0].token[1]") != std::string::npos);
  }
}

TEST_CASE("transformer golden: the committed fixture is reproduced byte for byte and checks clean") {
  const std::string committed = read_text(kFixture);
  REQUIRE_MESSAGE(!committed.empty(), "missing fixture " << kFixture);
  CHECK_MESSAGE(golden_export(drawn(2, 1, 2, 8)) == committed, "transformer_d2_h1_m2_seed8.json differs from a fresh export");
  const GoldenCheckResult r = golden_check(committed);
  CHECK_MESSAGE(r.ok(), all(r));
  const json j = json::parse(committed);
  CHECK(j["summary"]["neurons_recovered"] == 2);
  CHECK(j["model_canonical"]["neurons"].size() == 2);
}

TEST_CASE("transformer golden: CLI") {
  const std::string bin = MHAQ_BINARY;
  const auto e = test::run(bin + " golden export --d 2 --heads 1 --ffn 2 --seed 8");
  CHECK(e.code == 0);
  CHECK(e.out == read_text(kFixture));
  CHECK(test::run(bin + " golden check " + kFixture + " >/dev/null 2>&1").code == 0);
  const std::string tmp = "test_golden_transformer_tampered.json", model = "test_golden_transformer_model.json", out = "test_golden_transformer_out.json";
  {
    json j = json::parse(read_text(kFixture));
    j["answers"][2]["decimal"] = "1.0e+00";
    std::ofstream(tmp) << j.dump(1);
    // the model as a transformer model file: --model recognises it by its format
    std::ofstream(model) << j["model"].dump(1);
  }
  const auto r = test::run(bin + " golden check " + tmp + " 2>/dev/null");
  CHECK(r.code == 10);
  CHECK(r.out.find("answers[2].decimal") != std::string::npos);
  CHECK(test::run(bin + " golden export --model " + model + " --seed 8 -o " + out + " >/dev/null").code == 0);
  const json f = json::parse(read_text(out));
  CHECK(f["inputs"]["model_source"] == "file");
  CHECK(f["answers"] == json::parse(read_text(kFixture))["answers"]);  // same model, same learner seed
  CHECK(test::run(bin + " golden check " + out + " >/dev/null").code == 0);
  // options that do not apply to transformers, and bad option values
  CHECK(test::run(bin + " golden export --d 2 --heads 1 --ffn 2 --arith ball >/dev/null 2>&1").code == 2);
  CHECK(test::run(bin + " golden export --d 2 --heads 1 --ffn 2 --max-heads 2 >/dev/null 2>&1").code == 2);
  CHECK(test::run(bin + " golden export --model " + model + " --heads 2 >/dev/null 2>&1").code == 2);
  CHECK(test::run(bin + " golden export --d 2 --heads 1 --ffn 257 >/dev/null 2>&1").code == 2);
  // export writes nothing for a run that does not end ok: d = 1 with two heads
  // is not identifiable by the path (every hyperplane is the point 0; this
  // draw once ended in a wrong transformer), exit 9
  const std::string mm = "test_golden_transformer_mismatch.json";
  std::remove(mm.c_str());
  const auto x = test::run(bin + " golden export --d 1 --heads 2 --ffn 2 --seed 4 -o " + mm + " 2>&1");
  CHECK(x.code == 9);
  CHECK(x.out.find("d = 1 with 2 heads") != std::string::npos);
  CHECK(read_text(mm).empty());
  std::remove(mm.c_str());
  std::ofstream("test_golden_transformer_bad.json") << "{\"format\": \"mhaq-golden\", \"version\": 1, \"model_kind\": \"transformer\"}";
  CHECK(test::run(bin + " golden check test_golden_transformer_bad.json >/dev/null 2>&1").code == 3);
  for (const auto& p : {tmp, model, out, std::string("test_golden_transformer_bad.json")}) std::remove(p.c_str());
}
