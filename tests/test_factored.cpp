// Factored model files (per-head Q, K, V, output projection O, readout u):
// the exact conversion to (W_h, v_h) answers every query exactly as an
// independent evaluation of the factored form does; bias keys other than the
// accepted ones, unknown fields and wrong shapes are input errors that name the field; recover and
// convert work on factored files.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/model/factored.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/oracle/model_oracle.hpp"
#include "mhaq/arith/numbers.hpp"
#include "mhaq/base/random.hpp"
#include "test_record.hpp"
#include "test_util.hpp"

using namespace mhaq;
using nlohmann::json;

namespace {

// The test's own description of a factored model (never read back from mhaq).
struct Fact {
  int d = 0, dk = 0, dv = 0, dout = 0;
  Rational scale{1};
  long den = 2;  // Q and K entries are integers / den
  bool per_head = false;
  std::vector<QMat> Q, K, V, Oh;  // Oh: per-head output projections (per_head only)
  QMat Ocat;                      // (H*dv) x dout (concatenated only)
  QVec u;
  int heads() const { return static_cast<int>(Q.size()); }
  // Every score is in (1/L)Z for integer tokens.
  long L() const { return static_cast<long>(fmpz_get_si(fmpq_denref(scale.raw()))) * den * den; }
};

QMat random_mat(Rng& r, int rows, int cols, long range, long den) {
  QMat M(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) M(i, j) = Rational(r.uniform_int(-range, range), static_cast<unsigned long>(den));
  return M;
}

QMat mul(const QMat& A, const QMat& B) {
  QMat C(A.rows(), B.cols());
  for (int i = 0; i < A.rows(); ++i)
    for (int j = 0; j < B.cols(); ++j)
      for (int k = 0; k < A.cols(); ++k) C(i, j) += A(i, k) * B(k, j);
  return C;
}

Fact random_fact(Rng& r, int d, int dk, int dv, int dout, int H, bool per_head, Rational scale) {
  Fact f;
  f.d = d, f.dk = dk, f.dv = dv, f.dout = dout, f.per_head = per_head, f.scale = scale;
  for (int h = 0; h < H; ++h) {
    f.Q.push_back(random_mat(r, d, dk, 2, f.den));
    f.K.push_back(random_mat(r, d, dk, 2, f.den));
    f.V.push_back(random_mat(r, d, dv, 3, 2));
    if (per_head) f.Oh.push_back(random_mat(r, dv, dout, 3, 2));
  }
  if (!per_head) f.Ocat = random_mat(r, H * dv, dout, 3, 2);
  f.u = random_mat(r, 1, dout, 4, 4).row(0);
  return f;
}

// Head j gets head i's score matrix through a different factorisation:
// Q_j = Q_i A^{-T}, K_j = K_i A with A unit upper triangular, so
// K_j Q_j^T = K_i A A^{-1} Q_i^T = K_i Q_i^T. (Entries stay in (1/den)Z.)
void copy_scores(Fact& f, int i, int j, Rng& r) {
  QMat A(f.dk, f.dk), Ainv(f.dk, f.dk);
  for (int a = 0; a < f.dk; ++a) {
    A(a, a) = Rational(1);
    for (int b = a + 1; b < f.dk; ++b) A(a, b) = Rational(2 * r.uniform_int(0, 1) - 1);  // +-1: A != I
  }
  REQUIRE(inverse(A, Ainv));
  f.Q[j] = mul(f.Q[i], Ainv.transpose());
  f.K[j] = mul(f.K[i], A);
}

std::string entry_text(const Rational& x) { return x.str(); }

json mat_json(const QMat& M, bool ints_as_numbers) {
  json rows = json::array();
  for (int i = 0; i < M.rows(); ++i) {
    json row = json::array();
    for (int j = 0; j < M.cols(); ++j) {
      if (ints_as_numbers && M(i, j).is_integer()) row.push_back(M(i, j).to_long());
      else row.push_back(entry_text(M(i, j)));
    }
    rows.push_back(row);
  }
  return rows;
}

json to_json(const Fact& f) {
  json j{{"format", "mhaq-model-factored"}, {"version", 1}, {"d", f.d}, {"d_k", f.dk}, {"d_v", f.dv}, {"scale", f.scale.str()}};
  json hs = json::array();
  for (int h = 0; h < f.heads(); ++h) {
    json hj{{"Q", mat_json(f.Q[h], h % 2 == 0)}, {"K", mat_json(f.K[h], false)}, {"V", mat_json(f.V[h], true)}};
    if (f.per_head) hj["O"] = mat_json(f.Oh[h], false);
    hs.push_back(hj);
  }
  j["heads"] = hs;
  if (!f.per_head) j["O"] = mat_json(f.Ocat, false);
  json u = json::array();
  for (const auto& x : f.u) u.push_back(x.str());
  j["readout"] = u;
  if (f.dout % 2 == 1) j["d_out"] = f.dout;  // optional: sometimes stated, sometimes inferred
  return j;
}

// The factored model evaluated directly, in Q(tau), tau = e^{1/L}:
// per head, query q = x_N^T Q_h, keys k_i = x_i^T K_h, scores scale * q . k_i,
// softmax weights tau^{L s}, values x_i^T V_h; the head outputs y_h (1 x d_v)
// are concatenated and multiplied by O, then dotted with u.
QTau evaluate_factored(const Fact& f, const Query& q, long L) {
  const Field<QTau> F(L);
  const QVec& xN = q.back().token;
  std::vector<QTau> z(f.dout, QTau(Rational(0)));  // [y_1, ..., y_H] O
  for (int h = 0; h < f.heads(); ++h) {
    QVec qh(f.dk);
    for (int c = 0; c < f.dk; ++c)
      for (int r = 0; r < f.d; ++r) qh[c] += xN[r] * f.Q[h](r, c);
    QTau den(Rational(0));
    std::vector<QTau> num(f.dv, QTau(Rational(0)));
    for (const auto& run : q) {
      const QVec& x = run.token;
      Rational s;
      for (int c = 0; c < f.dk; ++c) {
        Rational k;
        for (int r = 0; r < f.d; ++r) k += x[r] * f.K[h](r, c);
        s += qh[c] * k;
      }
      const QTau w = F.exp(f.scale * s) * QTau(Rational(run.count));
      den += w;
      for (int c = 0; c < f.dv; ++c) {
        Rational val;
        for (int r = 0; r < f.d; ++r) val += x[r] * f.V[h](r, c);
        num[c] += w * QTau(val);
      }
    }
    for (int c = 0; c < f.dv; ++c) {
      const QTau y = num[c] / den;
      for (int o = 0; o < f.dout; ++o) {
        const Rational& Oco = f.per_head ? f.Oh[h](c, o) : f.Ocat(h * f.dv + c, o);
        z[o] += y * QTau(Oco);
      }
    }
  }
  QTau out(Rational(0));
  for (int o = 0; o < f.dout; ++o) out += z[o] * QTau(f.u[o]);
  return out;
}

Query random_query(Rng& r, int d) {
  Query q;
  const long runs = r.uniform_int(1, 5);
  for (long i = 0; i < runs; ++i) {
    Run run{QVec(d), r.uniform_int(1, 2)};
    for (int k = 0; k < d; ++k) run.token[k] = Rational(r.uniform_int(-2, 2));
    q.push_back(std::move(run));
  }
  return q;
}

// Converts through the file format and compares on `n` random sequences;
// returns the converted (non-canonical) model.
Model check_equal_answers(const Fact& f, Rng& r, int n) {
  ModelFileInfo info;
  const Model m = model_from_json_text(to_json(f).dump(), &info);
  CHECK(info.factored());
  CHECK(info.heads == f.heads());
  CHECK(info.d_k == f.dk);
  CHECK(info.d_v == f.dv);
  CHECK(info.d_out == f.dout);
  CHECK(info.projection == (f.per_head ? "per-head" : "concatenated"));
  CHECK(info.scale == f.scale.str());
  REQUIRE(m.d == f.d);
  REQUIRE(m.num_heads() == f.heads());
  const Model c = m.canonical();
  test::Outcomes seqs("random sequences, converted against factored");
  for (int t = 0; t < n; ++t) {
    const Query q = random_query(r, f.d);
    const QTau want = evaluate_factored(f, q, f.L());
    const bool same = QTauAccess::equal(evaluate_exact(m, q, f.L()), want) && (c.num_heads() == 0 || QTauAccess::equal(evaluate_exact(c, q, f.L()), want));
    CHECK(same);
    seqs.count(same ? "equal" : "different");
  }
  seqs.require(n, {"equal"});
  return m;
}

std::string write_temp(const std::string& name, const std::string& text) {
  std::ofstream(name, std::ios::binary) << text;
  return name;
}

std::string example_path() { return std::string(MHAQ_SOURCE_DIR) + "/tests/data/factored_example.json"; }

json example_json() {
  std::ifstream in(example_path());
  REQUIRE(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

bool file_exists(const std::string& p) { return static_cast<bool>(std::ifstream(p)); }

}  // namespace

TEST_CASE("a factored model converts to heads that give the same answers on random sequences") {
  Rng r(20260807);
  const int n = 30 * test::multiplier();
  SUBCASE("d_k != d, d_v != d, concatenated O") {
    const Fact f = random_fact(r, 3, 2, 4, 2, 3, false, Rational(1, 2));
    const Model m = check_equal_answers(f, r, n);
    CHECK(m.canonical().num_heads() == 3);
  }
  SUBCASE("d_k > d, d_v = 1, per-head O, scale 2/3") {
    const Fact f = random_fact(r, 2, 3, 1, 3, 2, true, Rational(2, 3));
    check_equal_answers(f, r, n);
  }
  SUBCASE("two heads with different Q, K but equal K Q^T merge; a cancelling pair is dropped") {
    for (bool per_head : {false, true}) {
      Fact f = random_fact(r, 3, 2, 2, 2, 4, per_head, Rational(1));
      copy_scores(f, 0, 2, r);  // head 2 merges into head 0
      CHECK_FALSE(f.Q[2] == f.Q[0]);
      copy_scores(f, 1, 3, r);  // head 3 cancels head 1: same scores, opposite value path
      f.V[3] = QMat(3, 2);
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 2; ++b) f.V[3](a, b) = -f.V[1](a, b);
      if (per_head) {
        f.Oh[3] = f.Oh[1];
      } else {
        for (int a = 0; a < 2; ++a)
          for (int b = 0; b < 2; ++b) f.Ocat(3 * 2 + a, b) = f.Ocat(1 * 2 + a, b);
      }
      const Model m = check_equal_answers(f, r, n);
      const CanonicalSummary cs = canonical_summary(m);
      CHECK(cs.heads == 4);
      CHECK(cs.merged == 2);
      CHECK(cs.dropped == 1);
      CHECK(cs.canonical == 1);
      CHECK(m.canonical().num_heads() == 1);
    }
  }
  SUBCASE("random shapes") {
    for (int t = 0; t < 40 * test::multiplier(); ++t) {
      const int d = static_cast<int>(r.uniform_int(1, 3)), dk = static_cast<int>(r.uniform_int(1, 3));
      const int dv = static_cast<int>(r.uniform_int(1, 3)), dout = static_cast<int>(r.uniform_int(1, 3));
      const int H = static_cast<int>(r.uniform_int(1, 3));
      const Rational scale(r.uniform_int(-2, 2), static_cast<unsigned long>(r.uniform_int(1, 3)));
      INFO("d=" << d << " d_k=" << dk << " d_v=" << dv << " d_out=" << dout << " H=" << H << " scale " << scale.str());
      check_equal_answers(random_fact(r, d, dk, dv, dout, H, r.uniform_int(0, 1) == 1, scale), r, 8);
    }
  }
}

TEST_CASE("the comparison has teeth: a wrong conversion (Q K^T, or a wrong O block) disagrees somewhere") {
  Rng r(7);
  const Fact f = random_fact(r, 3, 2, 2, 2, 2, false, Rational(1, 2));
  const Model good = model_from_json_text(to_json(f).dump());
  Model transposed = good, swapped = good;
  for (auto& h : transposed.heads) h.W = h.W.transpose();
  std::swap(swapped.heads[0].v, swapped.heads[1].v);
  bool t_differs = false, s_differs = false;
  test::Outcomes seqs("random sequences against wrong conversions");
  for (int t = 0; t < 40 && !(t_differs && s_differs); ++t) {
    const Query q = random_query(r, f.d);
    const QTau want = evaluate_factored(f, q, f.L());
    REQUIRE(QTauAccess::equal(evaluate_exact(good, q, f.L()), want));
    const bool td = !QTauAccess::equal(evaluate_exact(transposed, q, f.L()), want), sd = !QTauAccess::equal(evaluate_exact(swapped, q, f.L()), want);
    t_differs = t_differs || td;
    s_differs = s_differs || sd;
    seqs.count(td && sd ? "both caught" : td ? "transposed caught" : sd ? "swapped caught" : "neither caught");
  }
  CHECK(t_differs);
  CHECK(s_differs);
  seqs.require(1, {"both caught", "transposed caught", "swapped caught"});
}

TEST_CASE("the example file converts to the documented heads") {
  ModelFileInfo info;
  const Model m = read_model_file(example_path(), &info);
  CHECK(info.summary().find("W_h = scale * K_h Q_h^T, v_h = V_h O_h u") != std::string::npos);
  REQUIRE(m.num_heads() == 3);
  // W_0 = 1/2 K_0 Q_0^T and v_0 = V_0 O_0 u, worked by hand.
  const std::vector<std::vector<std::string>> W0{{"1/4", "0", "1/4"}, {"0", "1/2", "-1/2"}, {"-1/2", "1/4", "-3/4"}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) CHECK(m.heads[0].W(i, j) == Rational::parse(W0[i][j]));
  CHECK(m.heads[0].v == QVec{Rational(1), Rational(-1, 2), Rational(1, 2)});
  CHECK(m.heads[2].W == m.heads[0].W);
  const CanonicalSummary cs = canonical_summary(m);
  CHECK(cs.canonical == 2);
  CHECK(cs.merged == 1);
  CHECK(cs.dropped == 0);
  CHECK(m.heads[2].v == QVec{Rational(1, 2), Rational(-1, 2), Rational(1)});
  CHECK(m.canonical().heads[0].v == QVec{Rational(3, 2), Rational(-1), Rational(3, 2)});
}

TEST_CASE("bias keys other than q_bias, k_bias, v_bias (heads) and out_bias are input errors (exit 3) that name the accepted ones") {
  const std::string bin = MHAQ_BINARY;
  const json base = example_json();
  int n = 0;
  for (const std::string key : {"bias", "b_q", "bq", "b_Q", "q_bias", "b_o", "readout_bias", "b", "out_bias"}) {
    for (bool in_head : {false, true}) {
      if ((key == "q_bias" && in_head) || (key == "out_bias" && !in_head)) continue;  // the accepted places
      json j = base;
      if (in_head) j["heads"][1][key] = json::array({"0", "0"});
      else j[key] = json::array({"0", "0"});
      const std::string path = write_temp("test_factored_bias.json", j.dump());
      INFO(key << (in_head ? " in heads[1]" : " at top level"));
      const auto cmd = ++n % 2 ? " recover --model " : " convert -o test_factored_bias_out.json --model ";
      const auto res = test::run(bin + cmd + path + " 2>&1");
      CHECK(res.code == 3);
      CHECK(res.out.find("q_bias") != std::string::npos);
      CHECK(res.out.find("out_bias") != std::string::npos);
      CHECK(res.out.find((in_head ? "heads[1]." : "") + key) != std::string::npos);
      CHECK_FALSE(file_exists("test_factored_bias_out.json"));  // nothing written half-way
      CHECK_THROWS_AS(model_from_json_text(j.dump()), Error);
    }
  }
  // --json: one error object on stdout
  json j = base;
  j["heads"][0]["b_K"] = json::array({"1", "0"});
  const auto res = test::run(bin + " convert --json --model " + write_temp("test_factored_bias.json", j.dump()) + " 2>/dev/null");
  CHECK(res.code == 3);
  const json e = json::parse(res.out);
  CHECK(e["error"] == "input");
  CHECK(e["message"].get<std::string>().find("unknown bias field") != std::string::npos);
  std::remove("test_factored_bias.json");
}

TEST_CASE("shape and entry errors name the offending field") {
  const json base = example_json();
  auto expect = [&](const std::function<void(json&)>& edit, const std::vector<std::string>& needles) {
    json j = base;
    edit(j);
    std::string msg;
    try {
      model_from_json_text(j.dump());
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::input);
      msg = e.what();
    }
    INFO("message: " << msg);
    REQUIRE_FALSE(msg.empty());
    for (const auto& s : needles) CHECK(msg.find(s) != std::string::npos);
  };
  expect([](json& j) { j["heads"][1]["K"].erase(std::size_t{0}); }, {"heads[1].K", "d x d_k = 3 x 2", "2 rows"});
  expect([](json& j) { j["heads"][0]["Q"][2].push_back("1"); }, {"heads[0].Q[2]", "2 entries"});
  expect([](json& j) { j["heads"][2]["V"] = "1"; }, {"heads[2].V", "d x d_v"});
  expect([](json& j) { j["heads"][1].erase("V"); }, {"heads[1].V", "missing"});
  expect([](json& j) { j["O"].erase(std::size_t{5}); }, {"O", "(H*d_v) x d_out = 6 x 2"});
  expect([](json& j) { j["O"][3].push_back("0"); }, {"O[3]"});
  expect([](json& j) { j["readout"].push_back("1"); }, {"readout", "d_out = 2"});
  expect([](json& j) { j.erase("d_k"); }, {"d_k"});
  expect([](json& j) { j["d_v"] = 0; }, {"d_v", "[1, 4096]"});
  expect([](json& j) { j["d"] = 65; }, {"d", "[1, 64]"});
  expect([](json& j) { j["heads"][0]["K"][1][0] = 0.5; }, {"heads[0].K[1][0]", "floating-point"});
  expect([](json& j) { j["heads"][2]["Q"][0][1] = "1/0"; }, {"heads[2].Q[0][1]", "zero denominator"});
  expect([](json& j) { j["scale"] = 0.7071067811865476; }, {"scale", "sqrt", "exactly"});
  expect([](json& j) { j["scale"] = "1/sqrt(-2)"; }, {"scale", "square root of -2", "not positive"});
  expect([](json& j) { j["scale"] = "sqrt(2"; }, {"scale", "not a scale"});
  expect([](json& j) { j["heads"][0]["q"] = j["heads"][0]["Q"]; }, {"heads[0]", "unknown field \"q\""});
  expect([](json& j) { j["layers"] = 1; }, {"unknown field \"layers\""});
  expect([](json& j) { j["heads"][0]["b_q"] = json::array({"0", "0"}); }, {"heads[0].b_q", "unknown bias field", "q_bias"});
  expect([](json& j) { j["readout_bias"] = "0"; }, {"readout_bias", "unknown bias field"});
  expect([](json& j) { j["heads"][0]["q_bias"] = json::array({"0"}); }, {"heads[0].q_bias", "d_k = 2 entries"});
  expect([](json& j) { j["out_bias"] = json::array({"1/2", 0.5}); }, {"out_bias[1]", "floating-point"});
  expect([](json& j) { j.erase("O"); }, {"O", "missing output projection"});
  expect([](json& j) { j["heads"][0]["O"] = json::array({{"1", "0"}, {"0", "1"}}); }, {"O", "both"});
  expect(
      [](json& j) {
        j.erase("O");
        j["heads"][0]["O"] = json::array({{"1", "0"}, {"0", "1"}});
      },
      {"heads[1].O", "missing"});
  expect(
      [](json& j) {
        j.erase("O");
        for (int h = 0; h < 3; ++h) j["heads"][h]["O"] = json::array({{"1", "0"}, {"0", "1"}});
        j["heads"][2]["O"] = json::array({{"1", "0"}});
      },
      {"heads[2].O", "d_v x d_out = 2 x 2"});
  expect([](json& j) { j["format"] = "mhaq-model-factorised"; }, {"format", "mhaq-model-factored"});
  expect([](json& j) { j.erase("format"); }, {"format: missing", "mhaq-model-factored"});  // named before any field is read
  // through the CLI: exit 3, the field named on stderr
  json j = base;
  j["heads"][1]["K"].erase(std::size_t{0});
  const auto res = test::run(std::string(MHAQ_BINARY) + " recover --model " + write_temp("test_factored_shape.json", j.dump()) + " 2>&1");
  CHECK(res.code == 3);
  CHECK(res.out.find("heads[1].K") != std::string::npos);
  std::remove("test_factored_shape.json");
}

