// The safetensors reader and the map: exact values of every dtype, the
// conversion to a factored model, and malformed files, each an input error
// naming the problem (tests/fuzz/corpus/safetensors holds them too).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "mhaq/base/error.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/evidence/golden.hpp"
#include "mhaq/evidence/golden_certified.hpp"
#include "mhaq/model/certified_eval.hpp"
#include "mhaq/model/factored.hpp"
#include "mhaq/model/kernel_layer.hpp"
#include "mhaq/model/safetensors.hpp"
#include "mhaq/model/transformer.hpp"
#include "test_util.hpp"

using namespace mhaq;

namespace {

std::string le64(std::uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

// A file with header text `h` and data buffer `data`.
std::string file(const std::string& h, const std::string& data = "") { return le64(h.size()) + h + data; }

std::string f32(float x) {
  std::string s(4, '\0');
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  for (int i = 0; i < 4; ++i) s[static_cast<size_t>(i)] = static_cast<char>((b >> (8 * i)) & 0xff);
  return s;
}
std::string f64(double x) {
  std::string s(8, '\0');
  std::uint64_t b;
  std::memcpy(&b, &x, 8);
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>((b >> (8 * i)) & 0xff);
  return s;
}
std::string u16(unsigned b) { return std::string{static_cast<char>(b & 0xff), static_cast<char>((b >> 8) & 0xff)}; }

std::string f32s(const std::vector<float>& v) {
  std::string s;
  for (float x : v) s += f32(x);
  return s;
}

// The message of the input error that reading (and converting with `map`) raises.
std::string input_error(const std::string& bytes, const std::string& map = "") {
  try {
    const SafetensorsFile f = SafetensorsFile::from_bytes(bytes, "t.safetensors");
    if (map.empty()) {
      for (const auto& t : f.tensors()) (void)f.values(t);
    } else {
      QMat ffn;
      (void)safetensors_to_factored(f, safetensors_map_from_json(parse_json_text(map), "map.json"), &ffn);
    }
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::input) return std::string("not an input error: ") + e.what();
    return e.what();
  }
  return "no error";
}

// One tensor "x" of `dtype` and `shape` with `data`.
std::string one(const std::string& dtype, const std::string& shape, const std::string& data) {
  return file("{\"x\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[0," + std::to_string(data.size()) + "]}}", data);
}

// A 2-head layer, d = 2, d_k = d_v = 1, d_out = 2, stored out_in (torch): q, k, v are 2 x 2, out 2 x 2.
std::string layer(const std::string& extra_header = "", const std::string& extra_data = "") {
  const std::string q = f32s({1, 2, 3, 4}), k = f32s({0.5f, -1, 2, 0.25f}), v = f32s({1, 0, 0, 1}), o = f32s({1, 2, -1, 0.5f});
  std::string h = "{\"q\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
                  "\"k\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[16,32]},"
                  "\"v\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[32,48]},"
                  "\"o.weight\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[48,64]}" +
                  extra_header + "}";
  return file(h, q + k + v + o + extra_data);
}
// A malformed file (and map): the input error it must raise contains `expect`.
struct Case {
  const char* what;
  std::string bytes, map, expect;
};
void check_cases(const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    INFO(c.what);
    const std::string msg = input_error(c.bytes, c.map);
    INFO(msg);
    CHECK(msg.find(c.expect) != std::string::npos);
    CHECK(msg.rfind("not an input error", 0) != 0);
  }
}

const std::string map2 =
    R"({"format":"mhaq-safetensors-map","version":1,"heads":2,"layout":"out_in","q":"q","k":"k","v":"v","out":"o.weight","readout":["1","-1/2"],"scale":"1"})";

}  // namespace

TEST_CASE("every dtype is read as its exact dyadic rational") {
  auto val = [](const std::string& dtype, const std::string& bytes) {
    const SafetensorsFile f = SafetensorsFile::from_bytes(one(dtype, "[1]", bytes));
    return f.values(f.tensors().at(0)).at(0).str();
  };
  CHECK(val("F32", f32(0.1f)) == "13421773/134217728");
  CHECK(val("F32", f32(-1.5f)) == "-3/2");
  CHECK(val("F32", f32(1e-45f)) == "1/713623846352979940529142984724747568191373312");  // 2^-149, the smallest subnormal
  CHECK(val("F64", f64(0.1)) == "3602879701896397/36028797018963968");
  CHECK(val("F64", f64(-0.0)) == "0");
  CHECK(val("F64", f64(1e300)).size() == 301);
  {
    const SafetensorsFile f = SafetensorsFile::from_bytes(one("F64", "[1]", f64(4.9406564584124654e-324)));
    Rational two_1074(1);
    for (int i = 0; i < 1074; ++i) two_1074 *= Rational(2);
    CHECK(f.values(f.tensors()[0])[0] * two_1074 == Rational(1));
  }
  CHECK(val("F16", u16(0x3C00)) == "1");
  CHECK(val("F16", u16(0x0001)) == "1/16777216");  // 2^-24
  CHECK(val("F16", u16(0x7BFF)) == "65504");       // largest finite half
  CHECK(val("F16", u16(0xB555)) == "-1365/4096");
  CHECK(val("BF16", u16(0xC020)) == "-5/2");
  CHECK(val("BF16", u16(0x3DCD)) == "205/2048");  // bfloat16(0.1)
  CHECK(val("BF16", u16(0x3F80)) == "1");
}

