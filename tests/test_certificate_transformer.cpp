// Transformer certificates (recover --certificate on a transformer) and the
// separate checker: round trips in exact and ball mode, one tampered field
// at a time rejected with the field named, malformed files as input errors,
// and the CLI's exit codes.
#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "mhaq/check/certificate_check.hpp"
#include "mhaq/model/transformer.hpp"
#include "mhaq/run/record_json.hpp"
#include "mhaq/run/recover.hpp"
#include "test_util.hpp"

using namespace mhaq;
using json = nlohmann::ordered_json;

namespace {

// Two heads, three neurons (mhaq generate --d 2 --heads 2 --ffn 3 --seed 2).
const char* kTwoHeads = R"({"format": "mhaq-transformer", "version": 1, "d": 2,
 "heads": [{"W": [["1/2", "-1/4"], ["-3/4", "1/4"]]}, {"W": [["-1", "-1/2"], ["3/4", "1/4"]]}],
 "neurons": [{"u": "-3/2", "U": [["-7/4", "-7/4"], ["-1/4", "5/4"]]},
             {"u": "3/2", "U": [["-3/2", "2"], ["-5/4", "7/4"]]},
             {"u": "1/2", "U": [["-5/4", "-1"], ["-1/4", "5/4"]]}]})";
// One head, two neurons (mhaq generate --d 2 --heads 1 --ffn 2 --seed 5).
const char* kOneHead = R"({"format": "mhaq-transformer", "version": 1, "d": 2,
 "heads": [{"W": [["0", "0"], ["-1/2", "3/4"]]}],
 "neurons": [{"u": "-1/2", "U": [["-1/2", "-1/4"]]}, {"u": "3/2", "U": [["-1/4", "-5/4"]]}]})";

// Not canonical: two heads share W, neuron 3 is a positive multiple of
// neuron 2, neuron 4 has u = 0 (the canonical form: 2 heads, 3 neurons).
const char* kNotCanonical = R"({"format": "mhaq-transformer", "version": 1, "d": 2,
 "heads": [{"W": [["1/2", "-1/4"], ["-3/4", "1/4"]]}, {"W": [["1/2", "-1/4"], ["-3/4", "1/4"]]}, {"W": [["-1", "-1/2"], ["3/4", "1/4"]]}],
 "neurons": [{"u": "-3/2", "U": [["-7/8", "-7/8"], ["-7/8", "-7/8"], ["-1/4", "5/4"]]},
             {"u": "3/2", "U": [["-3/2", "2"], ["0", "0"], ["-5/4", "7/4"]]},
             {"u": "3/4", "U": [["-3", "4"], ["0", "0"], ["-5/2", "7/2"]]},
             {"u": "0", "U": [["1", "2"], ["0", "0"], ["3", "1"]]},
             {"u": "1/2", "U": [["-5/4", "-1"], ["0", "0"], ["-1/4", "5/4"]]}]})";

std::string certify(const char* model, Arith a, std::uint64_t seed) {
  RecoverOptions o;
  o.arith = a;
  o.seed = seed;
  std::string cert;
  o.certificate = &cert;
  const RecoverResult r = recover_transformer_run(transformer_from_json_text(model), o);
  INFO(record_json(r).dump().substr(0, 400));
  REQUIRE(r.exit_code() == 0);
  REQUIRE(!cert.empty());
  return cert;
}

std::string failures(const check::CertificateReport& r) {
  std::string s;
  for (const auto& f : r.failures) s += f.path + ": " + f.message + "\n";
  return s;
}
// A failure at exactly `path` whose message contains `words`.
bool failed_with(const check::CertificateReport& r, const std::string& path, const std::string& words) {
  for (const auto& f : r.failures)
    if (f.path == path && f.message.find(words) != std::string::npos) return true;
  return false;
}
bool input_error(const std::string& text, const std::string& words = "") {
  try {
    (void)check::check_certificate(text);
  } catch (const check::InputError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(words) != std::string::npos);
    return true;
  }
  return false;
}

std::string shifted(const std::string& s) { return (Rational::parse(s) + Rational(1, 1UL << 40)).str(); }

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// An exact answer {num, den} changed by 1/den(0) (num = 0 becomes 1).
void bump(json& a) {
  if (a["num"].empty()) a["num"] = json::array({"1"});
  else a["num"][0] = (Rational::parse(a["num"][0].get<std::string>()) + Rational(1)).str();
}

