#include "mhaq/model/model.hpp"

#include <flint/fmpz.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "mhaq/base/error.hpp"
#include "mhaq/base/io.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/arith/surd.hpp"
#include "mhaq/model/factored.hpp"

namespace mhaq {

namespace {
const Rational& c_at(const HeadQ& h, int i) {
  static const Rational zero;
  return h.c.empty() ? zero : h.c[static_cast<size_t>(i)];
}
// Lexicographic order of (W, c) entries (exact; an empty c reads as zeros),
// for grouping equal scores in O(H log H) comparisons: a file may list many heads.
int score_cmp(const HeadQ& a, const HeadQ& b) {
  for (int i = 0; i < a.W.rows(); ++i)
    for (int j = 0; j < a.W.cols(); ++j) {
      const int c = fmpq_cmp(a.W(i, j).raw(), b.W(i, j).raw());
      if (c != 0) return c;
    }
  if (a.c.empty() && b.c.empty()) return 0;
  for (int i = 0; i < a.W.rows(); ++i) {
    const int c = fmpq_cmp(c_at(a, i).raw(), c_at(b, i).raw());
    if (c != 0) return c;
  }
  return 0;
}
}  // namespace

bool Model::has_bias() const {
  if (!beta.is_zero()) return true;
  for (const auto& h : heads)
    for (const auto& x : h.c)
      if (!x.is_zero()) return true;
  return false;
}

void drop_zero_bias(Model& m) {
  for (auto& h : m.heads) {
    bool zero = true;
    for (const auto& x : h.c) zero = zero && x.is_zero();
    if (zero) h.c.clear();
  }
}

std::vector<int> equal_score_groups(const Model& m) {
  const size_t n = m.heads.size();
  std::vector<int> order(n), first(n);
  for (size_t h = 0; h < n; ++h) order[h] = static_cast<int>(h);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return score_cmp(m.heads[a], m.heads[b]) < 0; });
  for (size_t k = 0; k < n; ++k) {
    const int h = order[k];
    // stable: the first of a run of equal (W, c) is its first occurrence
    first[h] = k > 0 && score_cmp(m.heads[order[k - 1]], m.heads[h]) == 0 ? first[order[k - 1]] : h;
  }
  return first;
}

Model Model::canonical() const {
  Model out;
  out.d = d;
  out.beta = beta;
  out.root = root;
  const std::vector<int> first = equal_score_groups(*this);
  std::vector<int> slot(heads.size(), -1);
  for (size_t h = 0; h < heads.size(); ++h) {
    const int f = first[h];
    if (slot[f] < 0) {
      slot[f] = static_cast<int>(out.heads.size());
      out.heads.push_back(heads[h]);
    } else {
      HeadQ& g = out.heads[static_cast<size_t>(slot[f])];
      g.v = g.v + heads[h].v;
    }
  }
  std::vector<HeadQ> kept;
  for (auto& g : out.heads) {
    bool zero = true;
    for (const auto& x : g.v) zero = zero && x.is_zero();
    if (!zero) kept.push_back(std::move(g));
  }
  out.heads = std::move(kept);
  drop_zero_bias(out);
  return out;
}

long Model::w_denominator() const {
  fmpz_t l;
  fmpz_init_set_ui(l, 1);
  for (const auto& h : heads) {
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) fmpz_lcm(l, l, fmpq_denref(h.W(i, j).raw()));
    for (const auto& x : h.c) fmpz_lcm(l, l, fmpq_denref(x.raw()));
  }
  if (!fmpz_fits_si(l)) { fmpz_clear(l); throw_input("W and c denominators too large for the exact oracle"); }
  const long out = fmpz_get_si(l);
  fmpz_clear(l);
  return out;
}

