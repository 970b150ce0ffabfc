#include "mhaq/model/transformer.hpp"

#include <flint/fmpz.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mhaq/base/error.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/model/factored.hpp"

namespace mhaq {

namespace {
bool is_zero_vec(const QVec& v) {
  for (const auto& x : v)
    if (!x.is_zero()) return false;
  return true;
}
QVec scaled(const QVec& v, const Rational& s) {
  QVec out = v;
  for (auto& x : out) x *= s;
  return out;
}
Rational abs_q(const Rational& x) { return x.sign() < 0 ? -x : x; }
}  // namespace

QVec TransformerModel::neuron_vector(int j) const {
  QVec out;
  for (int h = 0; h < heads(); ++h) out.insert(out.end(), U[h][j].begin(), U[h][j].end());
  return out;
}

QVec TransformerModel::ubar(int j) const {
  QVec s(d, Rational(0));
  for (int h = 0; h < heads(); ++h) s = s + U[h][j];
  return s;
}

TransformerModel TransformerModel::canonical() const {
  // 1. merge heads with equal W: their U add
  TransformerModel m;
  m.d = d;
  m.u = u;
  for (int h = 0; h < heads(); ++h) {
    int into = -1;
    for (int g = 0; g < m.heads() && into < 0; ++g)
      if (m.W[g] == W[h]) into = g;
    if (into < 0) {
      m.W.push_back(W[h]);
      m.U.push_back(U[h]);
    } else {
      for (int j = 0; j < neurons(); ++j) m.U[into][j] = m.U[into][j] + U[h][j];
    }
  }
  // 2. neurons: normalise (u, U) -> (sign u, |u| U), merge positively parallel, drop zero
  struct Neuron {
    Rational c;  // coefficient before normalisation
    QVec v;      // the Hd-vector
  };
  std::vector<Neuron> ns;
  // Positively parallel vectors have the same direction v / |v_k| (k: the first
  // non-zero entry): found by a sorted map, not by comparing every pair.
  auto less = [](const QVec& a, const QVec& b) { return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end()); };
  std::map<QVec, size_t, decltype(less)> by_direction(less);
  for (int j = 0; j < m.neurons(); ++j) {
    const QVec v = m.neuron_vector(j);
    if (m.u[j].is_zero() || is_zero_vec(v)) continue;
    size_t k = 0;
    while (v[k].is_zero()) ++k;
    const Rational lead = abs_q(v[k]);
    const QVec dir = scaled(v, Rational(1) / lead);
    const auto [it, fresh] = by_direction.emplace(dir, ns.size());
    if (fresh) {
      ns.push_back({m.u[j], v});
    } else {  // v = lambda n.v with lambda = |v_k| / |n.v_k| > 0: u_j ReLU(lambda g) = (lambda u_j) ReLU(g)
      Neuron& n = ns[it->second];
      n.c = n.c + lead / abs_q(n.v[k]) * m.u[j];
    }
  }
  TransformerModel out;
  out.d = d;
  std::vector<QVec> kept;
  for (const auto& n : ns) {
    if (n.c.is_zero()) continue;
    out.u.push_back(Rational(n.c.sign()));
    kept.push_back(scaled(n.v, abs_q(n.c)));
  }
  // 3. heads that no neuron sees are dropped
  for (int h = 0; h < m.heads(); ++h) {
    std::vector<QVec> col;
    bool seen = false;
    for (const auto& v : kept) {
      col.emplace_back(v.begin() + static_cast<long>(h) * d, v.begin() + static_cast<long>(h + 1) * d);
      seen = seen || !is_zero_vec(col.back());
    }
    if (!seen) continue;
    out.W.push_back(m.W[h]);
    out.U.push_back(col);
  }
  return out;
}

long TransformerModel::w_denominator() const {
  Model tmp;
  tmp.d = d;
  for (const auto& w : W) tmp.heads.push_back({w, QVec(d, Rational(0))});
  return tmp.w_denominator();
}

