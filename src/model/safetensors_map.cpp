// The safetensors map (docs/formats.md, "The map"): which tensors form the
// layer, its scale, and the biases next to mapped tensors that it leaves out.
#include <algorithm>
#include <climits>
#include <functional>

#include "mhaq/arith/surd.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/io.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/model/safetensors.hpp"

namespace mhaq {

using json = nlohmann::json;

namespace {
const std::vector<std::string>& map_keys() {
  static const std::vector<std::string> keys{"format", "version", "heads",  "kv_heads", "layout", "q",      "k",      "v",      "in_proj",  "in_proj_split",
                                             "out",    "readout", "scale",  "ffn",      "q_bias", "k_bias", "v_bias", "in_proj_bias", "out_bias", "rope"};
  return keys;
}

// The fused in-projection's block order, or the three separate projections.
void read_projections(const json& j, const std::string& where, SafetensorsMap& m, const std::function<std::string(const char*)>& name) {
  const bool fused = j.contains("in_proj");
  const bool separate = j.contains("q") || j.contains("k") || j.contains("v");
  if (fused && separate) throw_input(where + ": give either in_proj (a fused in-projection) or q, k and v, not both");
  if (fused) {
    m.in_proj = name("in_proj");
    if (j.contains("in_proj_split")) {
      const json& s = j["in_proj_split"];
      const std::string bad = where + ": in_proj_split: expected an order of \"q\", \"k\", \"v\" such as [\"q\", \"k\", \"v\"], got ";
      if (!s.is_array() || s.size() != 3) throw_input(bad + json_shown(s));
      m.split.clear();
      for (const auto& x : s) {
        if (!x.is_string() || x.get_ref<const std::string&>().size() != 1) throw_input(bad + json_shown(s));
        const char c = x.get_ref<const std::string&>()[0];
        if ((c != 'q' && c != 'k' && c != 'v') || std::find(m.split.begin(), m.split.end(), c) != m.split.end()) throw_input(bad + json_shown(s));
        m.split.push_back(c);
      }
    }
    if (j.contains("kv_heads") && m.kv_heads != m.heads)
      throw_input(where + ": kv_heads: a fused in_proj has equal q, k and v blocks; grouped heads need separate q, k and v tensors");
  } else {
    if (j.contains("in_proj_split")) throw_input(where + ": in_proj_split without in_proj");
    for (const char* k : {"q", "k", "v"})
      if (!j.contains(k)) throw_input(where + ": " + k + ": missing (give q, k and v, or a fused in_proj)");
    m.q = name("q");
    m.k = name("k");
    m.v = name("v");
  }
  if (j.contains("in_proj_bias") && !fused) throw_input(where + ": in_proj_bias goes with a fused in_proj; name q_bias, k_bias and v_bias for separate q, k, v");
  for (const char* k : {"q_bias", "k_bias", "v_bias"})
    if (j.contains(k) && fused) throw_input(where + ": " + k + " goes with separate q, k, v; a fused in_proj takes in_proj_bias");
  if (j.contains("in_proj_bias")) m.in_proj_bias = name("in_proj_bias");
  if (j.contains("q_bias")) m.q_bias = name("q_bias");
  if (j.contains("k_bias")) m.k_bias = name("k_bias");
  if (j.contains("v_bias")) m.v_bias = name("v_bias");
  if (j.contains("out_bias")) m.out_bias = name("out_bias");
}

void read_rope(const json& r, const std::string& where, SafetensorsMap& m) {
  const std::string w = where + ": rope";
  if (!r.is_object()) throw_input(w + ": expected {\"theta\": \"10000\", \"pairing\": \"half\"}, got " + json_shown(r));
  for (auto it = r.begin(); it != r.end(); ++it)
    if (it.key() != "theta" && it.key() != "pairing") throw_input(w + ": unknown field " + quote_text(it.key()) + " (rope has theta and pairing)");
  const json& th = json_member(r, w, "theta");
  if (!th.is_string() && !th.is_number_integer()) throw_input(w + ".theta: expected an exact number such as \"10000\", got " + json_shown(th));
  m.rope_theta = th.is_string() ? Rational::parse(th.get<std::string>(), 200) : Rational(json_long(th, 1, LONG_MAX, w + ".theta"));
  if (m.rope_theta <= Rational(1)) throw_input(w + ".theta: must be more than 1 (the rotary base; 10000 in Llama), got " + m.rope_theta.str());
  const json& pr = json_member(r, w, "pairing");
  if (pr == "half") m.rope_interleaved = false;
  else if (pr == "interleaved") m.rope_interleaved = true;
  else
    throw_input(w + ".pairing: must be \"half\" (Llama in Hugging Face transformers: entry i pairs with i + d_k/2) or \"interleaved\" (entries 2i and "
                "2i+1, as GPT-J), got " + json_shown(pr));
  m.rope = true;
}
}  // namespace

SafetensorsMap safetensors_map_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw_input(where + ": a safetensors map must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(map_keys().begin(), map_keys().end(), it.key()) == map_keys().end())
      throw_input(where + ": unknown field " + quote_text(it.key()) +
                  " (a map has format, version, heads, layout, q/k/v or in_proj (+ in_proj_split), out, scale, and optionally readout, ffn, kv_heads, "
                  "rope and the biases q_bias/k_bias/v_bias or in_proj_bias, and out_bias)");
  if (!j.contains("format") || j["format"] != "mhaq-safetensors-map") throw_input(where + ": format: must be \"mhaq-safetensors-map\"");
  if (j.contains("version") && !(j["version"].is_number_integer() && j["version"] == 1))
    throw_input(where + ": version: unsupported version " + json_shown(j["version"]) + " (this mhaq reads version 1)");
  SafetensorsMap m;
  m.source = where;
  m.heads = static_cast<int>(json_long(json_member(j, where, "heads"), 1, limits::max_file_heads, where + ": heads"));
  m.kv_heads = m.heads;
  if (j.contains("kv_heads")) {
    m.kv_heads = static_cast<int>(json_long(j["kv_heads"], 1, m.heads, where + ": kv_heads"));
    if (m.heads % m.kv_heads != 0)
      throw_input(where + ": kv_heads: " + std::to_string(m.kv_heads) + " key-value heads do not divide the " + std::to_string(m.heads) + " query heads");
  }
  const json& lay = json_member(j, where, "layout");
  if (lay == "out_in") m.out_in = true;
  else if (lay == "in_out") m.out_in = false;
  else
    throw_input(where + ": layout: must be \"out_in\" (torch.nn.Linear and MultiheadAttention: out_features x in_features, the layer computes W x) or "
                "\"in_out\" (the layer computes x^T W), got " + json_shown(lay));
  auto name = [&](const char* k) -> std::string {
    const json& e = j[k];
    if (!e.is_string() || e.get_ref<const std::string&>().empty()) throw_input(where + ": " + k + ": expected a tensor name, got " + json_shown(e));
    return e.get<std::string>();
  };
  read_projections(j, where, m, name);
  if (!j.contains("out")) throw_input(where + ": out: missing (the output projection's tensor)");
  m.out = name("out");
  if (j.contains("ffn")) m.ffn = name("ffn");
  if (j.contains("readout")) {
    const json& r = j["readout"];
    m.has_readout = true;
    if (r.is_string()) {
      m.readout_tensor = name("readout");
    } else if (r.is_array() && !r.empty() && static_cast<long>(r.size()) <= limits::max_inner_dim) {
      for (size_t i = 0; i < r.size(); ++i) m.readout.push_back(rational_from_json(r[i], where + ": readout[" + std::to_string(i) + "]"));
    } else {
      throw_input(where + ": readout: expected a tensor name or a non-empty array of at most " + std::to_string(limits::max_inner_dim) +
                  " exact entries (the vector u), got " + json_shown(r));
    }
  }
  if (j.contains("rope")) read_rope(j["rope"], where, m);
  const json& sc = json_member(j, where, "scale");
  if (!sc.is_string() && !sc.is_number_integer())
    throw_input(where + ": scale: expected \"1/sqrt(d_k)\" or an exact rational string such as \"1/2\", got " + json_shown(sc));
  m.scale_text = sc.is_string() ? sc.get<std::string>() : sc.dump();
  return m;
}

SafetensorsMap read_safetensors_map(const std::string& path) {
  const std::string name = clean_text(path);
  const std::string text = read_file_text(path, "map file");
  json j;
  try {
    j = parse_json_text(text);
  } catch (const Error& e) {
    throw_input("map file " + name + ": " + e.what());
  }
  return safetensors_map_from_json(j, "map file " + name);
}

Surd map_scale(const std::string& text, long d_k, const std::string& where) {
  std::string t;
  for (char c : text)
    if (c != ' ') t += c;
  if (const size_t at = t.find("d_k"); at != std::string::npos) t.replace(at, 3, std::to_string(d_k));
  return parse_surd(t, where + ": scale " + quote_text(text) + (t != text ? " (d_k = " + std::to_string(d_k) + ")" : std::string()));
}

std::vector<std::string> unnamed_biases(const SafetensorsFile& f, const SafetensorsMap& m) {
  const std::vector<std::string> named{m.q_bias, m.k_bias, m.v_bias, m.in_proj_bias, m.out_bias};
  std::vector<std::string> out;
  auto consider = [&](const std::string& candidate, const std::string& weight, const char* key) {
    const SafetensorsTensor* t = f.find(candidate);
    if (!t || std::find(named.begin(), named.end(), candidate) != named.end() || std::find(out.begin(), out.end(), candidate) != out.end()) return;
    const std::string tw = f.name() + ": tensor " + quote_text(candidate) + " next to the mapped tensor " + quote_text(weight);
    if (key == nullptr)
      throw_input(tw + ": bias_k and bias_v (torch's add_bias_kv=True) append a learned key and value to every sequence, which mhaq's layer does not have");
    bool zero = t->readable && t->elements() <= limits::max_file_entries;
    if (zero)
      for (const auto& x : f.values(*t))
        if (!x.is_zero()) zero = false;
    if (!zero)
      throw_input(tw + " is a bias that " + m.source + " does not name; without it the layer would be another one: add \"" + key + "\": " +
                  quote_text(candidate) + " to the map (an all-zero bias may stay unnamed)");
    out.push_back(candidate);
  };
  const std::pair<const std::string*, const char*> weights[] = {{&m.q, "q_bias"}, {&m.k, "k_bias"}, {&m.v, "v_bias"}, {&m.in_proj, "in_proj_bias"}, {&m.out, "out_bias"}};
  for (const auto& [w, key] : weights) {
    if (w->empty()) continue;
    const std::string& t = *w;
    // "<p>.weight" -> "<p>.bias", "<p>in_proj_weight" -> "<p>in_proj_bias", "<p>" -> "<p>.bias"
    const size_t n = t.size();
    if (n >= 6 && t.compare(n - 6, 6, "weight") == 0 && (n == 6 || t[n - 7] == '.' || t[n - 7] == '_')) consider(t.substr(0, n - 6) + "bias", t, key);
    else consider(t + ".bias", t, key);
    // torch's add_bias_kv tensors beside the in-projection: "<p>.bias_k", "<p>.bias_v"
    const size_t dot = t.rfind('.');
    for (const char* kv : {"bias_k", "bias_v"}) consider((dot == std::string::npos ? std::string() : t.substr(0, dot + 1)) + kv, t, nullptr);
  }
  return out;
}

}  // namespace mhaq