void Model::validate() const {
  if (d < 1 || d > limits::max_recover_d) throw_input("model dimension d must be in [1, " + std::to_string(limits::max_recover_d) + "], got " + std::to_string(d));
  if (heads.empty()) throw_input("model has no heads");
  if (root < 1) throw_input("model scale: sqrt(" + std::to_string(root) + ") is not the square root of a positive integer");
  for (size_t h = 0; h < heads.size(); ++h) {
    if (heads[h].W.rows() != d || heads[h].W.cols() != d) throw_input("head " + std::to_string(h) + ": W is not " + std::to_string(d) + "x" + std::to_string(d));
    if (static_cast<int>(heads[h].v.size()) != d) throw_input("head " + std::to_string(h) + ": v does not have length " + std::to_string(d));
    if (!heads[h].c.empty() && static_cast<int>(heads[h].c.size()) != d)
      throw_input("head " + std::to_string(h) + ": c does not have length " + std::to_string(d));
  }
}

using nlohmann::json;

Rational rational_from_json(const json& e, const std::string& where) {
  if (e.is_string()) {
    try {
      return Rational::parse(e.get_ref<const std::string&>(), static_cast<size_t>(limits::max_entry_chars));
    } catch (const Error& err) {
      throw_input(where + ": " + err.what());
    }
  }
  if (e.is_number_unsigned()) {  // read as unsigned: 2^63 and above must not wrap
    Rational q;
    fmpz_set_ui(fmpq_numref(q.raw()), e.get<std::uint64_t>());
    return q;
  }
  if (e.is_number_integer()) return Rational(e.get<long>());
  if (e.is_number_float())
    throw_input(where + ": binary floating-point number " + json_shown(e) + "; write entries as exact strings such as \"0.125\" or \"-3/4\"");
  throw_input(where + ": expected a rational string, got " + json_shown(e));
}

void check_model_size(long heads, long entries_per_head, const std::string& where) {
  if (heads > limits::max_file_heads)
    throw_input(where + ": " + std::to_string(heads) + " heads, more than the limit of " + std::to_string(limits::max_file_heads) + " heads in a model file");
  if (heads * entries_per_head > limits::max_file_entries)
    throw_input(where + ": " + std::to_string(heads) + " heads of " + std::to_string(entries_per_head) + " entries each, more than the limit of " +
                std::to_string(limits::max_file_entries) + " entries in a model file");
}

