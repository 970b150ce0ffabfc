// Kernel golden files: the layer read from safetensors (grouped heads, both
// layouts, fused biases), exact rounding of tokens, the certified evaluator
// on values known in closed form (rational rows exactly, zero, masks, ties,
// cancelling heads unable), the export and the separate checker's streaming
// check round trip on random layers, every kind of tampering, malformed files
// and the command line's exit codes.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "mhaq/base/error.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/check/golden_kernel.hpp"
#include "mhaq/evidence/golden_kernel.hpp"
#include "mhaq/model/kernel_eval.hpp"
#include "mhaq/model/kernel_layer.hpp"
#include "test_util.hpp"

using namespace mhaq;
using json = nlohmann::ordered_json;  // the file's order: the layer before the sequences

namespace {

std::string le64(std::uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

// A safetensors file of F32 tensors {name, shape, values}.
struct T {
  std::string name;
  std::vector<long> shape;
  std::vector<float> v;
};
std::string safetensors(const std::vector<T>& ts) {
  std::string h = "{", data;
  for (const auto& t : ts) {
    std::string shape;
    for (long s : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(s);
    const size_t b = data.size();
    for (float x : t.v) {
      char c[4];
      std::memcpy(c, &x, 4);
      data.append(c, 4);
    }
    h += (h.size() > 1 ? "," : "") + std::string("\"") + t.name + "\":{\"dtype\":\"F32\",\"shape\":[" + shape + "],\"data_offsets\":[" + std::to_string(b) + "," +
         std::to_string(data.size()) + "]}";
  }
  h += "}";
  return le64(h.size()) + h + data;
}

KernelLayer from(const std::vector<T>& ts, const std::string& map) {
  return safetensors_to_kernel(SafetensorsFile::from_bytes(safetensors(ts), "t.safetensors"), safetensors_map_from_json(parse_json_text(map), "map.json"));
}

QVec row(std::initializer_list<long> xs) {
  QVec v;
  for (long x : xs) v.push_back(Rational(x));
  return v;
}

// d = 1, one head, every weight 1 unless given: out = sum_i alpha_i x_i + b.
KernelLayer scalar_layer(long heads = 1) {
  KernelLayer L;
  L.d = 1, L.heads = L.kv_heads = static_cast<int>(heads), L.d_k = L.d_v = 1, L.d_out = 1;
  L.Wq = QMat(static_cast<int>(heads), 1), L.Wk = QMat(static_cast<int>(heads), 1), L.Wv = QMat(static_cast<int>(heads), 1), L.Wo = QMat(1, static_cast<int>(heads));
  for (int h = 0; h < heads; ++h) L.Wq(h, 0) = L.Wk(h, 0) = L.Wv(h, 0) = L.Wo(0, h) = Rational(1);
  L.weights_dtype = "F32";
  return L;
}

KernelSequence tokens(std::initializer_list<long> xs) {
  KernelSequence s;
  for (long x : xs) s.tokens.push_back(row({x}));
  return s;
}

std::string export_text(const KernelGoldenInputs& in) {
  std::string text;
  golden_kernel_export(in, [&](const std::string& s) { text += s; });
  return text;
}

check::KernelGoldenReport check_text(const std::string& text, int threads = 1) {
  std::istringstream in(text);
  return check::check_kernel_golden_stream(in, threads);
}

std::string check_input_error(const std::string& text) {
  try {
    (void)check_text(text);
  } catch (const check::InputError& e) {
    return e.what();
  }
  return "no input error";
}

}  // namespace

TEST_CASE("round_to_dtype: nearest, ties to even, subnormals, overflow") {
  bool ok = true;
  CHECK(round_to_dtype(Rational(1, 10), StDtype::f32, ok) == Rational(13421773, 134217728));
  CHECK(round_to_dtype(Rational(1, 10), StDtype::bf16, ok) == Rational(205, 2048));
  CHECK(round_to_dtype(Rational(-1, 3), StDtype::f16, ok) == Rational(-1365, 4096));
  CHECK(round_to_dtype(Rational(2049), StDtype::f16, ok) == Rational(2048));  // a tie: to the even significand
  CHECK(round_to_dtype(Rational(2051), StDtype::f16, ok) == Rational(2052));
  CHECK(round_to_dtype(Rational(3, 1L << 26), StDtype::f16, ok) == Rational(1, 1L << 24));  // subnormal spacing 2^-24: 3/4 of it rounds up
  CHECK(round_to_dtype(Rational(1, 1L << 26), StDtype::f16, ok) == Rational(0));          // a quarter of the spacing rounds to zero
  CHECK(ok);
  (void)round_to_dtype(Rational(65520), StDtype::f16, ok);  // halfway to 2^16: rounds past the largest half, 65504
  CHECK(!ok);
  ok = true;
  CHECK(round_to_dtype(Rational(65519), StDtype::f16, ok) == Rational(65504));
  CHECK(ok);
}

TEST_CASE("map_scale: any 1/sqrt(n) kept exactly as q sqrt(m), m squarefree") {
  Surd s = map_scale("1/sqrt(d_k)", 8, "m");
  CHECK((s.q == Rational(1, 4) && s.m == 2 && !s.is_rational()));
  s = map_scale("1/sqrt(d_k)", 16, "m");
  CHECK((s.q == Rational(1, 4) && s.is_rational()));
  s = map_scale("1/sqrt(2/3)", 1, "m");  // sqrt(3/2) = sqrt(6)/2
  CHECK((s.q == Rational(1, 2) && s.m == 6));
  s = map_scale("3/8", 1, "m");
  CHECK((s.q == Rational(3, 8) && s.is_rational()));
  s = map_scale("sqrt(2)/4", 1, "m");  // as a factored file writes 1/sqrt(8)
  CHECK((s.q == Rational(1, 4) && s.m == 2));
  CHECK(test::error_of([] { (void)map_scale("1/sqrt(0)", 1, "m"); }).first == static_cast<int>(ErrorKind::input));
  CHECK(test::error_of([] { (void)map_scale("sqrt(-2)", 1, "m"); }).first == static_cast<int>(ErrorKind::input));
  CHECK(test::error_of([] { (void)map_scale("1/sqrt(x)", 1, "m"); }).first == static_cast<int>(ErrorKind::input));
}

TEST_CASE("safetensors_to_kernel: grouped heads, layouts, fused biases in their split order") {
  // d = 2, H = 2, G = 1, d_k = d_v = 1: q 2 x 2, k and v 1 x 2, out 2 x 2 (out_in)
  const std::vector<T> ts{{"q", {2, 2}, {1, 2, 3, 4}}, {"k", {1, 2}, {5, 6}}, {"v", {1, 2}, {7, 8}}, {"o", {2, 2}, {1, 0, 0, 1}}, {"ob", {2}, {0.5f, -0.25f}}};
  const std::string m = R"M({"format":"mhaq-safetensors-map","heads":2,"kv_heads":1,"layout":"out_in","q":"q","k":"k","v":"v","out":"o","out_bias":"ob","scale":"1/sqrt(d_k)"})M";
  const KernelLayer L = from(ts, m);
  CHECK((L.heads == 2 && L.kv_heads == 1 && L.d_k == 1 && L.d_v == 1 && L.d_out == 2));
  CHECK((L.kv_head(0) == 0 && L.kv_head(1) == 0));
  CHECK((L.Wq(1, 0) == Rational(3) && L.Wk(0, 1) == Rational(6) && L.bo[1] == Rational(-1, 4) && L.bq.empty()));
  CHECK(L.weights_dtype == "F32");
  // in_out: every matrix transposed, the output projection too
  const std::vector<T> tt{{"q", {2, 2}, {1, 3, 2, 4}}, {"k", {2, 1}, {5, 6}}, {"v", {2, 1}, {7, 8}}, {"o", {2, 2}, {1, 0, 0, 1}}, {"ob", {2}, {0.5f, -0.25f}}};
  std::string mt = m;
  mt.replace(mt.find("out_in"), 6, "in_out");
  const KernelLayer Lt = from(tt, mt);
  CHECK((Lt.Wq == L.Wq && Lt.Wk == L.Wk && Lt.Wv == L.Wv && Lt.Wo == L.Wo));
  // fused, in the order k, v, q, with its bias split the same way
  const std::vector<T> tf{{"w", {3, 1}, {5, 7, 3}}, {"b", {3}, {1, 2, 4}}, {"o", {1, 1}, {2}}};
  const KernelLayer F = from(tf, R"({"format":"mhaq-safetensors-map","heads":1,"layout":"out_in","in_proj":"w","in_proj_split":["k","v","q"],)"
                                 R"("in_proj_bias":"b","out":"o","scale":"1"})");
  CHECK((F.Wq(0, 0) == Rational(3) && F.Wk(0, 0) == Rational(5) && F.Wv(0, 0) == Rational(7)));
  CHECK((F.bq[0] == Rational(4) && F.bk[0] == Rational(1) && F.bv[0] == Rational(2)));
  // refusals, each naming the tensor or the map
  auto input_error = [&](const std::vector<T>& t, const std::string& map) {
    const auto e = test::error_of([&] { (void)from(t, map); });
    CHECK(e.first == static_cast<int>(ErrorKind::input));
    return e.second;
  };
  CHECK(input_error(ts, std::string(m).replace(m.find("\"ob\""), 4, "\"q\"")).find("expected a vector (rank 1)") != std::string::npos);
  const std::vector<T> short_bias{{"q", {2, 2}, {1, 2, 3, 4}}, {"k", {1, 2}, {5, 6}}, {"v", {1, 2}, {7, 8}}, {"o", {2, 2}, {1, 0, 0, 1}}, {"ob", {1}, {0.5f}}};
  CHECK(input_error(short_bias, m).find("(out_bias) has 1 entries; expected 2") != std::string::npos);
  CHECK(input_error(ts, std::string(m).replace(m.find("\"scale\""), 7, R"("rope":{"theta":"10000","pairing":"half"},"scale")"))
            .find("d_k = 1 is odd") != std::string::npos);
  CHECK(input_error(ts, std::string(m).replace(m.find("\"kv_heads\":1"), 12, "\"kv_heads\":2")).find("the heads must divide them") != std::string::npos);
}

TEST_CASE("certify_kernel_sequence: closed forms, rational rows exactly, masks, zero, ties, and cancelling heads unable") {
  KernelLayer L = scalar_layer();
  KernelEvalOptions o;
  o.digits = 30;
  o.causal = true;
  o.head_outputs = o.attention_weights = true;
  // tokens 0, 1: row 1 attends (scores 0, 1): out = e / (1 + e)
  const KernelSequenceResult r = certify_kernel_sequence(L, tokens({0, 1}), {0, 1}, o);
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].out[0].decimal == "0.00000000000000000000000000000e+00");  // one key, x_0 = 0: exactly zero
  CHECK(r.rows[0].out[0].rad == "0");
  CHECK(r.rows[0].weights[0].decimal == "1.00000000000000000000000000000e+00");
  CHECK(r.rows[0].weights[1].mid == "0");  // a key the causal mask hides has weight exactly 0
  CHECK(r.rows[1].out[0].decimal == "7.31058578630004879251159241822e-01");
  CHECK(r.rows[1].weights[0].decimal == "2.68941421369995120748840758178e-01");
  CHECK(r.rows[1].out[0].rad != "0");
  // equal scores: uniform weights, a rational mean; here 1/2 + 1/4 with a tie at one digit: to even
  KernelLayer Z = scalar_layer();
  Z.Wq(0, 0) = Rational(0);
  Z.bo = QVec{Rational(1, 4)};
  KernelEvalOptions one = o;
  one.digits = 1;
  const KernelSequenceResult t = certify_kernel_sequence(Z, tokens({0, 1}), {1}, one);  // (0 + 1)/2 + 1/4 = 3/4 -> "8e-01" (tie 7.5 to even)
  CHECK(t.rows[0].out[0].decimal == "8e-01");
  CHECK(t.rows[0].out[0].mid == "3/4");
  // key padding hides every key of row 0; the additive mask -inf hides key 0 of row 1
  KernelSequence p = tokens({2, 3});
  p.key_padding = {true, false};
  const KernelSequenceResult pr = certify_kernel_sequence(L, p, {0, 1}, o);
  CHECK(!pr.rows[0].defined);
  CHECK(pr.rows[1].out[0].decimal == "3.00000000000000000000000000000e+00");
  KernelSequence mk = tokens({2, 3});
  mk.mask = {{MaskEntry{false, Rational(0)}, MaskEntry{true, Rational(0)}}, {MaskEntry{true, Rational(0)}, MaskEntry{false, Rational(-1, 2)}}};
  o.causal = false;
  const KernelSequenceResult mr = certify_kernel_sequence(L, mk, {0, 1}, o);
  CHECK((mr.rows[0].out[0].decimal == "2.00000000000000000000000000000e+00" && mr.rows[1].out[0].decimal == "3.00000000000000000000000000000e+00"));
  // two equal heads whose outputs cancel: zero that no rule shows rational, unable at the cap
  KernelLayer C = scalar_layer(2);
  C.Wo(0, 1) = Rational(-1);
  KernelEvalOptions capped = o;
  capped.max_bits = 256;
  capped.head_outputs = capped.attention_weights = false;
  const auto e = test::error_of([&] { (void)certify_kernel_sequence(C, tokens({0, 1}), {1}, capped); });
  CHECK(e.first == static_cast<int>(ErrorKind::unable));
  CHECK(e.second.find("row 1: output entry 0") != std::string::npos);
}

