// Any scale: q sqrt(m) kept exactly as an algebraic factor of the scores
// (Model::root). Balls enclose it everywhere; only exact mode refuses it.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

#include "mhaq/arith/surd.hpp"
#include "mhaq/model/certified_eval.hpp"
#include "mhaq/model/factored.hpp"
#include "mhaq/model/compare_heads.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/recover.hpp"
#include "test_util.hpp"

using namespace mhaq;

namespace {
// sqrt(m) q x as a ball at the working precision
Ball scaled(const Rational& x, long m) {
  Ball r(m);
  arb_sqrt(r.raw(), r.raw(), working_precision());
  return Ball(x) * r;
}
}  // namespace

TEST_CASE("scales parse to q sqrt(m) with m squarefree, and print back") {
  struct Case {
    const char* text;
    const char* q;
    long m;
    const char* str;
  };
  for (const Case& c : {Case{"1/sqrt(8)", "1/4", 2, "sqrt(2)/4"}, Case{"sqrt(2)/4", "1/4", 2, "sqrt(2)/4"}, Case{"3*sqrt(12)", "6", 3, "6*sqrt(3)"},
                        Case{"1/2", "1/2", 1, "1/2"}, Case{"0.5/sqrt(2)", "1/4", 2, "sqrt(2)/4"}, Case{"-sqrt(6)", "-1", 6, "-sqrt(6)"},
                        Case{"1/sqrt(9/4)", "2/3", 1, "2/3"}, Case{"sqrt(1/2)", "1/2", 2, "sqrt(2)/2"}, Case{" 1 / sqrt( 128 ) ", "1/16", 2, "sqrt(2)/16"}}) {
    INFO(c.text);
    const Surd s = parse_surd(c.text, "scale");
    CHECK(s.q == Rational::parse(c.q));
    CHECK(s.m == c.m);
    CHECK(s.str() == c.str);
    CHECK(parse_surd(s.str(), "scale").q == s.q);
  }
  for (const char* bad : {"sqrt(-1)", "sqrt(0)", "sqrt(2)*", "1/sqrt(2)/0", "abc", "sqrt(2)sqrt(3)", "2^0.5", "0*sqrt(2)", "sqrt(2"}) {
    INFO(bad);
    CHECK(test::error_of([&] { parse_surd(bad, "scale"); }).first == static_cast<int>(ErrorKind::input));
  }
}

TEST_CASE("a factored file with scale 1/sqrt(d_k): W and c hold the rational part, the scores sqrt(m); the oracle encloses it") {
  const std::string text = R"J({"format":"mhaq-model-factored","version":1,"d":2,"d_k":2,"d_v":1,"scale":"1/sqrt(8)",
     "heads":[{"Q":[["1","0"],["1/2","1"]],"K":[["1","-1"],["0","2"]],"V":[["1"],["-1"]],"q_bias":["1","0"]}],"O":[["1"]],"readout":["2"]})J";
  ModelFileInfo info;
  const Model m = model_from_json_text(text, &info);
  CHECK(info.scale == "sqrt(2)/4");
  CHECK(m.root == 2);
  // W = (1/4) K Q^T, c = (1/4) K b_q; every score times sqrt(2)
  CHECK(m.heads[0].W(0, 0) == Rational(1, 4));
  CHECK(m.heads[0].c == QVec{Rational(1, 4), Rational(0)});
  // the plain file keeps the factor
  const std::string plain = model_to_json_text(m);
  CHECK(plain.find("\"scale\": \"sqrt(2)\"") != std::string::npos);
  CHECK(model_from_json_text(plain).root == 2);
  // f([x1, x2]) by hand: scores sqrt(2) x_i^T (W x_N + c), values v^T x_i
  const Query q{Run{QVec{Rational(1), Rational(-1)}, 2}, Run{QVec{Rational(1, 2), Rational(1)}, 1}};
  PrecisionScope scope(256);
  Ball num(0L), den(0L);
  const QVec Wx = matvec(m.heads[0].W, q.back().token) + m.heads[0].c;
  const Rational sN = dot(q.back().token, Wx);
  for (const Run& r : q) {
    Ball w = scaled(dot(r.token, Wx) - sN, 2);
    arb_exp(w.raw(), w.raw(), working_precision());
    w = w * Ball(r.count);
    num = num + w * Ball(dot(m.heads[0].v, r.token));
    den = den + w;
  }
  const Ball want = num / den;
  const Ball got = evaluate_ball(m, q);
  CHECK(arb_overlaps(got.raw(), want.raw()));
  OracleStack<Ball> oracle = OracleStack<Ball>::model(m, 2);
  CHECK(arb_overlaps(oracle.top().query(q).raw(), want.raw()));
  OracleStack<Mpfr> mo = OracleStack<Mpfr>::model(m, 2);
  const Ball mb = Field<Mpfr>{}.enclose(mo.top().query(q));
  Ball diff = mb - want;
  arb_abs(diff.raw(), diff.raw());
  CHECK(diff.mid_double() < 1e-60);
  // the certified decimal agrees with the hand evaluation
  const CertifiedValue cv = certified_answer(m, q, 30, 4096);
  CHECK_FALSE(cv.rational);
  Ball dec;
  arb_set_str(dec.raw(), cv.decimal.c_str(), 256);
  diff = dec - want;
  arb_abs(diff.raw(), diff.raw());
  CHECK(diff.mid_double() < 1e-28);
  // exact mode refuses, and says what to use instead
  const auto err = test::error_of([&] { (void)OracleStack<QTau>::model(m, 1); });
  CHECK(err.first == static_cast<int>(ErrorKind::usage));
  CHECK(err.second.find("--arith ball") != std::string::npos);
  CHECK(test::error_of([&] { evaluate_exact(m, q, 4); }).first == static_cast<int>(ErrorKind::usage));
}