Model model_from_json(const json& j, const std::string& base, ModelFileInfo* info) {
  auto at = [&](const std::string& k) { return json_key_path(base, k); };
  const std::string top = base.empty() ? std::string("model file") : base;
  if (!j.is_object()) throw_input(top + ": expected an object, got " + json_shown(j));
  if (base.empty())  // a model file names what it is; a model inside another file is named by that file
    for (const char* k : {"format", "version"})
      if (!j.contains(k)) throw_input(std::string(k) + ": missing; a model file starts {\"format\": \"mhaq-model\" (or \"" + factored_format + "\"), \"version\": 1, ...}");
  if (j.contains("format") && j["format"] == factored_format) {
    const FactoredModel f = factored_from_json(j, base);
    Model m = to_model(f);
    if (info) {
      *info = describe(f);
      info->biases = m.has_bias();
    }
    return m;
  }
  if (j.contains("format") && j["format"] != "mhaq-model")
    throw_input(at("format") + ": must be \"mhaq-model\" or \"" + std::string(factored_format) + "\", got " + json_shown(j["format"]));
  if (j.contains("version") && !(j["version"].is_number_integer() && j["version"] == 1))
    throw_input(at("version") + ": unsupported version " + json_shown(j["version"]) + " (this mhaq reads version 1)");
  static const std::string bias_keys = " (a plain model's biases are \"c\" in a head and \"beta\" at the top level; docs/formats.md)";
  for (auto it = j.begin(); it != j.end(); ++it)
    if (looks_like_bias(it.key())) throw_input(at(clean_text(it.key())) + ": unknown bias field" + bias_keys);
  const long d = json_long(json_member(j, base, "d"), 1, limits::max_d, at("d"));
  const json& hs = json_member(j, base, "heads");
  if (!hs.is_array()) throw_input(at("heads") + ": expected an array of heads {\"W\", \"v\"}, got " + json_shown(hs));
  if (hs.empty()) throw_input(at("heads") + ": the model has no heads");
  check_model_size(static_cast<long>(hs.size()), d * d + 2 * d, at("heads"));
  Model m;
  m.d = static_cast<int>(d);
  for (size_t hi = 0; hi < hs.size(); ++hi) {
    const json& h = hs[hi];
    const std::string where = json_index_path(at("heads"), hi);
    if (!h.is_object()) throw_input(where + ": expected an object {\"W\", \"v\"}, got " + json_shown(h));
    for (auto it = h.begin(); it != h.end(); ++it)
      if (it.key() != "W" && it.key() != "v" && it.key() != "c") {
        const std::string k = quote_text(it.key());
        if (looks_like_bias(it.key())) throw_input(where + "." + clean_text(it.key()) + ": unknown bias field" + bias_keys);
        if (it.key() == "Q" || it.key() == "K" || it.key() == "V")
          throw_input(where + ": unknown field " + k + " (a factored model file needs \"format\": \"" + factored_format + "\")");
        throw_input(where + ": unknown field " + k);
      }
    const json& W = json_member(h, where, "W");
    const json& v = json_member(h, where, "v");
    if (!W.is_array() || W.size() != static_cast<size_t>(d))
      throw_input(where + ".W: expected " + std::to_string(d) + " rows, got " + json_shown(W));
    if (!v.is_array() || v.size() != static_cast<size_t>(d))
      throw_input(where + ".v: expected " + std::to_string(d) + " entries, got " + json_shown(v));
    HeadQ head{QMat(m.d, m.d), QVec(m.d)};
    for (int r = 0; r < m.d; ++r) {
      const auto& row = W[static_cast<size_t>(r)];
      const std::string rp = json_index_path(where + ".W", static_cast<size_t>(r));
      if (!row.is_array() || row.size() != static_cast<size_t>(d)) throw_input(rp + ": expected " + std::to_string(d) + " entries, got " + json_shown(row));
      for (int c = 0; c < m.d; ++c) head.W(r, c) = rational_from_json(row[static_cast<size_t>(c)], json_index_path(rp, static_cast<size_t>(c)));
    }
    for (int r = 0; r < m.d; ++r) head.v[r] = rational_from_json(v[static_cast<size_t>(r)], json_index_path(where + ".v", static_cast<size_t>(r)));
    if (h.contains("c")) {
      const json& c = h["c"];
      if (!c.is_array() || c.size() != static_cast<size_t>(d))
        throw_input(where + ".c: expected " + std::to_string(d) + " entries, got " + json_shown(c));
      head.c.resize(static_cast<size_t>(d));
      for (int r = 0; r < m.d; ++r) head.c[r] = rational_from_json(c[static_cast<size_t>(r)], json_index_path(where + ".c", static_cast<size_t>(r)));
    }
    m.heads.push_back(std::move(head));
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "format" && it.key() != "version" && it.key() != "d" && it.key() != "heads" && it.key() != "bases" && it.key() != "beta" &&
        it.key() != "scale")
      throw_input(top + ": unknown field " + quote_text(it.key()) + " (a plain model file has format, version, d, heads and optionally beta, scale and bases; " +
                  "a factored one needs \"format\": \"" + factored_format + "\")");
  if (j.contains("beta")) m.beta = rational_from_json(j["beta"], at("beta"));
  if (j.contains("scale")) apply_scale(m, scale_from_json(j["scale"], at("scale")));
  drop_zero_bias(m);
  m.validate();
  if (info) {
    *info = ModelFileInfo{};
    info->d = m.d;
    info->heads = m.num_heads();
    info->biases = m.has_bias();
  }
  return m;
}

Model model_from_json_text(const std::string& text, ModelFileInfo* info) { return model_from_json(parse_json_text(text), "", info); }

Surd scale_from_json(const json& e, const std::string& where) {
  if (e.is_number_float())
    throw_input(where + ": binary floating-point number " + json_shown(e) + "; write the scale exactly, e.g. \"1/2\" or \"1/sqrt(8)\"");
  if (e.is_number_integer()) return Surd{rational_from_json(e, where), 1};
  if (!e.is_string()) throw_input(where + ": expected a scale such as \"1/2\" or \"1/sqrt(8)\", got " + json_shown(e));
  return parse_surd(e.get_ref<const std::string&>(), where);
}