TEST_CASE("a 2-head layer converts exactly; out_in and in_out layouts agree, and fused in_proj equals separate q, k, v") {
  const FactoredModel fm = safetensors_to_factored(SafetensorsFile::from_bytes(layer()), safetensors_map_from_json(parse_json_text(map2), "m"));
  REQUIRE(fm.d == 2);
  REQUIRE(fm.d_k == 1);
  REQUIRE(fm.d_out == 2);
  // out_in: q = [[1,2],[3,4]] (rows = outputs). Head 0 uses output 0: Q_0 = column (1, 2).
  CHECK(fm.heads[0].Q(0, 0) == Rational(1));
  CHECK(fm.heads[0].Q(1, 0) == Rational(2));
  CHECK(fm.heads[1].Q(0, 0) == Rational(3));
  CHECK(fm.heads[1].K(1, 0) == Rational(1, 4));
  // O = out^T: out = [[1,2],[-1,0.5]] -> O rows are out's columns; head 1's block is O row 1 = (2, 0.5).
  CHECK(fm.heads[1].O(0, 0) == Rational(2));
  CHECK(fm.heads[1].O(0, 1) == Rational(1, 2));
  CHECK(fm.readout[1] == Rational(-1, 2));
  // The written file reads back as the same model.
  const Model a = to_model(fm);
  const Model b = model_from_json_text(factored_to_json_text(fm));
  CHECK(a.heads[1].W == b.heads[1].W);
  CHECK(a.heads[0].v == b.heads[0].v);

  // The same layer stored in_out (transposed) with layout in_out.
  const std::string qT = f32s({1, 3, 2, 4}), kT = f32s({0.5f, 2, -1, 0.25f}), vT = f32s({1, 0, 0, 1}), oT = f32s({1, -1, 2, 0.5f});
  const std::string h = "{\"q\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},\"k\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[16,32]},"
                        "\"v\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[32,48]},\"o.weight\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[48,64]}}";
  std::string m_in_out = map2;
  m_in_out.replace(m_in_out.find("out_in"), 6, "in_out");
  const FactoredModel ft = safetensors_to_factored(SafetensorsFile::from_bytes(file(h, qT + kT + vT + oT)), safetensors_map_from_json(parse_json_text(m_in_out), "m"));
  const Model c = to_model(ft);
  for (int i = 0; i < 2; ++i) {
    CHECK(c.heads[static_cast<size_t>(i)].W == a.heads[static_cast<size_t>(i)].W);
    CHECK(c.heads[static_cast<size_t>(i)].v == a.heads[static_cast<size_t>(i)].v);
  }
  // Reading the out_in file as in_out gives a different model (a transposed-weights mistake shows).
  const Model wrong = to_model(safetensors_to_factored(SafetensorsFile::from_bytes(layer()), safetensors_map_from_json(parse_json_text(m_in_out), "m")));
  CHECK_FALSE(wrong.heads[0].W == a.heads[0].W);

  // Fused in_proj (q; k; v stacked as rows, torch's in_proj_weight), in F64.
  std::string fused;
  for (double x : {1.0, 2.0, 3.0, 4.0, 0.5, -1.0, 2.0, 0.25, 1.0, 0.0, 0.0, 1.0}) fused += f64(x);
  std::string o64;
  for (double x : {1.0, 2.0, -1.0, 0.5}) o64 += f64(x);
  const std::string hf = "{\"in_proj_weight\":{\"dtype\":\"F64\",\"shape\":[6,2],\"data_offsets\":[0,96]},"
                         "\"out_proj.weight\":{\"dtype\":\"F64\",\"shape\":[2,2],\"data_offsets\":[96,128]},\"__metadata__\":{\"format\":\"pt\"}}";
  const std::string mf =
      R"({"format":"mhaq-safetensors-map","heads":2,"layout":"out_in","in_proj":"in_proj_weight","out":"out_proj.weight","readout":["1","-1/2"],"scale":"1"})";
  const Model d = to_model(safetensors_to_factored(SafetensorsFile::from_bytes(file(hf, fused + o64)), safetensors_map_from_json(parse_json_text(mf), "m")));
  for (int i = 0; i < 2; ++i) {
    CHECK(d.heads[static_cast<size_t>(i)].W == a.heads[static_cast<size_t>(i)].W);
    CHECK(d.heads[static_cast<size_t>(i)].v == a.heads[static_cast<size_t>(i)].v);
  }
}

TEST_CASE("scales: 1/sqrt(d_k) for any d_k, kept as q sqrt(m)") {
  CHECK(map_scale("1/sqrt(d_k)", 4, "m").str() == "1/2");
  CHECK(map_scale("1/sqrt(d_k)", 16, "m").str() == "1/4");
  CHECK(map_scale("1/sqrt(9/4)", 3, "m").str() == "2/3");
  CHECK(map_scale("3/8", 3, "m").str() == "3/8");
  CHECK(map_scale("0.125", 3, "m").str() == "1/8");
  const Surd s8 = map_scale("1/sqrt(d_k)", 8, "m");  // 1/(2 sqrt 2) = sqrt(2)/4
  CHECK(s8.q == Rational(1, 4));
  CHECK(s8.m == 2);
  CHECK(map_scale("1 / sqrt( d_k )", 128, "m").str() == "sqrt(2)/16");
  CHECK(map_scale("1/sqrt(2)", 8, "m").str() == "sqrt(2)/2");
  for (const char* bad : {"1/sqrt(-4)", "x", "1/sqrt(d_q)", "sqrt(d_k", "1/sqrt(0)"}) {
    INFO(std::string(bad));
    const auto e = test::error_of([&] { (void)map_scale(bad, 8, "m"); });
    INFO(e.second);
    CHECK(e.first == static_cast<int>(ErrorKind::input));
    CHECK(e.second.find(bad) != std::string::npos);  // the message quotes the scale as written
  }
}

