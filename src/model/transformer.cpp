#include "mhaq/model/transformer.hpp"

#include <flint/fmpz.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "mhaq/base/error.hpp"
#include "mhaq/base/random.hpp"
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
// lambda > 0 with b = lambda a (a != 0), when it exists
bool positive_multiple(const QVec& a, const QVec& b, Rational& lambda) {
  int k = -1;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].is_zero()) { k = static_cast<int>(i); break; }
  if (k < 0) return false;
  lambda = b[k] / a[k];
  if (lambda.sign() <= 0) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(b[i] == lambda * a[i])) return false;
  return true;
}
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
  for (int j = 0; j < m.neurons(); ++j) {
    const QVec v = m.neuron_vector(j);
    if (m.u[j].is_zero() || is_zero_vec(v)) continue;
    bool merged = false;
    for (auto& n : ns) {
      Rational lambda;
      if (positive_multiple(n.v, v, lambda)) {  // u_j ReLU(lambda g) = (lambda u_j) ReLU(g)
        n.c = n.c + lambda * m.u[j];
        merged = true;
        break;
      }
    }
    if (!merged) ns.push_back({m.u[j], v});
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
  if (d < 1 || d > 64) throw_input("transformer: d must be in [1, 64], got " + std::to_string(d));
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
QMat qmat_from(const json& j, int rows, int cols, const std::string& where) {
  if (!j.is_array() || static_cast<int>(j.size()) != rows) throw_input(where + ": expected " + std::to_string(rows) + " rows");
  QMat M(rows, cols);
  for (int r = 0; r < rows; ++r) {
    if (!j[r].is_array() || static_cast<int>(j[r].size()) != cols) throw_input(where + "[" + std::to_string(r) + "]: expected " + std::to_string(cols) + " entries");
    for (int c = 0; c < cols; ++c) M(r, c) = rational_from_json(j[r][c], where + "[" + std::to_string(r) + "][" + std::to_string(c) + "]");
  }
  return M;
}
QVec qvec_from(const json& j, int n, const std::string& where) {
  if (!j.is_array() || static_cast<int>(j.size()) != n) throw_input(where + ": expected " + std::to_string(n) + " entries");
  QVec v(n);
  for (int i = 0; i < n; ++i) v[i] = rational_from_json(j[i], where + "[" + std::to_string(i) + "]");
  return v;
}
long int_field(const json& j, const char* key, long lo, long hi) {
  if (!j.contains(key) || !j[key].is_number_integer()) throw_input(std::string("transformer file: missing integer field \"") + key + "\"");
  const long v = j[key].get<long>();
  if (v < lo || v > hi) throw_input(std::string("transformer file: ") + key + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}
void only_keys(const json& j, std::initializer_list<const char*> keys, const std::string& where) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool ok = false;
    for (const char* k : keys) ok = ok || it.key() == k;
    if (!ok) {
      if (looks_like_bias(it.key())) throw_input(where + it.key() + ": bias terms are not part of the model (it is bias-free)");
      throw_input(where + it.key() + ": unknown field");
    }
  }
}

TransformerModel plain_from(const json& j) {
  only_keys(j, {"format", "version", "d", "heads", "neurons"}, "transformer file: ");
  TransformerModel m;
  m.d = static_cast<int>(int_field(j, "d", 1, 64));
  if (!j.contains("heads") || !j["heads"].is_array() || j["heads"].empty() || j["heads"].size() > 64) throw_input("transformer file: \"heads\" must be an array of 1 to 64 heads");
  if (!j.contains("neurons") || !j["neurons"].is_array() || j["neurons"].empty() || j["neurons"].size() > 256)
    throw_input("transformer file: \"neurons\" must be an array of 1 to 256 neurons");
  const int H = static_cast<int>(j["heads"].size()), M = static_cast<int>(j["neurons"].size());
  for (int h = 0; h < H; ++h) {
    const json& hj = j["heads"][h];
    const std::string where = "heads[" + std::to_string(h) + "]";
    if (!hj.is_object()) throw_input("transformer file: " + where + " must be an object");
    only_keys(hj, {"W"}, "transformer file: " + where + ".");
    m.W.push_back(qmat_from(hj.value("W", json()), m.d, m.d, where + ".W"));
  }
  m.U.assign(H, std::vector<QVec>(M));
  for (int k = 0; k < M; ++k) {
    const json& nj = j["neurons"][k];
    const std::string where = "neurons[" + std::to_string(k) + "]";
    if (!nj.is_object()) throw_input("transformer file: " + where + " must be an object");
    only_keys(nj, {"u", "U"}, "transformer file: " + where + ".");
    if (!nj.contains("u")) throw_input("transformer file: " + where + ".u is missing");
    m.u.push_back(rational_from_json(nj["u"], where + ".u"));
    const QMat Uk = qmat_from(nj.value("U", json()), H, m.d, where + ".U");
    for (int h = 0; h < H; ++h) m.U[h][k] = Uk.row(h);
  }
  return m;
}