void apply_scale(Model& m, const Surd& s) {
  for (auto& h : m.heads) {
    for (int i = 0; i < m.d; ++i)
      for (int j = 0; j < m.d; ++j) h.W(i, j) = s.q * h.W(i, j);
    for (auto& x : h.c) x = s.q * x;
  }
  m.root *= s.m;
  // sqrt(a) sqrt(b) with a, b squarefree: the square part of a b leaves the root
  if (m.root != s.m) {
    const Surd r = surd_of(Rational(1), Rational(m.root), "model scale");
    m.root = 1;
    apply_scale(m, r);
  }
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
    o += "],\n   \"v\": " + vec(m.heads[h].v);
    if (!m.heads[h].c.empty()) o += ",\n   \"c\": " + vec(m.heads[h].c);
    o += "}";
  }
  o += "]";
  if (!m.beta.is_zero()) o += ",\n \"beta\": " + json(m.beta.str()).dump();
  if (m.root != 1) o += ",\n \"scale\": " + json(Surd{Rational(1), m.root}.str()).dump();
  return o + "}\n";
}

void check_entry_sizes(const Model& m, const std::string& what) {
  auto check = [&](const Rational& x, const std::string& where) {
    const size_t n = x.str_size();
    if (n > static_cast<size_t>(limits::max_entry_chars))
      throw_input(what + ": " + where + " has " + std::to_string(n) + " characters, more than the limit of " + std::to_string(limits::max_entry_chars) +
                  " for an entry of a model file");
  };
  for (size_t h = 0; h < m.heads.size(); ++h) {
    const std::string hp = json_index_path("heads", h);
    for (int i = 0; i < m.heads[h].W.rows(); ++i)
      for (int j = 0; j < m.heads[h].W.cols(); ++j)
        check(m.heads[h].W(i, j), hp + ".W[" + std::to_string(i) + "][" + std::to_string(j) + "]");
    for (size_t i = 0; i < m.heads[h].v.size(); ++i) check(m.heads[h].v[i], json_index_path(hp + ".v", i));
    for (size_t i = 0; i < m.heads[h].c.size(); ++i) check(m.heads[h].c[i], json_index_path(hp + ".c", i));
  }
  check(m.beta, "beta");
}

Model read_model_file(const std::string& path, ModelFileInfo* info) {
  const std::string text = read_file_text(path, "model file");
  try {
    return model_from_json_text(text, info);
  } catch (const Error& e) {
    throw Error(e.kind(), clean_text(path) + ": " + e.what());
  }
}