void TransformerModel::validate() const {
  if (d < 1 || d > limits::max_d) throw_input("transformer: d must be in [1, " + std::to_string(limits::max_d) + "], got " + std::to_string(d));
  if (heads() > limits::max_heads) throw_input("transformer: " + std::to_string(heads()) + " heads, more than the limit of " + std::to_string(limits::max_heads));
  if (neurons() > limits::max_neurons)
    throw_input("transformer: " + std::to_string(neurons()) + " neurons, more than the limit of " + std::to_string(limits::max_neurons));
  if (W.empty()) throw_input("transformer: no heads");
  if (u.empty()) throw_input("transformer: no neurons");
  if (U.size() != W.size()) throw_input("transformer: U must have one row per head");
  for (size_t h = 0; h < W.size(); ++h) {
    if (W[h].rows() != d || W[h].cols() != d) throw_input("transformer: heads[" + std::to_string(h) + "].W is not d x d");
    if (U[h].size() != u.size()) throw_input("transformer: head " + std::to_string(h) + " has " + std::to_string(U[h].size()) + " neuron vectors, expected " + std::to_string(u.size()));
    for (const auto& v : U[h])
      if (static_cast<int>(v.size()) != d) throw_input("transformer: a U vector does not have length d");
  }
}

bool transformer_equal_canonical(const TransformerModel& a, const TransformerModel& b) {
  if (a.d != b.d || a.heads() != b.heads() || a.neurons() != b.neurons()) return false;
  const int H = a.heads(), m = a.neurons();
  // heads by W (distinct in a canonical form), then neurons by (u, U) under that head order
  std::vector<int> hp(H, -1);
  for (int h = 0; h < H; ++h)
    for (int g = 0; g < H; ++g)
      if (a.W[h] == b.W[g]) hp[h] = g;
  for (int h = 0; h < H; ++h)
    if (hp[h] < 0) return false;
  std::vector<bool> used(m, false);
  for (int j = 0; j < m; ++j) {
    bool found = false;
    for (int k = 0; k < m && !found; ++k) {
      if (used[k] || !(a.u[j] == b.u[k])) continue;
      bool same = true;
      for (int h = 0; h < H && same; ++h) same = a.U[h][j] == b.U[hp[h]][k];
      if (same) used[k] = found = true;
    }
    if (!found) return false;
  }
  return true;
}

using nlohmann::json;

