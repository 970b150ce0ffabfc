// Certificates (recover --certificate) and the separate checker: round trips
// in every arithmetic, tamper detection naming the broken field, malformed
// files, CLI exit codes and byte-identical output at any thread count.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "mhaq/check/certificate_check.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/run/recover.hpp"
#include "test_util.hpp"

using namespace mhaq;
using nlohmann::json;

namespace {

Model drawn(Arith a, int d, int heads, std::uint64_t seed, bool share_w = false) {
  GenerateOptions g = default_generate(a);
  g.d = d;
  g.heads = heads;
  g.seed = seed;
  g.share_w = share_w;
  return generate_model(g);
}

// Runs recover with a certificate; the run must end ok.
std::string certify(const Model& m, RecoverOptions o) {
  std::string cert;
  o.certificate = &cert;
  const json r = recover(m, o);
  INFO(r.dump().substr(0, 300));
  REQUIRE(recover_exit_code(r) == 0);
  REQUIRE(!cert.empty());
  return cert;
}
RecoverOptions opts(Arith a, std::uint64_t seed, long bits = 128) {
  RecoverOptions o;
  o.arith = a;
  o.seed = seed;
  o.bits = bits;
  return o;
}

std::string failures(const check::CertificateReport& r) {
  std::string s;
  for (const auto& f : r.failures) s += f.path + ": " + f.message + "\n";
  return s;
}
bool failed_at(const check::CertificateReport& r, const std::string& path) {
  for (const auto& f : r.failures)
    if (f.path == path) return true;
  return false;
}

// value + 2^-40, for a rational string
std::string shifted(const std::string& s) { return (Rational::parse(s) + Rational(1, 1UL << 40)).str(); }

bool input_error(const std::string& text) {
  try {
    (void)check::check_certificate(text);
  } catch (const check::InputError&) {
    return true;
  }
  return false;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("certificates round trip through the separate checker in every arithmetic") {
  struct Case {
    const char* name;
    Arith a;
    int d, heads;
    bool share_w;
  };
  for (const Case& c : {Case{"exact", Arith::exact, 2, 1, false}, Case{"exact shared W", Arith::exact, 3, 3, true},
                        Case{"ball", Arith::ball, 2, 2, false}, Case{"mpfr", Arith::mpfr, 3, 2, false},
                        Case{"double", Arith::ieee, 2, 1, false}}) {
    CAPTURE(c.name);
    const Model m = drawn(c.a, c.d, c.heads, 3, c.share_w);
    const std::string cert = certify(m, opts(c.a, 3));
    const check::CertificateReport r = check::check_certificate(cert);
    CHECK_MESSAGE(r.ok(), failures(r));
    const json j = json::parse(cert);
    const int H = static_cast<int>(m.canonical().heads.size());
    CHECK(j["format"] == "mhaq-certificate");
    CHECK(j["arith"] == arith_name(c.a));
    CHECK(r.queries == 4 * H * c.d * c.d - 2 * H + 1);
    CHECK(r.heads == H);
    CHECK(r.checks > r.queries * 3);
    if (c.a == Arith::mpfr) {
      // the claimed tolerances are meaningful at 128 bits, not vacuous
      CHECK(Rational::parse(j["tolerances"]["answers"]) < Rational(1, 1UL << 63) / Rational(1L << 60));
      CHECK(Rational::parse(j["tolerances"]["heads"]) < Rational(1, 1UL << 63));
    }
  }
}

TEST_CASE("certificates: unknown head count, lean schedule and noisy oracles check clean") {
  SUBCASE("exact, only H0 = H + 1 known") {
    RecoverOptions o = opts(Arith::exact, 2);
    o.max_heads = 2;
    const check::CertificateReport r = check::check_certificate(certify(drawn(Arith::exact, 2, 1, 2), o));
    CHECK_MESSAGE(r.ok(), failures(r));
    CHECK(r.H == 2);
    CHECK(r.queries == 4 * 2 * 4 - 4 + 1);
  }
  SUBCASE("exact, lean schedule") {
    RecoverOptions o = opts(Arith::exact, 1);
    o.schedule = Schedule::lean;
    const check::CertificateReport r = check::check_certificate(certify(drawn(Arith::exact, 2, 1, 1), o));
    CHECK_MESSAGE(r.ok(), failures(r));
    CHECK(r.queries == lean_query_count(2, 1));
  }
  SUBCASE("ball and mpfr answers with oracle noise") {
    for (Arith a : {Arith::ball, Arith::mpfr}) {
      RecoverOptions o = opts(a, 4);
      o.noise_eps = Rational::parse("1e-20");
      o.noise_seed = 9;
      const std::string cert = certify(drawn(a, 2, 1, 4), o);
      const check::CertificateReport r = check::check_certificate(cert);
      CHECK_MESSAGE(r.ok(), failures(r));
      if (a == Arith::mpfr) CHECK(Rational::parse(json::parse(cert)["tolerances"]["answers"]) > Rational::parse("1e-21"));
    }
  }
}

TEST_CASE("a single tampered field makes the checker fail and name it") {
  for (Arith a : {Arith::exact, Arith::ball, Arith::mpfr}) {
    CAPTURE(arith_name(a));
    const json orig = json::parse(certify(drawn(a, 2, 2, 5), opts(a, 5)));
    auto tamper = [&](const std::function<void(json&)>& edit, const std::string& path) {
      json j = orig;
      edit(j);
      const check::CertificateReport r = check::check_certificate(j.dump());
      CHECK_FALSE(r.ok());
      CHECK_MESSAGE(failed_at(r, path), "expected a failure at " << path << ", got:\n" << failures(r));
      return r;
    };
    // shift a value: Q(tau) coefficient / rational by 1, ball midpoint or binary float by 2^-40
    auto shift = [&](json& v) {
      if (a == Arith::ball) v["mid"] = shifted(v["mid"]);
      else if (a == Arith::mpfr) v = shifted(v);
      else v = (Rational::parse(v) + Rational(1)).str();
    };
    SUBCASE("an answer") {
      const auto r = tamper([&](json& j) {
        json& v = j["answers"][17];
        if (a == Arith::exact) v["num"][0] = (Rational::parse(v["num"][0]) + Rational(1)).str();
        else shift(v);
      }, "answers[17]");
      CHECK(r.failures.size() == 1);  // nothing else depends on the recorded answer
    }
    SUBCASE("a query token") {
      tamper([&](json& j) {
        json& t = j["queries"][5]["runs"][0]["token"][1];
        t = (Rational::parse(t) + Rational(1, static_cast<unsigned long>(j["inputs"]["token_den"].get<long>()))).str();
      }, "queries[5].runs[0].token[1]");
    }
    SUBCASE("a query count") {
      tamper([](json& j) { j["queries"][6]["runs"][0]["count"] = 7; }, "queries[6].runs[0].count");
    }
    SUBCASE("a recovered head entry") {
      const auto r = tamper([&](json& j) { shift(j["heads"][1]["W"][1][0]); }, "heads[1].W[1][0]");
      CHECK(failed_at(r, "heads"));  // and the heads no longer reproduce the answers
    }
    SUBCASE("a recovered v entry") {
      tamper([&](json& j) { shift(j["heads"][0]["v"][1]); }, "heads[0].v[1]");
    }
    SUBCASE("a residue") {
      const auto r = tamper([&](json& j) { shift(j["pairs"][3]["poles"][1]["c"]); }, "pairs[3].poles[1].c");
      CHECK(failed_at(r, "pairs[3]"));
    }
    SUBCASE("a pole") {
      if (a == Arith::exact) tamper([](json& j) { j["pairs"][2]["poles"][0]["n"] = j["pairs"][2]["poles"][0]["n"].get<long>() + 1; }, "pairs[2].poles[0].n");
      else tamper([&](json& j) { shift(j["pairs"][2]["poles"][0]["r"]); }, "pairs[2].poles[0].r");
    }
    SUBCASE("a pair limit") {
      tamper([&](json& j) { shift(j["pairs"][4]["P"]); }, "pairs[4].P");
    }
    SUBCASE("the query-count claim") {
      tamper([](json& j) { j["claims"]["queries"] = j["claims"]["queries"].get<long>() - 1; }, "claims.queries");
    }
    SUBCASE("a dropped last query and answer") {
      tamper([](json& j) {
        j["queries"].erase(j["queries"].size() - 1);
        j["answers"].erase(j["answers"].size() - 1);
      }, "queries");
    }
    SUBCASE("a wild token and a wild pole fail fast") {
      const auto r = tamper([&](json& j) {
        j["queries"][3]["runs"][0]["token"][0] = "123456789012345678901234567890";
        if (a == Arith::exact) j["pairs"][1]["poles"][0]["n"] = 1L << 39;
      }, "queries[3].runs[0].token[0]");
      CHECK(failed_at(r, "answers[3]"));
      if (a == Arith::exact) CHECK(failed_at(r, "pairs[1].poles[0].n"));
    }
    if (a == Arith::ball) {
      SUBCASE("a ball shrunk to its midpoint") {
        tamper([](json& j) { j["heads"][0]["W"][0][1]["rad"] = "0"; }, "heads[0].W[0][1]");
      }
    }
    if (a == Arith::mpfr) {
      SUBCASE("a tolerance claim too strong") {
        tamper([](json& j) { j["tolerances"]["pairs"] = "0"; }, "pairs[0]");
      }
      SUBCASE("a float wider than the run's precision") {
        const Rational tiny = Rational(1, 1UL << 50) * Rational(1, 1UL << 50) * Rational(1, 1UL << 50) * Rational(1, 1UL << 50);
        tamper([&](json& j) { j["answers"][2] = (Rational::parse(j["answers"][2]) + tiny).str(); }, "answers[2]");  // 2^-200
      }
    }
  }
}

TEST_CASE("malformed certificates are input errors") {
  const std::string cert = certify(drawn(Arith::ball, 2, 1, 1), opts(Arith::ball, 1));
  CHECK(input_error(cert.substr(0, cert.size() / 2)));  // truncated
  CHECK(input_error("garbage"));
  CHECK(input_error("[]"));
  json j = json::parse(cert);
  j["version"] = 7;
  CHECK(input_error(j.dump()));
  j = json::parse(cert);
  j.erase("answers");
  CHECK(input_error(j.dump()));
  j = json::parse(cert);
  j["answers"][0]["mid"] = "1/3";  // not a binary value
  CHECK(input_error(j.dump()));
  j = json::parse(cert);
  j["answers"][0]["rad"] = "-1/4";
  CHECK(input_error(j.dump()));
  j = json::parse(cert);
  j["queries"][1]["runs"][0]["token"] = json::array({"1"});  // wrong dimension
  CHECK(input_error(j.dump()));
  j = json::parse(cert);
  j["queries"][1]["runs"][0]["count"] = 0;
  CHECK(input_error(j.dump()));
  CHECK_FALSE(input_error(cert));
}

TEST_CASE("certificate bytes do not depend on the thread count") {
  for (Arith a : {Arith::exact, Arith::ball}) {
    const Model m = drawn(a, 3, 2, 6);
    RecoverOptions o1 = opts(a, 6), o2 = opts(a, 6);
    o2.threads = 2;
    const std::string c1 = certify(m, o1);
    CHECK(c1 == certify(m, o2));
    CHECK(c1 == certify(m, o1));
  }
}

TEST_CASE("mhaq recover --certificate and check-certificate: files and exit codes") {
  const std::string bin = MHAQ_BINARY;
  const std::string f = "test_certificate_cli.json", t = "test_certificate_cli_tampered.json";
  std::remove(f.c_str());
  auto r = test::run(bin + " recover --d 2 --heads 2 --seed 3 --arith ball --bits 96 --certificate " + f + " --json");
  CHECK(r.code == 0);
  CHECK(json::parse(r.out)["certificate"] == f);
  r = test::run(bin + " check-certificate " + f);
  CHECK(r.code == 0);
  CHECK(r.out.find(": ok") != std::string::npos);
  // threads: same bytes
  const std::string f2 = "test_certificate_cli_t2.json";
  CHECK(test::run(bin + " recover --d 2 --heads 2 --seed 3 --arith ball --bits 96 --threads 2 --certificate " + f2 + " >/dev/null").code == 0);
  CHECK(read_text(f) == read_text(f2));
  {
    json j = json::parse(read_text(f));
    j["pairs"][3]["poles"][1]["c"]["mid"] = shifted(j["pairs"][3]["poles"][1]["c"]["mid"]);
    std::ofstream(t) << j.dump(1);
  }
  r = test::run(bin + " check-certificate " + t + " --json");
  CHECK(r.code == 10);
  const json out = json::parse(r.out);  // exactly one JSON object
  CHECK(out["status"] == "checker_rejected");
  bool named = false;
  for (const auto& x : out["failures"]) named = named || x["path"] == "pairs[3].poles[1].c";
  CHECK(named);
  std::ofstream("test_certificate_cli_bad.json") << read_text(f).substr(0, 200);
  CHECK(test::run(bin + " check-certificate test_certificate_cli_bad.json 2>/dev/null").code == 3);
  CHECK(test::run(bin + " check-certificate /nonexistent/c.json 2>/dev/null").code == 3);
  // a run that does not end ok writes no certificate
  std::remove(f.c_str());
  CHECK(test::run(bin + " recover --d 3 --heads 2 --learner-heads 1 --seed 1 --certificate " + f + " >/dev/null 2>&1").code == 8);
  CHECK_FALSE(std::ifstream(f).good());
  for (const auto& x : {t, f2, std::string("test_certificate_cli_bad.json")}) std::remove(x.c_str());
}
