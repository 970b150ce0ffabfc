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

#include "mhaq/run/record_json.hpp"
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
  const RecoverResult r = recover(m, o);
  INFO(record_json(r).dump().substr(0, 300));
  REQUIRE(r.exit_code() == 0);
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
    const std::string cert = certify(drawn(Arith::exact, 2, 1, 2), o);
    const check::CertificateReport r = check::check_certificate(cert);
    CHECK_MESSAGE(r.ok(), failures(r));
    CHECK(r.H == 2);
    // the plan, then the small-grid guard's witnesses (proofs/39): at R = 5
    // and H0 = 2, R_w = 7 and 10 pairs of 2H0+1 = 5 queries
    const json j = json::parse(cert);
    CHECK(j["claims"]["grid_witness_queries"] == 50);
    CHECK(j["inputs"]["witness_range"] == 7);
    CHECK(r.queries == 4 * 2 * 4 - 4 + 1 + 50);
  }
  SUBCASE("exact and mpfr at token range 1, only H0 known") {
    for (Arith a : {Arith::exact, Arith::mpfr}) {
      RecoverOptions o = opts(a, 1);
      o.max_heads = 2;
      o.tokens = TokenSpec{1, 1};
      // mpfr: a float run that finds fewer heads than its bound has no
      // certified bound (proofs/40), so its model has H0 heads
      const std::string cert = certify(drawn(a, 2, a == Arith::exact ? 1 : 2, 1), o);
      const check::CertificateReport r = check::check_certificate(cert);
      CHECK_MESSAGE(r.ok(), failures(r));
      CHECK(json::parse(cert)["claims"]["grid_witness_queries"] == 50);
    }
  }
  SUBCASE("H known: no witness fields, as before the guard") {
    const json j = json::parse(certify(drawn(Arith::exact, 2, 1, 2), opts(Arith::exact, 2)));
    CHECK_FALSE(j["claims"].contains("grid_witness_queries"));
    CHECK_FALSE(j["inputs"].contains("witness_range"));
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

TEST_CASE("small-grid witness queries: a tampered witness fails and is named") {
  // d = 2, H0 = 2: the plan's 29 queries, then 10 witness pairs of 5 queries
  // (queries[29..78]); each pair is [y x 5], then [x x k, y x (5-k)], k = 1..4.
  for (Arith a : {Arith::exact, Arith::mpfr}) {
    CAPTURE(arith_name(a));
    RecoverOptions o = opts(a, 2);
    o.max_heads = 2;
    o.tokens = TokenSpec{5, 1};
    const json orig = json::parse(certify(drawn(a, 2, a == Arith::exact ? 1 : 2, 2), o));  // mpfr: H0 heads, as above
    REQUIRE(orig["claims"]["grid_witness_queries"] == 50);
    REQUIRE(check::check_certificate(orig.dump()).ok());
    auto tamper = [&](const std::function<void(json&)>& edit, const std::string& path) {
      json j = orig;
      edit(j);
      const check::CertificateReport r = check::check_certificate(j.dump());
      CHECK_FALSE(r.ok());
      CHECK_MESSAGE(failed_at(r, path), "expected a failure at " << path << ", got:\n" << failures(r));
      return r;
    };
    auto plus_one = [](json& t) { t = (Rational::parse(t) + Rational(1)).str(); };
    SUBCASE("a witness token") {
      const auto r = tamper([&](json& j) { plus_one(j["queries"][31]["runs"][0]["token"][1]); }, "queries[31].runs[0].token[1]");
      // exact: the recorded answer is not f at the changed query (in mpfr x's
      // softmax weight there can be below the answers' tolerance)
      if (a == Arith::exact) CHECK_MESSAGE(failed_at(r, "answers[31]"), failures(r));
    }
    SUBCASE("a witness's y token in its k = 0 query") {
      tamper([&](json& j) { plus_one(j["queries"][34]["runs"][0]["token"][0]); }, "queries[34].runs[0].token[0]");
    }
    SUBCASE("a witness answer") {
      const auto r = tamper([&](json& j) {
        json& v = j["answers"][40];
        if (a == Arith::exact) v["num"][0] = (Rational::parse(v["num"][0]) + Rational(1)).str();
        else v = shifted(v);
      }, "answers[40]");
      CHECK(r.failures.size() == 1);
    }
    SUBCASE("the witness count claim") {
      tamper([](json& j) { j["claims"]["grid_witness_queries"] = 45; }, "claims.grid_witness_queries");
    }
    SUBCASE("a dropped witness pair, with the claims made to agree") {
      // 9 pairs on {-7..7}: (7/15)^9 > 2^-10
      tamper([](json& j) {
        for (int k = 0; k < 5; ++k) {
          j["queries"].erase(j["queries"].size() - 1);
          j["answers"].erase(j["answers"].size() - 1);
        }
        j["claims"]["queries"] = 74;
        j["claims"]["grid_witness_queries"] = 45;
      }, "claims.grid_witness_queries");
    }
    SUBCASE("a witness count that is not whole pairs") {
      tamper([](json& j) {
        j["queries"].erase(j["queries"].size() - 1);
        j["answers"].erase(j["answers"].size() - 1);
        j["claims"]["queries"] = 78;
        j["claims"]["grid_witness_queries"] = 49;
      }, "claims.grid_witness_queries");
    }
    SUBCASE("two witness queries swapped: the group is not of the shape") {
      tamper([](json& j) {
        std::swap(j["queries"][31]["runs"], j["queries"][32]["runs"]);
        std::swap(j["answers"][31], j["answers"][32]);
      }, "queries[31].runs[0].count");
    }
    SUBCASE("a k = 0 witness query with two runs") {
      tamper([](json& j) { j["queries"][39]["runs"] = j["queries"][40]["runs"]; }, "queries[39].runs");
    }
    SUBCASE("a wild witness token is not evaluated") {
      const auto r = tamper([](json& j) { j["queries"][45]["runs"][0]["token"][0] = "123456789012345678901234567890"; }, "queries[45].runs[0].token[0]");
      CHECK(failed_at(r, "answers[45]"));
    }
    SUBCASE("a witness range beyond max(R, 4H - 1)") {
      tamper([](json& j) { j["inputs"]["witness_range"] = 8; }, "inputs.witness_range");
    }
    SUBCASE("a witness token off the claimed grid") {
      json j = orig;
      j["inputs"]["witness_range"] = 5;  // the drawn tokens reach beyond 5
      const check::CertificateReport r = check::check_certificate(j.dump());
      CHECK_FALSE(r.ok());
      bool token = false;
      for (const auto& f : r.failures) token = token || (f.path.rfind("queries[", 0) == 0 && f.path.find("token") != std::string::npos);
      CHECK_MESSAGE(token, failures(r));
      CHECK(failed_at(r, "claims.grid_witness_queries"));  // 10 pairs on {-5..5} are too few
    }
    SUBCASE("witness fields that do not come together are malformed") {
      json j = orig;
      j["claims"].erase("grid_witness_queries");
      CHECK(input_error(j.dump()));
      j = orig;
      j["inputs"].erase("witness_range");
      CHECK(input_error(j.dump()));
      j = orig;
      j["claims"]["grid_witness_queries"] = 0;
      CHECK(input_error(j.dump()));
      j = orig;
      j["inputs"]["witness_range"] = "14";
      CHECK(input_error(j.dump()));
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
  // with the small-grid guard's witness queries (a bound H0 at R = 5)
  const Model m = drawn(Arith::exact, 2, 1, 2);
  RecoverOptions o1 = opts(Arith::exact, 2), o2 = opts(Arith::exact, 2);
  o1.max_heads = o2.max_heads = 2;
  o2.threads = 2;
  const std::string c1 = certify(m, o1);
  CHECK(json::parse(c1)["claims"]["grid_witness_queries"] == 50);
  CHECK(c1 == certify(m, o2));
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
  // witness queries (proofs/39): a clean file checks ok, a changed witness token exits 10 naming it
  r = test::run(bin + " recover --d 2 --heads 1 --max-heads 2 --seed 2 --certificate " + f + " >/dev/null");
  CHECK(r.code == 0);
  CHECK(test::run(bin + " check-certificate " + f).code == 0);
  {
    json j = json::parse(read_text(f));
    REQUIRE(j["claims"]["grid_witness_queries"] == 50);
    j["queries"][33]["runs"][1]["token"][0] = (Rational::parse(j["queries"][33]["runs"][1]["token"][0]) + Rational(1)).str();
    std::ofstream(t) << j.dump(1);
  }
  r = test::run(bin + " check-certificate " + t + " --json");
  CHECK(r.code == 10);
  named = false;
  const json out2 = json::parse(r.out);
  for (const auto& x : out2["failures"]) named = named || x["path"] == "queries[33].runs[1].token[0]";
  CHECK_MESSAGE(named, r.out);
  {
    json j = json::parse(read_text(f));
    j["inputs"].erase("witness_range");
    std::ofstream(t) << j.dump(1);
  }
  CHECK(test::run(bin + " check-certificate " + t + " 2>/dev/null").code == 3);
  // a run that does not end ok writes no certificate
  std::remove(f.c_str());
  CHECK(test::run(bin + " recover --d 3 --heads 2 --learner-heads 1 --seed 1 --certificate " + f + " >/dev/null 2>&1").code == 8);
  CHECK_FALSE(std::ifstream(f).good());
  for (const auto& x : {t, f2, std::string("test_certificate_cli_bad.json")}) std::remove(x.c_str());
}