namespace {
// Every reader error names the JSON path and quotes at most about 80
// characters of input (json_in.hpp); sizes are checked before anything is built.
std::string dims(long r, long c) { return std::to_string(r) + " x " + std::to_string(c); }


// A rows x cols matrix of exact entries; the shape is checked before any entry is read.
QMat qmat_from(const json& j, long rows, long cols, const std::string& where, const std::string& shape) {
  const std::string want = shape + " = " + dims(rows, cols);
  if (!j.is_array()) throw_input(where + ": expected a " + want + " matrix (an array of rows), got " + json_shown(j));
  if (j.size() != static_cast<size_t>(rows)) throw_input(where + ": expected a " + want + " matrix, got " + json_shown(j));
  for (long r = 0; r < rows; ++r) {
    const json& row = j[static_cast<size_t>(r)];
    if (!row.is_array() || row.size() != static_cast<size_t>(cols))
      throw_input(json_index_path(where, static_cast<size_t>(r)) + ": expected a row of " + std::to_string(cols) + " entries (" + want + "), got " + json_shown(row));
  }
  QMat M(static_cast<int>(rows), static_cast<int>(cols));
  for (long r = 0; r < rows; ++r)
    for (long c = 0; c < cols; ++c)
      M(static_cast<int>(r), static_cast<int>(c)) =
          rational_from_json(j[static_cast<size_t>(r)][static_cast<size_t>(c)], json_index_path(json_index_path(where, static_cast<size_t>(r)), static_cast<size_t>(c)));
  return M;
}
QVec qvec_from(const json& j, long n, const std::string& where) {
  if (!j.is_array() || j.size() != static_cast<size_t>(n)) throw_input(where + ": expected an array of " + std::to_string(n) + " entries, got " + json_shown(j));
  QVec v(static_cast<size_t>(n));
  for (long i = 0; i < n; ++i) v[static_cast<size_t>(i)] = rational_from_json(j[static_cast<size_t>(i)], json_index_path(where, static_cast<size_t>(i)));
  return v;
}
void only_keys(const json& j, std::initializer_list<const char*> keys, const std::string& where) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool ok = false;
    for (const char* k : keys) ok = ok || it.key() == k;
    if (!ok) {
      if (looks_like_bias(it.key())) throw_input(json_key_path(where, clean_text(it.key())) + ": bias terms are not part of the model (it is bias-free)");
      throw_input((where.empty() ? std::string("transformer file") : where) + ": unknown field " + quote_text(it.key()));
    }
  }
}
// An array of 1 to `limit` objects (heads, neurons).
const json& object_array(const json& j, const std::string& key, long limit, const std::string& what) {
  const json& a = need(j, "", key);
  if (!a.is_array() || a.empty()) throw_input(key + ": expected a non-empty array of " + what + ", got " + json_shown(a));
  if (static_cast<long>(a.size()) > limit)
    throw_input(key + ": " + std::to_string(a.size()) + " " + what + ", more than the limit of " + std::to_string(limit) + " in a transformer file");
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].is_object()) throw_input(json_index_path(key, i) + ": expected an object, got " + json_shown(a[i]));
  return a;
}
void check_entries(long entries, const std::string& shape) {
  if (entries > limits::max_file_entries)
    throw_input("transformer file: " + shape + " needs " + std::to_string(entries) + " entries, more than the limit of " + std::to_string(limits::max_file_entries) +
                " entries in a model file");
}

TransformerModel plain_from(const json& j) {
  only_keys(j, {"format", "version", "d", "heads", "neurons"}, "");
  TransformerModel m;
  const long d = json_long(need(j, "", "d"), 1, limits::max_d, "d");
  m.d = static_cast<int>(d);
  const json& hs = object_array(j, "heads", limits::max_heads, "heads");
  const json& ns = object_array(j, "neurons", limits::max_neurons, "neurons");
  const long H = static_cast<long>(hs.size()), M = static_cast<long>(ns.size());
  check_entries(H * d * d + M * (1 + H * d), std::to_string(H) + " heads and " + std::to_string(M) + " neurons at d=" + std::to_string(d));
  for (long h = 0; h < H; ++h) {
    const std::string where = json_index_path("heads", static_cast<size_t>(h));
    const json& hj = hs[static_cast<size_t>(h)];
    only_keys(hj, {"W"}, where);
    m.W.push_back(qmat_from(need(hj, where, "W"), d, d, where + ".W", "d x d"));
  }
  m.U.assign(static_cast<size_t>(H), std::vector<QVec>(static_cast<size_t>(M)));
  for (long k = 0; k < M; ++k) {
    const std::string where = json_index_path("neurons", static_cast<size_t>(k));
    const json& nj = ns[static_cast<size_t>(k)];
    only_keys(nj, {"u", "U"}, where);
    m.u.push_back(rational_from_json(need(nj, where, "u"), where + ".u"));
    const QMat Uk = qmat_from(need(nj, where, "U"), H, d, where + ".U", "H x d");
    for (long h = 0; h < H; ++h) m.U[static_cast<size_t>(h)][static_cast<size_t>(k)] = Uk.row(static_cast<int>(h));
  }
  return m;
}