// The index of a crossing's neuron: the one whose u U equals +-jump.
size_t neuron_of_crossing(const json& c, size_t k) {
  const Rational j0 = Rational::parse(c["crossings"][k]["jump"][0][0].get<std::string>());
  for (size_t n = 0; n < c["neurons"].size(); ++n) {
    const Rational v = Rational::parse(c["neurons"][n]["u"].get<std::string>()) * Rational::parse(c["neurons"][n]["U"][0][0].get<std::string>());
    if (v == j0 || v == -j0) return n;
  }
  return c["neurons"].size();
}

}  // namespace

TEST_CASE("transformer certificates round trip through the checker, exact and ball") {
  for (const char* model : {kOneHead, kTwoHeads, kNotCanonical})
    for (const Arith a : {Arith::exact, Arith::ball}) {
      const std::string cert = certify(model, a, 5);
      const json c = json::parse(cert);
      CHECK(c["kind"] == "transformer");
      CHECK(c["crossings"].size() == c["neurons"].size());
      CHECK(c["verification"]["count"].get<long>() >= 1);
      const auto rep = check::check_certificate(cert);
      INFO(failures(rep));
      CHECK(rep.ok());
      CHECK(rep.kind == "transformer");
      CHECK(rep.neurons == static_cast<long>(c["neurons"].size()));
      CHECK(rep.crossings == rep.neurons);
      CHECK(rep.checks > 100);
    }
  // mpfr and double runs are refused before any query, naming the option
  RecoverOptions o;
  o.arith = Arith::mpfr;
  std::string cert;
  o.certificate = &cert;
  CHECK_THROWS_WITH_AS(recover_transformer_run(transformer_from_json_text(kOneHead), o), doctest::Contains("--certificate"), Error);
}

TEST_CASE("a tampered transformer certificate is rejected and the field named (exact)") {
  const std::string cert = certify(kTwoHeads, Arith::exact, 5);
  const json base = json::parse(cert);
  REQUIRE(check::check_certificate(cert).ok());
  const size_t n = base["queries"].size();
  const size_t last = n - 1, vfirst = base["verification"]["first"].get<size_t>();
  REQUIRE(vfirst > 3);
  auto tampered = [&](const std::function<void(json&)>& f) {
    json c = base;
    f(c);
    return check::check_certificate(c.dump());
  };
  struct Case {
    const char* what;
    std::function<void(json&)> edit;
    std::string path, words;
  };
  const size_t n0 = neuron_of_crossing(base, 0);
  REQUIRE(n0 < base["neurons"].size());
  const std::vector<Case> cases = {
      {"an answer", [](json& c) { bump(c["answers"][3]); },
       "answers[3]", "not equal to the model's value"},
      {"a U entry", [](json& c) { c["neurons"][1]["U"][1][0] = shifted(c["neurons"][1]["U"][1][0]); }, "neurons", "does not reproduce"},
      {"a U entry, against the model's canonical form", [](json& c) { c["neurons"][1]["U"][1][0] = shifted(c["neurons"][1]["U"][1][0]); }, "neurons[1]",
       "no neuron of the model's canonical form"},
      {"a u sign", [](json& c) { c["neurons"][2]["u"] = c["neurons"][2]["u"] == "1" ? "-1" : "1"; }, "neurons", "does not reproduce"},
      {"a neuron dropped",
       [](json& c) {
         c["neurons"].erase(2);
         c["claims"]["neurons_recovered"] = 2;
       },
       "crossings", "3 crossings for 2 recovered neurons"},
      {"a neuron added",
       [](json& c) {
         json extra = c["neurons"][0];
         extra["U"][0][0] = shifted(extra["U"][0][0]);
         c["neurons"].push_back(extra);
         c["claims"]["neurons_recovered"] = 4;
       },
       "neurons[3]", "expected exactly one"},
      {"a W entry", [](json& c) { c["heads"][1]["W"][0][1] = shifted(c["heads"][1]["W"][0][1]); }, "heads[1].W", "matches no head of the model"},
      {"a crossing's jump", [](json& c) { c["crossings"][0]["jump"][1][0] = shifted(c["crossings"][0]["jump"][1][0]); }, "crossings[0].jump[1][0]",
       "the model's jump of the region values"},
      {"a crossing's point", [](json& c) { c["crossings"][1]["before"] = c["crossings"][1]["after"]; }, "crossings[1]",
       "0 of the recovered hyperplanes separate before and after"},
      {"a verification answer",
       [&](json& c) { bump(c["answers"][last]); },
       "verification", "1 of"},
      {"a query token",
       [](json& c) {
         auto& t = c["queries"][4]["runs"][0]["token"][0];
         t = (Rational::parse(t.get<std::string>()) + Rational(1, 16)).str();
       },
       "answers[4]", "not equal to the model's value"},
      {"a query token off the grid", [](json& c) { c["queries"][2]["runs"][0]["token"][1] = "1/3"; }, "queries[2].runs[0].token[1]", "token grid"},
      {"the crossing count claimed", [](json& c) { c["claims"]["crossings"] = 7; }, "claims.crossings", "3 crossings are recorded"},
      {"the verification range", [](json& c) { c["verification"]["first"] = c["verification"]["first"].get<long>() - 1; }, "verification",
       "not a non-empty range"},
      {"the model's readout", [](json& c) { c["model"]["neurons"][0]["u"] = "5/2"; }, "answers[0]", "not equal to the model's value"},
      {"a neuron's u not canonical", [](json& c) { c["neurons"][0]["u"] = "2"; }, "neurons[0].u", "canonical"},
      {"L", [](json& c) { c["L"] = c["L"].get<long>() * 2; }, "L", "the model and token grid give"},
      {"a crossing moved to another neuron",
       [&](json& c) {
         // the jump of neuron n0 recorded at crossing 1 (which crosses another neuron)
         c["crossings"][1]["jump"] = c["crossings"][0]["jump"];
       },
       "crossings[1].jump[0][0]", "recovered neuron"},
  };
  for (const auto& k : cases) {
    INFO(std::string(k.what));
    const auto rep = tampered(k.edit);
    INFO(failures(rep));
    CHECK_FALSE(rep.ok());
    CHECK(failed_with(rep, k.path, k.words));
  }
  // header fields: a wrong kind or version is an input error, never a pass
  for (const auto& kv : std::vector<std::pair<std::string, json>>{{"version", 2}, {"kind", "attention"}, {"format", "mhaq-golden"}}) {
    const std::string key = kv.first;  // a named copy: clang 14 cannot capture a structured binding in INFO
    json c = base;
    c[key] = kv.second;
    INFO(key);
    CHECK(input_error(c.dump(), key));
  }
  {  // without its kind, a transformer certificate is read as an attention one: malformed
    json c = base;
    c.erase("kind");
    CHECK(input_error(c.dump()));
  }
}