TEST_CASE("export and the separate checker: random layers round trip, and the bytes do not depend on threads") {
  std::mt19937_64 rng(20240601);
  auto pick = [&](long lo, long hi) { return std::uniform_int_distribution<long>(lo, hi)(rng); };
  const int trials = 6 * test::multiplier();
  int ok = 0, unable = 0;
  for (int trial = 0; trial < trials; ++trial) {
    KernelGoldenInputs in;
    KernelLayer& L = in.layer;
    L.kv_heads = static_cast<int>(pick(1, 2));
    L.heads = L.kv_heads * static_cast<int>(pick(1, 2));
    L.d = static_cast<int>(pick(1, 4)), L.d_k = 2 * static_cast<int>(pick(1, 2)), L.d_v = static_cast<int>(pick(1, 3)), L.d_out = static_cast<int>(pick(1, 3));
    auto mat = [&](int r, int c) {
      QMat a(r, c);
      for (int i = 0; i < r; ++i)
        for (int j = 0; j < c; ++j) a(i, j) = Rational(pick(-8, 8), 8);
      return a;
    };
    auto vec = [&](int n) {
      QVec v;
      for (int i = 0; i < n; ++i) v.push_back(Rational(pick(-8, 8), 16));
      return v;
    };
    L.Wq = mat(L.heads * L.d_k, L.d), L.Wk = mat(L.kv_heads * L.d_k, L.d), L.Wv = mat(L.kv_heads * L.d_v, L.d), L.Wo = mat(L.d_out, L.heads * L.d_v);
    if (trial % 2 == 0) L.bq = vec(L.heads * L.d_k), L.bk = vec(L.kv_heads * L.d_k), L.bv = vec(L.kv_heads * L.d_v), L.bo = vec(L.d_out);
    L.scale = map_scale(trial % 3 == 0 ? "1/2" : "1/sqrt(d_k)", L.d_k, "m");
    L.rope = trial % 3 == 1;
    L.rope_theta = Rational(10000);
    L.rope_interleaved = trial % 2 == 1;
    L.weights_dtype = "F32";
    for (int s = 0; s < 3; ++s) {
      KernelSequence seq;
      const long n = pick(1, 6);
      for (long t = 0; t < n; ++t) seq.tokens.push_back(vec(L.d));
      if (s == 1) seq.key_padding.assign(static_cast<size_t>(n), false), seq.key_padding[0] = true;
      if (s == 2) seq.position_ids.assign(static_cast<size_t>(n), 0), seq.position_ids.back() = 5;
      in.sequences.push_back(std::move(seq));
    }
    in.eval.causal = trial % 2 == 0;
    in.eval.head_outputs = in.eval.attention_weights = trial % 3 != 2;
    in.eval.digits = 12 + trial % 20;
    in.eval.max_bits = 4096;
    std::string text;
    try {
      text = export_text(in);
    } catch (const Error& e) {
      REQUIRE(e.kind() == ErrorKind::unable);  // a zero no rule shows rational: said, never written
      ++unable;
      continue;
    }
    in.threads = 3;
    CHECK(export_text(in) == text);
    const check::KernelGoldenReport r = check_text(text, 1 + trial % 2);
    INFO(trial);
    INFO((r.failures.empty() ? std::string() : r.failures[0]));
    CHECK(r.ok());
    CHECK(r.entries > 0);
    ++ok;
  }
  MESSAGE("random kernel golden round trips: " << ok << " ok, " << unable << " unable of " << trials);
  CHECK(ok >= trials * 2 / 3);
}