TEST_CASE("recover --model on a factored file: exact match, and the conversion is reported") {
  const std::string bin = MHAQ_BINARY;
  // seed 3: the learner's draws for seeds 1 and 2 are degenerate for this model (reported as such, exit 4)
  auto res = test::run(bin + " recover --model " + example_path() + " --seed 3 --json");
  REQUIRE(res.code == 0);
  const RecoverResult r = test::record_of(res.out);
  CHECK(r.judge.status == Status::ok);
  CHECK(r.truth.exact_match == true);
  CHECK(r.truth.heads_true == 2);
  REQUIRE(r.output.model_conversion.has_value());
  CHECK(r.output.model_conversion->format == "mhaq-model-factored");
  CHECK(r.output.model_conversion->conversion == "W_h = scale * K_h Q_h^T, v_h = V_h O_h u");
  CHECK(r.output.model_conversion->scale == "1/2");
  res = test::run(bin + " recover --model " + example_path() + " --seed 3");
  CHECK(res.code == 0);
  CHECK(res.out.find("exact match      yes") != std::string::npos);
  CHECK(res.out.find("model file       mhaq-model-factored") != std::string::npos);
  CHECK(res.out.find("W_h = scale * K_h Q_h^T") != std::string::npos);
  // a plain file gets no conversion field
  res = test::run(bin + " convert --model " + example_path() + " -o test_factored_plain.json >/dev/null");
  REQUIRE(res.code == 0);
  res = test::run(bin + " recover --model test_factored_plain.json --seed 3 --json");
  CHECK(res.code == 0);
  CHECK_FALSE(test::record_of(res.out).output.model_conversion.has_value());
  std::remove("test_factored_plain.json");
}