TEST_CASE("recover with an irrational scale: balls contain the truth sqrt(m) W, floats judge it; exact mode and certificates refuse") {
  GenerateOptions g = default_generate(Arith::ball);
  g.d = 3;
  g.heads = 2;
  g.seed = 77;
  g.bias = true;
  Model m = generate_model(g);
  apply_scale(m, parse_surd("1/sqrt(8)", "scale"));
  REQUIRE(m.root == 2);
  RecoverOptions o;
  o.seed = 3;
  o.arith = Arith::ball;
  o.bits = 256;
  const RecoverResult r = recover_run(m, o);
  INFO(std::string(status_name(r.judge.status)) << " " << r.judge.message);
  REQUIRE(r.judge.status == Status::ok);
  CHECK(r.truth.contains_truth == true);
  // the same heads without the factor sqrt(2) are not contained
  Model wrong = m;
  wrong.root = 1;
  LearnOptions lo;
  lo.H = 2;
  lo.bias = true;
  lo.seed = 11;
  lo.tokens = default_tokens(Arith::ball);
  PrecisionScope scope(256);
  OracleStack<Ball> oracle = OracleStack<Ball>::model(m, lo.tokens.den);
  const LearnResult<Ball> res = learn(oracle.top(), lo);
  REQUIRE(res.beta);
  CHECK(ball_heads_contain(res.heads, m.canonical(), &*res.beta));
  CHECK_FALSE(ball_heads_contain(res.heads, wrong.canonical(), &*res.beta));
  CHECK(max_rel_error_log2(res.heads, m.canonical(), &*res.beta) < -150);
  CHECK(max_rel_error_log2(res.heads, wrong.canonical(), &*res.beta) > -10);
  o.arith = Arith::mpfr;
  const RecoverResult f = recover_run(m, o);
  CHECK(f.judge.status == Status::ok);
  CHECK(*f.truth.max_rel_error < 1e-40);
  o.arith = Arith::exact;
  const auto ex = test::error_of([&] { recover_run(m, o); });
  INFO(ex.second);
  CHECK(ex.first == static_cast<int>(ErrorKind::usage));
  CHECK(ex.second.find("--arith ball") != std::string::npos);
  o.arith = Arith::ball;
  std::string cert;
  o.certificate = &cert;
  CHECK(test::error_of([&] { recover_run(m, o); }).first == static_cast<int>(ErrorKind::usage));
}

TEST_CASE("the program: exact recover of a model with scale sqrt(m) is a usage error (exit 2) that names --arith ball") {
  const std::string path = "test_scale_model.json";
  {
    std::ofstream f(path);
    f << R"J({"format":"mhaq-model","version":1,"d":1,"heads":[{"W":[["1"]],"v":["1"]},{"W":[["-1"]],"v":["2"]}],"scale":"sqrt(3)"})J";
  }
  const auto r = test::run(std::string(MHAQ_BINARY) + " recover --model " + path + " 2>&1");
  CHECK(r.code == 2);
  CHECK(r.out.find("--arith ball") != std::string::npos);
  const auto b = test::run(std::string(MHAQ_BINARY) + " recover --model " + path + " --arith ball --json 2>/dev/null");
  CHECK(b.code == 0);
  CHECK(b.out.find("\"contains_truth\":true") != std::string::npos);
  const auto c = test::run(std::string(MHAQ_BINARY) + " convert --model " + path + " --json 2>/dev/null");
  CHECK(c.code == 0);
  CHECK(c.out.find("sqrt(3)") != std::string::npos);
  std::remove(path.c_str());
}