TEST_CASE("malformed safetensors files: each an input error naming the problem") {
  const std::string ok_entry = R"("x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  std::string big_header = le64(static_cast<std::uint64_t>(limits::max_safetensors_header) + 1) + "{}";
  std::string rank9 = one("F32", "[1,1,1,1,1,1,1,1,1]", f32(1));
  std::string many = one("F16", "[" + std::to_string(limits::max_file_entries + 1) + "]", std::string(static_cast<size_t>(2 * (limits::max_file_entries + 1)), '\0'));
  const std::vector<Case> cases{
      {"fewer than 8 bytes", std::string("\x05\x00\x00", 3), "", "fewer than the 8-byte header length"},
      {"header length past the end of the file", le64(100) + "{}", "", "runs past the end of the file"},
      {"header length beyond the limit", big_header, "", "more than the limit of 16777216 bytes"},
      {"header not JSON", file("{\"x\": [1,"), "", "not valid JSON"},
      {"header not an object", file("[1, 2]"), "", "must be a JSON object"},
      {"tensor entry not an object", file("{\"x\": 3}"), "", "expected {\"dtype\""},
      {"unknown field in a tensor entry", file(R"({"x":{"dtype":"F32","shape":[0],"data_offsets":[0,0],"strides":[1]}})"), "", "unknown field \"strides\""},
      {"missing data_offsets", file(R"({"x":{"dtype":"F32","shape":[0]}})"), "", "missing \"data_offsets\""},
      {"unknown dtype", one("F128", "[1]", f32(1) + f32(1) + f32(1) + f32(1)), "", "unknown dtype \"F128\""},
      {"reading an I32 tensor's values", one("I32", "[1]", f32(1)), "", "has dtype \"I32\"; mhaq reads weights of dtype F64, F32, F16 or BF16"},
      {"negative dimension", one("F32", "[-1]", f32(1)), "", "shape[0]: must be in [0, "},
      {"rank above the limit", rank9, "", "rank 9, more than the limit of 8"},
      {"range past the end of the file", file("{" + ok_entry + "}", f32(1)), "", "past the end of the file"},
      {"range that ends before it begins", file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", f32(1)), "", "end before they begin"},
      {"shape not matching the byte count", file(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", f32(1) + f32(2)), "", "needs 12 bytes"},
      {"shape whose product overflows", file(R"({"x":{"dtype":"F32","shape":[4611686018427387904,4611686018427387904],"data_offsets":[0,4]}})", f32(1)), "",
       "more than 2^80"},
      {"overlapping ranges", file(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", f32(1) + f32(2)),
       "", "overlap"},
      {"a hole in the buffer", file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", f32(1) + f32(2)), "", "(a hole before \"x\")"},
      {"bytes after the last tensor", file("{" + ok_entry + "}", f32(1) + f32(2) + f32(3)), "", "after the last tensor"},
      {"duplicate tensor names", file("{" + ok_entry + "," + ok_entry + "}", f32(1) + f32(2)), "", "duplicate key \"x\""},
      {"metadata not strings", file(R"({"__metadata__":{"a":1}})"), "", "__metadata__.a must be a string"},
      {"NaN in F32", one("F32", "[2]", f32(1) + std::string("\x00\x00\xc0\x7f", 4)), "", "element [1] (file byte 66) is NaN"},
      {"+inf in F16", one("F16", "[1,2]", u16(0x3C00) + u16(0x7C00)), "", "element [0][1] (file byte 66) is +infinity"},
      {"-inf in BF16", one("BF16", "[1]", u16(0xFF80)), "", "is -infinity"},
      {"NaN in F64", one("F64", "[1]", std::string("\x01\x00\x00\x00\x00\x00\xf0\x7f", 8)), "", "is NaN"},
      {"too many elements (checked before reading)", many, "", "more than the limit of 1048576 entries"},
      {"missing tensor named in the map", layer(), std::string(map2).replace(map2.find("\"k\":\"k\""), 7, "\"k\":\"key\""), "no tensor \"key\" (named in map.json)"},
      {"an unknown bias key in the map", layer(), std::string(map2).replace(map2.find("\"scale\""), 7, "\"bias\":\"o\",\"scale\""), "unknown field \"bias\""},
      {"a nonzero bias next to a mapped tensor, not named", layer(R"(,"o.bias":{"dtype":"F32","shape":[2],"data_offsets":[64,72]})", f32s({1, 0})), map2,
       "tensor \"o.bias\" next to the mapped tensor \"o.weight\" is a bias that map.json does not name; without it the layer would be another one: "
       "add \"out_bias\": \"o.bias\" to the map"},
      {"wrong rank", layer(R"(,"r":{"dtype":"F32","shape":[2],"data_offsets":[64,72]})", f32s({1, 1})),
       std::string(map2).replace(map2.find("\"v\":\"v\""), 7, "\"v\":\"r\""), "expected a matrix (rank 2)"},
      {"q and k shapes differ", layer(R"(,"k2":{"dtype":"F32","shape":[1,2],"data_offsets":[64,72]})", f32s({1, 1})),
       std::string(map2).replace(map2.find("\"k\":\"k\""), 7, "\"k\":\"k2\""), "q and k must have equal shapes"},
      {"heads that do not divide", layer(), std::string(map2).replace(map2.find("\"heads\":2"), 9, "\"heads\":3"), "3 heads do not divide the projections"},
      {"readout of the wrong length", layer(), std::string(map2).replace(map2.find("[\"1\",\"-1/2\"]"), 12, "[\"1\"]"), "map.json: readout: 1 entries; expected d_out = 2"},
      {"irrational scale in a transformer", layer(R"(,"f":{"dtype":"F32","shape":[3,2],"data_offsets":[64,88]})", f32s({1, 2, 3, 4, 5, 6})),
       std::string(map2).replace(map2.find("[\"1\",\"-1/2\"],\"scale\":\"1\""), 24, "[\"1\",\"-1\",\"1/2\"],\"ffn\":\"f\",\"scale\":\"1/sqrt(3)\""),
       "is irrational; mhaq's one-layer transformer needs a rational scale"},
      {"biases in a transformer", layer(R"(,"f":{"dtype":"F32","shape":[3,2],"data_offsets":[64,88]},"o.bias":{"dtype":"F32","shape":[2],"data_offsets":[88,96]})",
                                        f32s({1, 2, 3, 4, 5, 6, 1, 1})),
       std::string(map2).replace(map2.find("[\"1\",\"-1/2\"],\"scale\":\"1\""), 24, "[\"1\",\"-1\",\"1/2\"],\"ffn\":\"f\",\"out_bias\":\"o.bias\",\"scale\":\"1\""),
       "one-layer transformer is bias-free"},
      {"unknown layout", layer(), std::string(map2).replace(map2.find("out_in"), 6, "columns"), "layout: must be \"out_in\""},
      {"ffn whose in dimension is not d_out", layer(R"(,"f":{"dtype":"F32","shape":[2,3],"data_offsets":[64,88]})", f32s({1, 2, 3, 4, 5, 6})),
       std::string(map2).replace(map2.find("\"scale\""), 7, "\"ffn\":\"f\",\"scale\""), "must be the output projection's d_out = 2"},
      {"d beyond max_d", one("F32", "[1,65]", std::string(260, '\0')),
       R"({"format":"mhaq-safetensors-map","heads":1,"layout":"out_in","q":"x","k":"x","v":"x","out":"x","readout":["1"],"scale":"1"})",
       "token dimension d = 65 (the projections' in dimension) is more than the limit max_d = 64"},
  };
  CHECK(cases.size() >= 15);
  check_cases(cases);
}

TEST_CASE("the format's framing and whole checkpoints: padding, byte order marks, exact byte counts, other dtypes, the map's new keys") {
  const std::string ok_entry = R"("x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const std::string two = f32(1) + f32(2);
  // an I64 tensor, a BOOL mask and a U8 table next to the layer, none named in the map
  const std::string others = R"(,"position_ids":{"dtype":"I64","shape":[1,3],"data_offsets":[64,88]},)"
                             R"("mask":{"dtype":"BOOL","shape":[3],"data_offsets":[88,91]},"table":{"dtype":"U8","shape":[1],"data_offsets":[91,92]})";
  const std::string other_data = std::string(24, '\x01') + std::string("\x01\x00\x01", 3) + std::string(1, '\x07');
  auto with = [](const std::string& key_value) { return std::string(map2).replace(map2.find("\"scale\""), 7, key_value + ",\"scale\""); };
  const std::vector<Case> cases{
      {"a byte count past 2^64, exact in the message", file(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", two), "",
       "needs 73786976294838206464 bytes"},
      {"an I64 byte count past 2^64", file(R"({"x":{"dtype":"I64","shape":[4294967296,4294967297],"data_offsets":[0,8]}})", two), "",
       "needs 147573952624036151296 bytes"},
      {"NUL padding after the header", le64(std::string("{" + ok_entry + "}").size() + 3) + "{" + ok_entry + "}" + std::string(3, '\0') + two, "",
       "after the JSON object is 0x00; the format pads the header with spaces (0x20) only"},
      {"a newline after the header", le64(std::string("{" + ok_entry + "}").size() + 3) + "{" + ok_entry + "}  \n" + two, "",
       "after the JSON object is 0x0a"},
      {"a byte order mark before the header", le64(std::string("{" + ok_entry + "}").size() + 3) + "\xEF\xBB\xBF{" + ok_entry + "}" + two, "",
       "begins with a UTF-8 byte order mark"},
      {"a space before the header", le64(std::string("{" + ok_entry + "}").size() + 1) + " {" + ok_entry + "}" + two, "",
       "beginning with '{' at byte 8, got byte 0x20"},
      {"an empty header", le64(0), "", "header (bytes 8..8): empty"},
      {"an unmapped I64 tensor whose byte count is wrong", file(R"({"p":{"dtype":"I64","shape":[3],"data_offsets":[0,8]}})", std::string(8, '\0')), "",
       "shape [3] of I64 needs 24 bytes"},
      {"F4 elements that do not fill whole bytes", file(R"({"p":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", std::string(2, '\0')), "",
       "holds 12 bits, not a whole number of bytes"},
      {"a map naming an I64 tensor as q", layer(others, other_data), std::string(map2).replace(map2.find("\"q\":\"q\""), 7, "\"q\":\"position_ids\""),
       "tensor \"position_ids\" (q, named in map.json) has dtype \"I64\"; weights must be F64, F32, F16 or BF16"},
      {"a map naming a missing out bias", layer(), with(R"("out_bias":"o.bias")"), "no tensor \"o.bias\" (named in map.json)"},
      {"a map naming missing q, k, v biases", layer(), with(R"("q_bias":"q.bias","k_bias":"k.bias","v_bias":"v.bias")"), "no tensor \"q.bias\" (named in map.json)"},
      {"in_proj_bias with separate q, k, v", layer(), with(R"("in_proj_bias":"b")"), "in_proj_bias goes with a fused in_proj"},
      {"kv_heads that do not divide heads", layer(), with(R"("kv_heads":3)"), "kv_heads: must be in [1, 2], got 3"},
      {"a rope pairing nobody uses", layer(), with(R"("rope":{"theta":"10000","pairing":"odd"})"), "rope.pairing: must be \"half\""},
      {"a rope base of 1", layer(), with(R"("rope":{"theta":"1","pairing":"half"})"), "rope.theta: must be more than 1"},
      {"convert without a readout", layer(), std::string(map2).replace(map2.find(",\"readout\""), std::string(",\"readout\":[\"1\",\"-1/2\"]").size(), ""), "map.json: names no readout"},
  };
  CHECK(cases.size() >= 10);
  check_cases(cases);
  // Trailing spaces are the format's own padding; tensors of other dtypes are
  // read as headers and skipped; a bias next to a mapped tensor is used only
  // when the map names it, and reported otherwise.
  {
    const std::string h = "{" + ok_entry + "}";
    const SafetensorsFile f = SafetensorsFile::from_bytes(le64(h.size() + 5) + h + "     " + two);
    CHECK(f.values(f.tensors().at(0)).at(1) == Rational(2));
  }
  const SafetensorsFile f =
      SafetensorsFile::from_bytes(layer(others + R"(,"o.bias":{"dtype":"F32","shape":[2],"data_offsets":[92,100]},"bias":{"dtype":"F32","shape":[1],"data_offsets":[100,104]})",
                                        other_data + f32s({0, 0}) + f32(3)));
  CHECK(f.tensors().size() == 9);
  CHECK(!f.find("position_ids")->readable);
  CHECK(f.find("position_ids")->dtype_text == "I64");
  const SafetensorsMap m = safetensors_map_from_json(parse_json_text(map2), "map.json");
  const FactoredModel fm = safetensors_to_factored(f, m);
  CHECK(fm.heads.size() == 2);
  CHECK(unnamed_biases(f, m) == std::vector<std::string>{"o.bias"});  // "bias" sits next to no mapped tensor
  const SafetensorsMap mb = safetensors_map_from_json(parse_json_text(with(R"("out_bias":"o.bias")")), "map.json");
  CHECK(mb.out_bias == "o.bias");
  CHECK(unnamed_biases(f, mb).empty());
  const std::string rope = with(R"("kv_heads":1,"rope":{"theta":"500000","pairing":"interleaved"})");
  const SafetensorsMap mr = safetensors_map_from_json(parse_json_text(rope), "map.json");
  CHECK((mr.kv_heads == 1 && mr.rope && mr.rope_interleaved && mr.rope_theta == Rational(500000)));
}

TEST_CASE("convert --safetensors: exit 3 on a malformed file, a factored model file on a good one") {
  const std::string dir = "test_safetensors_tmp";
  (void)std::system(("mkdir -p " + dir).c_str());
  auto put = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
    return dir + "/" + name;
  };
  const std::string map = put("map.json", map2);
  const std::string good = put("good.safetensors", layer());
  const std::string bad = put("bad.safetensors", le64(1000) + "{}");
  const std::string bin = MHAQ_BINARY;
  auto r = test::run(bin + " convert --safetensors " + bad + " --map " + map + " 2>&1");
  CHECK(r.code == 3);
  CHECK(r.out.find("runs past the end of the file") != std::string::npos);
  r = test::run(bin + " convert --safetensors " + good + " --map " + map + " -o " + dir + "/out.json 2>&1");
  CHECK(r.code == 0);
  r = test::run(bin + " convert --model " + dir + "/out.json 2>/dev/null");
  CHECK(r.code == 0);
  CHECK(r.out.find("\"format\": \"mhaq-model\"") != std::string::npos);
  r = test::run(bin + " convert --safetensors " + good + " 2>&1");
  CHECK(r.code == 2);
  r = test::run(bin + " convert --safetensors " + good + " --map " + dir + "/nonexistent.json 2>&1");
  CHECK(r.code == 3);
  // every message about the map names its file: invalid JSON, a duplicate key, a wrong field
  for (const std::string& text : {std::string("{\"format\": "), std::string(R"({"heads": 2, "heads": 3})"), std::string(R"({"format": "other"})")}) {
    const std::string bad_map = put("bad_map.json", text);
    r = test::run(bin + " convert --safetensors " + good + " --map " + bad_map + " 2>&1");
    INFO(r.out);
    CHECK(r.code == 3);
    CHECK(r.out.find("bad_map.json") != std::string::npos);
  }
  // an all-zero bias next to the layer that the map does not name is reported as not used
  const std::string biased = put("biased.safetensors", layer(R"(,"o.bias":{"dtype":"F32","shape":[2],"data_offsets":[64,72]})", f32s({0, 0})));
  r = test::run(bin + " convert --safetensors " + biased + " --map " + map + " -o " + dir + "/out2.json 2>&1");
  CHECK(r.code == 0);
  CHECK(r.out.find("not used         o.bias: all-zero biases next to a mapped tensor that the map does not name") != std::string::npos);
}

TEST_CASE("certified answers: correctly rounded decimals, rational cases exact, zero and ties end in unable") {
  auto model = [](std::vector<std::pair<long, Rational>> heads) {  // d = 1: (W, v) per head
    Model m;
    m.d = 1;
    for (auto& [w, v] : heads) {
      HeadQ h{QMat(1, 1), QVec{v}};
      h.W(0, 0) = Rational(w);
      m.heads.push_back(h);
    }
    return m;
  };
  auto query = [](std::vector<Rational> xs) {
    Query q;
    for (auto& x : xs) q.push_back(Run{QVec{x}, 1});
    return q;
  };
  // f = e / (1 + e) for W = 1, v = 1 on the tokens 0, 1 (mpmath: 0.731058578630004879251159241821836...)
  const CertifiedValue a = certified_answer(model({{1, Rational(1)}}), query({Rational(0), Rational(1)}), 30, 1 << 14);
  CHECK(a.decimal == "7.31058578630004879251159241822e-01");
  CHECK(a.bits == certified_start_bits(30));
  CHECK_FALSE(a.rational);
  // scores 3 and 18, values -1/2 and -3 (mpmath: -2.999999235244432685938187133043914...)
  const CertifiedValue b = certified_answer(model({{2, Rational(-1)}}), query({Rational(1, 2), Rational(3)}), 30, 1 << 14);
  CHECK(b.decimal == "-2.99999923524443268593818713304e+00");
  // equal scores: the mean of the values, exactly; 1/8 at 2 digits is a tie that rounds to even
  const CertifiedValue c = certified_answer(model({{0, Rational(1)}}), query({Rational(1, 4), Rational(0)}), 2, 1 << 14);
  CHECK(c.rational);
  CHECK(c.bits == 0);
  CHECK(c.decimal == "1.2e-01");
  CHECK(c.mid == "1/8");
  // two heads that cancel: f = 0 but no ball decides it -> unable at the cap
  try {
    (void)certified_answer(model({{1, Rational(1)}, {1, Rational(-1)}}), query({Rational(0), Rational(1)}), 10, 512);
    FAIL("a zero value was decided by a ball");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::unable);
  }
}

TEST_CASE("a map with an FFN writes a factored transformer file: U_{h,j} = V_h O_h ffn[:, j], exactly") {
  // ffn (out_in, m = 3 neurons x d_out = 2); readout inline, one entry per neuron
  const std::string bytes = layer(R"(,"f":{"dtype":"F32","shape":[3,2],"data_offsets":[64,88]})", f32s({1, -2, 0.5f, 3, 0, 1}));
  std::string map = map2;
  map.replace(map.find("[\"1\",\"-1/2\"]"), 12, "[\"1\",\"-1\",\"1/2\"],\"ffn\":\"f\"");
  QMat ffn;
  const FactoredModel fm = safetensors_to_factored(SafetensorsFile::from_bytes(bytes), safetensors_map_from_json(parse_json_text(map), "m"), &ffn);
  REQUIRE(ffn.rows() == 2);
  REQUIRE(ffn.cols() == 3);
  CHECK(ffn(1, 0) == Rational(-2));  // ffn[:, j] is row j of the stored (m x d_out) tensor
  CHECK(ffn(0, 1) == Rational(1, 2));
  const TransformerModel t = transformer_from_json_text(factored_transformer_to_json_text(fm, ffn));
  REQUIRE(t.heads() == 2);
  REQUIRE(t.neurons() == 3);
  for (int h = 0; h < 2; ++h) {
    const FactoredHead& fh = fm.heads[static_cast<size_t>(h)];
    CHECK(t.W[static_cast<size_t>(h)](1, 0) == fm.scale.q * fh.K(1, 0) * fh.Q(0, 0));  // W_h = scale K_h Q_h^T, d_k = 1
    for (int j = 0; j < 3; ++j) {
      const QVec Uhj = matvec(fm.heads[static_cast<size_t>(h)].V, matvec(fm.heads[static_cast<size_t>(h)].O, ffn.col(j)));
      CHECK(t.U[static_cast<size_t>(h)][static_cast<size_t>(j)] == Uhj);
    }
  }
  CHECK(t.u[2] == Rational(1, 2));
  // without a place for the FFN the conversion refuses (a programming error, not an input error)
  try {
    (void)safetensors_to_factored(SafetensorsFile::from_bytes(bytes), safetensors_map_from_json(parse_json_text(map), "m"));
    FAIL("converted an FFN without returning it");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::internal);
  }
}

TEST_CASE("biases the map names: q, k, v (or a fused in_proj_bias) and out convert exactly to c_h and beta; all-zero biases are none") {
  // layer(): q = [[1,2],[3,4]], k = [[1/2,-1],[2,1/4]], v = I, out = [[1,2],[-1,1/2]] (out_in), u = (1, -1/2), scale 1, d_k = d_v = 1
  const std::string bh = R"(,"q.bias":{"dtype":"F32","shape":[2],"data_offsets":[64,72]},"k.bias":{"dtype":"F32","shape":[2],"data_offsets":[72,80]},)"
                         R"("v.bias":{"dtype":"F32","shape":[2],"data_offsets":[80,88]},"o.bias":{"dtype":"F32","shape":[2],"data_offsets":[88,96]})";
  const std::string named = std::string(map2).replace(map2.find("\"scale\""), 7,
                                                      R"("q_bias":"q.bias","k_bias":"k.bias","v_bias":"v.bias","out_bias":"o.bias","scale")");
  auto convert = [](const std::string& bytes, const std::string& map) {
    return safetensors_to_factored(SafetensorsFile::from_bytes(bytes), safetensors_map_from_json(parse_json_text(map), "m"));
  };
  const FactoredModel fm = convert(layer(bh, f32s({1, -2, 3, 5, 0.5f, 4, 2, 1})), named);
  CHECK(fm.heads[1].q_bias == QVec{Rational(-2)});
  CHECK(fm.out_bias == QVec{Rational(2), Rational(1)});
  // c_h = K_h b_q,h: K_0 = (1/2, -1), K_1 = (2, 1/4); beta = 1/2 (O_0 u = 3/2) + 4 (O_1 u = 7/4) + (2, 1) . u = 37/4
  const Model m = to_model(fm);
  CHECK(m.heads[0].c == QVec{Rational(1, 2), Rational(-1)});
  CHECK(m.heads[1].c == QVec{Rational(-4), Rational(-1, 2)});
  CHECK(m.beta == Rational(37, 4));
  const Model back = model_from_json_text(factored_to_json_text(fm));  // the written file keeps them
  CHECK(back.heads[1].c == m.heads[1].c);
  CHECK(back.beta == m.beta);
  // the same biases fused, torch's in_proj_bias (q; k; v) and out_proj.bias, in F64
  std::string fused, o64, b64;
  for (double x : {1.0, 2.0, 3.0, 4.0, 0.5, -1.0, 2.0, 0.25, 1.0, 0.0, 0.0, 1.0}) fused += f64(x);
  for (double x : {1.0, 2.0, -1.0, 0.5}) o64 += f64(x);
  for (double x : {1.0, -2.0, 3.0, 5.0, 0.5, 4.0, 2.0, 1.0}) b64 += f64(x);
  const std::string hf = "{\"in_proj_weight\":{\"dtype\":\"F64\",\"shape\":[6,2],\"data_offsets\":[0,96]},"
                         "\"out_proj.weight\":{\"dtype\":\"F64\",\"shape\":[2,2],\"data_offsets\":[96,128]},"
                         "\"in_proj_bias\":{\"dtype\":\"F64\",\"shape\":[6],\"data_offsets\":[128,176]},"
                         "\"out_proj.bias\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[176,192]}}";
  const std::string mf = R"({"format":"mhaq-safetensors-map","heads":2,"layout":"out_in","in_proj":"in_proj_weight","in_proj_bias":"in_proj_bias",)"
                         R"("out":"out_proj.weight","out_bias":"out_proj.bias","readout":["1","-1/2"],"scale":"1"})";
  const Model mfused = to_model(convert(file(hf, fused + o64 + b64), mf));
  for (size_t h = 0; h < 2; ++h) {
    CHECK(mfused.heads[h].W == m.heads[h].W);
    CHECK(mfused.heads[h].c == m.heads[h].c);
  }
  CHECK(mfused.beta == m.beta);
  // the split order applies to the bias as to the weight: k; q; v read as q; k; v differs
  const Model swapped = to_model(convert(file(hf, fused + o64 + b64), std::string(mf).replace(mf.find("\"scale\""), 7, R"("in_proj_split":["k","q","v"],"scale")")));
  CHECK_FALSE(swapped.heads[0].c == m.heads[0].c);
  // all-zero biases are no biases: the same file as without them
  const FactoredModel zero = convert(layer(bh, f32s({0, 0, 0, 0, 0, 0, 0, 0})), named);
  CHECK_FALSE(zero.has_bias());
  CHECK(factored_to_json_text(zero) == factored_to_json_text(convert(layer(), map2)));
  // errors name the bias
  CHECK(input_error(layer(bh, f32s({1, -2, 3, 5, 0.5f, 4, 2, 1})), std::string(map2).replace(map2.find("\"scale\""), 7, R"("in_proj_bias":"q.bias","scale")"))
            .find("in_proj_bias goes with a fused in_proj") != std::string::npos);
  CHECK(input_error(layer(bh, f32s({1, -2, 3, 5, 0.5f, 4, 2, 1})), std::string(named).replace(named.find(R"("k_bias":"k.bias",)"), 18, ""))
            .find("tensor \"k.bias\" next to the mapped tensor \"k\" is a bias that map.json does not name") != std::string::npos);
  const std::string wide = R"(,"q.bias":{"dtype":"F32","shape":[3],"data_offsets":[64,76]})";
  CHECK(input_error(layer(wide, f32s({1, 2, 3})), std::string(map2).replace(map2.find("\"scale\""), 7, R"("q_bias":"q.bias","scale")"))
            .find("(q_bias) has shape [3]; expected a vector of 2 entries") != std::string::npos);
  const std::string kv = R"(,"bias_k":{"dtype":"F32","shape":[2],"data_offsets":[64,72]})";
  CHECK(input_error(layer(kv, f32s({1, 2})), map2).find("add_bias_kv") != std::string::npos);
  CHECK(input_error(layer(), std::string(map2).replace(map2.find("\"scale\""), 7, R"("b_out":"o","scale")")).find("unknown field \"b_out\"") != std::string::npos);
}

TEST_CASE("one rule for a bias the map does not name, in convert and in golden kernel: used when named, refused when nonzero, skipped when zero") {
  const std::string ob = R"(,"o.bias":{"dtype":"F32","shape":[2],"data_offsets":[64,72]})";
  const SafetensorsMap m = safetensors_map_from_json(parse_json_text(map2), "map.json");
  const SafetensorsMap named = safetensors_map_from_json(parse_json_text(std::string(map2).replace(map2.find("\"scale\""), 7, R"("out_bias":"o.bias","scale")")), "map.json");
  const SafetensorsFile nonzero = SafetensorsFile::from_bytes(layer(ob, f32s({0, 1.5f})), "t.safetensors");
  const SafetensorsFile zero = SafetensorsFile::from_bytes(layer(ob, f32s({0, 0})), "t.safetensors");
  const std::string want = "tensor \"o.bias\" next to the mapped tensor \"o.weight\" is a bias that map.json does not name";
  for (const auto& run : {std::function<void()>([&] { (void)safetensors_to_factored(nonzero, m); }), std::function<void()>([&] { (void)safetensors_to_kernel(nonzero, m); })}) {
    const auto failure = test::error_of(run);  // named values: INFO's lambda captures msg (clang 14)
    const int kind = failure.first;
    const std::string msg = failure.second;
    INFO(msg);
    CHECK(kind == static_cast<int>(ErrorKind::input));
    CHECK(msg.find(want) != std::string::npos);
    CHECK(msg.find("add \"out_bias\": \"o.bias\" to the map") != std::string::npos);
  }
  // named: both paths use it
  CHECK(safetensors_to_factored(nonzero, named).out_bias == QVec{Rational(0), Rational(3, 2)});
  CHECK(safetensors_to_kernel(nonzero, named).bo == QVec{Rational(0), Rational(3, 2)});
  // all zero and unnamed: the same layer as without it, in both paths
  CHECK(factored_to_json_text(safetensors_to_factored(zero, m)) == factored_to_json_text(safetensors_to_factored(SafetensorsFile::from_bytes(layer()), m)));
  CHECK(safetensors_to_kernel(zero, m).bo.empty());
  CHECK(unnamed_biases(zero, m) == std::vector<std::string>{"o.bias"});
  // torch's add_bias_kv: refused in both, zero or not
  const std::string kv = R"(,"bias_k":{"dtype":"F32","shape":[2],"data_offsets":[64,72]})";
  const SafetensorsFile with_kv = SafetensorsFile::from_bytes(layer(kv, f32s({0, 0})), "t.safetensors");
  CHECK(test::error_of([&] { (void)safetensors_to_kernel(with_kv, m); }).second.find("add_bias_kv") != std::string::npos);
  CHECK(test::error_of([&] { (void)safetensors_to_factored(with_kv, m); }).second.find("add_bias_kv") != std::string::npos);
}

TEST_CASE("an irrational scale converts as q sqrt(m), written and read back exactly") {
  const std::string one_head = std::string(map2).replace(map2.find("\"heads\":2"), 9, "\"heads\":1").replace(map2.find("\"scale\":\"1\""), 11, "\"scale\":\"1/sqrt(d_k)\"");
  const FactoredModel fm = safetensors_to_factored(SafetensorsFile::from_bytes(layer()), safetensors_map_from_json(parse_json_text(one_head), "m"));
  REQUIRE(fm.d_k == 2);
  CHECK(fm.scale.str() == "sqrt(2)/2");
  const Model m = model_from_json_text(factored_to_json_text(fm));
  CHECK(m.root == 2);
  CHECK(m.heads[0].W == to_model(fm).heads[0].W);  // W holds the rational part 1/2
}

TEST_CASE("golden export --certified: a --digits no --max-bits reaches, and a failed learner run, each say what to do") {
  const std::string bin = MHAQ_BINARY;
  const std::string model = std::string(MHAQ_SOURCE_DIR) + "/tests/data/factored_example.json";
  auto r = test::run(bin + " golden export --certified --model " + model + " --digits 5000 2>&1");
  CHECK(r.code == 2);
  CHECK(r.out.find("give --max-bits 16714 or more, or --digits 4901 or fewer") != std::string::npos);
  r = test::run(bin + " golden export --certified --model " + model + " --digits 30000 --max-bits 65536 2>&1");
  CHECK(r.code == 2);
  CHECK(r.out.find("no --max-bits reaches it (the limit is 65536); give --digits 19661 or fewer") != std::string::npos);
  // the largest --digits the limit allows is accepted (then each answer starts at 65536 bits)
  check_digits_within_bits(19661, limits::max_bits);
  CHECK_THROWS_AS(check_digits_within_bits(19662, limits::max_bits), Error);
  // the learner told four heads of a two-head model cannot fit its pairs: the message names --no-learner
  r = test::run(bin + " golden export --certified --model " + model + " --heads 4 -o never_written.json 2>&1");
  CHECK(r.code == 5);
  CHECK(r.out.find("the learner's ball run: ") != std::string::npos);
  CHECK(r.out.find("--no-learner --inputs FILE") != std::string::npos);
  CHECK(!std::ifstream("never_written.json").good());
}

TEST_CASE("certified golden files are checked as a stream: the same verdicts from the file and from memory, any key order") {
  CertifiedGoldenInputs in;
  in.model.d = 2;
  for (int h = 0; h < 2; ++h) {
    HeadQ head{QMat(2, 2), QVec{Rational(1 + h), Rational(-1, 2)}};
    head.W(0, 0) = Rational(1, 2 + h), head.W(1, 0) = Rational(-1), head.W(0, 1) = Rational(1, 4), head.W(1, 1) = Rational(h);
    in.model.heads.push_back(head);
  }
  in.learner = true;
  in.bits = 128;
  in.digits = 25;
  for (int k = 0; k < 4; ++k) {
    Query q;
    for (int t = 0; t <= k; ++t) q.push_back(Run{QVec{Rational(t - k, 3), Rational(k + 1, 2)}, 1});
    in.user.push_back(q);
  }
  const std::string text = golden_export_certified(in);
  const std::string path = "test_certified_stream.json";
  std::ofstream(path) << text;
  const GoldenCheckResult from_file = golden_check_certified_file(path, 1);
  INFO((from_file.mismatches.empty() ? std::string() : from_file.mismatches[0]));
  CHECK(from_file.ok());
  const GoldenCheckResult from_text = golden_check(text, 1);  // parsed whole: keys in sorted order
  CHECK(from_text.ok());
  CHECK(from_file.fields_checked == from_text.fields_checked);
  CHECK(from_file.fields_checked > 100);
  // a changed answer digit, a changed user token, a summary count: rejected from the file, by path
  auto tampered = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.rfind(from);
    REQUIRE(at != std::string::npos);
    t.replace(at, from.size(), to);
    std::ofstream(path) << t;
    const GoldenCheckResult r = golden_check_certified_file(path, 1);
    CHECK(!r.ok());
    std::string all;
    for (const auto& m : r.mismatches) all += m + "\n";
    return all;
  };
  const nlohmann::json doc = nlohmann::json::parse(text);
  const std::string last = doc["answers"].back()["decimal"];
  std::string changed = last;
  changed[changed.find('e') - 1] = changed[changed.find('e') - 1] == '9' ? '8' : static_cast<char>(changed[changed.find('e') - 1] + 1);
  CHECK(tampered("\"" + last + "\"", "\"" + changed + "\"").find("answers[") != std::string::npos);
  {  // a user's token changed: its recorded answer no longer fits it, for the re-derivation and for the checker
    const std::string m = tampered("\"3/2\"]", "\"7/3\"]");
    INFO(m);
    CHECK(m.find("answers[31].decimal: file has") != std::string::npos);
    CHECK(m.find("the checker's evaluator gives") != std::string::npos);
  }
  const std::string count = text.find("\"user_queries\":4") != std::string::npos ? "\"user_queries\":4" : "\"user_queries\": 4";
  CHECK(tampered(count, count.substr(0, count.size() - 1) + "5").find("user_queries") != std::string::npos);
  std::remove(path.c_str());
}