TEST_CASE("convert writes the canonical plain model; it round-trips through read_model_file") {
  const std::string bin = MHAQ_BINARY, out = "test_factored_converted.json";
  std::remove(out.c_str());
  auto res = test::run(bin + " convert --model " + example_path() + " -o " + out);
  REQUIRE(res.code == 0);
  CHECK(res.out.find("W_h = scale * K_h Q_h^T") != std::string::npos);
  CHECK(res.out.find("v_h = V_h O_h u") != std::string::npos);
  CHECK(res.out.find("3 heads -> 2 canonical (1 merged") != std::string::npos);
  ModelFileInfo info;
  const Model back = read_model_file(out, &info);
  CHECK_FALSE(info.factored());
  const Model want = read_model_file(example_path()).canonical();
  REQUIRE(back.num_heads() == want.num_heads());
  CHECK(back.d == want.d);
  for (int h = 0; h < want.num_heads(); ++h) {
    CHECK(back.heads[h].W == want.heads[h].W);
    CHECK(back.heads[h].v == want.heads[h].v);
  }
  // converting the plain output again changes nothing, byte for byte
  res = test::run(bin + " convert --model " + out + " --json");
  REQUIRE(res.code == 0);
  const json j = json::parse(res.out);
  CHECK(j["model_file"]["format"] == "mhaq-model");
  CHECK(j["canonical"]["merged"] == 0);
  std::ifstream in(out);
  std::ostringstream ss;
  ss << in.rdbuf();
  CHECK(j["model"] == json::parse(ss.str()));
  // --json with -o: one summary object
  res = test::run(bin + " convert --model " + example_path() + " -o " + out + " --json");
  REQUIRE(res.code == 0);
  const json s = json::parse(res.out);
  CHECK(s["canonical"] == json{{"heads_in", 3}, {"merged", 1}, {"dropped", 0}, {"heads", 2}});
  CHECK(s["model_file"]["output_projection"] == "concatenated");
  CHECK(s["model_file"]["d_k"] == 2);
  // without -o: the model on stdout, the report on stderr
  res = test::run(bin + " convert --model " + example_path() + " 2>/dev/null");
  REQUIRE(res.code == 0);
  CHECK(model_from_json_text(res.out).num_heads() == 2);
  std::remove(out.c_str());
}

TEST_CASE("convert: a model whose heads all cancel is an input error and writes nothing") {
  json j = example_json();
  // head 2 already shares head 0's scores; give it head 0's values negated and drop head 1
  j["heads"].erase(std::size_t{1});
  j["heads"][1]["V"] = json::array({{"-1", "0"}, {"0", "-1"}, {"-1", "-1"}});
  j["O"] = json::array({{"1", "0"}, {"0", "1"}, {"1", "0"}, {"0", "1"}});
  const std::string path = write_temp("test_factored_zero.json", j.dump()), out = "test_factored_zero_out.json";
  std::remove(out.c_str());
  const auto res = test::run(std::string(MHAQ_BINARY) + " convert --model " + path + " -o " + out + " 2>&1");
  CHECK(res.code == 3);
  CHECK(res.out.find("every head vanishes") != std::string::npos);
  CHECK_FALSE(file_exists(out));
  std::remove(path.c_str());
}
