// Golden test vectors: export -> check round trips, byte-identical re-export,
// tamper detection with JSON paths, certified decimals, committed fixtures.
#include <arb.h>
#include <arb_poly.h>
#include <doctest/doctest.h>
#include <flint/fmpq.h>
#include <flint/fmpz.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "mhaq/stages/grid_guard.hpp"
#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/evidence/golden.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/run/recover.hpp"
#include "test_util.hpp"

using namespace mhaq;
using nlohmann::json;

namespace {

GoldenInputs generated(int d, int heads, std::uint64_t seed, bool share_w = false, long digits = 60, int max_heads = 0) {
  GoldenInputs in;
  GenerateOptions g = default_generate(Arith::exact);
  g.d = d;
  g.heads = heads;
  g.seed = seed;
  g.share_w = share_w;
  in.model = generate_model(g);
  in.model_source = "generated";
  in.generate = g;
  in.seed = seed;
  in.digits = digits;
  in.max_heads = max_heads;
  return in;
}
GoldenInputs in_arith(GoldenInputs in, Arith a, long bits) {
  in.arith = a;
  in.bits = bits;
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

// Exact value of a decimal "[-]d.ddd...e[+-]XX" (parsed here, independently of mhaq).
void parse_sci(fmpq_t out, long& E, long& D, const std::string& s) {
  size_t pos = 0;
  const bool neg = s[0] == '-';
  if (neg) pos = 1;
  const size_t e = s.find('e');
  REQUIRE(e != std::string::npos);
  std::string mant;
  for (size_t i = pos; i < e; ++i)
    if (s[i] != '.') mant += s[i];
  E = std::stol(s.substr(e + 1));
  D = static_cast<long>(mant.size());
  fmpz_t m, p;
  fmpz_init(m);
  fmpz_init(p);
  fmpz_set_str(m, mant.c_str(), 10);
  if (neg) fmpz_neg(m, m);
  const long k = E - (D - 1);
  fmpz_set_ui(p, 10);
  fmpz_pow_ui(p, p, static_cast<ulong>(k < 0 ? -k : k));
  fmpq_set_fmpz_frac(out, m, p);  // m / 10^|k|
  if (k >= 0) {
    fmpz_mul(m, m, p);
    fmpz_one(p);
    fmpq_set_fmpz_frac(out, m, p);
  }
  fmpz_clear(m);
  fmpz_clear(p);
}

// Independent Arb evaluation of num(tau)/den(tau), tau = e^{1/L}, to at least
// `digits2` correct digits; then |x - decimal| < 1/2 unit in the last printed place.
bool decimal_agrees(const json& ans, long L, long digits2) {
  fmpz_poly_t num, den;
  fmpz_poly_init(num);
  fmpz_poly_init(den);
  fmpz_t c;
  fmpz_init(c);
  for (size_t i = 0; i < ans["exact"]["num"].size(); ++i) {
    fmpz_set_str(c, ans["exact"]["num"][i].get<std::string>().c_str(), 10);
    fmpz_poly_set_coeff_fmpz(num, static_cast<long>(i), c);
  }
  for (size_t i = 0; i < ans["exact"]["den"].size(); ++i) {
    fmpz_set_str(c, ans["exact"]["den"][i].get<std::string>().c_str(), 10);
    fmpz_poly_set_coeff_fmpz(den, static_cast<long>(i), c);
  }
  const std::string dec = ans["decimal"].get<std::string>();
  fmpq_t q;
  fmpq_init(q);
  long E = 0, D = 0;
  parse_sci(q, E, D, dec);
  arb_t tau, x, y, diff, half_ulp;
  arb_init(tau); arb_init(x); arb_init(y); arb_init(diff); arb_init(half_ulp);
  arb_poly_t pn, pd;
  arb_poly_init(pn);
  arb_poly_init(pd);
  bool ok = false;
  const bool zero = fmpz_poly_is_zero(num);
  for (long prec = static_cast<long>(digits2 * 3.33) + 32; prec < (1L << 20); prec *= 2) {
    arb_set_ui(tau, 1);
    arb_div_ui(tau, tau, static_cast<ulong>(L), prec);
    arb_exp(tau, tau, prec);
    arb_poly_set_fmpz_poly(pn, num, prec);
    arb_poly_set_fmpz_poly(pd, den, prec);
    arb_poly_evaluate(x, pn, tau, prec);
    arb_poly_evaluate(y, pd, tau, prec);
    arb_div(x, x, y, prec);
    if (!zero && arb_rel_accuracy_bits(x) < static_cast<long>(digits2 * 3.33)) continue;
    arb_set_fmpq(y, q, prec);
    arb_sub(diff, x, y, prec);
    arb_abs(diff, diff);
    // 1/2 * 10^(E - D + 1)
    {
      fmpz_t ex;
      fmpz_init(ex);
      fmpz_set_si(ex, E - D + 1);
      arb_set_ui(half_ulp, 10);
      arb_pow_fmpz(half_ulp, half_ulp, ex, prec);
      arb_mul_2exp_si(half_ulp, half_ulp, -1);
      fmpz_clear(ex);
    }
    ok = zero ? dec.find_first_not_of("0.e+") == std::string::npos : (arb_lt(diff, half_ulp) != 0);
    break;
  }
  arb_poly_clear(pn); arb_poly_clear(pd);
  arb_clear(tau); arb_clear(x); arb_clear(y); arb_clear(diff); arb_clear(half_ulp);
  fmpq_clear(q);
  fmpz_clear(c);
  fmpz_poly_clear(num);
  fmpz_poly_clear(den);
  return ok;
}

}  // namespace

TEST_CASE("golden decimals: correct rounding, ties to even, exponent edges") {
  CHECK(golden_decimal(Rational(1, 8), 2) == "1.2e-01");   // tie: 0.125 -> even
  CHECK(golden_decimal(Rational(3, 8), 2) == "3.8e-01");   // tie: 0.375 -> even
  CHECK(golden_decimal(Rational(-1), 3) == "-1.00e+00");
  CHECK(golden_decimal(Rational(0), 3) == "0.00e+00");
  CHECK(golden_decimal(Rational(996, 100), 2) == "1.0e+01");       // rounds up into the next decade
  CHECK(golden_decimal(Rational(994, 10000), 2) == "9.9e-02");     // just below a power of ten
  CHECK(golden_decimal(Rational(1, 3), 5) == "3.3333e-01");
  CHECK(golden_decimal(Rational(123456789), 1) == "1e+08");
  CHECK(golden_decimal(QTauAccess::tau_pow(1), 1, 30) == "2.71828182845904523536028747135e+00");  // e
  CHECK(golden_decimal(-QTauAccess::tau_pow(-2), 2, 20) == "-3.6787944117144232160e-01");   // -e^{-1}
}

TEST_CASE("golden export -> check round trip, byte-identical re-export") {
  for (const auto& in : {generated(2, 1, 1), generated(2, 2, 2), generated(3, 1, 4, false, 30)}) {
    const std::string a = golden_export(in);
    const std::string b = golden_export(in);
    CHECK(a == b);
    const GoldenCheckResult r = golden_check(a);
    CHECK_MESSAGE(r.ok(), all(r));
    CHECK(r.fields_checked > 100);
    const json j = json::parse(a);
    CHECK(j["format"] == "mhaq-golden");
    CHECK(j["version"] == golden_version);
    CHECK(j["summary"]["exact_match"] == true);
    CHECK(j["queries"].size() == j["answers"].size());
    CHECK(j["summary"]["queries"] == j["queries"].size());
    // the check does not depend on the layout
    CHECK(golden_check(j.dump(2)).ok());
  }
}

TEST_CASE("golden check catches a single tampered field and names its path") {
  const std::string text = golden_export(generated(2, 2, 2));
  const json orig = json::parse(text);
  auto check_tamper = [&](const std::function<void(json&)>& edit, const std::string& path) {
    json j = orig;
    edit(j);
    const GoldenCheckResult r = golden_check(j.dump(1));
    CHECK_FALSE(r.ok());
    CHECK_MESSAGE(has_mismatch_at(r, path), "expected a mismatch at " << path << ", got:\n" << all(r));
  };
  SUBCASE("an exact answer coefficient") {
    check_tamper([](json& j) {
      auto& c = j["answers"][5]["exact"]["num"][0];
      c = c.get<std::string>() == "1" ? "2" : "1";
    }, "answers[5].exact.num[0]");
  }
  SUBCASE("a decimal answer, last digit") {
    check_tamper([](json& j) {
      std::string s = j["answers"][7]["decimal"];
      const size_t e = s.find('e');
      s[e - 1] = s[e - 1] == '1' ? '2' : '1';
      j["answers"][7]["decimal"] = s;
    }, "answers[7].decimal");
  }
  SUBCASE("a query token") {
    check_tamper([](json& j) {
      auto& t = j["queries"][3]["runs"][0]["token"][0];
      t = t.get<std::string>() == "0" ? "1" : "0";
    }, "queries[3].runs[0].token[0]");
  }
  SUBCASE("a query count") {
    check_tamper([](json& j) { j["queries"][2]["runs"][0]["count"] = 7; }, "queries[2].runs[0].count");
  }
  SUBCASE("a recovered head entry") {
    check_tamper([](json& j) {
      auto& w = j["heads"][0]["W"][1][0];
      w = w.get<std::string>() == "1/4" ? "1/2" : "1/4";
    }, "heads[0].W[1][0]");
  }
  SUBCASE("a pole exponent") {
    check_tamper([](json& j) { j["pairs"][2]["poles"][0]["n"] = j["pairs"][2]["poles"][0]["n"].get<long>() + 1; }, "pairs[2].poles[0].n");
  }
  SUBCASE("a residue") {
    check_tamper([](json& j) { j["pairs"][1]["poles"][0]["c"] = "1/7"; }, "pairs[1].poles[0].c");
  }
  SUBCASE("a model entry") {
    check_tamper([](json& j) { j["model"]["heads"][0]["v"][0] = "1/3"; }, "model.heads[0].v[0]");
  }
  SUBCASE("a dropped answer") {
    check_tamper([](json& j) { j["answers"].erase(j["answers"].size() - 1); }, "answers");
  }
}

TEST_CASE("golden check rejects malformed files as input errors") {
  const json orig = json::parse(golden_export(generated(2, 1, 1)));
  auto kind_of = [](const std::string& t) {
    try {
      (void)golden_check(t);
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::internal;
  };
  CHECK(kind_of("{") == ErrorKind::input);
  CHECK(kind_of("[]") == ErrorKind::input);
  json j = orig;
  j["version"] = 99;
  CHECK(kind_of(j.dump()) == ErrorKind::input);
  j = orig;
  j.erase("answers");
  CHECK(kind_of(j.dump()) == ErrorKind::input);
  j = orig;
  j["answers"][0]["exact"]["num"][0] = "12x";
  CHECK(kind_of(j.dump()) == ErrorKind::input);
  j = orig;
  j["queries"][1]["runs"][0]["token"] = json::array({"1"});
  CHECK(kind_of(j.dump()) == ErrorKind::input);
}

TEST_CASE("golden decimals agree to every printed digit with Arb at twice the digits") {
  const long digits = 40;
  const json j = json::parse(golden_export(generated(2, 2, 2, false, digits)));
  const long L = j["L"].get<long>();
  int n = 0;
  for (const auto& a : j["answers"]) {
    CHECK_MESSAGE(decimal_agrees(a, L, 2 * digits), "answers[" << n << "].decimal = " << a["decimal"]);
    ++n;
  }
  CHECK(n > 10);
  // and the comparison itself is sharp: one unit in the last place off is rejected
  for (int k : {3, 8}) {
    json a = j["answers"][k];
    std::string s = a["decimal"];
    const size_t e = s.find('e');
    s[e - 1] = s[e - 1] == '9' ? '8' : static_cast<char>(s[e - 1] + 1);
    a["decimal"] = s;
    CHECK_FALSE(decimal_agrees(a, L, 2 * digits));
  }
}

TEST_CASE("committed golden fixtures are reproduced byte for byte and check clean") {
  const std::string dir = std::string(MHAQ_SOURCE_DIR) + "/tests/golden/";
  struct Fixture {
    const char* file;
    GoldenInputs in;
  };
  const Fixture fx[] = {{"d2_h1_seed1.json", generated(2, 1, 1)},
                        {"d2_h2_sharew_seed1.json", generated(2, 2, 1, true)},
                        {"d2_h1_h0max2_seed1.json", generated(2, 1, 1, false, 60, 2)}};
  for (const auto& f : fx) {
    const std::string committed = read_text(dir + f.file);
    REQUIRE_MESSAGE(!committed.empty(), "missing fixture " << f.file);
    CHECK_MESSAGE(golden_export(f.in) == committed, f.file << " differs from a fresh export (regenerate with mhaq golden export)");
    const GoldenCheckResult r = golden_check(committed);
    CHECK_MESSAGE(r.ok(), all(r));
  }
  // The shared-W fixture merges two heads into one canonical head.
  const json j = json::parse(read_text(dir + "d2_h2_sharew_seed1.json"));
  CHECK(j["model"]["heads"].size() == 2);
  CHECK(j["heads"].size() == 1);
  CHECK(j["model_canonical"]["heads"] == j["heads"]);
  // The H0 fixture: the learner was told only H0 = 2 and found the one head.
  const json h0 = json::parse(read_text(dir + "d2_h1_h0max2_seed1.json"));
  CHECK(h0["inputs"]["heads_is_bound"] == true);
  CHECK(h0["inputs"]["heads_learner"] == 2);
  CHECK(h0["heads"].size() == 1);
  // the plan's 4 H0 d^2 - 2 H0 + 1 queries, then the small token grid's witnesses (proofs/39), all listed
  LearnOptions g_lo;
  g_lo.H = 2;
  g_lo.heads_is_bound = true;
  g_lo.tokens = TokenSpec{5, 1};
  const GridGuard g = grid_guard(2, g_lo);
  CHECK(g.fires);
  CHECK(h0["summary"]["queries"] == 4 * 2 * 4 - 2 * 2 + 1 + g.queries());
  CHECK(h0["queries"].size() == h0["summary"]["queries"].get<size_t>());
  CHECK(h0["summary"]["max_length"] == 5);
  for (const auto& p : h0["pairs"]) CHECK(p["poles"].size() == 1);
}

TEST_CASE("golden ball and mpfr runs: export -> check round trip, containment of the exact truth") {
  for (Arith a : {Arith::ball, Arith::mpfr}) {
    CAPTURE(arith_name(a));
    const GoldenInputs in = in_arith(generated(2, 2, 2, false, 30), a, 128);
    const std::string text = golden_export(in);
    CHECK(text == golden_export(in));
    const GoldenCheckResult r = golden_check(text);
    CHECK_MESSAGE(r.ok(), all(r));
    const json j = json::parse(text);
    const std::string key = arith_name(a);
    CHECK(j["arith"] == key);
    CHECK(j["bits"] == 128);
    // the exact part is the exact golden file's, field for field
    json ex = json::parse(golden_export(generated(2, 2, 2, false, 30)));
    CHECK(j["answers"][4]["exact"] == ex["answers"][4]["exact"]);
    CHECK(j["heads"] == ex["heads"]);
    CHECK(j["answers"].size() == j[key]["queries"].get<size_t>());
    for (const auto& x : j["answers"]) CHECK(x.contains(key));
    for (const auto& p : j["pairs"]) CHECK(p[key]["poles"].size() == 2);
    CHECK(j[key]["heads"].size() == 2);
    if (a == Arith::ball) CHECK(j["ball"]["contains_truth"] == true);
    CHECK(golden_check(j.dump(2)).ok());
  }
  // the H0 run in mpfr; in balls an exact fit agreement is never certified (unable)
  CHECK(golden_check(golden_export(in_arith(generated(2, 1, 1, false, 20, 2), Arith::mpfr, 128))).ok());
  try {
    (void)golden_export(in_arith(generated(2, 1, 1, false, 20, 2), Arith::ball, 128));
    FAIL("expected unable");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::unable);
  }
}

TEST_CASE("golden ball and mpfr: tampering is detected at its path") {
  const json ball = json::parse(golden_export(in_arith(generated(2, 2, 2, false, 20), Arith::ball, 128)));
  const json mpfr = json::parse(golden_export(in_arith(generated(2, 2, 2, false, 20), Arith::mpfr, 128)));
  auto check_tamper = [](const json& orig, const std::function<void(json&)>& edit, const std::vector<std::string>& paths) {
    json j = orig;
    edit(j);
    const GoldenCheckResult r = golden_check(j.dump(1));
    CHECK_FALSE(r.ok());
    for (const auto& p : paths) CHECK_MESSAGE(has_mismatch_at(r, p), "expected a mismatch at " << p << ", got:\n" << all(r));
  };
  auto shifted = [](const json& v) { return (Rational::parse(v.get<std::string>()) + Rational(1, 1UL << 40)).str(); };
  SUBCASE("a ball answer's midpoint: differs from the re-run and misses the exact answer") {
    check_tamper(ball, [&](json& j) { j["answers"][6]["ball"]["mid"] = shifted(j["answers"][6]["ball"]["mid"]); },
                 {"answers[6].ball.mid", "answers[6].ball"});
  }
  SUBCASE("a ball head entry shrunk to its midpoint no longer contains the truth") {
    check_tamper(ball, [](json& j) { j["ball"]["heads"][0]["W"][1][0]["rad"] = "0"; }, {"ball.heads[0].W[1][0].rad", "ball.heads"});
  }
  SUBCASE("a ball residue") {
    check_tamper(ball, [&](json& j) { j["pairs"][3]["ball"]["poles"][1]["c"]["mid"] = shifted(j["pairs"][3]["ball"]["poles"][1]["c"]["mid"]); },
                 {"pairs[3].ball.poles[1].c.mid", "pairs[3].ball"});
  }
  SUBCASE("an mpfr answer") {
    check_tamper(mpfr, [&](json& j) { j["answers"][9]["mpfr"] = shifted(j["answers"][9]["mpfr"]); }, {"answers[9].mpfr"});
  }
  SUBCASE("an mpfr pole") {
    check_tamper(mpfr, [&](json& j) { j["pairs"][2]["mpfr"]["poles"][0]["r"] = shifted(j["pairs"][2]["mpfr"]["poles"][0]["r"]); },
                 {"pairs[2].mpfr.poles[0].r"});
  }
  SUBCASE("an mpfr head entry") {
    check_tamper(mpfr, [&](json& j) { j["mpfr"]["heads"][1]["v"][0] = shifted(j["mpfr"]["heads"][1]["v"][0]); }, {"mpfr.heads[1].v[0]"});
  }
  SUBCASE("the precision (an input: the re-run at 160 bits gives other values)") {
    check_tamper(mpfr, [](json& j) { j["bits"] = 160; }, {"answers[1].mpfr", "mpfr.heads[0].W[0][0]"});
  }
  SUBCASE("a precision the run cannot reach is reported once") {
    json j = mpfr;
    j["bits"] = 40;
    const GoldenCheckResult r = golden_check(j.dump());
    REQUIRE(r.mismatches.size() == 1);
    CHECK(r.mismatches[0].rfind("mpfr: re-running the mpfr learner failed", 0) == 0);
  }
}

TEST_CASE("golden export bytes do not depend on the thread count") {
  for (const GoldenInputs& base : {generated(3, 2, 4, false, 20), in_arith(generated(2, 2, 2, false, 20), Arith::ball, 128)}) {
    GoldenInputs t1 = base, t2 = base;
    t2.threads = 2;
    const std::string a = golden_export(t1);
    CHECK(a == golden_export(t2));
    CHECK(golden_check(a, 2).ok());
  }
}

TEST_CASE("mhaq golden CLI exit codes") {
  const std::string bin = MHAQ_BINARY;
  const std::string dir = std::string(MHAQ_SOURCE_DIR) + "/tests/golden/";
  CHECK(test::run(bin + " golden check " + dir + "d2_h1_seed1.json >/dev/null 2>&1").code == 0);
  const std::string tmp = "test_golden_tampered.json";
  {
    json j = json::parse(read_text(dir + "d2_h1_seed1.json"));
    j["answers"][17 % j["answers"].size()]["decimal"] = "1.0e+00";
    std::ofstream(tmp) << j.dump(1);
  }
  const auto r = test::run(bin + " golden check " + tmp + " 2>/dev/null");
  CHECK(r.code == 10);
  CHECK(r.out.find("answers[2].decimal") != std::string::npos);
  std::ofstream("test_golden_bad.json") << "{\"format\": \"mhaq-golden\"";
  CHECK(test::run(bin + " golden check test_golden_bad.json >/dev/null 2>&1").code == 3);
  CHECK(test::run(bin + " golden check /nonexistent/x.json >/dev/null 2>&1").code == 3);
  const auto e = test::run(bin + " golden export --d 2 --heads 1 --seed 1");
  CHECK(e.code == 0);
  CHECK(e.out == read_text(dir + "d2_h1_seed1.json"));
  // ball runs, the thread count, and exit codes for bad options
  const std::string b1 = "test_golden_ball1.json", b2 = "test_golden_ball2.json";
  CHECK(test::run(bin + " golden export --d 2 --heads 1 --seed 1 --arith ball --bits 96 -o " + b1 + " >/dev/null").code == 0);
  CHECK(test::run(bin + " golden export --d 2 --heads 1 --seed 1 --arith ball --bits 96 --threads 2 -o " + b2 + " >/dev/null").code == 0);
  CHECK(read_text(b1) == read_text(b2));
  CHECK(test::run(bin + " golden check " + b1 + " --threads 2 >/dev/null").code == 0);
  CHECK(test::run(bin + " golden export --d 2 --heads 1 --arith double >/dev/null 2>&1").code == 2);
  CHECK(test::run(bin + " golden export --d 2 --heads 1 --max-heads 2 --arith ball >/dev/null 2>&1").code == 5);
  for (const auto& f : {tmp, std::string("test_golden_bad.json"), b1, b2}) std::remove(f.c_str());
}