TEST_CASE("the checker rejects every kind of tampering, and malformed files are input errors") {
  KernelGoldenInputs in;
  in.layer = scalar_layer(2);
  in.layer.Wq(1, 0) = Rational(2);
  in.layer.bo = QVec{Rational(1, 3)};
  in.sequences = {tokens({1, -1, 2}), tokens({3})};
  in.eval.causal = true;
  in.eval.attention_weights = true;
  in.eval.digits = 20;
  const std::string text = export_text(in);
  {
    const check::KernelGoldenReport r0 = check_text(text);
    INFO((r0.failures.empty() ? std::string() : r0.failures[0]));
    REQUIRE(r0.ok());
  }
  json j = json::parse(text);
  auto rejected = [&](const json& doc, const std::string& where) {
    const check::KernelGoldenReport r = check_text(doc.dump(1));
    INFO(where);
    CHECK(!r.ok());
    bool named = false;
    for (const auto& f : r.failures) named = named || f.find(where) != std::string::npos;
    CHECK(named);
  };
  {
    json t = j;
    std::string& d = t["sequences"][0]["output"][2][0][0].get_ref<std::string&>();
    d[d.find('e') - 1] = d[d.find('e') - 1] == '9' ? '8' : static_cast<char>(d[d.find('e') - 1] + 1);
    rejected(t, "sequences[0].output[2][0]");
  }
  {
    json t = j;  // the weight of key 0 at row 1 claimed exact
    t["sequences"][0]["attention_weights"][1][0][0][2] = "0";
    rejected(t, "sequences[0].attention_weights[1][0][0]");
  }
  {
    json t = j;  // a ball moved off the value (still rounding to the decimal)
    const std::string mid = t["sequences"][0]["output"][1][0][1];
    const std::string rad = t["sequences"][0]["output"][1][0][2];
    const Rational m = Rational::parse(mid, 100000), r = Rational::parse(rad, 100000);
    t["sequences"][0]["output"][1][0][1] = (m + Rational(4) * r).str();
    rejected(t, "sequences[0].output[1][0]");
  }
  {
    json t = j;  // a weight of the layer changed: the decimals no longer follow
    t["layer"]["v"][0][0] = "3/2";
    rejected(t, "sequences[0].output");
  }
  {
    json t = j;
    t["sequences"][0]["output"][1] = nullptr;
    rejected(t, "sequences[0].output[1]");
  }
  {
    json t = j;
    t["summary"]["entries"] = t["summary"]["entries"].get<long>() + 1;
    rejected(t, "summary.entries");
  }
  // malformed: input errors naming the place
  CHECK(check_input_error(text.substr(0, text.size() / 2)).find("not valid JSON") != std::string::npos);
  {
    std::string dup = text;
    dup.insert(dup.find("\"version\""), "\"digits\": 20, ");
    CHECK(check_input_error(dup).find("duplicate key \"digits\"") != std::string::npos);
  }
  {
    json t = j;
    t["sequences"][1]["index"] = 0;
    CHECK(check_input_error(t.dump()).find("sequences[1].index") != std::string::npos);
  }
  {
    json t = j;
    t["sequences"][0]["colour"] = "red";
    CHECK(check_input_error(t.dump()).find("sequences[0].colour") != std::string::npos);
  }
  {
    nlohmann::ordered_json t = nlohmann::ordered_json::parse(text);  // the layer after the sequences
    const auto layer = t["layer"];
    t.erase("layer");
    t["layer"] = layer;
    CHECK(check_input_error(t.dump()).find("layer: missing before the sequences") != std::string::npos);
  }
  {
    json t = j;
    t["layer"]["q"][0][0] = 0.5;
    CHECK(check_input_error(t.dump()).find("layer.q[0][0]") != std::string::npos);
  }
  CHECK(check::starts_as_kernel_golden(text.substr(0, 64)));
  CHECK(!check::starts_as_kernel_golden("{\"format\": \"mhaq-golden\""));
}

