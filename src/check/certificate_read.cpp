// The certificate checker's strict reader (certificate_read.hpp). It shares no
// code with mhaq_lib's readers: every malformed field is an InputError naming
// its JSON path, and messages quote at most about 80 characters of the file,
// cleaned to printable ASCII.
#include "certificate_read.hpp"

#include <flint/fmpz_poly.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mhaq/check/certificate_check.hpp"
#include "mhaq/check/limits.hpp"

namespace mhaq::check {

namespace cert_io {

using json = nlohmann::json;

// Parses the document: invalid JSON or UTF-8, duplicate keys, numbers beyond
// a double and nesting deeper than 64 levels are malformed certificates. A
// SAX handler builds the document (nlohmann's callback parser rescans each
// parent container, quadratic in the number of queries).
class Builder final : public json::json_sax_t {
 public:
  json root;
  bool null() override { return put(nullptr); }
  bool boolean(bool b) override { return put(b); }
  bool number_integer(json::number_integer_t v) override { return put(v); }
  bool number_unsigned(json::number_unsigned_t v) override { return put(v); }
  bool number_float(json::number_float_t v, const json::string_t&) override { return put(v); }
  bool string(json::string_t& v) override { return put(std::move(v)); }
  bool binary(json::binary_t& v) override { return put(json::binary(std::move(v))); }
  bool start_object(std::size_t) override { return open(json::value_t::object); }
  bool start_array(std::size_t) override { return open(json::value_t::array); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(json::string_t& k) override {
    keys_.back().key = k;
    if (!keys_.back().seen.insert(k).second) bad(path(true), "duplicate key " + quote_str(k));
    slot_ = &(*stack_.back())[k];
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
    const std::string w = ex.what();
    const auto close = w.find("] ");
    const std::string m = clean(close == std::string::npos ? w : w.substr(close + 2), 160);
    if (ex.id == 406) bad(path(true), "number out of range (beyond a double): " + m);
    throw InputError((stack_.empty() ? std::string() : path(true) + ": ") + "not valid JSON: " + m);
  }

 private:
  struct Keys {
    std::string key;
    std::set<std::string> seen;
    size_t n = 0;  // arrays: elements begun
  };
  std::vector<json*> stack_;
  std::vector<Keys> keys_;
  json* slot_ = nullptr;
  json* place(json&& v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    json* top = stack_.back();
    if (top->is_array()) {
      ++keys_.back().n;
      top->get_ref<json::array_t&>().push_back(std::move(v));
      return &top->get_ref<json::array_t&>().back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  template <class V>
  bool put(V&& v) {
    place(json(std::forward<V>(v)));
    return true;
  }
  bool open(json::value_t t) {
    stack_.push_back(place(json(t)));
    keys_.emplace_back();
    if (stack_.size() > 64) bad(path(false), "nested deeper than 64 levels");
    return true;
  }
  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }
  std::string path(bool inside_top) const {
    std::string p;
    for (size_t k = 0; k < stack_.size(); ++k) {
      const bool top = k + 1 == stack_.size();
      if (top && !inside_top) break;
      p = stack_[k]->is_object() ? at(p, clean(keys_[k].key)) : at(p, top ? keys_[k].n : keys_[k].n - 1);
    }
    return p;
  }
};

json parse_document(const std::string& text) {
  if (text.size() > static_cast<size_t>(limits::max_file_bytes))
    bad("", std::to_string(text.size()) + " bytes, more than the limit of " + std::to_string(limits::max_file_bytes));
  Builder b;
  json::sax_parse(text, &b);
  return std::move(b.root);
}

bool digits_only(const std::string& s, size_t from, size_t max) {
  return s.size() > from && s.size() <= max && s.find_first_not_of("0123456789", from) == std::string::npos;
}
void read_int(fmpz_t out, const std::string& s, const std::string& path, size_t max = static_cast<size_t>(limits::max_number_chars)) {
  if (s.size() > max) bad(path, "number of " + std::to_string(s.size()) + " characters, more than the limit of " + std::to_string(max));
  if (!digits_only(s, !s.empty() && s[0] == '-' ? 1 : 0, max)) bad(path, "not an integer: " + quote_str(s));
  fmpz_set_str(out, s.c_str(), 10);
}

Qn read_rational(const json& j, const std::string& path, size_t max = static_cast<size_t>(limits::max_number_chars)) {
  if (!j.is_string()) bad(path, "not a rational string \"p/q\"");
  const std::string& s = j.get_ref<const std::string&>();
  if (s.size() > max) bad(path, "number of " + std::to_string(s.size()) + " characters, more than the limit of " + std::to_string(max));
  const size_t slash = s.find('/');
  Qn q;
  fmpz_t n, d;
  fmpz_init(n);
  fmpz_init_set_ui(d, 1);
  try {
    read_int(n, s.substr(0, slash), path, max);
  } catch (...) {
    fmpz_clear(n);
    fmpz_clear(d);
    throw;
  }
  if (slash != std::string::npos) {
    const std::string ds = s.substr(slash + 1);
    if (!digits_only(ds, 0, max)) { fmpz_clear(n); fmpz_clear(d); bad(path, "not a rational: " + quote_str(s)); }
    fmpz_set_str(d, ds.c_str(), 10);
  }
  if (fmpz_is_zero(d)) { fmpz_clear(n); fmpz_clear(d); bad(path, "zero denominator"); }
  fmpq_set_fmpz_frac(q.v, n, d);
  fmpz_clear(n);
  fmpz_clear(d);
  return q;
}

// x = p/2^k exactly as an Arb midpoint; false if the denominator is not a power of two.
bool dyadic_to_arf(arf_t out, const Qn& q) {
  const fmpz* den = fmpq_denref(q.v);
  const slong k = static_cast<slong>(fmpz_bits(den)) - 1;
  if (static_cast<slong>(fmpz_val2(den)) != k) return false;
  arf_set_fmpz(out, fmpq_numref(q.v));
  arf_mul_2exp_si(out, out, -k);
  return true;
}

Num read_num(const json& j, const std::string& path, Mode mode) {
  Num x;
  if (mode == Mode::exact) {
    x.q = read_rational(j, path);
    return x;
  }
  if (mode == Mode::binary) {
    x.q = read_rational(j, path);
    if (!dyadic_to_arf(arb_midref(x.b.v), x.q)) bad(path, "not a dyadic rational (the denominator must be a power of two)");
    return x;
  }
  x.q = read_rational(need(j, path, "mid"), at(path, "mid"));
  if (!dyadic_to_arf(arb_midref(x.b.v), x.q)) bad(at(path, "mid"), "not a dyadic rational");
  const Qn r = read_rational(need(j, path, "rad"), at(path, "rad"));
  arf_t a;
  arf_init(a);
  const bool ok = fmpq_sgn(r.v) >= 0 && dyadic_to_arf(a, r);
  if (ok) arf_get_mag(arb_radref(x.b.v), a);  // exact for radii written from a mag; rounds up otherwise
  arf_clear(a);
  if (!ok) bad(at(path, "rad"), "not a non-negative dyadic rational");
  return x;
}

Pq read_qtau(const json& j, const std::string& path) {
  Pq x;
  fmpz_t c;
  fmpz_init(c);
  for (const char* part : {"num", "den"}) {
    const json& a = need_array(j, path, part, static_cast<size_t>(limits::max_tau_exponent) + 1);
    fmpz_poly_struct* p = std::string(part) == "num" ? x.v->num : x.v->den;
    fmpz_poly_zero(p);
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_string()) { fmpz_clear(c); bad(at(at(path, part), i), "not an integer string"); }
      read_int(c, a[i].get<std::string>(), at(at(path, part), i));
      fmpz_poly_set_coeff_fmpz(p, static_cast<slong>(i), c);
    }
  }
  fmpz_clear(c);
  if (fmpz_poly_is_zero(x.v->den)) bad(at(path, "den"), "zero denominator");
  fmpz_poly_q_canonicalise(x.v);
  return x;
}

std::vector<Qn> read_qvec(const json& j, const std::string& path, int d, size_t max = static_cast<size_t>(limits::max_entry_chars)) {
  if (!j.is_array() || static_cast<int>(j.size()) != d) bad(path, "expected " + std::to_string(d) + " rationals");
  std::vector<Qn> out;
  for (size_t i = 0; i < j.size(); ++i) out.push_back(read_rational(j[i], at(path, i), max));
  return out;
}
// row-major, d rows of `cols` entries (cols < 0: d)
std::vector<Qn> read_qmat(const json& j, const std::string& path, int d, size_t max = static_cast<size_t>(limits::max_entry_chars), int cols = -1) {
  if (!j.is_array() || static_cast<int>(j.size()) != d) bad(path, "expected " + std::to_string(d) + " rows");
  std::vector<Qn> out;
  for (size_t i = 0; i < j.size(); ++i)
    for (auto& x : read_qvec(j[i], at(path, i), cols < 0 ? d : cols, max)) out.push_back(std::move(x));
  return out;
}

// Arithmetic, inputs, claims and tolerances.
void read_run_facts(const json& doc, Cert& c) {
  using namespace limits;
  c.arith = need_str(doc, "", "arith");
  if (c.arith == "exact") c.mode = Mode::exact;
  else if (c.arith == "ball") c.mode = Mode::ball;
  else if (c.arith == "mpfr" || c.arith == "double") c.mode = Mode::binary;
  else bad("arith", "must be exact, ball, mpfr or double");
  if (c.mode == Mode::exact) c.L = need_long(doc, "", "L", 1, max_L);
  else c.bits = need_long(doc, "", "bits", min_bits, max_bits);
  if (c.arith == "double" && c.bits != 53) bad("bits", std::to_string(c.bits) + ", but a double run has 53 bits");

  const json& in = need(doc, "", "inputs");
  c.schedule = need_str(in, "inputs", "schedule");
  if (c.schedule != "paper" && c.schedule != "lean") bad("inputs.schedule", "must be paper or lean");
  c.H = static_cast<int>(need_long(in, "inputs", "heads_learner", 1, max_heads));
  c.bound = need_bool(in, "inputs", "heads_is_bound");
  c.token_range = need_long(in, "inputs", "token_range", 1, max_token_range);
  c.token_den = need_long(in, "inputs", "token_den", 1, max_token_den);
  c.oracle_bits = in.contains("oracle_bits") ? need_long(in, "inputs", "oracle_bits", 0, max_bits) : 0;
  c.bias = in.contains("bias") && need_bool(in, "inputs", "bias");

  const json& cl = need(doc, "", "claims");
  c.claim_queries = need_long(cl, "claims", "queries", 0, 1L << 40);
  c.claim_formula = need_str(cl, "claims", "query_formula");
  c.claim_formula_value = need_long(cl, "claims", "query_formula_value", 0, 1L << 40);
  c.claim_max_length = need_long(cl, "claims", "max_length", 0, 1L << 40);
  c.claim_length_bound = need_long(cl, "claims", "length_bound", 0, 1L << 40);
  c.claim_heads = need_long(cl, "claims", "heads_recovered", 0, 1L << 20);
  // optional, together: a run on a small token grid's witness queries
  if (cl.contains("grid_witness_queries") != in.contains("witness_range"))
    bad(cl.contains("grid_witness_queries") ? "inputs.witness_range" : "claims.grid_witness_queries",
        "missing (claims.grid_witness_queries and inputs.witness_range come together)");
  if (cl.contains("grid_witness_queries")) {
    c.witness_queries = need_long(cl, "claims", "grid_witness_queries", 1, max_witness_queries);
    c.witness_range = need_long(in, "inputs", "witness_range", 1, max_token_range);
  }
  if (c.mode == Mode::binary) {
    const json& t = need(doc, "", "tolerances");
    c.tol_answers = read_rational(need(t, "tolerances", "answers"), "tolerances.answers");
    c.tol_pairs = read_rational(need(t, "tolerances", "pairs"), "tolerances.pairs");
    c.tol_heads = read_rational(need(t, "tolerances", "heads"), "tolerances.heads");
    for (const Qn* x : {&c.tol_answers, &c.tol_pairs, &c.tol_heads})
      if (fmpq_sgn(x->v) < 0) bad("tolerances", "negative tolerance");
  } else if (doc.contains("tolerances")) {
    bad("tolerances", "only mpfr and double certificates have tolerances (" + c.arith + " values are compared by " +
                          (c.mode == Mode::exact ? "equality" : "containment") + ")");
  }
}

// The recorded model and the plan; the plan's size is bounded before it is built.
void read_model_and_plan(const json& doc, Cert& c) {
  using namespace limits;
  const json& m = need(doc, "", "model");
  c.d = static_cast<int>(need_long(m, "model", "d", 1, max_d));
  const json& mh = need_array(m, "model", "heads", static_cast<size_t>(max_file_heads));
  if (mh.empty()) bad("model.heads", "empty");
  const size_t entry = static_cast<size_t>(max_entry_chars);
  for (size_t h = 0; h < mh.size(); ++h) {
    const std::string p = at("model.heads", h);
    c.model.push_back({read_qmat(need(mh[h], p, "W"), at(p, "W"), c.d, entry), read_qvec(need(mh[h], p, "v"), at(p, "v"), c.d, entry)});
    if (mh[h].contains("c")) c.model.back().c = read_qvec(mh[h]["c"], at(p, "c"), c.d, entry);
  }
  if (m.contains("beta")) c.model_beta = read_rational(m["beta"], "model.beta", entry);
  // The plan's size follows from d, H and the schedule: bounded before anything is built.
  {
    const long d = c.d, H = c.H, b = c.bias ? 1 : 0;
    const long formula = c.schedule == "paper" ? 4 * H * d * (d + b) - 2 * H + 1 : 1 + 2 * H * (d * d + (1 + b) * d - 1);
    if (formula > max_plan_queries)
      bad("inputs.heads_learner", "the plan for d=" + std::to_string(d) + ", H=" + std::to_string(H) + " has " + std::to_string(formula) +
                                      " queries, more than the limit of " + std::to_string(max_plan_queries));
  }

  const json& pl = need(doc, "", "plan");
  c.plan_schedule = need_str(pl, "plan", "schedule");
  c.plan_d = need_long(pl, "plan", "d", 1, max_d);
  c.plan_H = need_long(pl, "plan", "H", 1, max_heads);
  c.B = read_qmat(need(pl, "plan", "B"), "plan.B", c.d, static_cast<size_t>(max_entry_chars), c.d + (c.bias ? 1 : 0));
  c.Delta = read_qmat(need(pl, "plan", "Delta"), "plan.Delta", c.d);
}

void read_queries_and_answers(const json& doc, Cert& c) {
  using namespace limits;
  const size_t max_queries = static_cast<size_t>(max_plan_queries + max_witness_queries);
  const json& qs = need_array(doc, "", "queries", max_queries);
  for (size_t i = 0; i < qs.size(); ++i) {
    const std::string p = at("queries", i);
    QueryRec r;
    r.index = need_long(qs[i], p, "index", 0, 1L << 40);
    r.length = need_long(qs[i], p, "length", 0, 1L << 40);
    const json& runs = need_array(qs[i], p, "runs", static_cast<size_t>(max_runs));
    if (runs.empty()) bad(at(p, "runs"), "empty");
    for (size_t k = 0; k < runs.size(); ++k) {
      const std::string rp = at(at(p, "runs"), k);
      Run run;
      run.token = read_qvec(need(runs[k], rp, "token"), at(rp, "token"), c.d);
      run.count = need_long(runs[k], rp, "count", 1, 1L << 30);
      r.q.push_back(std::move(run));
    }
    c.queries.push_back(std::move(r));
  }
  const json& as = need_array(doc, "", "answers", max_queries);
  for (size_t i = 0; i < as.size(); ++i) {
    if (c.mode == Mode::exact) c.exact_answers.push_back(read_qtau(as[i], at("answers", i)));
    else c.answers.push_back(read_num(as[i], at("answers", i), c.mode));
  }
}

// The recorded pair interpolants: P, and the poles and residues.
void read_pairs(const json& doc, Cert& c) {
  using namespace limits;
  const json& ps = need_array(doc, "", "pairs");
  for (size_t p = 0; p < ps.size(); ++p) {
    const std::string pp = at("pairs", p);
    PairRec r;
    r.kind = need_str(ps[p], pp, "kind");
    r.i = need_long(ps[p], pp, "i", 0, max_d);
    r.j = need_long(ps[p], pp, "j", 0, max_d);
    r.offset = read_qvec(need(ps[p], pp, "offset"), at(pp, "offset"), c.d);
    r.final_token = read_qvec(need(ps[p], pp, "final_token"), at(pp, "final_token"), c.d);
    const json& range = need_array(ps[p], pp, "queries", 2);
    if (range.size() != 2 || !range[0].is_number_integer() || !range[1].is_number_integer()) bad(at(pp, "queries"), "expected [first, last]");
    r.first = range[0].get<long>();
    r.last = range[1].get<long>();
    r.P = read_num(need(ps[p], pp, "P"), at(pp, "P"), c.mode);
    const json& poles = need_array(ps[p], pp, "poles", static_cast<size_t>(max_heads));
    for (size_t h = 0; h < poles.size(); ++h) {
      const std::string hp = at(at(pp, "poles"), h);
      if (c.mode == Mode::exact) r.n.push_back(need_long(poles[h], hp, "n", -(1L << 40), 1L << 40));
      else r.r.push_back(read_num(need(poles[h], hp, "r"), at(hp, "r"), c.mode));
      r.c.push_back(read_num(need(poles[h], hp, "c"), at(hp, "c"), c.mode));
    }
    c.pairs.push_back(std::move(r));
  }
}

// The recovered heads.
void read_heads(const json& doc, Cert& c) {
  using namespace limits;
  const json& hs = need_array(doc, "", "heads", static_cast<size_t>(max_heads));
  for (size_t h = 0; h < hs.size(); ++h) {
    const std::string hp = at("heads", h);
    HeadRec r;
    const json& W = need(hs[h], hp, "W");
    if (!W.is_array() || static_cast<int>(W.size()) != c.d) bad(at(hp, "W"), "expected " + std::to_string(c.d) + " rows");
    for (int i = 0; i < c.d; ++i) {
      const std::string rp = at(at(hp, "W"), static_cast<size_t>(i));
      if (!W[i].is_array() || static_cast<int>(W[i].size()) != c.d) bad(rp, "expected " + std::to_string(c.d) + " entries");
      for (int j = 0; j < c.d; ++j) r.W.push_back(read_num(W[i][j], at(rp, static_cast<size_t>(j)), c.mode));
    }
    const json& v = need(hs[h], hp, "v");
    if (!v.is_array() || static_cast<int>(v.size()) != c.d) bad(at(hp, "v"), "expected " + std::to_string(c.d) + " entries");
    for (int i = 0; i < c.d; ++i) r.v.push_back(read_num(v[i], at(at(hp, "v"), static_cast<size_t>(i)), c.mode));
    if (c.bias) {
      const json& cc = need(hs[h], hp, "c");
      if (!cc.is_array() || static_cast<int>(cc.size()) != c.d) bad(at(hp, "c"), "expected " + std::to_string(c.d) + " entries");
      for (int i = 0; i < c.d; ++i) r.c.push_back(read_num(cc[i], at(at(hp, "c"), static_cast<size_t>(i)), c.mode));
    } else if (hs[h].contains("c")) {
      bad(at(hp, "c"), "a head's c belongs to a run with biases (inputs.bias)");
    }
    c.heads.push_back(std::move(r));
  }
  if (c.bias) c.beta = read_num(need(doc, "", "beta"), "beta", c.mode);
  else if (doc.contains("beta")) bad("beta", "beta belongs to a run with biases (inputs.bias)");
}

}  // namespace cert_io

using namespace cert_io;

nlohmann::json parse_certificate_document(const std::string& text) {
  json doc = parse_document(text);
  if (!doc.is_object()) bad("", "not a JSON object");
  if (need_str(doc, "", "format") != "mhaq-certificate") bad("format", "not \"mhaq-certificate\"");
  return doc;
}

bool is_transformer_certificate(const nlohmann::json& doc) {
  if (!doc.contains("kind")) return false;
  const std::string k = need_str(doc, "", "kind");
  if (k != "transformer") bad("kind", quote_str(k) + ", expected \"transformer\" (attention certificates have no kind)");
  return true;
}

Cert read_certificate(const nlohmann::json& doc) {
  using namespace limits;
  if (need_long(doc, "", "version", 0, 1000) != 1) bad("version", "unsupported (this checker reads version 1)");
  Cert c;
  read_run_facts(doc, c);
  read_model_and_plan(doc, c);
  read_queries_and_answers(doc, c);
  read_pairs(doc, c);
  read_heads(doc, c);
  return c;
}

}  // namespace mhaq::check