TransformerModel factored_from(const json& j, TransformerFileInfo* info) {
  only_keys(j, {"format", "version", "d", "d_k", "d_v", "d_out", "scale", "heads", "O", "ffn", "readout"}, "");
  using limits::max_inner_dim;
  const long d = json_long(need(j, "", "d"), 1, limits::max_d, "d");
  const long dk = json_long(need(j, "", "d_k"), 1, max_inner_dim, "d_k"), dv = json_long(need(j, "", "d_v"), 1, max_inner_dim, "d_v");
  const json& hs = object_array(j, "heads", limits::max_heads, "heads");
  const long H = static_cast<long>(hs.size());
  // d_out and the neuron count come from O and ffn (or d_out and readout), checked before any entry is read
  const json& Oj = need(j, "", "O");
  if (!Oj.is_array() || Oj.empty() || !Oj[0].is_array()) throw_input("O: expected a (H d_v) x d_out matrix, got " + json_shown(Oj));
  const long dout = j.contains("d_out") ? json_long(j["d_out"], 1, max_inner_dim, "d_out") : static_cast<long>(Oj[0].size());
  if (dout < 1 || dout > max_inner_dim) throw_input("O: rows of " + std::to_string(dout) + " entries; d_out must be in [1, " + std::to_string(max_inner_dim) + "]");
  const json& Fj = need(j, "", "ffn");
  if (!Fj.is_array() || Fj.empty() || !Fj[0].is_array()) throw_input("ffn: expected a d_out x m matrix (the FFN's first layer), got " + json_shown(Fj));
  const long M = static_cast<long>(Fj[0].size());
  if (M < 1 || M > limits::max_neurons)
    throw_input("ffn: rows of " + std::to_string(M) + " entries; the neuron count m must be in [1, " + std::to_string(limits::max_neurons) + "]");
  check_entries(H * d * (2 * dk + dv) + H * dv * dout + dout * M + M,
                std::to_string(H) + " heads with d=" + std::to_string(d) + ", d_k=" + std::to_string(dk) + ", d_v=" + std::to_string(dv) +
                    ", d_out=" + std::to_string(dout) + ", m=" + std::to_string(M));
  // the exact conversion's products, in the cheaper of the two orders for U
  const long w_work = H * d * d * dk;
  const long u_work = std::min(H * dv * dout * M + H * d * dv * M, H * d * dv * dout + H * d * dout * M);
  if (w_work + u_work > limits::max_conversion_products)
    throw_input("transformer file: converting these shapes exactly takes " + std::to_string(w_work + u_work) + " products, more than the limit of " +
                std::to_string(limits::max_conversion_products));
  const Rational scale = j.contains("scale") ? rational_from_json(j["scale"], "scale") : Rational(1);
  const QMat O = qmat_from(Oj, H * dv, dout, "O", "(H d_v) x d_out");
  const QMat F1 = qmat_from(Fj, dout, M, "ffn", "d_out x m");
  const QVec u = qvec_from(need(j, "", "readout"), M, "readout");
  TransformerModel m;
  m.d = static_cast<int>(d);
  m.u = u;
  m.U.assign(static_cast<size_t>(H), std::vector<QVec>(static_cast<size_t>(M), QVec(static_cast<size_t>(d), Rational(0))));
  const bool right_first = H * dv * dout * M + H * d * dv * M <= H * d * dv * dout + H * d * dout * M;
  const int D = static_cast<int>(d), DK = static_cast<int>(dk), DV = static_cast<int>(dv), DO = static_cast<int>(dout), MM = static_cast<int>(M);
  for (int h = 0; h < static_cast<int>(H); ++h) {
    const json& hj = hs[static_cast<size_t>(h)];
    const std::string where = json_index_path("heads", static_cast<size_t>(h));
    only_keys(hj, {"Q", "K", "V"}, where);
    const QMat Q = qmat_from(need(hj, where, "Q"), d, dk, where + ".Q", "d x d_k"), K = qmat_from(need(hj, where, "K"), d, dk, where + ".K", "d x d_k"),
               V = qmat_from(need(hj, where, "V"), d, dv, where + ".V", "d x d_v");
    QMat W(D, D);
    for (int a = 0; a < D; ++a)
      for (int b = 0; b < D; ++b) {
        Rational s(0);
        for (int c = 0; c < DK; ++c) s += K(a, c) * Q(b, c);
        W(a, b) = scale * s;
      }
    m.W.push_back(W);
    // U_{h,j} = V_h O_h ffn[:, j]
    if (right_first) {
      QMat T(DV, MM);  // O_h ffn
      for (int c = 0; c < DV; ++c)
        for (int k = 0; k < MM; ++k) {
          Rational t(0);
          for (int e = 0; e < DO; ++e) t += O(h * DV + c, e) * F1(e, k);
          T(c, k) = t;
        }
      for (int k = 0; k < MM; ++k)
        for (int a = 0; a < D; ++a) {
          Rational s(0);
          for (int c = 0; c < DV; ++c) s += V(a, c) * T(c, k);
          m.U[h][k][a] = s;
        }
    } else {
      QMat P(D, DO);  // V_h O_h
      for (int a = 0; a < D; ++a)
        for (int e = 0; e < DO; ++e) {
          Rational t(0);
          for (int c = 0; c < DV; ++c) t += V(a, c) * O(h * DV + c, e);
          P(a, e) = t;
        }
      for (int k = 0; k < MM; ++k)
        for (int a = 0; a < D; ++a) {
          Rational s(0);
          for (int e = 0; e < DO; ++e) s += P(a, e) * F1(e, k);
          m.U[h][k][a] = s;
        }
    }
  }
  if (info) {
    info->format = transformer_factored_format;
    info->d_k = DK;
    info->d_v = DV;
    info->d_out = DO;
    info->conversion = "W_h = scale K_h Q_h^T, U_{h,j} = V_h O_h ffn[:, j], u = readout";
  }
  return m;
}
}  // namespace

