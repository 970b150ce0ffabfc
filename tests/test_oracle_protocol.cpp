// The external-oracle protocol (docs/oracle-protocol.md): the transport
// against a healthy oracle, every fault of tests/oracle_faults.py (each ends
// with its own fault and message within the timeout, the transcript holding
// every batch received before it), resume asking exactly the missing
// queries, and the reference oracle `mhaq oracle` in ball mode.
#include <doctest/doctest.h>
#include <unistd.h>

#include <mpfr.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "mhaq/base/io.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/oracle/external_oracle.hpp"
#include "mhaq/oracle/server.hpp"
#include "test_util.hpp"

using namespace mhaq;
using oracle_protocol::Fault;
using oracle_protocol::ModelKind;
using oracle_protocol::OracleFailure;

namespace {

const char* kModel = R"({"format": "mhaq-model", "version": 1, "d": 2,
 "heads": [{"W": [["1/2", "-3/4"], ["1/4", "1"]], "v": ["1", "-1/2"]},
           {"W": [["-1", "1/8"], ["0", "1/2"]], "v": ["1/4", "3/4"]}]})";

struct Dir {
  std::string path;
  Dir() {
    char t[] = "/tmp/mhaq_oracle_test_XXXXXX";
    path = mkdtemp(t);
    write_file_atomic(path + "/m.json", kModel);
  }
  ~Dir() { (void)std::system(("rm -rf '" + path + "'").c_str()); }
  std::string model() const { return path + "/m.json"; }
};

// 10 queries [a x k, b] on the 2^-4 grid.
std::vector<Query> queries() {
  std::vector<Query> qs;
  for (long k = 1; k <= 10; ++k) {
    const QVec a{Rational(k - 5, 16), Rational(3, 4)}, b{Rational(1, 2), Rational(-k, 8)};
    qs.push_back({Run{a, k}, Run{b, 1}});
  }
  return qs;
}

std::string faults_cmd(const std::string& mode, const Dir& dir, int after = 1) {
  return "python3 " MHAQ_SOURCE_DIR "/tests/oracle_faults.py " + mode + " --model " + dir.model() + " --after " + std::to_string(after);
}

long answer_lines(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  long n = 0;
  while (std::getline(in, line))
    if (line.rfind("{\"answer\"", 0) == 0 || line.find("\"answer\":") != std::string::npos) ++n;
  return n;
}

ExternalOptions options(const std::string& cmd, double timeout = 5) {
  ExternalOptions o;
  o.command = cmd;
  o.timeout_seconds = timeout;
  o.batch = 4;
  return o;
}

// f(X) enclosed at 1024 bits: far tighter than any answer ball below.
Ball tight_truth(const Model& m, const Query& q) {
  PrecisionScope scope(1024);
  return evaluate_ball(m, q);
}

// Asks every query through a double oracle; returns the answers.
std::vector<double> ask_all(ExternalSession& s) {
  OracleStack<double> o_stack = OracleStack<double>::external(s, ErrorStatement{});
  Oracle<double>& o = o_stack.top();
  s.expect(queries());
  std::vector<double> out;
  for (const Query& q : queries()) out.push_back(o.query(q));
  return out;
}

}  // namespace

TEST_CASE("a healthy oracle: batches of 4, answers equal the model's to float64 accuracy, ball answers contain the truth") {
  Dir dir;
  const Model m = read_model_file(dir.model());
  ExternalSession s(options(faults_cmd("healthy", dir)), 2, ModelKind::attention, "double");
  CHECK(s.hello().name == "fault injector (healthy)");
  REQUIRE(s.hello().acc_rel.has_value());
  const std::vector<double> got = ask_all(s);
  CHECK(s.asked() == 10);
  CHECK(s.batches() == 3);  // 4 + 4 + 2
  for (size_t i = 0; i < got.size(); ++i) {
    const double truth = evaluate_ball(m, queries()[i]).mid_double();
    CHECK(std::fabs(got[i] - truth) <= 1e-14 * std::max(1.0, std::fabs(truth)));
  }
  CHECK(s.finish().empty());

  PrecisionScope scope(256);
  ExternalSession sb(options(faults_cmd("healthy", dir)), 2, ModelKind::attention, "ball");
  OracleStack<Ball> ob_stack = OracleStack<Ball>::external(sb, ErrorStatement{});  // the oracle's stated rel 1e-12
  Oracle<Ball>& ob = ob_stack.top();
  sb.expect(queries());
  for (const Query& q : queries()) {
    const Ball y = ob.query(q);
    const Ball truth = tight_truth(m, q);
    CHECK(arb_contains(y.raw(), truth.raw()));
    CHECK(y.radius() < 1e-11);
  }
  sb.finish();
}

