#include "mhaq/model/model.hpp"

#include <flint/fmpz.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mhaq/base/error.hpp"
#include "mhaq/model/factored.hpp"
#include "mhaq/base/random.hpp"

namespace mhaq {

Model Model::canonical() const {
  Model out;
  out.d = d;
  for (const auto& h : heads) {
    bool merged = false;
    for (auto& g : out.heads)
      if (g.W == h.W) { g.v = g.v + h.v; merged = true; break; }
    if (!merged) out.heads.push_back(h);
  }
  std::vector<HeadQ> kept;
  for (auto& g : out.heads) {
    bool zero = true;
    for (const auto& x : g.v) zero = zero && x.is_zero();
    if (!zero) kept.push_back(std::move(g));
  }
  out.heads = std::move(kept);
  return out;
}

long Model::w_denominator() const {
  fmpz_t l;
  fmpz_init_set_ui(l, 1);
  for (const auto& h : heads)
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) fmpz_lcm(l, l, fmpq_denref(h.W(i, j).raw()));
  if (!fmpz_fits_si(l)) { fmpz_clear(l); throw_input("W denominators too large for the exact oracle"); }
  const long out = fmpz_get_si(l);
  fmpz_clear(l);
  return out;
}

void Model::validate() const {
  if (d < 1 || d > 64) throw_input("model dimension d must be in [1, 64], got " + std::to_string(d));
  if (heads.empty()) throw_input("model has no heads");
  for (size_t h = 0; h < heads.size(); ++h) {
    if (heads[h].W.rows() != d || heads[h].W.cols() != d) throw_input("head " + std::to_string(h) + ": W is not " + std::to_string(d) + "x" + std::to_string(d));
    if (static_cast<int>(heads[h].v.size()) != d) throw_input("head " + std::to_string(h) + ": v does not have length " + std::to_string(d));
  }
}

using nlohmann::json;

Rational rational_from_json(const json& e, const std::string& where) {
  if (e.is_string()) {
    try {
      return Rational::parse(e.get<std::string>());
    } catch (const Error& err) {
      throw_input(where + ": " + err.what());
    }
  }
  if (e.is_number_integer()) return Rational(e.get<long>());
  if (e.is_number_float())
    throw_input(where + ": binary floating-point number " + e.dump() + "; write entries as exact strings such as \"0.125\" or \"-3/4\"");
  throw_input(where + ": expected a rational string, got " + (e.dump().size() > 60 ? e.dump().substr(0, 57) + "..." : e.dump()));
}

