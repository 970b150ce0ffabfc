#include "mhaq/model/factored.hpp"

#include <algorithm>
#include <cctype>

#include "mhaq/base/error.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/text.hpp"

namespace mhaq {

namespace {
using nlohmann::json;

constexpr long max_inner_dim = limits::max_inner_dim;  // d_k, d_v, d_out

std::string shown(const json& e) { return json_shown(e); }

void check_keys(const json& obj, const std::string& where, const std::vector<std::string>& allowed, const std::string& allowed_text) {
  const std::string prefix = where.empty() ? "" : where + ".";
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (looks_like_bias(it.key()) && std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
      throw_input(prefix + clean_text(it.key()) +
                  ": unknown bias field (a factored model's biases are \"q_bias\", \"k_bias\" and \"v_bias\" in a head and \"out_bias\" at the top level)");
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
      throw_input((where.empty() ? std::string("factored model file") : where) + ": unknown field " + quote_text(it.key()) + " (" + allowed_text + ")");
}



long dim_field(const json& j, const char* name, long lo, long hi, const std::string& base) {
  if (!j.contains(name)) throw_input(json_key_path(base, name) + ": missing integer field \"" + name + "\"");
  return json_long(j[name], lo, hi, json_key_path(base, name));
}

// A rows x cols matrix; `shape` names the dimensions, e.g. "d x d_k".
QMat matrix(const json& m, const std::string& where, long rows, long cols, const std::string& shape) {
  const std::string want = shape + " = " + std::to_string(rows) + " x " + std::to_string(cols);
  if (!m.is_array()) throw_input(where + ": expected a " + want + " matrix (an array of rows), got " + shown(m));
  if (m.size() != static_cast<size_t>(rows))
    throw_input(where + ": expected a " + want + " matrix, got " + std::to_string(m.size()) + " row" + (m.size() == 1 ? "" : "s"));
  for (long r = 0; r < rows; ++r) {
    const json& row = m[static_cast<size_t>(r)];
    if (!row.is_array() || row.size() != static_cast<size_t>(cols))
      throw_input(where + "[" + std::to_string(r) + "]: expected a row of " + std::to_string(cols) + " entries (" + want + "), got " +
                  (row.is_array() ? std::to_string(row.size()) + (row.size() == 1 ? " entry" : " entries") : shown(row)));
  }
  QMat out(static_cast<int>(rows), static_cast<int>(cols));
  for (long r = 0; r < rows; ++r)
    for (long c = 0; c < cols; ++c)
      out(static_cast<int>(r), static_cast<int>(c)) = rational_from_json(m[static_cast<size_t>(r)][static_cast<size_t>(c)], where + "[" + std::to_string(r) + "][" + std::to_string(c) + "]");
  return out;
}

// An optional vector of n exact entries named `key` in obj (empty when absent).
QVec bias_vector(const json& obj, const char* key, const std::string& where, long n, const char* size_name) {
  if (!obj.contains(key)) return {};
  const json& e = obj[key];
  const std::string path = json_key_path(where, key);
  if (!e.is_array() || e.size() != static_cast<size_t>(n))
    throw_input(path + ": expected " + size_name + " = " + std::to_string(n) + " entries, got " + shown(e));
  QVec out(static_cast<size_t>(n));
  for (long i = 0; i < n; ++i) out[static_cast<size_t>(i)] = rational_from_json(e[static_cast<size_t>(i)], json_index_path(path, static_cast<size_t>(i)));
  return out;
}

std::string dims(int r, int c) { return std::to_string(r) + " x " + std::to_string(c); }
}  // namespace

bool FactoredModel::has_bias() const {
  if (!out_bias.empty()) return true;
  for (const auto& h : heads)
    if (!h.q_bias.empty() || !h.k_bias.empty() || !h.v_bias.empty()) return true;
  return false;
}

// Keys that name an additive term: "bias", "b", "b_q", "bq", "q_bias", "readout_bias", "o_b", ...
bool looks_like_bias(std::string k) {
  std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (k.find("bias") != std::string::npos || k == "b" || k.rfind("b_", 0) == 0) return true;
  if (k.size() >= 2 && k.compare(k.size() - 2, 2, "_b") == 0) return true;
  return k == "bq" || k == "bk" || k == "bv" || k == "bo" || k == "bu" || k == "bout";
}


FactoredModel factored_from_json(const json& j, const std::string& base) {
  auto at = [&](const std::string& k) { return json_key_path(base, k); };
  if (!j.is_object()) throw_input((base.empty() ? std::string("factored model file") : base) + ": top level must be an object");
  check_keys(j, base, {"format", "version", "d", "d_k", "d_v", "d_out", "scale", "heads", "O", "readout", "out_bias"},
             "a factored model file has format, version, d, d_k, d_v, d_out, scale, heads, O, readout and optionally out_bias");
  if (!j.contains("format") || j["format"] != factored_format) throw_input(at("format") + ": must be \"" + factored_format + "\"");
  if (j.contains("version") && !(j["version"].is_number_integer() && j["version"] == 1))
    throw_input(at("version") + ": unsupported version " + shown(j["version"]) + " (this mhaq reads version 1)");
  FactoredModel f;
  f.d = static_cast<int>(dim_field(j, "d", 1, limits::max_d, base));
  f.d_k = static_cast<int>(dim_field(j, "d_k", 1, max_inner_dim, base));
  f.d_v = static_cast<int>(dim_field(j, "d_v", 1, max_inner_dim, base));
  if (!j.contains("readout") || !j["readout"].is_array() || j["readout"].empty())
    throw_input(at("readout") + ": expected a non-empty array of d_out entries (the vector u that turns the output projection into one number)");
  const json& u = j["readout"];
  if (j.contains("d_out")) {
    f.d_out = static_cast<int>(dim_field(j, "d_out", 1, max_inner_dim, base));
    if (u.size() != static_cast<size_t>(f.d_out))
      throw_input(at("readout") + ": expected d_out = " + std::to_string(f.d_out) + " entries, got " + std::to_string(u.size()));
  } else {
    if (u.size() > static_cast<size_t>(max_inner_dim)) throw_input(at("readout") + ": more than " + std::to_string(max_inner_dim) + " entries");
    f.d_out = static_cast<int>(u.size());
  }
  if (j.contains("scale")) f.scale = scale_from_json(j["scale"], at("scale"));
  if (!j.contains("heads") || !j["heads"].is_array() || j["heads"].empty())
    throw_input(at("heads") + ": expected a non-empty array of heads {\"Q\", \"K\", \"V\"}");
  const json& hs = j["heads"];
  const size_t H = hs.size();
  // Sizes before any matrix is built: heads, and every entry the file must hold.
  if (static_cast<long>(H) > limits::max_file_heads)
    throw_input(at("heads") + ": " + std::to_string(H) + " heads, more than the limit of " + std::to_string(limits::max_file_heads) + " heads in a model file");
  {
    const long per_head = static_cast<long>(f.d) * (2L * f.d_k + f.d_v) + static_cast<long>(f.d_v) * f.d_out;
    const long entries = static_cast<long>(H) * per_head + f.d_out;
    if (entries > limits::max_file_entries)
      throw_input(at("heads") + ": " + std::to_string(H) + " heads with d=" + std::to_string(f.d) + ", d_k=" + std::to_string(f.d_k) + ", d_v=" +
                  std::to_string(f.d_v) + ", d_out=" + std::to_string(f.d_out) + " need " + std::to_string(entries) + " entries, more than the limit of " +
                  std::to_string(limits::max_file_entries) + " entries in a model file");
  }

  // Where the output projection lives: one concatenated matrix, or one per head.
  size_t with_O = 0;
  for (size_t h = 0; h < H; ++h) {
    const std::string where = json_index_path(at("heads"), h);
    if (!hs[h].is_object()) throw_input(where + ": expected an object {\"Q\", \"K\", \"V\"}, got " + shown(hs[h]));
    check_keys(hs[h], where, {"Q", "K", "V", "O", "q_bias", "k_bias", "v_bias"},
               "a factored head has Q, K, V, for a per-head output projection O, and optionally q_bias, k_bias, v_bias");
    with_O += hs[h].contains("O") ? 1 : 0;
  }
  if (j.contains("O") && with_O > 0)
    throw_input(at("O") + ": the output projection is given both at the top level and inside heads; give one concatenated (H*d_v) x d_out matrix or one d_v x d_out matrix per head");
  if (!j.contains("O") && with_O == 0)
    throw_input(at("O") + ": missing output projection; give one concatenated (H*d_v) x d_out matrix at the top level or a d_v x d_out \"O\" in every head (an identity matrix if the model has none)");
  f.per_head_O = with_O > 0;
  if (f.per_head_O && with_O < H)
    for (size_t h = 0; h < H; ++h)
      if (!hs[h].contains("O")) throw_input(json_index_path(at("heads"), h) + ".O: missing; a per-head output projection needs O in every head");

  for (size_t h = 0; h < H; ++h) {
    const std::string where = json_index_path(at("heads"), h);
    for (const char* k : {"Q", "K", "V"})
      if (!hs[h].contains(k)) throw_input(where + "." + k + ": missing");
    FactoredHead fh;
    fh.Q = matrix(hs[h]["Q"], where + ".Q", f.d, f.d_k, "d x d_k");
    fh.K = matrix(hs[h]["K"], where + ".K", f.d, f.d_k, "d x d_k");
    fh.V = matrix(hs[h]["V"], where + ".V", f.d, f.d_v, "d x d_v");
    if (f.per_head_O) fh.O = matrix(hs[h]["O"], where + ".O", f.d_v, f.d_out, "d_v x d_out");
    fh.q_bias = bias_vector(hs[h], "q_bias", where, f.d_k, "d_k");
    fh.k_bias = bias_vector(hs[h], "k_bias", where, f.d_k, "d_k");
    fh.v_bias = bias_vector(hs[h], "v_bias", where, f.d_v, "d_v");
    f.heads.push_back(std::move(fh));
  }
  if (!f.per_head_O) {
    const long rows = static_cast<long>(H) * f.d_v;
    const QMat O = matrix(j["O"], at("O"), rows, f.d_out, "(H*d_v) x d_out");
    for (size_t h = 0; h < H; ++h) {
      QMat block(f.d_v, f.d_out);
      for (int r = 0; r < f.d_v; ++r)
        for (int c = 0; c < f.d_out; ++c) block(r, c) = O(static_cast<int>(h) * f.d_v + r, c);
      f.heads[h].O = std::move(block);
    }
  }
  f.readout.resize(f.d_out);
  for (int c = 0; c < f.d_out; ++c) f.readout[c] = rational_from_json(u[static_cast<size_t>(c)], json_index_path(at("readout"), static_cast<size_t>(c)));
  f.out_bias = bias_vector(j, "out_bias", base, f.d_out, "d_out");
  return f;
}

Model to_model(const FactoredModel& f) {
  Model m;
  m.d = f.d;
  for (const auto& fh : f.heads) {
    HeadQ h{QMat(f.d, f.d), QVec(f.d)};
    // W_h = scale * K_h Q_h^T: W(r, c) = scale * sum_k K(r, k) Q(c, k)
    for (int r = 0; r < f.d; ++r)
      for (int c = 0; c < f.d; ++c) {
        Rational s;
        for (int k = 0; k < f.d_k; ++k) s += fh.K(r, k) * fh.Q(c, k);
        h.W(r, c) = f.scale.q * s;
      }
    // v_h = V_h (O_h u)
    const QVec Ou = matvec(fh.O, f.readout);
    h.v = matvec(fh.V, Ou);
    // c_h = scale * K_h b_q,h; beta gains b_v,h^T O_h u
    if (!fh.q_bias.empty()) {
      h.c = matvec(fh.K, fh.q_bias);
      for (auto& x : h.c) x = f.scale.q * x;
    }
    if (!fh.v_bias.empty()) m.beta += dot(fh.v_bias, Ou);
    m.heads.push_back(std::move(h));
  }
  if (!f.out_bias.empty()) m.beta += dot(f.out_bias, f.readout);
  m.root = f.scale.m;
  drop_zero_bias(m);
  m.validate();
  return m;
}

ModelFileInfo describe(const FactoredModel& f) {
  ModelFileInfo i;
  i.format = factored_format;
  i.d = f.d;
  i.heads = f.num_heads();
  i.d_k = f.d_k;
  i.d_v = f.d_v;
  i.d_out = f.d_out;
  i.projection = f.per_head_O ? "per-head" : "concatenated";
  i.scale = f.scale.str();
  i.conversion = factored_conversion;
  if (f.has_bias()) i.conversion += factored_bias_conversion;
  return i;
}

std::string ModelFileInfo::summary() const {
  std::string s = format + ": d=" + std::to_string(d) + ", " + std::to_string(heads) + (heads == 1 ? " head" : " heads");
  if (!factored()) return s;
  s += ", d_k=" + std::to_string(d_k) + ", d_v=" + std::to_string(d_v) + ", d_out=" + std::to_string(d_out) + ", O ";
  s += projection == "per-head" ? "per head (" + dims(d_v, d_out) + " each)" : "concatenated (" + dims(heads * d_v, d_out) + ")";
  return s + ", scale " + scale + "; converted exactly: " + conversion;
}

json conversion_json(const ModelFileInfo& i) {
  json j{{"format", i.format}, {"d", i.d}, {"heads", i.heads}};
  if (!i.factored()) return j;
  j["d_k"] = i.d_k;
  j["d_v"] = i.d_v;
  j["d_out"] = i.d_out;
  j["output_projection"] = i.projection;
  j["scale"] = i.scale;
  j["conversion"] = i.conversion;
  return j;
}

CanonicalSummary canonical_summary(const Model& m) {
  CanonicalSummary s;
  s.heads = m.num_heads();
  s.biases = m.has_bias();
  int distinct = 0;
  const std::vector<int> first = equal_score_groups(m);
  for (int h = 0; h < s.heads; ++h) distinct += first[static_cast<size_t>(h)] == h ? 1 : 0;
  s.canonical = m.canonical().num_heads();
  s.merged = s.heads - distinct;
  s.dropped = distinct - s.canonical;
  return s;
}

std::string CanonicalSummary::str() const {
  return std::to_string(heads) + (heads == 1 ? " head" : " heads") + " -> " + std::to_string(canonical) + " canonical (" + std::to_string(merged) +
         " merged into an earlier head with equal W" + (biases ? " and c, " : ", ") + std::to_string(dropped) + " dropped because their summed v is zero)";
}

}  // namespace mhaq