bool is_transformer_json(const json& j) {
  if (!j.is_object()) return false;
  const auto it = j.find("format");
  return it != j.end() && it->is_string() && (*it == transformer_format || *it == transformer_factored_format);
}

bool is_transformer_text(const std::string& text) {
  try {
    return is_transformer_json(parse_json_text(text));
  } catch (const Error&) {
    return false;
  }
}

TransformerModel transformer_from_json(const json& j, TransformerFileInfo* info) {
  if (!is_transformer_json(j)) throw_input("format: must be \"" + std::string(transformer_format) + "\" or \"" + transformer_factored_format + "\"");
  if (!j.contains("version")) throw_input("version: missing; a transformer file carries \"version\": 1");
  if (!(j["version"].is_number_integer() && j["version"] == 1))
    throw_input("version: unsupported version " + json_shown(j["version"]) + " (this mhaq reads version 1)");
  TransformerModel m;
  if (j["format"] == transformer_format) {
    m = plain_from(j);
    if (info) *info = TransformerFileInfo{};
  } else {
    m = factored_from(j, info);
  }
  m.validate();
  if (info) {
    info->heads = m.heads();
    info->neurons = m.neurons();
  }
  return m;
}

TransformerModel transformer_from_json_text(const std::string& text, TransformerFileInfo* info) { return transformer_from_json(parse_json_text(text), info); }

void check_entry_sizes(const TransformerModel& m, const std::string& what) {
  auto check = [&](const Rational& x, const std::string& where) {
    const size_t n = x.str_size();
    if (n > static_cast<size_t>(limits::max_entry_chars))
      throw_input(what + ": " + where + " has " + std::to_string(n) + " characters, more than the limit of " + std::to_string(limits::max_entry_chars) +
                  " for an entry of a model file");
  };
  for (int h = 0; h < m.heads(); ++h)
    for (int a = 0; a < m.d; ++a)
      for (int b = 0; b < m.d; ++b) check(m.W[h](a, b), "heads[" + std::to_string(h) + "].W[" + std::to_string(a) + "][" + std::to_string(b) + "]");
  for (int k = 0; k < m.neurons(); ++k) {
    check(m.u[k], "neurons[" + std::to_string(k) + "].u");
    for (int h = 0; h < m.heads(); ++h)
      for (int a = 0; a < m.d; ++a) check(m.U[h][k][a], "neurons[" + std::to_string(k) + "].U[" + std::to_string(h) + "][" + std::to_string(a) + "]");
  }
}