TEST_CASE("limits before any work, and the command line's exit codes") {
  KernelGoldenInputs in;
  in.layer = scalar_layer();
  in.layer.d_out = 1;
  KernelSequence big;
  for (int i = 0; i < 1100; ++i) big.tokens.push_back(row({1}));
  in.sequences = {big};
  in.eval.attention_weights = true;  // 1100 rows of 1 + 1100 entries: past max_kernel_sequence_entries
  const auto e = test::error_of([&] { check_kernel_golden_limits(in); });
  CHECK(e.first == static_cast<int>(ErrorKind::input));
  CHECK(e.second.find("max_kernel_sequence_entries") != std::string::npos);
  CHECK(parse_query_positions("0,-1").list == std::vector<long>{0, -1});
  CHECK(test::error_of([] { (void)parse_query_positions("1,,2"); }).first == static_cast<int>(ErrorKind::usage));
  CHECK(test::error_of([] { (void)QueryPositions{QueryPositions::Kind::list, {3}}.rows(3, "s"); }).first == static_cast<int>(ErrorKind::input));

  const std::string bin = MHAQ_BINARY;
  std::ofstream("k.safetensors", std::ios::binary) << safetensors({{"w", {3, 1}, {1, 1, 1}}, {"o", {1, 1}, {1}}});
  std::ofstream("k_map.json") << R"({"format":"mhaq-safetensors-map","heads":1,"layout":"out_in","in_proj":"w","out":"o","scale":"1"})";
  std::ofstream("k_in.json") << R"({"format":"mhaq-inputs","version":1,"d":1,"sequences":[[["0"],["1"]],[["1/3"]]]})";
  const std::string base = bin + " golden kernel --safetensors k.safetensors --map k_map.json --inputs k_in.json";
  auto r = test::run(base + " --causal -o k_golden.json 2>&1");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(test::run(bin + " golden check k_golden.json --json").out.find("\"status\":\"ok\"") != std::string::npos);
  CHECK(test::run(base + " --query-positions 5 2>&1").code == 3);
  CHECK(test::run(base + " --query-positions x 2>&1").code == 2);
  CHECK(test::run(bin + " golden kernel --map k_map.json --inputs k_in.json 2>&1").code == 2);
  r = test::run(base + " --round-tokens F16 -o k_rounded.json 2>&1");
  CHECK(r.code == 0);
  CHECK(r.out.find("tokens rounded to F16: 1 entries changed") != std::string::npos);
  std::ofstream("k_bad_map.json") << R"({"format":"mhaq-safetensors-map","heads":1,"layout":"out_in","in_proj":"w","out":"o","scale":"1",)";
  r = test::run(bin + " golden kernel --safetensors k.safetensors --map k_bad_map.json --inputs k_in.json 2>&1");
  CHECK(r.code == 3);
  CHECK(r.out.find("k_bad_map.json") != std::string::npos);
  std::string g;
  {
    std::ifstream f("k_golden.json");
    g.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  g[g.find("e-01\"") - 1] = g[g.find("e-01\"") - 1] == '9' ? '8' : '9';
  std::ofstream("k_tampered.json") << g;
  CHECK(test::run(bin + " golden check k_tampered.json >/dev/null 2>&1").code == 10);
}