Model generate_model(const GenerateOptions& o, long d_limit) {
  check_option("--d", o.d, 1, d_limit > 0 ? d_limit : limits::max_d);
  check_option("--heads", o.heads, 1, limits::max_heads);
  check_option("--w-range", o.w_range, 1, limits::max_entry_range);
  check_option("--w-den", o.w_den, 1, limits::max_entry_range);
  check_option("--v-range", o.v_range, 1, limits::max_entry_range);
  check_option("--v-den", o.v_den, 1, limits::max_entry_range);
  if (o.share_w && o.heads < 2) throw Error(ErrorKind::usage, "--share-w needs at least 2 heads");
  if (o.cancel_v && o.heads < (o.share_w ? 4 : 2)) throw Error(ErrorKind::usage, o.share_w ? "--share-w with --cancel-v needs at least 4 heads" : "--cancel-v needs at least 2 heads");
  if (o.rank != 0) check_option("--rank", o.rank, 1, o.d);
  {  // heads with a fresh W need that many distinct W: (2 w_range + 1)^(d^2) exist
    const long fresh = o.heads - (o.share_w ? 1 : 0) - (o.cancel_v ? 1 : 0);
    double possible = 1;
    for (long k = 0; k < static_cast<long>(o.d) * o.d && possible < 1e6; ++k) possible *= static_cast<double>(2 * o.w_range + 1);
    if (static_cast<double>(fresh) > possible)
      throw Error(ErrorKind::usage, "--heads " + std::to_string(o.heads) + ": only " + std::to_string(static_cast<long>(possible)) +
                                        " distinct W exist for d=" + std::to_string(o.d) + " with entries in [-" + std::to_string(o.w_range) + ", " +
                                        std::to_string(o.w_range) + "] / " + std::to_string(o.w_den) + " (raise --w-range)");
  }
  Rng rng(o.seed);
  Model m;
  m.d = o.d;
  auto entries = [&](int rows, int cols) {
    QMat W(rows, cols);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) W(r, c) = Rational(rng.uniform_int(-o.w_range, o.w_range), static_cast<unsigned long>(o.w_den));
    return W;
  };
  // rank: W = A B^T with B's entries in {-1, 0, 1} and A's on W's grid with
  // the range a = floor(w_range sqrt(3 / (2 rank))) (at least 1): W keeps the
  // grid's denominator (an exact run's cost grows with it) and about the
  // spread of a full-rank draw (a variance of rank a^2/3 2/3 against w_range^2/3)
  long a_range = 1;
  for (long lo = 1, hi = o.w_range; o.rank > 0 && lo <= hi;) {  // the largest a in [1, w_range] with 2 rank a^2 <= 3 w_range^2
    const long mid = lo + (hi - lo) / 2;
    if (static_cast<__int128>(mid) * mid * 2 * o.rank <= static_cast<__int128>(o.w_range) * o.w_range * 3) {
      a_range = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  auto fresh_W = [&] {
    if (o.rank == 0) return entries(o.d, o.d);
    for (int attempt = 0;; ++attempt) {
      if (attempt == 1000) throw Error(ErrorKind::usage, "--rank " + std::to_string(o.rank) + ": 1000 draws of A B^T fell below that rank (raise --w-range)");
      QMat A(o.d, o.rank), B(o.d, o.rank);
      for (int r = 0; r < o.d; ++r)
        for (int c = 0; c < o.rank; ++c) {
          A(r, c) = Rational(rng.uniform_int(-a_range, a_range), static_cast<unsigned long>(o.w_den));
          B(r, c) = Rational(rng.uniform_int(-1, 1));
        }
      QMat W(o.d, o.d);
      for (int r = 0; r < o.d; ++r)
        for (int c = 0; c < o.d; ++c) {
          Rational s(0);
          for (int k = 0; k < o.rank; ++k) s += A(r, k) * B(c, k);
          W(r, c) = s;
        }
      if (rank(W) == o.rank) return W;
    }
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
      for (int attempt = 0;; ++attempt) {
        if (attempt == 1000) throw Error(ErrorKind::usage, "--heads " + std::to_string(o.heads) + ": 1000 draws gave no W distinct from the earlier heads' (raise --w-range)");
        head.W = fresh_W();
        bool dup = false;
        for (const auto& g : m.heads) dup = dup || g.W == head.W;
        if (!dup) break;
      }
      head.v = fresh_v();
    }
    m.heads.push_back(std::move(head));
  }
  if (o.bias) {
    for (int h = 0; h < o.heads; ++h) {
      const bool copied = (o.share_w && h == 1) || (o.cancel_v && h == o.heads - 1);
      QVec c(o.d);
      for (int r = 0; r < o.d; ++r) c[r] = copied ? m.heads[h - 1].c[r] : Rational(rng.uniform_int(-o.w_range, o.w_range), static_cast<unsigned long>(o.w_den));
      m.heads[h].c = std::move(c);
    }
    m.beta = Rational(rng.uniform_int(-o.v_range, o.v_range), static_cast<unsigned long>(o.v_den));
    drop_zero_bias(m);
  }
  return m;
}

void refuse_irrational_scale(long root) {
  throw Error(ErrorKind::usage, "the model's scores carry the irrational factor sqrt(" + std::to_string(root) +
                                    ") (an irrational scale such as 1/sqrt(d_k)): exact mode needs rational scores in Q(e^{1/L}); use --arith ball "
                                    "(certified balls that contain the truth), or golden export --certified");
}

}  // namespace mhaq