TEST_CASE("a tampered transformer certificate is rejected (ball)") {
  const std::string cert = certify(kTwoHeads, Arith::ball, 5);
  const json base = json::parse(cert);
  REQUIRE(check::check_certificate(cert).ok());
  auto tampered = [&](const std::function<void(json&)>& f) {
    json c = base;
    f(c);
    return check::check_certificate(c.dump());
  };
  // a midpoint moved by 2^-40, far beyond the radii of a 256-bit run
  auto rep = tampered([](json& c) { c["answers"][5]["mid"] = shifted(c["answers"][5]["mid"]); });
  CHECK(failed_with(rep, "answers[5]", "does not contain the model's value"));
  rep = tampered([](json& c) { c["neurons"][0]["U"][0][1]["mid"] = shifted(c["neurons"][0]["U"][0][1]["mid"]); });
  CHECK(failed_with(rep, "neurons", "does not contain the model's value"));
  CHECK(failed_with(rep, "neurons[0]", "no neuron of the model's canonical form"));
  rep = tampered([](json& c) { c["crossings"][2]["jump"][0][1]["mid"] = shifted(c["crossings"][2]["jump"][0][1]["mid"]); });
  CHECK(failed_with(rep, "crossings[2].jump[0][1]", "does not contain the model's jump"));
  rep = tampered([](json& c) { c["heads"][0]["W"][1][1]["mid"] = shifted(c["heads"][0]["W"][1][1]["mid"]); });
  CHECK(failed_with(rep, "heads[0].W", "matches no head"));
  // a widened radius still contains the truth: accepted, the checker asks containment
  rep = tampered([](json& c) { c["answers"][5]["rad"] = "1/1024"; });
  INFO(failures(rep));
  CHECK(rep.ok());
}