Model model_from_json_text(const std::string& text, ModelFileInfo* info) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw_input(std::string("model file is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw_input("model file: top level must be an object");
  if (j.contains("format") && j["format"] == factored_format) {
    const FactoredModel f = factored_from_json(j);
    if (info) *info = describe(f);
    return to_model(f);
  }
  if (j.contains("format") && j["format"] != "mhaq-model")
    throw_input("model file: \"format\" must be \"mhaq-model\" or \"" + std::string(factored_format) + "\"");
  if (j.contains("version") && j["version"] != 1) throw_input("model file: unsupported version " + j["version"].dump() + " (this mhaq reads version 1)");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (looks_like_bias(it.key())) throw_input("model file: " + it.key() + ": bias terms are not part of the model (it is bias-free)");
  if (!j.contains("d") || !j["d"].is_number_integer()) throw_input("model file: missing integer field \"d\"");
  if (!j.contains("heads") || !j["heads"].is_array()) throw_input("model file: missing array field \"heads\"");
  Model m;
  const long d = j["d"].get<long>();
  if (d < 1 || d > 64) throw_input("model file: d must be in [1, 64], got " + std::to_string(d));
  m.d = static_cast<int>(d);
  int hi = 0;
  for (const auto& h : j["heads"]) {
    const std::string where = "heads[" + std::to_string(hi) + "]";
    if (!h.is_object()) throw_input(where + ": expected an object");
    for (auto it = h.begin(); it != h.end(); ++it)
      if (it.key() != "W" && it.key() != "v") {
        if (looks_like_bias(it.key())) throw_input(where + ": " + it.key() + ": bias terms are not part of the model (it is bias-free)");
        if (it.key() == "Q" || it.key() == "K" || it.key() == "V")
          throw_input(where + ": unknown field \"" + it.key() + "\" (a factored model file needs \"format\": \"" + factored_format + "\")");
        throw_input(where + ": unknown field \"" + it.key() + "\"");
      }
    if (!h.contains("W") || !h["W"].is_array() || h["W"].size() != static_cast<size_t>(d))
      throw_input(where + ".W: expected " + std::to_string(d) + " rows");
    if (!h.contains("v") || !h["v"].is_array() || h["v"].size() != static_cast<size_t>(d))
      throw_input(where + ".v: expected " + std::to_string(d) + " entries");
    HeadQ head{QMat(m.d, m.d), QVec(m.d)};
    for (int r = 0; r < m.d; ++r) {
      const auto& row = h["W"][r];
      if (!row.is_array() || row.size() != static_cast<size_t>(d))
        throw_input(where + ".W[" + std::to_string(r) + "]: expected " + std::to_string(d) + " entries");
      for (int c = 0; c < m.d; ++c)
        head.W(r, c) = rational_from_json(row[c], where + ".W[" + std::to_string(r) + "][" + std::to_string(c) + "]");
    }
    for (int r = 0; r < m.d; ++r) head.v[r] = rational_from_json(h["v"][r], where + ".v[" + std::to_string(r) + "]");
    m.heads.push_back(std::move(head));
    ++hi;
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "format" && it.key() != "version" && it.key() != "d" && it.key() != "heads" && it.key() != "bases")
      throw_input("model file: unknown field \"" + it.key() + "\" (a plain model file has format, version, d, heads and optionally bases; a factored one needs \"format\": \"" +
                  factored_format + "\")");
  m.validate();
  if (info) {
    *info = ModelFileInfo{};
    info->d = m.d;
    info->heads = m.num_heads();
  }
  return m;
}

std::string model_to_json_text(const Model& m) {
  // One matrix row per line; keys in a fixed order, so output bytes depend only on the model.
  auto vec = [](const QVec& v) {
    std::string o = "[";
    for (size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + json(v[i].str()).dump();
    return o + "]";
  };
  std::string o = "{\"format\": \"mhaq-model\", \"version\": 1, \"d\": " + std::to_string(m.d) + ",\n \"heads\": [";
  for (size_t h = 0; h < m.heads.size(); ++h) {
    o += h ? ",\n  {" : "\n  {";
    o += "\"W\": [";
    for (int r = 0; r < m.d; ++r) o += (r ? ",\n         " : "") + vec(m.heads[h].W.row(r));
    o += "],\n   \"v\": " + vec(m.heads[h].v) + "}";
  }
  return o + "]}\n";
}

Model read_model_file(const std::string& path, ModelFileInfo* info) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_input("cannot open model file \"" + path + "\"");
  std::ostringstream ss;
  ss << in.rdbuf();
  try {
    return model_from_json_text(ss.str(), info);
  } catch (const Error& e) {
    throw Error(e.kind(), path + ": " + e.what());
  }
}

Model generate_model(const GenerateOptions& o) {
  if (o.d < 1 || o.d > 64) throw Error(ErrorKind::usage, "--d must be in [1, 64]");
  if (o.heads < 1 || o.heads > 64) throw Error(ErrorKind::usage, "--heads must be in [1, 64]");
  if (o.w_range < 1 || o.w_den < 1 || o.v_range < 1 || o.v_den < 1) throw Error(ErrorKind::usage, "entry ranges and denominators must be positive");
  if (o.share_w && o.heads < 2) throw Error(ErrorKind::usage, "--share-w needs at least 2 heads");
  if (o.cancel_v && o.heads < (o.share_w ? 4 : 2)) throw Error(ErrorKind::usage, o.share_w ? "--share-w with --cancel-v needs at least 4 heads" : "--cancel-v needs at least 2 heads");
  Rng rng(o.seed);
  Model m;
  m.d = o.d;
  auto fresh_W = [&] {
    QMat W(o.d, o.d);
    for (int r = 0; r < o.d; ++r)
      for (int c = 0; c < o.d; ++c) W(r, c) = Rational(rng.uniform_int(-o.w_range, o.w_range), static_cast<unsigned long>(o.w_den));
    return W;
  };
  auto fresh_v = [&] {
    for (;;) {
      QVec v(o.d);
      bool zero = true;
      for (int r = 0; r < o.d; ++r) {
        v[r] = Rational(rng.uniform_int(-o.v_range, o.v_range), static_cast<unsigned long>(o.v_den));
        zero = zero && v[r].is_zero();
      }
      if (!zero) return v;
    }
  };
  for (int h = 0; h < o.heads; ++h) {
    HeadQ head;
    const bool shared = o.share_w && h == 1;
    const bool cancelling = o.cancel_v && h == o.heads - 1;
    if (shared || cancelling) {
      head.W = m.heads[h - 1].W;
      head.v = cancelling ? QVec(o.d) - m.heads[h - 1].v : fresh_v();
    } else {
      // fresh W distinct from all earlier ones, so merges happen only where asked
      for (;;) {
        head.W = fresh_W();
        bool dup = false;
        for (const auto& g : m.heads) dup = dup || g.W == head.W;
        if (!dup) break;
      }
      head.v = fresh_v();
    }
    m.heads.push_back(std::move(head));
  }
  return m;
}

}  // namespace mhaq