TEST_CASE("every fault ends with its name, the last query, within the timeout; the transcript holds the batches before it") {
  Dir dir;
  struct Case {
    const char* mode;
    Fault fault;
    const char* says;
  };
  const Case cases[] = {
      {"exit", Fault::exited, "exited with status 3"},
      {"hang", Fault::timeout, "no complete reply within 2 s"},
      {"garbage", Fault::garbage, "not valid JSON"},
      {"nan", Fault::not_finite, "NaN"},
      {"inf_string", Fault::not_finite, "not finite"},
      {"wrong_count", Fault::wrong_count, "3 answers to a batch of 4 queries"},
      {"wrong_id", Fault::wrong_id, "id 1000000000 is not in batch 1"},
      {"duplicate_id", Fault::duplicate_id, "answered twice"},
      {"wrong_batch", Fault::wrong_id, "names batch 8, expected 1"},
      {"long_line", Fault::line_too_long, "over the limit of 1048576"},
      {"partial", Fault::exited, "unfinished line"},
      {"error", Fault::oracle_error, "the model is on fire"},
      {"no_radius", Fault::no_radius, "no \"radius\""},
  };
  for (const Case& c : cases) {
    const std::string mode = c.mode;
    CAPTURE(mode);
    const std::string tr = dir.path + "/" + c.mode + ".jsonl";
    ExternalOptions o = options(faults_cmd(c.mode, dir), 2);
    o.transcript = tr;
    const auto t0 = std::chrono::steady_clock::now();
    bool thrown = false;
    try {
      ExternalSession s(o, 2, ModelKind::attention, "double");
      ask_all(s);
    } catch (const OracleFailure& f) {
      thrown = true;
      CHECK(f.fault() == c.fault);
      CHECK(f.kind() == ErrorKind::oracle_failed);
      const std::string m = f.what();
      CHECK(m.find(std::string("oracle fault ") + oracle_protocol::fault_name(c.fault)) == 0);
      CHECK(m.find(c.says) != std::string::npos);
      CHECK(m.find("batch 1 awaited, its last query: query 7 ([") != std::string::npos);  // batch 1 holds ids 4..7
      if (m.find(c.says) == std::string::npos) MESSAGE(m);
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(thrown);
    CHECK(secs < 2 + 1.5);
    CHECK(answer_lines(tr) == 4);  // batch 0, every answer received before the fault
  }
}

TEST_CASE("the handshake: a wrong d is a fault naming both values") {
  Dir dir;
  try {
    ExternalSession s(options(faults_cmd("wrong_d", dir), 2), 2, ModelKind::attention, "double");
    FAIL("no fault");
  } catch (const OracleFailure& f) {
    CHECK(f.fault() == Fault::handshake);
    CHECK(std::string(f.what()).find("the oracle states d = 3, the learner's d is 2") != std::string::npos);
    CHECK(std::string(f.what()).find("no query sent yet") != std::string::npos);
  }
  try {
    ExternalSession s(options("exec sh -c 'exit 5'", 2), 2, ModelKind::attention, "double");
    FAIL("no fault");
  } catch (const OracleFailure& f) {
    CHECK(f.fault() == Fault::exited);
    CHECK(std::string(f.what()).find("exited with status 5") != std::string::npos);
  }
}

TEST_CASE("the hello's max_length: a positive integer, read; anything else is garbage; absent is 0 (no limit stated)") {
  using oracle_protocol::parse_hello;
  const std::string head = R"({"type": "hello", "protocol": 1, "d": 2, "name": "n")";
  CHECK(parse_hello(head + "}", 2, "").max_length == 0);
  CHECK(parse_hello(head + R"(, "max_length": 17})", 2, "").max_length == 17);
  CHECK(parse_hello(head + R"(, "max_length": 65537})", 2, "").max_length == 65537);
  for (const char* bad : {"0", "-3", "2.5", "\"17\"", "true", "18446744073709551615"}) {
    CAPTURE(bad);
    try {
      (void)parse_hello(head + R"(, "max_length": )" + bad + "}", 2, "");
      FAIL("read");
    } catch (const OracleFailure& f) {
      CHECK(f.fault() == Fault::garbage);
      CHECK(std::string(f.what()).find("hello.max_length: expected a positive integer") != std::string::npos);
    }
  }
}

TEST_CASE("the hello's max_entry: a positive number or decimal string, read exactly; anything else is garbage; absent is none") {
  using oracle_protocol::parse_hello;
  const std::string head = R"({"type": "hello", "protocol": 1, "d": 2, "name": "n")";
  CHECK(!parse_hello(head + "}", 2, "").max_entry.has_value());
  const std::pair<const char*, Rational> good[] = {{"128", Rational(128)},       {"0.5", Rational(1, 2)},         {"\"0.1\"", Rational(1, 10)},
                                                   {"\"1e3\"", Rational(1000)}, {"\"3/4\"", Rational(3, 4)}, {"0.25", Rational(1, 4)}};
  for (const auto& g : good) {
    const std::string text = g.first;
    CAPTURE(text);
    const auto h = parse_hello(head + R"(, "max_entry": )" + text + "}", 2, "");
    REQUIRE(h.max_entry.has_value());
    CHECK(*h.max_entry == g.second);
  }
  for (const char* bad : {"0", "-3", "-0.5", "\"0\"", "\"-1\"", "\"NaN\"", "\"inf\"", "\"abc\"", "true", "null", "[1]", "{}", "18446744073709551615"}) {
    CAPTURE(bad);
    try {
      (void)parse_hello(head + R"(, "max_entry": )" + bad + "}", 2, "");
      FAIL("read");
    } catch (const OracleFailure& f) {
      CHECK(f.fault() == Fault::garbage);
      CHECK(std::string(f.what()).find("hello.max_entry: expected a positive number") != std::string::npos);
    }
  }
}

TEST_CASE("a command that is one simple command runs as exec CMD; lists, pipelines, substitutions and builtins stay with the shell") {
  for (const char* c : {"python3 o.py --model m.json", "  ./oracle 'a; b' \"c | d\" e\\;f", "/usr/bin/env FOO=1 prog 2>&1 >|log <in",
                        "~/bin/oracle # a comment; with a semicolon", "prog a#b", "mhaq oracle --model \"$HOME/m.json\""})
    CHECK(shell_command_line(c) == std::string("exec ") + c);
  for (const char* c : {"cd /tmp && python3 o.py", "a | b", "a; b", "a & b", "a || b", "(a)", "a\nb", "FOO=1 prog", "exec prog", "export X; prog",
                        "prog $(cat args)", "prog `cat args`", "if true; then prog; fi", "{ prog; }", "! prog", "prog 'unterminated", ". ./env.sh",
                        "", "   "})
    CHECK(shell_command_line(c) == c);
}

TEST_CASE("a fault is final: every later answer rethrows it; the learner's oracle refuses queries past its limit") {
  Dir dir;
  ExternalSession s(options(faults_cmd("garbage", dir, 0), 2), 2, ModelKind::attention, "double");
  OracleStack<double> o_stack = OracleStack<double>::external(s, ErrorStatement{});
  Oracle<double>& o = o_stack.top();
  s.expect(queries());
  CHECK_THROWS_WITH_AS(o.query(queries()[0]), doctest::Contains("oracle fault garbage"), OracleFailure);
  REQUIRE(s.failure().has_value());
  // a learner that caught the fault and asks again gets the same fault, not an internal error
  CHECK_THROWS_WITH_AS(o.query(queries()[1]), doctest::Contains("oracle fault garbage"), OracleFailure);
  CHECK(s.finish().empty());

  const Model m = read_model_file(dir.model());
  OracleStack<double> mo_stack = OracleStack<double>::model(m, 16, OracleNoise{});
  Oracle<double>& mo = mo_stack.top();
  mo.limit(3, "past the cap");
  for (int k = 0; k < 3; ++k) mo.query(queries()[static_cast<size_t>(k)]);
  CHECK_FALSE(mo.limit_reached());
  CHECK_THROWS_WITH_AS(mo.query(queries()[3]), "past the cap", Error);
  CHECK(mo.limit_reached());
  CHECK(mo.queries() == 3);  // the refused query is not counted
  CHECK_THROWS_AS(mo.query_all(queries(), 0, 2, 2), Error);  // nor are later ones, one at a time or in a batch
  CHECK(mo.queries() == 3);
}

TEST_CASE("resume after a fault asks exactly the missing queries, and the answers equal an uninterrupted run's") {
  Dir dir;
  std::vector<double> straight;
  {
    ExternalSession s(options(faults_cmd("healthy", dir)), 2, ModelKind::attention, "double");
    straight = ask_all(s);
  }
  const std::string tr = dir.path + "/t.jsonl";
  {
    ExternalOptions o = options(faults_cmd("exit", dir, 2), 2);
    o.transcript = tr;
    ExternalSession s(o, 2, ModelKind::attention, "double");
    CHECK_THROWS_AS(ask_all(s), OracleFailure);
  }
  CHECK(answer_lines(tr) == 8);
  ExternalOptions o = options(faults_cmd("healthy", dir));
  o.resume = tr;
  o.transcript = tr;
  ExternalSession s(o, 2, ModelKind::attention, "double");
  const std::vector<double> resumed = ask_all(s);
  CHECK(s.asked() == 2);
  CHECK(s.replayed() == 8);
  REQUIRE(resumed.size() == straight.size());
  for (size_t i = 0; i < straight.size(); ++i) CHECK(resumed[i] == straight[i]);
  s.finish();
  CHECK(answer_lines(tr) == 10);
  // a transcript for another d is refused before anything runs
  ExternalOptions bad = options(faults_cmd("healthy", dir));
  bad.resume = tr;
  CHECK_THROWS_WITH_AS(ExternalSession(bad, 3, ModelKind::attention, "double"), doctest::Contains("this run has d = 3"), Error);
}

TEST_CASE("mhaq oracle serves certified balls; ball mode refuses an oracle that states no bound") {
  Dir dir;
  const Model m = read_model_file(dir.model());
  PrecisionScope scope(256);
  ExternalSession s(options(std::string(MHAQ_BINARY) + " oracle --model " + dir.model() + " --arith ball --bits 512"), 2, ModelKind::attention, "ball");
  CHECK(s.hello().radius);
  OracleStack<Ball> o_stack = OracleStack<Ball>::external(s, ErrorStatement{});
  Oracle<Ball>& o = o_stack.top();
  s.expect(queries());
  for (const Query& q : queries()) {
    const Ball y = o.query(q);
    const Ball truth = tight_truth(m, q);
    CHECK(arb_contains(y.raw(), truth.raw()));
    CHECK(y.radius() < 1e-70);
  }
  CHECK(s.finish().empty());

  // mhaq oracle in double states its accuracy; an oracle that states none is refused
  {
    FILE* f = std::fopen("nobound.py", "w");
    REQUIRE(f != nullptr);
    std::fprintf(f, "import sys\nsys.path.insert(0, '%s/examples/oracles')\nimport mhaq_oracle\nmhaq_oracle.serve(lambda X: 0.0, d=2, name='none')\n",
                 MHAQ_SOURCE_DIR);
    std::fclose(f);
    ExternalSession sn(options("python3 nobound.py"), 2, ModelKind::attention, "ball");
    CHECK_THROWS_WITH_AS(OracleStack<Ball>::external(sn, ErrorStatement{}), doctest::Contains("--oracle-error"), Error);
  }
  ExternalSession sd(options(std::string(MHAQ_BINARY) + " oracle --model " + dir.model() + " --arith double"), 2, ModelKind::attention, "ball");
  OracleStack<Ball> ok_stack = OracleStack<Ball>::external(sd, parse_error_statement("rel:1e-15"));
  Oracle<Ball>& ok = ok_stack.top();
  sd.expect(queries());
  for (const Query& q : queries()) CHECK(arb_contains(ok.query(q).raw(), tight_truth(m, q).raw()));
}

TEST_CASE("--oracle-error statements") {
  CHECK(parse_error_statement("1e-12").abs->str() == "1/1000000000000");
  const ErrorStatement e = parse_error_statement("abs:0,rel:1/1024");
  CHECK(e.abs->is_zero());
  CHECK(e.rel->str() == "1/1024");
  CHECK_THROWS_AS(parse_error_statement("-1"), Error);
  CHECK_THROWS_AS(parse_error_statement("rel:x"), Error);
  CHECK_THROWS_AS(parse_error_statement("abs:1,abs:2"), Error);
}

TEST_CASE("the learner's direct serialisation prints what nlohmann::json prints, and floats are the nearest doubles") {
  using oracle_protocol::runs_json;
  using oracle_protocol::runs_text;
  Rational big = Rational::parse("123456789012345678901234567890/7", 200);
  Rational wide(1, 1);
  fmpz_mul_2exp(fmpq_denref(wide.raw()), fmpq_denref(wide.raw()), 60);  // 1/2^60: a denominator past 2^53
  fmpz_set_si(fmpq_numref(wide.raw()), 3);
  std::vector<Query> qs = queries();
  qs.push_back({Run{QVec{Rational(0), Rational(-7)}, 3}, Run{QVec{big, wide}, 2}});
  qs.push_back({Run{QVec{Rational(1, 3), Rational(-2, 3)}, 1}, Run{QVec{Rational((1L << 53) + 1, 1), Rational(1, 1L << 53)}, 1000000}});
  for (const Query& q : qs) {
    CHECK(runs_text(q, false) == runs_json(q, false).dump());
    CHECK(runs_text(q, true) == runs_json(q, true).dump());
  }
  std::vector<long> ids;
  nlohmann::json arr = nlohmann::json::array();
  for (size_t i = 0; i < qs.size(); ++i) {
    ids.push_back(static_cast<long>(100 + i));
    arr.push_back({{"id", ids.back()}, {"runs", runs_json(qs[i], true)}});
  }
  CHECK(oracle_protocol::batch_line(7, ids, qs) == nlohmann::json{{"type", "batch"}, {"batch", 7}, {"queries", arr}}.dump());
  // the word-size path against MPFR's rounding: 1/3 and 2^53 + 1 (a tie, to even)
  CHECK(oracle_protocol::nearest_double(Rational(1, 3)) == 1.0 / 3.0);
  CHECK(oracle_protocol::nearest_double(Rational((1L << 53) + 1, 1)) == 9007199254740992.0);
  CHECK(oracle_protocol::nearest_double(wide) == std::ldexp(3.0, -60));
  // tokens read back: the short path agrees with Rational::parse, and what it
  // does not take goes there (errors included)
  for (const char* t : {"0", "-0", "+5", "-12/8", "3/4", "123456789012345678/7", "1234567890123456789/3", "5/1234567890123456789", "0.125", "-2e-3"}) {
    const Query back = oracle_protocol::query_from_runs(nlohmann::json::parse(std::string(R"([{"token": [")") + t + R"("], "count": 1}])"), 1, "q");
    CHECK(back[0].token[0] == Rational::parse(t));
  }
  for (const char* t : {"", "-", "1/0", "1/", "/2", "1/-2", "0x10", "1 "})
    CHECK_THROWS_AS(oracle_protocol::query_from_runs(nlohmann::json::parse(std::string(R"([{"token": [")") + t + R"("], "count": 1}])"), 1, "q"), Error);
  // answers' decimals: Rational::parse puts digits * 10^e in lowest terms by
  // removing the factors 2 and 5; the reference here divides by the gcd
  {
    unsigned long long z = 99;
    auto rnd = [&](unsigned long long m) { return ((z = z * 6364136223846793005ULL + 1442695040888963407ULL) >> 33) % m; };
    for (int i = 0; i < 3000; ++i) {
      const bool neg = rnd(2);
      std::string t = neg ? "-" : "", all;
      const unsigned long long il = 1 + rnd(40), fl = rnd(3) ? rnd(160) : 0;
      for (unsigned long long k = 0; k < il; ++k) all += static_cast<char>('0' + (k == 0 && rnd(3) == 0 ? 0 : rnd(10)));
      t += all;
      long e = 0;
      if (fl) {
        std::string frac;
        for (unsigned long long k = 0; k < fl; ++k) frac += static_cast<char>('0' + (rnd(4) == 0 ? 0 : rnd(10)));
        if (rnd(3) == 0) frac += std::string(rnd(30), rnd(2) ? '0' : '5');  // trailing zeros, powers of 5
        t += '.' + frac;
        all += frac;
        e -= static_cast<long>(frac.size());
      }
      if (rnd(2)) {
        const int sign = rnd(2) ? -1 : 1;
        const long x = static_cast<long>(rnd(400));
        t += std::string(rnd(2) ? "e" : "E") + (sign < 0 ? "-" : rnd(2) ? "+" : "") + std::to_string(x);
        e += sign * x;
      }
      fmpz_t n, p;
      fmpz_init(n);
      fmpz_init_set_ui(p, 10);
      fmpz_set_str(n, all.c_str(), 10);
      if (neg) fmpz_neg(n, n);
      fmpz_pow_ui(p, p, static_cast<ulong>(e < 0 ? -e : e));
      Rational want;
      if (e >= 0) {
        fmpz_mul(n, n, p);
        fmpz_one(p);
      }
      fmpq_set_fmpz_frac(want.raw(), n, p);
      fmpz_clear(n);
      fmpz_clear(p);
      REQUIRE(Rational::parse(t, 4096) == want);
    }
    CHECK(Rational::parse("1250e-3", 100) == Rational(5, 4));
    CHECK(Rational::parse("0.0000625", 100) == Rational(1, 16000));
    CHECK(Rational::parse("-0.000", 100) == Rational(0));
    CHECK(Rational::parse("2e-0", 100) == Rational(2));
    for (const char* t : {"", "-", ".", "1e", "1e+", "1e1234567", "1e20000", "1.5.2", "+-1", "0x1", "1 ", "nan"})
      CHECK_THROWS_AS(Rational::parse(t, 4096), Error);
    CHECK_THROWS_AS(Rational::parse("1e-3000", 100), Error);  // the value's p/q over the limit
  }
  // Rational::str: fmpq_get_str's text, word-size parts or not
  for (const Rational& q : {Rational(0), Rational(-7), Rational(3, 4), Rational(-12, 8), Rational(WORD_MAX, 3), Rational(WORD_MIN + 1, WORD_MAX),
                            Rational::parse("-123456789012345678901234567890/7"), Rational::parse("5/98765432109876543210987")}) {
    char* c = fmpq_get_str(nullptr, 10, q.raw());
    CHECK(q.str() == std::string(c));
    flint_free(c);
  }
  // word-size quotients against MPFR's correctly rounded division
  unsigned long long st = 12345;
  auto next = [&] { return st = st * 6364136223846793005ULL + 1442695040888963407ULL; };
  mpfr_t a;
  mpfr_init2(a, 53);
  for (int i = 0; i < 2000; ++i) {
    const long n = static_cast<long>(next() >> 10) - (1L << 53);
    const long d = 1 + static_cast<long>(next() >> (11 + next() % 50));
    const Rational q(n, d);
    mpq_t m;
    mpq_init(m);
    fmpq_get_mpq(m, q.raw());
    mpfr_set_q(a, m, MPFR_RNDN);
    mpq_clear(m);
    REQUIRE(oracle_protocol::nearest_double(q) == mpfr_get_d(a, MPFR_RNDN));
  }
  mpfr_clear(a);
}

TEST_CASE("the canonical readers (batch lines in mhaq oracle, answers lines in the learner) agree with the general JSON reader") {
  // mhaq oracle: a batch line as the learner writes it, and the same batch
  // with one space more (the general reader's case), give the same reply
  const Model m = model_from_json_text(kModel);
  auto serve = [&](const std::string& batch) {
    ServedModel sm(m, Arith::ball, 256);
    std::istringstream in(oracle_protocol::hello_line(2, ModelKind::attention, "ball") + "\n" + batch + "\n");
    std::ostringstream out;
    const int rc = serve_oracle(in, out, sm, "t");
    const std::string s = out.str();
    return std::to_string(rc) + " " + s.substr(s.find('\n') + 1);
  };
  std::vector<long> ids;
  for (size_t i = 0; i < queries().size(); ++i) ids.push_back(static_cast<long>(20 + i));
  const std::string line = oracle_protocol::batch_line(5, ids, queries());
  const std::string fast = serve(line), general = serve("{ " + line.substr(1));
  CHECK(fast.rfind("0 {\"answers\":[{\"id\":20,", 0) == 0);
  CHECK(fast == general);
  // token forms: leading zeros, a reducible fraction, a sign the short reader
  // leaves to the general one, a zero denominator, a float beyond a double
  auto one = [](const std::string& a, const std::string& b, const std::string& x) {
    return R"({"batch":0,"queries":[{"id":0,"runs":[{"count":2,"token":[")" + a + R"(",")" + b + R"("],"x":[)" + x + R"(]}]}],"type":"batch"})";
  };
  const std::string cases[] = {one("007/16", "-12/8", "0.4375,-1.5"), one("+5", "0", "5.0,0.0"), one("1/0", "1", "1.0,1.0"),
                               one("1/2", "1", "1e999,1.0"), one("1/2", "1", "0.5"), one("1/2", "1", "0.5,1.0,2.0")};
  for (const std::string& c : cases) {
    CAPTURE(c);
    CHECK(serve(c) == serve("{ " + c.substr(1)));
  }
  CHECK(serve(cases[0]) == serve(one("7/16", "-3/2", "0.4375,-1.5")));
  CHECK(serve(cases[2]).rfind("3 {\"message\":", 0) == 0);  // zero denominator: an input error either way
  CHECK(serve(cases[3]).rfind("3 {\"message\":", 0) == 0);  // beyond a double

  // the learner: the answers line as mhaq oracle writes it, and with a space more
  const std::vector<long> bid{4, 5};
  const std::string ans = R"({"answers":[{"id":4,"radius":"1.5e-70","value":"0.5"},{"id":5,"radius":"0","value":"-1.25e-3"}],"batch":3,"type":"answers"})";
  const auto a = oracle_protocol::parse_answers(ans, 3, bid, true, "");
  const auto g = oracle_protocol::parse_answers("{ " + ans.substr(1), 3, bid, true, "");
  REQUIRE(a.size() == 2);
  REQUIRE(g.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(a[i].value == g[i].value);
    CHECK(a[i].radius == g[i].radius);
    CHECK(a[i].f64 == g[i].f64);
    CHECK(a[i].raw == g[i].raw);
    CHECK(a[i].from_float64 == g[i].from_float64);
  }
  CHECK(a[0].raw == R"({"id":4,"radius":"1.5e-70","value":"0.5"})");
  CHECK(a[1].value == Rational(-1, 800));
  // what the short reader does not take is the general reader's fault
  auto fault = [&](const std::string& l, bool radius) {
    try {
      (void)oracle_protocol::parse_answers(l, 3, bid, radius, "");
    } catch (const OracleFailure& f) {
      return f.fault();
    }
    return Fault::spawn;  // none
  };
  CHECK(fault(R"({"answers":[{"id":5,"value":"1"},{"id":4,"value":"2"}],"batch":3,"type":"answers"})", false) == Fault::spawn);  // ids out of order: fine
  CHECK(fault(R"({"answers":[{"id":4,"value":"1"},{"id":6,"value":"2"}],"batch":3,"type":"answers"})", false) == Fault::wrong_id);
  CHECK(fault(R"({"answers":[{"id":4,"value":"1"},{"id":5,"value":"2"}],"batch":3,"type":"answers"})", true) == Fault::no_radius);
  CHECK(fault(R"({"answers":[{"id":4,"value":"1"},{"id":5,"value":"1e"}],"batch":3,"type":"answers"})", false) == Fault::garbage);
  CHECK(fault(R"({"answers":[{"id":4,"value":"1"},{"id":5,"radius":"-1","value":"1"}],"batch":3,"type":"answers"})", false) == Fault::garbage);
  CHECK(fault(R"({"answers":[{"id":4,"value":"1"},{"id":5,"value":"1"}],"batch":2,"type":"answers"})", false) == Fault::wrong_id);
  CHECK(fault(R"({"answers":[{"id":4,"value":"1"}],"batch":3,"type":"answers"})", false) == Fault::wrong_count);
}