TEST_CASE("malformed transformer certificates are input errors") {
  const std::string cert = certify(kOneHead, Arith::exact, 5);
  const json base = json::parse(cert);
  auto edited = [&](const std::function<void(json&)>& f) {
    json c = base;
    f(c);
    return c.dump();
  };
  CHECK(input_error(cert.substr(0, cert.size() / 2), "not valid JSON"));
  CHECK(input_error(cert.substr(0, 40)));
  CHECK(input_error(edited([](json& c) { c["neurons"][0]["u"] = 1; }), "neurons[0].u"));
  CHECK(input_error(edited([](json& c) { c["crossings"][0]["before"] = "(1, 2)"; }), "crossings[0].before"));
  CHECK(input_error(edited([](json& c) { c["queries"][0]["runs"][0]["count"] = 1.5; }), "floating-point"));
  CHECK(input_error(edited([](json& c) { c.erase("crossings"); }), "crossings: missing"));
  CHECK(input_error(edited([](json& c) { c["verification"].erase("count"); }), "verification.count: missing"));
  CHECK(input_error(edited([](json& c) { c["model"].erase("neurons"); }), "model.neurons: missing"));
  CHECK(input_error(edited([](json& c) { c["answers"].erase(0); }), "answers"));
  CHECK(input_error(edited([](json& c) { c["arith"] = "double"; }), "must be exact or ball"));
  CHECK(input_error(edited([](json& c) { c["neurons"][0]["U"].push_back(c["neurons"][0]["U"][0]); }), "neurons[0].U"));
  CHECK(input_error(edited([](json& c) { c["crossings"][0]["jump"][0].push_back("1"); }), "crossings[0].jump[0]"));
  // sizes beyond the limits, refused before anything is built
  CHECK(input_error(edited([](json& c) { c["model"]["d"] = 1000000; }), "model.d"));
  CHECK(input_error(edited([](json& c) { c["L"] = json(1L << 50); }), "L"));
  CHECK(input_error(edited([](json& c) { c["queries"][0]["runs"][0]["count"] = json(1L << 40); }), "count"));
  CHECK(input_error(edited([](json& c) {
                      json big = json::array();
                      for (int k = 0; k < 300; ++k) big.push_back(c["neurons"][0]);
                      c["neurons"] = big;
                    }),
                    "more than the limit"));
  CHECK(input_error(edited([](json& c) { c["neurons"][0]["U"][0][0] = std::string(200000, '7'); }), "more than the limit"));
  CHECK(input_error(edited([](json& c) {
                      json q = c["queries"][0];
                      q["runs"] = json::array();
                      for (int r = 0; r < 4000; ++r) q["runs"].push_back(c["queries"][0]["runs"][0]);
                      for (int k = 0; k < 300; ++k) c["queries"].push_back(q);
                      for (int k = 0; k < 300; ++k) c["answers"].push_back(c["answers"][0]);
                    }),
                    "evaluation work"));
}

TEST_CASE("mhaq recover --certificate on a transformer and check-certificate: files and exit codes") {
  const std::string bin = MHAQ_BINARY;
  const std::string m = "test_tfm_cert_model.json", f = "test_tfm_cert.json", t = "test_tfm_cert_tampered.json", b = "test_tfm_cert_bad.json";
  std::ofstream(m) << kOneHead;
  std::remove(f.c_str());
  auto r = test::run(bin + " recover --model " + m + " --seed 5 --certificate " + f + " --json");
  CHECK(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["certificate"] == f);
  r = test::run(bin + " check-certificate " + f);
  CHECK(r.code == 0);
  CHECK(r.out.find(": ok") != std::string::npos);
  CHECK(r.out.find("2 neurons, 2 crossings") != std::string::npos);
  // same bytes at any thread count
  const std::string f2 = "test_tfm_cert_t2.json";
  CHECK(test::run(bin + " recover --model " + m + " --seed 5 --threads 2 --certificate " + f2 + " >/dev/null").code == 0);
  CHECK(read_text(f) == read_text(f2));
  {
    json j = json::parse(read_text(f));
    j["crossings"][0]["jump"][0][1] = shifted(j["crossings"][0]["jump"][0][1]);
    std::ofstream(t) << j.dump(1);
  }
  r = test::run(bin + " check-certificate " + t + " --json");
  CHECK(r.code == 10);
  const auto out = nlohmann::json::parse(r.out);
  CHECK(out["status"] == "checker_rejected");
  CHECK(out["kind"] == "transformer");
  std::ofstream(b) << read_text(f).substr(0, 300);
  CHECK(test::run(bin + " check-certificate " + b + " 2>/dev/null").code == 3);
  // mpfr: refused as a usage error before any query, nothing written
  std::remove(f.c_str());
  CHECK(test::run(bin + " recover --model " + m + " --seed 5 --arith mpfr --certificate " + f + " >/dev/null 2>&1").code == 2);
  CHECK_FALSE(std::ifstream(f).good());
  for (const auto& x : {m, t, f2, b}) std::remove(x.c_str());
}