std::string transformer_to_json_text(const TransformerModel& m) {
  std::ostringstream o;
  auto vec = [](const QVec& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", \"" : "\"") + v[i].str() + "\"";
    return s + "]";
  };
  o << "{\"format\": \"" << transformer_format << "\", \"version\": 1, \"d\": " << m.d << ",\n \"heads\": [";
  for (int h = 0; h < m.heads(); ++h) {
    o << (h ? ",\n  " : "\n  ") << "{\"W\": [";
    for (int r = 0; r < m.d; ++r) o << (r ? ", " : "") << vec(m.W[h].row(r));
    o << "]}";
  }
  o << "],\n \"neurons\": [";
  for (int j = 0; j < m.neurons(); ++j) {
    o << (j ? ",\n  " : "\n  ") << "{\"u\": \"" << m.u[j].str() << "\", \"U\": [";
    for (int h = 0; h < m.heads(); ++h) o << (h ? ", " : "") << vec(m.U[h][j]);
    o << "]}";
  }
  o << "]}\n";
  return o.str();
}

TransformerModel generate_transformer(const TransformerGenerateOptions& o) {
  check_option("--d", o.d, 1, limits::max_d);
  check_option("--heads", o.heads, 1, limits::max_heads);
  // the extra --zero-neuron / --parallel-neurons neurons count too: what generate writes, recover reads
  check_option("--ffn", o.neurons, 1, limits::max_neurons - (o.zero_neuron ? 1 : 0) - (o.parallel_neurons ? 1 : 0));
  if (o.w_range < 1 || o.w_den < 1 || o.U_range < 1 || o.U_den < 1) throw Error(ErrorKind::usage, "entry ranges and denominators must be positive");
  if (o.share_w && o.heads < 2) throw Error(ErrorKind::usage, "--share-w needs at least 2 heads");
  Rng rng(o.seed);
  TransformerModel m;
  m.d = o.d;
  auto entry = [&](long range, long den) { return Rational(rng.uniform_int(-range, range), static_cast<unsigned long>(den)); };
  for (int h = 0; h < o.heads; ++h) {
    QMat W(o.d, o.d);
    for (int a = 0; a < o.d; ++a)
      for (int b = 0; b < o.d; ++b) W(a, b) = entry(o.w_range, o.w_den);
    m.W.push_back(h == 1 && o.share_w ? m.W[0] : W);
  }
  m.U.assign(o.heads, {});
  auto add_neuron = [&](const std::vector<QVec>& cols, const Rational& u) {
    for (int h = 0; h < o.heads; ++h) m.U[h].push_back(cols[h]);
    m.u.push_back(u);
  };
  auto nonzero_u = [&] {
    long k = 0;
    while (k == 0) k = rng.uniform_int(-4, 4);
    return Rational(k, 2);
  };
  for (int j = 0; j < o.neurons; ++j) {
    std::vector<QVec> cols(o.heads);
    bool any = false;
    while (!any) {
      for (int h = 0; h < o.heads; ++h) {
        cols[h] = QVec(o.d);
        for (int a = 0; a < o.d; ++a) {
          cols[h][a] = entry(o.U_range, o.U_den);
          any = any || !cols[h][a].is_zero();
        }
      }
    }
    add_neuron(cols, nonzero_u());
  }
  if (o.zero_neuron) add_neuron(std::vector<QVec>(o.heads, QVec(o.d, Rational(0))), nonzero_u());
  if (o.parallel_neurons) {  // 2 U_1, with u of the same sign: merged into one neuron
    std::vector<QVec> cols(o.heads);
    for (int h = 0; h < o.heads; ++h) cols[h] = scaled(m.U[h][0], Rational(2));
    const Rational u = m.u[0].sign() > 0 ? Rational(1, 2) : Rational(-1, 2);
    add_neuron(cols, u);
  }
  return m;
}

}  // namespace mhaq