TransformerModel factored_from(const json& j, TransformerFileInfo* info) {
  only_keys(j, {"format", "version", "d", "d_k", "d_v", "d_out", "scale", "heads", "O", "ffn", "readout"}, "transformer file: ");
  const int d = static_cast<int>(int_field(j, "d", 1, 64)), dk = static_cast<int>(int_field(j, "d_k", 1, 64)),
            dv = static_cast<int>(int_field(j, "d_v", 1, 64));
  if (!j.contains("heads") || !j["heads"].is_array() || j["heads"].empty() || j["heads"].size() > 64) throw_input("transformer file: \"heads\" must be an array of 1 to 64 heads");
  const int H = static_cast<int>(j["heads"].size());
  if (!j.contains("O") || !j["O"].is_array() || j["O"].empty() || !j["O"][0].is_array()) throw_input("transformer file: \"O\" must be a (H d_v) x d_out matrix");
  const int dout = static_cast<int>(j["O"][0].size());
  if (j.contains("d_out") && int_field(j, "d_out", 1, 64) != dout) throw_input("transformer file: d_out disagrees with O");
  const Rational scale = j.contains("scale") ? rational_from_json(j["scale"], "scale") : Rational(1);
  const QMat O = qmat_from(j["O"], H * dv, dout, "O");
  if (!j.contains("ffn") || !j["ffn"].is_array() || j["ffn"].empty() || !j["ffn"][0].is_array()) throw_input("transformer file: \"ffn\" must be a d_out x m matrix");
  const int M = static_cast<int>(j["ffn"][0].size());
  if (M < 1 || M > 256) throw_input("transformer file: ffn must have 1 to 256 neurons");
  const QMat F1 = qmat_from(j["ffn"], dout, M, "ffn");
  const QVec u = qvec_from(j.value("readout", json()), M, "readout");
  TransformerModel m;
  m.d = d;
  m.u = u;
  m.U.assign(H, std::vector<QVec>(M, QVec(d, Rational(0))));
  for (int h = 0; h < H; ++h) {
    const json& hj = j["heads"][h];
    const std::string where = "heads[" + std::to_string(h) + "]";
    if (!hj.is_object()) throw_input("transformer file: " + where + " must be an object");
    only_keys(hj, {"Q", "K", "V"}, "transformer file: " + where + ".");
    const QMat Q = qmat_from(hj.value("Q", json()), d, dk, where + ".Q"), K = qmat_from(hj.value("K", json()), d, dk, where + ".K"),
               V = qmat_from(hj.value("V", json()), d, dv, where + ".V");
    QMat W(d, d);
    for (int a = 0; a < d; ++a)
      for (int b = 0; b < d; ++b) {
        Rational s(0);
        for (int c = 0; c < dk; ++c) s += K(a, c) * Q(b, c);
        W(a, b) = scale * s;
      }
    m.W.push_back(W);
    // U_{h,j} = V_h O_h ffn[:, j]
    for (int k = 0; k < M; ++k)
      for (int a = 0; a < d; ++a) {
        Rational s(0);
        for (int c = 0; c < dv; ++c) {
          Rational t(0);
          for (int e = 0; e < dout; ++e) t += O(h * dv + c, e) * F1(e, k);
          s += V(a, c) * t;
        }
        m.U[h][k][a] = s;
      }
  }
  if (info) {
    info->format = transformer_factored_format;
    info->d_k = dk;
    info->d_v = dv;
    info->d_out = dout;
    info->conversion = "W_h = scale K_h Q_h^T, U_{h,j} = V_h O_h ffn[:, j], u = readout";
  }
  return m;
}
}  // namespace

bool is_transformer_text(const std::string& text) {
  try {
    const json j = json::parse(text);
    return j.is_object() && j.contains("format") && j["format"].is_string() &&
           (j["format"] == transformer_format || j["format"] == transformer_factored_format);
  } catch (const std::exception&) {
    return false;
  }
}

TransformerModel transformer_from_json_text(const std::string& text, TransformerFileInfo* info) {
  json j;
  try {
    j = json::parse(text);
  } catch (const std::exception& e) {
    throw_input(std::string("transformer file is not valid JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("format") || !j["format"].is_string()) throw_input("transformer file: missing \"format\"");
  if (j.contains("version") && j["version"] != 1) throw_input("transformer file: unsupported version (this mhaq reads version 1)");
  TransformerModel m;
  if (j["format"] == transformer_format) {
    m = plain_from(j);
    if (info) *info = TransformerFileInfo{};
  } else if (j["format"] == transformer_factored_format) {
    m = factored_from(j, info);
  } else {
    throw_input("transformer file: \"format\" must be \"" + std::string(transformer_format) + "\" or \"" + transformer_factored_format + "\"");
  }
  m.validate();
  if (info) {
    info->heads = m.heads();
    info->neurons = m.neurons();
  }
  return m;
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
  if (o.d < 1 || o.d > 64) throw Error(ErrorKind::usage, "--d must be in [1, 64]");
  if (o.heads < 1 || o.heads > 64) throw Error(ErrorKind::usage, "--heads must be in [1, 64]");
  if (o.neurons < 1 || o.neurons > 256) throw Error(ErrorKind::usage, "--ffn must be in [1, 256]");
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
