// The certificate checker (tests/golden/CERTIFICATE.md). Everything here is
// re-derived from the recorded model and plan with the checker's own code;
// see include/mhaq/check/certificate_check.hpp for why it duplicates a little.
#include "mhaq/check/certificate_check.hpp"

#include <flint/fmpq_mat.h>
#include <flint/fmpz_poly.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include "check_internal.hpp"
#include "mhaq/check/limits.hpp"

namespace mhaq::check {

namespace {

using json = nlohmann::json;

// ------------------------------------------------------------ reading
// The checker's own strict reader (it shares no code with mhaq_lib's): every
// malformed field is an InputError naming its JSON path, and messages quote
// at most about 80 characters of the file, cleaned to printable ASCII.
std::string clean(const std::string& s, size_t max = 80) {
  std::string out;
  size_t i = 0;
  for (; i < s.size() && out.size() < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F) {
      out.push_back(static_cast<char>(c));
    } else {
      static const char* hx = "0123456789abcdef";
      out += "\\x";
      out.push_back(hx[c >> 4]);
      out.push_back(hx[c & 15]);
    }
  }
  if (i < s.size()) out += "... (" + std::to_string(s.size()) + " characters)";
  return out;
}
std::string quote_str(const std::string& s) { return "\"" + clean(s) + "\""; }

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw InputError("malformed certificate: " + (path.empty() ? std::string("top level") : path) + ": " + what);
}
std::string at(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string at(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

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
    throw InputError("malformed certificate: " + (stack_.empty() ? std::string() : path(true) + ": ") + "not valid JSON: " + m);
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

const json& need(const json& j, const std::string& path, const std::string& key) {
  if (!j.is_object()) bad(path, "not an object");
  auto it = j.find(key);
  if (it == j.end()) bad(at(path, key), "missing");
  return *it;
}
const json& need_array(const json& j, const std::string& path, const std::string& key, size_t max = static_cast<size_t>(limits::max_plan_queries)) {
  const json& a = need(j, path, key);
  if (!a.is_array()) bad(at(path, key), "not an array");
  if (a.size() > max) bad(at(path, key), std::to_string(a.size()) + " entries, more than the limit of " + std::to_string(max));
  return a;
}
long need_long(const json& j, const std::string& path, const std::string& key, long lo, long hi) {
  const json& a = need(j, path, key);
  if (a.is_number_float()) bad(at(path, key), "a floating-point number where an integer is expected");
  if (!a.is_number_integer()) bad(at(path, key), "not an integer");
  const std::string range = "out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (a.is_number_unsigned()) {  // 2^63 and above must not wrap to negative values
    const unsigned long u = a.get<unsigned long>();
    if (u > static_cast<unsigned long>(hi) || (lo > 0 && u < static_cast<unsigned long>(lo))) bad(at(path, key), range);
    return static_cast<long>(u);
  }
  const long v = a.get<long>();
  if (v < lo || v > hi) bad(at(path, key), range);
  return v;
}
std::string need_str(const json& j, const std::string& path, const std::string& key) {
  const json& a = need(j, path, key);
  if (!a.is_string()) bad(at(path, key), "not a string");
  return a.get<std::string>();
}
bool need_bool(const json& j, const std::string& path, const std::string& key) {
  const json& a = need(j, path, key);
  if (!a.is_boolean()) bad(at(path, key), "not a boolean");
  return a.get<bool>();
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

enum class Mode { exact, ball, binary };

// A recorded number: its exact value (exact mode) or midpoint as a rational,
// and the ball it stands for (radius 0 for binary floats).
struct Num {
  Qn q;
  Ab b;
};

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
std::vector<Qn> read_qmat(const json& j, const std::string& path, int d, size_t max = static_cast<size_t>(limits::max_entry_chars)) {  // row-major
  if (!j.is_array() || static_cast<int>(j.size()) != d) bad(path, "expected " + std::to_string(d) + " rows");
  std::vector<Qn> out;
  for (size_t i = 0; i < j.size(); ++i)
    for (auto& x : read_qvec(j[i], at(path, i), d, max)) out.push_back(std::move(x));
  return out;
}

struct PairRec {
  std::string kind;
  long i = 0, j = 0, first = 0, last = 0;
  std::vector<Qn> offset, final_token;
  Num P;
  std::vector<long> n;  // exact: poles tau^n
  std::vector<Num> r, c;
};
struct HeadRec {
  std::vector<Num> W, v;
};
struct QueryRec {
  long index = 0, length = 0;
  Query q;
};

struct Cert {
  Mode mode = Mode::exact;
  std::string arith;
  long bits = 0, L = 0;
  std::string schedule;
  int H = 0;
  bool bound = false;
  long token_range = 0, token_den = 1, oracle_bits = 0;
  long claim_queries = 0, claim_formula_value = 0, claim_max_length = 0, claim_length_bound = 0, claim_heads = 0;
  std::string claim_formula;
  Qn tol_answers, tol_pairs, tol_heads;
  int d = 0;
  std::vector<RatHead> model;
  std::string plan_schedule;
  long plan_d = 0, plan_H = 0;
  std::vector<Qn> B, Delta;  // row-major; columns are b_j and delta_i
  std::vector<QueryRec> queries;
  std::vector<Pq> exact_answers;
  std::vector<Num> answers;
  std::vector<PairRec> pairs;
  std::vector<HeadRec> heads;
};

Cert read_certificate(const std::string& text) {
  using namespace limits;
  const json doc = parse_document(text);
  if (!doc.is_object()) bad("", "not a JSON object");
  if (need_str(doc, "", "format") != "mhaq-certificate") bad("format", "not \"mhaq-certificate\"");
  if (need_long(doc, "", "version", 0, 1000) != 1) bad("version", "unsupported (this checker reads version 1)");
  Cert c;
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

  const json& cl = need(doc, "", "claims");
  c.claim_queries = need_long(cl, "claims", "queries", 0, 1L << 40);
  c.claim_formula = need_str(cl, "claims", "query_formula");
  c.claim_formula_value = need_long(cl, "claims", "query_formula_value", 0, 1L << 40);
  c.claim_max_length = need_long(cl, "claims", "max_length", 0, 1L << 40);
  c.claim_length_bound = need_long(cl, "claims", "length_bound", 0, 1L << 40);
  c.claim_heads = need_long(cl, "claims", "heads_recovered", 0, 1L << 20);
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

  const json& m = need(doc, "", "model");
  c.d = static_cast<int>(need_long(m, "model", "d", 1, max_d));
  const json& mh = need_array(m, "model", "heads", static_cast<size_t>(max_file_heads));
  if (mh.empty()) bad("model.heads", "empty");
  const size_t entry = static_cast<size_t>(max_entry_chars);
  for (size_t h = 0; h < mh.size(); ++h) {
    const std::string p = at("model.heads", h);
    c.model.push_back({read_qmat(need(mh[h], p, "W"), at(p, "W"), c.d, entry), read_qvec(need(mh[h], p, "v"), at(p, "v"), c.d, entry)});
  }
  // The plan's size follows from d, H and the schedule: bounded before anything is built.
  {
    const long d = c.d, H = c.H;
    const long formula = c.schedule == "paper" ? 4 * H * d * d - 2 * H + 1 : 1 + 2 * H * (d * d + d - 1);
    if (formula > max_plan_queries)
      bad("inputs.heads_learner", "the plan for d=" + std::to_string(d) + ", H=" + std::to_string(H) + " has " + std::to_string(formula) +
                                      " queries, more than the limit of " + std::to_string(max_plan_queries));
  }

  const json& pl = need(doc, "", "plan");
  c.plan_schedule = need_str(pl, "plan", "schedule");
  c.plan_d = need_long(pl, "plan", "d", 1, max_d);
  c.plan_H = need_long(pl, "plan", "H", 1, max_heads);
  c.B = read_qmat(need(pl, "plan", "B"), "plan.B", c.d);
  c.Delta = read_qmat(need(pl, "plan", "Delta"), "plan.Delta", c.d);


  const json& qs = need_array(doc, "", "queries");
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
  const json& as = need_array(doc, "", "answers");
  for (size_t i = 0; i < as.size(); ++i) {
    if (c.mode == Mode::exact) c.exact_answers.push_back(read_qtau(as[i], at("answers", i)));
    else c.answers.push_back(read_num(as[i], at("answers", i), c.mode));
  }
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
    c.heads.push_back(std::move(r));
  }
  return c;
}

// ------------------------------------------------------------ checking
enum class Tri { yes, no, unknown };

std::string head_path(size_t h, int d, size_t e) {  // entry e of a head: W row-major, then v
  const size_t dd = static_cast<size_t>(d) * d;
  if (e < dd) return at(at(at("heads", h), "W"), e / d) + "[" + std::to_string(e % d) + "]";
  return at(at(at("heads", h), "v"), e - dd);
}

// Assignment of recorded items g to true items perm[g] with the fewest
// failing fields (brute force; H is small). n > 8: identity.
std::vector<int> best_assignment(int n, const std::function<int(int, int)>& cost) {
  std::vector<int> perm(static_cast<size_t>(n)), best = perm;
  std::iota(perm.begin(), perm.end(), 0);
  best = perm;
  if (n > 8) return best;
  std::vector<std::vector<int>> c(n, std::vector<int>(n));
  for (int g = 0; g < n; ++g)
    for (int h = 0; h < n; ++h) c[g][h] = cost(g, h);
  int best_cost = -1;
  do {
    int s = 0;
    for (int g = 0; g < n; ++g) s += c[g][perm[g]];
    if (best_cost < 0 || s < best_cost) { best_cost = s; best = perm; }
  } while (std::next_permutation(perm.begin(), perm.end()));
  return best;
}

struct PlanPair {
  std::string kind;
  int i, j;
  std::vector<Qn> offset, final_token;
};

class Checker {
 public:
  Checker(const Cert& c, CertificateReport& rep) : c_(c), rep_(rep), d_(c.d), H_(c.H) {
    canon_ = canonical(c.model);
    // Precision follows the recorded values, not only the claim: a file that
    // claims 2^16 bits for 256-bit values is decided at about 256 bits (the
    // tests are rigorous at any precision; the loop raises it when undecided).
    slong data = 53;
    if (c.mode != Mode::exact) for_each_num([&](const Num& x, const std::string&) { data = std::max<slong>(data, arf_bits(arb_midref(x.b.v))); });
    start_prec_ = (c.mode == Mode::exact ? 128 : std::min<slong>(c.bits, data)) + 64;
    max_prec_ = std::max<slong>(16 * ((c.mode == Mode::exact ? 128 : c.bits) + 64), 8192);
  }

  void run() {
    rep_.arith = c_.arith;
    rep_.d = d_;
    rep_.H = H_;
    rep_.queries = static_cast<long>(c_.queries.size());
    rep_.pairs = static_cast<long>(c_.pairs.size());
    rep_.heads = static_cast<long>(c_.heads.size());
    mark_wild();
    build_plan();
    check_plan_and_claims();
    check_queries();
    check_pairs_structure();
    check_binary_widths();
    exact_values();
    check_answers();
    check_pairs();
    check_heads();
  }

 private:
  const Cert& c_;
  CertificateReport& rep_;
  int d_, H_;
  std::vector<RatHead> canon_;
  slong start_prec_;
  std::vector<PlanPair> plan_;
  size_t plan_size_ = 0;  // queries of the plan: 1 + 2H per pair
  // The plan's query i, built on demand (a crafted file must not make the
  // checker hold a plan it never compares with): [b_1], then each pair's
  // [a x k, b] for k = 1..2H.
  Query plan_query(size_t i) const {
    if (i == 0) return Query{Run{col(c_.B, 0), 1}};
    const size_t per = 2 * static_cast<size_t>(H_);
    const PlanPair& p = plan_[(i - 1) / per];
    return Query{Run{add(p.final_token, p.offset), static_cast<long>((i - 1) % per) + 1}, Run{p.final_token, 1}};
  }
  std::vector<bool> query_ok_;  // recorded query i equals the plan's query i
  // exact mode: the model's value at each recorded query
  std::vector<Pq> exact_;
  std::vector<bool> exact_ok_;
  std::vector<std::string> exact_why_;
  std::map<slong, std::vector<BallHead>> model_balls_;
  slong max_prec_;

  // Every recorded binary or ball value, with its path.
  void for_each_num(const std::function<void(const Num&, const std::string&)>& f) const {
    for (size_t i = 0; i < c_.answers.size(); ++i) f(c_.answers[i], at("answers", i));
    for (size_t p = 0; p < c_.pairs.size(); ++p) {
      const std::string pp = at("pairs", p);
      f(c_.pairs[p].P, at(pp, "P"));
      for (size_t h = 0; h < c_.pairs[p].r.size(); ++h) f(c_.pairs[p].r[h], at(at(at(pp, "poles"), h), "r"));
      for (size_t h = 0; h < c_.pairs[p].c.size(); ++h) f(c_.pairs[p].c[h], at(at(at(pp, "poles"), h), "c"));
    }
    for (size_t h = 0; h < c_.heads.size(); ++h)
      for (size_t e = 0; e < c_.heads[h].W.size() + c_.heads[h].v.size(); ++e)
        f(e < c_.heads[h].W.size() ? c_.heads[h].W[e] : c_.heads[h].v[e - c_.heads[h].W.size()], head_path(h, d_, e));
  }

  // Recorded queries with a token entry beyond 3 token_range / token_den (no
  // plan holds one: a = b + offset is three drawn entries at most): the model
  // is not evaluated there, since such a token could demand any precision.
  std::vector<bool> wild_;
  bool plan_ok_ = true;  // B and Delta on the grid: the plan's queries are evaluated
  void mark_wild() {
    Qn tmax;
    fmpq_set_si(tmax.v, 3 * c_.token_range, static_cast<ulong>(c_.token_den));
    wild_.assign(c_.queries.size(), false);
    for (size_t i = 0; i < c_.queries.size(); ++i)
      for (const auto& run : c_.queries[i].q)
        for (const auto& x : run.token) {
          Qn a;
          fmpq_abs(a.v, x.v);
          if (fmpq_cmp(a.v, tmax.v) > 0) wild_[i] = true;
        }
  }
  std::string wild_msg(size_t i) const {
    return "not evaluated: queries[" + std::to_string(i) + "] has a token entry beyond 3 token_range / token_den in size, which no plan holds";
  }

  void fail(const std::string& path, const std::string& msg) { rep_.failures.push_back({path, msg}); }
  void fact(bool ok, const std::string& path, const std::string& msg) {
    ++rep_.checks;
    if (!ok) fail(path, msg);
  }
  const Qn& B(int r, int col) const { return c_.B[static_cast<size_t>(r) * d_ + col]; }
  const Qn& D(int r, int col) const { return c_.Delta[static_cast<size_t>(r) * d_ + col]; }
  std::vector<Qn> col(const std::vector<Qn>& M, int j) const {
    std::vector<Qn> out;
    for (int r = 0; r < d_; ++r) out.push_back(M[static_cast<size_t>(r) * d_ + j]);
    return out;
  }
  static std::vector<Qn> add(const std::vector<Qn>& a, const std::vector<Qn>& b) {
    std::vector<Qn> out(a.size());
    for (size_t i = 0; i < a.size(); ++i) fmpq_add(out[i].v, a[i].v, b[i].v);
    return out;
  }
  static Qn dot(const std::vector<Qn>& a, const std::vector<Qn>& b) {
    Qn s;
    for (size_t i = 0; i < a.size(); ++i) fmpq_addmul(s.v, a[i].v, b[i].v);
    return s;
  }
  Qn bilinear(const std::vector<Qn>& x, const std::vector<Qn>& W, const std::vector<Qn>& y) const {  // x^T W y
    Qn s, t;
    for (int i = 0; i < d_; ++i)
      for (int j = 0; j < d_; ++j) {
        fmpq_mul(t.v, x[i].v, W[static_cast<size_t>(i) * d_ + j].v);
        fmpq_addmul(s.v, t.v, y[j].v);
      }
    return s;
  }
  const std::vector<BallHead>& model_balls(slong prec) {
    auto it = model_balls_.find(prec);
    if (it == model_balls_.end()) it = model_balls_.emplace(prec, to_balls(c_.model, prec)).first;
    return it->second;
  }
  // Runs test(prec) at increasing precision until it decides.
  Tri decide(const std::function<Tri(slong)>& test) const {
    for (slong p = start_prec_; p <= max_prec_; p *= 2) {
      const Tri t = test(p);
      if (t != Tri::unknown) return t;
    }
    return Tri::unknown;
  }
  static std::string tri_msg(Tri t, const std::string& no) { return t == Tri::no ? no : no + " (undecided at the checker's precision cap)"; }

  // ---- plan, structure, claims
  void build_plan() {
    const bool paper = c_.schedule == "paper";
    for (int j = 0; j < d_; ++j)
      for (int i = 0; i < d_; ++i) plan_.push_back({"base", i, j, col(c_.Delta, i), col(c_.B, j)});
    for (int j = 0; j < (paper ? d_ : 1); ++j)
      for (int i = 1; i < d_; ++i) plan_.push_back({"within", i, j, add(col(c_.Delta, 0), col(c_.Delta, i)), col(c_.B, j)});
    if (paper)
      for (int j = 1; j < d_; ++j) plan_.push_back({"across", 0, j, col(c_.Delta, 0), add(col(c_.B, 0), col(c_.B, j))});
    plan_size_ = 1 + plan_.size() * 2 * static_cast<size_t>(H_);
  }

  void check_plan_and_claims() {
    fact(c_.plan_schedule == c_.schedule, "plan.schedule", quote_str(c_.plan_schedule) + " differs from inputs.schedule \"" + c_.schedule + "\"");
    fact(c_.plan_d == d_, "plan.d", std::to_string(c_.plan_d) + " differs from the model's d = " + std::to_string(d_));
    fact(c_.plan_H == H_, "plan.H", std::to_string(c_.plan_H) + " differs from inputs.heads_learner = " + std::to_string(H_));
    // B and Delta: entries on the learner's grid, and invertible.
    for (const auto* which : {"B", "Delta"}) {
      const std::vector<Qn>& M = std::string(which) == "B" ? c_.B : c_.Delta;
      fmpq_mat_t A;
      fmpq_mat_init(A, d_, d_);
      for (int r = 0; r < d_; ++r)
        for (int k = 0; k < d_; ++k) {
          const Qn& x = M[static_cast<size_t>(r) * d_ + k];
          fmpq_set(fmpq_mat_entry(A, r, k), x.v);
          Qn t;
          fmpq_mul_si(t.v, x.v, c_.token_den);
          fmpz_t R;
          fmpz_init_set_ui(R, static_cast<ulong>(c_.token_range));
          const bool ok = fmpz_is_one(fmpq_denref(t.v)) && fmpz_cmpabs(fmpq_numref(t.v), R) <= 0;
          fmpz_clear(R);
          plan_ok_ = plan_ok_ && ok;
          fact(ok, "plan." + std::string(which) + "[" + std::to_string(r) + "][" + std::to_string(k) + "]",
               clean(x.str()) + " is not an integer in [-" + std::to_string(c_.token_range) + ", " + std::to_string(c_.token_range) + "] divided by " +
                   std::to_string(c_.token_den));
        }
      Qn det;
      fmpq_mat_det(det.v, A);
      fmpq_mat_clear(A);
      fact(!fmpq_is_zero(det.v), "plan." + std::string(which), "singular: the pairs do not determine the heads");
    }
    // the query count and length claims
    const long H = H_, d = d_;
    const bool paper = c_.schedule == "paper";
    const long formula = paper ? 4 * H * d * d - 2 * H + 1 : 1 + 2 * H * (d * d + d - 1);
    const std::string fname = paper ? "4Hd^2-2H+1" : "1+2H(d^2+d-1)";
    const long n = static_cast<long>(c_.queries.size());
    fact(c_.claim_formula == fname, "claims.query_formula", quote_str(c_.claim_formula) + ", the " + c_.schedule + " schedule uses " + fname);
    fact(c_.claim_formula_value == formula, "claims.query_formula_value",
         std::to_string(c_.claim_formula_value) + ", but " + fname + " = " + std::to_string(formula) + " for d=" + std::to_string(d) + ", H=" + std::to_string(H));
    fact(c_.claim_queries == n, "claims.queries", "claims " + std::to_string(c_.claim_queries) + " queries, the certificate records " + std::to_string(n));
    fact(n == formula, "queries", std::to_string(n) + " queries recorded, " + fname + " = " + std::to_string(formula));
    long longest = 0;
    for (const auto& q : c_.queries) {
      long len = 0;
      for (const auto& r : q.q) len += r.count;
      longest = std::max(longest, len);
    }
    fact(c_.claim_max_length == longest, "claims.max_length",
         "claims " + std::to_string(c_.claim_max_length) + ", the longest recorded query has " + std::to_string(longest) + " tokens");
    fact(c_.claim_length_bound == 2 * H + 1, "claims.length_bound", std::to_string(c_.claim_length_bound) + ", but 2H+1 = " + std::to_string(2 * H + 1));
    fact(longest <= 2 * H + 1, "claims.max_length", "a query has " + std::to_string(longest) + " tokens, more than 2H+1 = " + std::to_string(2 * H + 1));
    if (c_.mode == Mode::binary) {
      // Claimed tolerances are powers of two (recover writes the smallest power
      // of two above twice a rigorous bound); the comparisons below verify them.
      const Qn* tols[3] = {&c_.tol_answers, &c_.tol_pairs, &c_.tol_heads};
      const char* names[3] = {"answers", "pairs", "heads"};
      for (int k = 0; k < 3; ++k) {
        const fmpz* n = fmpq_numref(tols[k]->v);
        const fmpz* dn = fmpq_denref(tols[k]->v);
        const bool pow2 = fmpz_sgn(n) > 0 && ((fmpz_is_one(dn) && fmpz_val2(n) + 1 == fmpz_bits(n)) || (fmpz_is_one(n) && fmpz_val2(dn) + 1 == fmpz_bits(dn)));
        fact(pow2, at("tolerances", names[k]), clean(tols[k]->str()) + " is not a power of two");
      }
    }
    fact(canon_.size() <= static_cast<size_t>(H_), "model.heads",
         "the model's canonical form has " + std::to_string(canon_.size()) + " heads, more than the learner's H = " + std::to_string(H_) +
             " (its pair values are then not compared)");
    fact(c_.claim_heads == static_cast<long>(c_.heads.size()), "claims.heads_recovered",
         std::to_string(c_.claim_heads) + ", but " + std::to_string(c_.heads.size()) + " heads are recorded");
    if (c_.mode == Mode::exact) {
      // L = (lcm of the W denominators) * token_den^2 makes every score a multiple of 1/L.
      fmpz_t l;
      fmpz_init_set_ui(l, 1);
      for (const auto& h : c_.model)
        for (const auto& x : h.W) fmpz_lcm(l, l, fmpq_denref(x.v));
      fmpz_mul_si(l, l, c_.token_den);
      fmpz_mul_si(l, l, c_.token_den);
      char* ls = fmpz_get_str(nullptr, 10, l);
      fact(fmpz_cmp_si(l, c_.L) == 0, "L", std::to_string(c_.L) + ", but the model and token grid give L = " + ls);
      flint_free(ls);
      fmpz_clear(l);
    }
  }

  void check_queries() {
    query_ok_.assign(c_.queries.size(), false);
    for (size_t i = 0; i < c_.queries.size(); ++i) {
      const std::string p = at("queries", i);
      const QueryRec& r = c_.queries[i];
      long len = 0;
      for (const auto& run : r.q) len += run.count;
      fact(r.index == static_cast<long>(i), at(p, "index"), std::to_string(r.index) + ", expected " + std::to_string(i));
      fact(r.length == len, at(p, "length"), std::to_string(r.length) + ", but the runs have " + std::to_string(len) + " tokens");
      if (i >= plan_size_) continue;  // the count failure is already reported
      const Query e = plan_query(i);
      bool ok = r.q.size() == e.size();
      fact(ok, at(p, "runs"), std::to_string(r.q.size()) + " runs, the plan's query has " + std::to_string(e.size()));
      for (size_t k = 0; k < r.q.size() && k < e.size(); ++k) {
        const std::string rp = at(at(p, "runs"), k);
        for (int t = 0; t < d_; ++t) {
          const bool same = r.q[k].token[t] == e[k].token[t];
          fact(same, at(at(rp, "token"), static_cast<size_t>(t)),
               clean(r.q[k].token[t].str()) + ", the plan's query has " + clean(e[k].token[t].str()));
          ok = ok && same;
        }
        fact(r.q[k].count == e[k].count, at(rp, "count"), std::to_string(r.q[k].count) + ", the plan's query has " + std::to_string(e[k].count));
        ok = ok && r.q[k].count == e[k].count;
      }
      query_ok_[i] = ok;
    }
  }

  void check_pairs_structure() {
    fact(c_.pairs.size() == plan_.size(), "pairs", std::to_string(c_.pairs.size()) + " pairs recorded, the plan has " + std::to_string(plan_.size()));
    for (size_t p = 0; p < c_.pairs.size() && p < plan_.size(); ++p) {
      const std::string pp = at("pairs", p);
      const PairRec& r = c_.pairs[p];
      const PlanPair& e = plan_[p];
      fact(r.kind == e.kind, at(pp, "kind"), quote_str(r.kind) + ", the plan has \"" + e.kind + "\"");
      fact(r.i == e.i && r.j == e.j, at(pp, "i"), "(i, j) = (" + std::to_string(r.i) + ", " + std::to_string(r.j) + "), the plan has (" + std::to_string(e.i) + ", " + std::to_string(e.j) + ")");
      for (int t = 0; t < d_; ++t) {
        fact(r.offset[t] == e.offset[t], at(at(pp, "offset"), static_cast<size_t>(t)), clean(r.offset[t].str()) + ", the plan has " + clean(e.offset[t].str()));
        fact(r.final_token[t] == e.final_token[t], at(at(pp, "final_token"), static_cast<size_t>(t)), clean(r.final_token[t].str()) + ", the plan has " + clean(e.final_token[t].str()));
      }
      const long first = 1 + static_cast<long>(p) * 2 * H_;
      fact(r.first == first && r.last == first + 2 * H_ - 1, at(pp, "queries"),
           "[" + std::to_string(r.first) + ", " + std::to_string(r.last) + "], the plan has [" + std::to_string(first) + ", " + std::to_string(first + 2 * H_ - 1) + "]");
      const size_t npoles = c_.mode == Mode::exact ? r.n.size() : r.r.size();
      if (c_.bound) fact(npoles <= static_cast<size_t>(H_), at(pp, "poles"), std::to_string(npoles) + " poles, more than the bound H0 = " + std::to_string(H_));
      else fact(npoles == static_cast<size_t>(H_), at(pp, "poles"), std::to_string(npoles) + " poles, the learner's H is " + std::to_string(H_));
    }
  }

  // Claimed bits, verified: binary floats hold at most `bits` significant
  // bits (double: 53). Ball midpoints are rounded to the run's precision,
  // except answers, which the oracle rounds 64 bits beyond the larger of the
  // run's and the oracle's precision; every midpoint stays within that.
  void check_binary_widths() {
    if (c_.mode == Mode::exact) return;
    const slong limit = c_.mode == Mode::binary ? c_.bits : std::max(c_.bits, c_.oracle_bits) + 64;
    for_each_num([&](const Num& x, const std::string& path) {
      const slong b = arf_bits(arb_midref(x.b.v));
      fact(fmpq_is_zero(x.q.v) || b <= limit, path,
           "has " + std::to_string(b) + " significant bits, more than the run's " + std::to_string(c_.bits) + (c_.mode == Mode::ball ? " (+ 64 for answers)" : ""));
    });
  }

  // ---- the model's exact values
  void exact_values() {
    if (c_.mode != Mode::exact) return;
    exact_.resize(c_.queries.size());
    exact_ok_.assign(c_.queries.size(), false);
    exact_why_.assign(c_.queries.size(), "");
    for (size_t i = 0; i < c_.queries.size(); ++i) {
      if (wild_[i]) exact_why_[i] = wild_msg(i);
      else exact_ok_[i] = eval_exact(exact_[i], c_.model, d_, c_.queries[i].q, c_.L, exact_why_[i]);
    }
  }

  // Exact value of the model at plan query i (the recorded one when it is the same query).
  bool exact_at_plan(size_t i, Pq& out, std::string& why) {
    if (i < query_ok_.size() && query_ok_[i] && exact_ok_[i]) {
      out = exact_[i];
      return true;
    }
    return eval_exact(out, c_.model, d_, plan_query(i), c_.L, why);
  }

  // Ball containment of the model's value at query q, or |y - f(q)| <= tol for binary values.
  Tri matches_truth(const Query& q, const std::function<void(Ab&, slong)>& recorded, const Qn* tol) {
    {  // a recorded point (radius 0) equals f(q) only if f(q) is rational: decided exactly, first
      Ab y0;
      recorded(y0, start_prec_);
      if (mag_is_zero(arb_radref(y0.v))) {
        Qn v;
        const Tri rational = rational_value(q, v);
        if (rational == Tri::yes) {
          Qn m;
          arf_get_fmpq(m.v, arb_midref(y0.v));
          fmpq_sub(m.v, m.v, v.v);
          fmpq_abs(m.v, m.v);
          return (tol ? fmpq_cmp(m.v, tol->v) <= 0 : fmpq_is_zero(m.v)) ? Tri::yes : Tri::no;
        }
        if (rational == Tri::no && !tol) return Tri::no;
      }
    }
    const Tri t = decide([&](slong prec) {
      Ab x, y;
      eval_arb(x, model_balls(prec), d_, q, prec);
      recorded(y, prec);
      return compare(y, x, tol, prec);
    });
    if (t != Tri::unknown) return t;
    // Undecided at the cap: balls cannot tell a value from a dyadic boundary
    // or point it equals exactly. That needs f(q) rational: decide exactly.
    Qn v;
    const Tri rational = rational_value(q, v);
    Ab y;
    recorded(y, max_prec_);
    const bool point = mag_is_zero(arb_radref(y.v));
    if (rational == Tri::no) return point && !tol ? Tri::no : Tri::unknown;  // a point never equals an irrational value
    if (rational == Tri::unknown) return Tri::unknown;
    if (!tol) return arb_contains_fmpq(y.v, v.v) ? Tri::yes : Tri::no;
    if (!point) return Tri::unknown;
    Qn m;
    arf_get_fmpq(m.v, arb_midref(y.v));
    fmpq_sub(m.v, m.v, v.v);
    fmpq_abs(m.v, m.v);
    return fmpq_cmp(m.v, tol->v) <= 0 ? Tri::yes : Tri::no;
  }
  // Whether f(q) is rational, and its value: f lies in Q(e^{1/L}) for L the
  // lcm of the denominators of the score differences at q, where a non-constant element is
  // transcendental (tau is). Tri::unknown when the exact evaluation is beyond
  // the tau-degree cap. The canonical heads define the same f; a head with
  // v = 0 (dropped there) would otherwise force a huge L on a value it does
  // not touch.
  Tri rational_value(const Query& q, Qn& out) const {
    fmpz_t l;
    fmpz_init_set_ui(l, 1);
    const std::vector<Qn>& xN = q.back().token;
    for (const auto& h : canon_)
      for (const auto& r : q) {
        Qn s, t, dx;  // the score difference (x_r - x_N)^T W x_N
        for (int i = 0; i < d_; ++i) {
          fmpq_sub(dx.v, r.token[static_cast<size_t>(i)].v, xN[static_cast<size_t>(i)].v);
          for (int j = 0; j < d_; ++j) {
            fmpq_mul(t.v, dx.v, h.W[static_cast<size_t>(i) * d_ + j].v);
            fmpq_addmul(s.v, t.v, xN[static_cast<size_t>(j)].v);
          }
        }
        fmpz_lcm(l, l, fmpq_denref(s.v));
      }
    const bool small = fmpz_cmp_si(l, limits::max_L) <= 0;
    const long L = small ? fmpz_get_si(l) : 0;
    fmpz_clear(l);
    if (!small) return Tri::unknown;
    Pq f;
    std::string why;
    if (!eval_exact(f, canon_, d_, q, L, why)) return Tri::unknown;
    if (fmpz_poly_degree(f.v->num) > 0 || fmpz_poly_degree(f.v->den) > 0) return Tri::no;
    fmpz_t n, dd;
    fmpz_init(n);
    fmpz_init(dd);
    fmpz_poly_get_coeff_fmpz(n, f.v->num, 0);
    fmpz_poly_get_coeff_fmpz(dd, f.v->den, 0);
    fmpq_set_fmpz_frac(out.v, n, dd);
    fmpz_clear(n);
    fmpz_clear(dd);
    return Tri::yes;
  }
  // y is the recorded ball (or the value computed from recorded floats); x encloses the truth.
  static Tri compare(const Ab& y, const Ab& x, const Qn* tol, slong prec) {
    if (!tol) {
      if (arb_contains(y.v, x.v)) return Tri::yes;
      return arb_overlaps(y.v, x.v) ? Tri::unknown : Tri::no;
    }
    Ab dlt, t;
    arb_sub(dlt.v, y.v, x.v, prec);
    arb_abs(dlt.v, dlt.v);
    arb_set_fmpq(t.v, tol->v, prec);
    if (arb_le(dlt.v, t.v)) return Tri::yes;
    return arb_gt(dlt.v, t.v) ? Tri::no : Tri::unknown;
  }
  // A recorded number against an exact rational: equality, containment or |x - q| <= tol, in Q.
  bool num_matches(const Num& x, const Qn& q, const Qn* tol) const {
    if (c_.mode == Mode::exact) return x.q == q;
    if (c_.mode == Mode::ball) return arb_contains_fmpq(x.b.v, q.v);
    Qn dlt;
    fmpq_sub(dlt.v, x.q.v, q.v);
    fmpq_abs(dlt.v, dlt.v);
    return fmpq_cmp(dlt.v, tol->v) <= 0;
  }
  std::string num_str(const Num& x) const {
    if (c_.mode != Mode::ball) return clean(x.q.str());
    char* s = arb_get_str(x.b.v, 20, 0);
    std::string out(s);
    flint_free(s);
    return out;
  }
  std::string relation(const Qn* tol) const {
    if (c_.mode == Mode::exact) return "is not equal to";
    if (c_.mode == Mode::ball) return "does not contain";
    // tolerances are powers of two when mhaq writes them: print 2^e
    const fmpz* n = fmpq_numref(tol->v);
    const fmpz* dn = fmpq_denref(tol->v);
    std::string t = clean(tol->str());
    if (fmpz_is_one(n) && fmpz_val2(dn) + 1 == fmpz_bits(dn)) t = "2^-" + std::to_string(fmpz_val2(dn));
    else if (fmpz_is_one(dn) && fmpz_sgn(n) > 0 && fmpz_val2(n) + 1 == fmpz_bits(n)) t = "2^" + std::to_string(fmpz_val2(n));
    return "is farther than " + t + " from";
  }

  // ---- (a) answers
  void check_answers() {
    const size_t n = c_.mode == Mode::exact ? c_.exact_answers.size() : c_.answers.size();
    fact(n == c_.queries.size(), "answers", std::to_string(n) + " answers recorded for " + std::to_string(c_.queries.size()) + " queries");
    for (size_t i = 0; i < n && i < c_.queries.size(); ++i) {
      const std::string p = at("answers", i);
      if (c_.mode == Mode::exact) {
        if (!exact_ok_[i]) {
          fact(false, p, "the model cannot be evaluated exactly at queries[" + std::to_string(i) + "]: " + exact_why_[i]);
          continue;
        }
        fact(fmpz_poly_q_equal(exact_[i].v, c_.exact_answers[i].v), p, "differs from the model's exact value at queries[" + std::to_string(i) + "]");
        continue;
      }
      const Qn* tol = c_.mode == Mode::binary ? &c_.tol_answers : nullptr;
      if (wild_[i]) {
        fact(false, p, wild_msg(i));
        continue;
      }
      const Tri t = matches_truth(c_.queries[i].q, [&](Ab& y, slong) { arb_set(y.v, c_.answers[i].b.v); }, tol);
      fact(t == Tri::yes, p, tri_msg(t, "the recorded answer " + relation(tol) + " the model's value at queries[" + std::to_string(i) + "]"));
    }
  }

  // ---- (b) pair interpolants
  struct TruePole {
    Qn s, c;  // log r = s, residue c
  };
  std::vector<TruePole> visible_heads(const PlanPair& e) const {
    std::vector<TruePole> out;
    for (const auto& h : canon_) {
      const Qn s = bilinear(e.offset, h.W, e.final_token);
      Qn cc = dot(h.v, e.offset);
      fmpq_neg(cc.v, cc.v);
      bool merged = false;  // heads with equal poles at this pair act as one
      for (auto& t : out)
        if (t.s == s) { fmpq_add(t.c.v, t.c.v, cc.v); merged = true; }
      if (!merged) out.push_back({s, cc});
    }
    std::vector<TruePole> kept;
    for (auto& t : out)
      if (!fmpq_is_zero(t.c.v)) kept.push_back(std::move(t));
    return kept;
  }

  void check_pairs() {
    if (!plan_ok_) {  // the plan's queries hold tokens off the grid: not evaluated (each entry is reported)
      fail("pairs", "not compared with the model: plan.B or plan.Delta is off the learner's token grid");
      return;
    }
    for (size_t p = 0; p < c_.pairs.size() && p < plan_.size(); ++p) {
      const std::string pp = at("pairs", p);
      const PairRec& r = c_.pairs[p];
      const PlanPair& e = plan_[p];
      const Qn* tol = c_.mode == Mode::binary ? &c_.tol_pairs : nullptr;
      const size_t np = c_.mode == Mode::exact ? r.n.size() : r.r.size();
      // reproduction: P + sum c_h/(1 + r_h k) = f(k), k = 0..2H
      std::string bad_k;
      long n_bad = 0;
      for (long k = 0; k <= 2L * H_; ++k) {
        const size_t qi = static_cast<size_t>(1 + static_cast<long>(p) * 2 * H_ + (k - 1));
        Tri t;
        if (c_.mode == Mode::exact) {
          Pq want, got = pq_of(r.P.q), term;
          std::string why;
          bool ok = k == 0 ? true : exact_at_plan(qi, want, why);
          if (k == 0) {
            Qn vb;
            for (const auto& h : c_.model) fmpq_add(vb.v, vb.v, dot(h.v, e.final_token).v);
            want = pq_of(vb);
          }
          long degree = 0;  // of the sum's denominator: bounded like the answers' (eval_exact)
          for (size_t h = 0; h < np && ok; ++h) {
            const long n = r.n[h], a = n < 0 ? -n : n;
            degree += a;
            if (degree > limits::max_tau_exponent) { ok = false; break; }
            // c / (1 + k tau^n) = c tau^|n| / (tau^|n| + k) when n < 0
            fmpz_poly_set_fmpz(term.v->num, fmpq_numref(r.c[h].q.v));
            fmpz_poly_set_fmpz(term.v->den, fmpq_denref(r.c[h].q.v));
            fmpz_poly_t den;
            fmpz_poly_init(den);
            fmpz_poly_set_coeff_si(den, 0, n < 0 ? k : 1);
            fmpz_t kk;
            fmpz_init_set_si(kk, n < 0 ? 1 : k);
            fmpz_t cur;
            fmpz_init(cur);
            fmpz_poly_get_coeff_fmpz(cur, den, a);
            fmpz_add(cur, cur, kk);
            fmpz_poly_set_coeff_fmpz(den, a, cur);
            if (n < 0) fmpz_poly_shift_left(term.v->num, term.v->num, a);
            fmpz_poly_mul(term.v->den, term.v->den, den);
            fmpz_poly_clear(den);
            fmpz_clear(kk);
            fmpz_clear(cur);
            if (fmpz_poly_is_zero(term.v->den)) { ok = false; break; }
            fmpz_poly_q_canonicalise(term.v);
            fmpz_poly_q_add(got.v, got.v, term.v);
          }
          t = ok && fmpz_poly_q_equal(got.v, want.v) ? Tri::yes : Tri::no;
        } else {
          auto interp = [&](Ab& y, slong prec) {
            Ab one, den, term;
            arb_set(y.v, r.P.b.v);
            for (size_t h = 0; h < np; ++h) {
              arb_mul_si(den.v, r.r[h].b.v, k, prec);
              arb_add_si(den.v, den.v, 1, prec);
              arb_div(term.v, r.c[h].b.v, den.v, prec);
              arb_add(y.v, y.v, term.v, prec);
            }
          };
          if (k == 0) {
            Qn vb;
            for (const auto& h : c_.model) fmpq_add(vb.v, vb.v, dot(h.v, e.final_token).v);
            t = decide([&](slong prec) {
              Ab x, y;
              arb_set_fmpq(x.v, vb.v, prec);
              interp(y, prec);
              return compare(y, x, tol, prec);
            });
          } else {
            t = matches_truth(plan_query(qi), interp, tol);
          }
        }
        ++rep_.checks;
        if (t != Tri::yes) {
          ++n_bad;
          if (n_bad <= 4) bad_k += (bad_k.empty() ? "" : ", ") + std::string("k=") + std::to_string(k) + (k == 0 ? " (f(0) = v^T b)" : " (answers[" + std::to_string(qi) + "])");
        }
      }
      if (n_bad > 0)
        fail(pp, "P + sum c_h/(1 + r_h k) " + relation(tol) + " the model's value at " + std::to_string(n_bad) + " of " +
                     std::to_string(2 * H_ + 1) + " points: " + bad_k + (n_bad > 4 ? ", ..." : ""));
      // the interpolant's parameters against the model's own pair values
      Qn P;
      for (const auto& h : c_.model) fmpq_add(P.v, P.v, dot(h.v, add(e.final_token, e.offset)).v);
      fact(num_matches(r.P, P, tol), at(pp, "P"), num_str(r.P) + " " + relation(tol) + " the model's limit v^T a = " + clean(P.str()));
      if (canon_.size() > static_cast<size_t>(H_)) continue;  // reported once (check_plan_and_claims)
      const std::vector<TruePole> tp = visible_heads(e);
      if (tp.size() != np) {
        fact(false, at(pp, "poles"), std::to_string(np) + " poles recorded, the model has " + std::to_string(tp.size()) + " visible heads at this pair");
        continue;
      }
      auto pole_ok = [&](size_t g, size_t h) {
        if (c_.mode == Mode::exact) {
          Qn n;
          fmpq_mul_si(n.v, tp[h].s.v, c_.L);
          return fmpz_is_one(fmpq_denref(n.v)) && fmpz_cmp_si(fmpq_numref(n.v), r.n[g]) == 0;
        }
        return decide([&](slong prec) {
                 Ab x;
                 arb_set_fmpq(x.v, tp[h].s.v, prec);
                 arb_exp(x.v, x.v, prec);
                 return compare(r.r[g].b, x, tol, prec);
               }) == Tri::yes;
      };
      std::vector<std::vector<int>> okr(np, std::vector<int>(np)), okc(np, std::vector<int>(np));
      for (size_t g = 0; g < np; ++g)
        for (size_t h = 0; h < np; ++h) {
          okr[g][h] = pole_ok(g, h);
          okc[g][h] = num_matches(r.c[g], tp[h].c, tol);
        }
      const std::vector<int> m = best_assignment(static_cast<int>(np), [&](int g, int h) { return !okr[g][h] + !okc[g][h]; });
      for (size_t g = 0; g < np; ++g) {
        const std::string hp = at(at(pp, "poles"), g);
        const TruePole& t = tp[static_cast<size_t>(m[g])];
        if (c_.mode == Mode::exact) {
          Qn n;
          fmpq_mul_si(n.v, t.s.v, c_.L);
          fact(okr[g][m[g]], at(hp, "n"), std::to_string(r.n[g]) + " is not the model's exponent L (a-b)^T W_h b = " + clean(n.str()));
        } else {
          fact(okr[g][m[g]], at(hp, "r"), num_str(r.r[g]) + " " + relation(tol) + " the model's pole exp(" + clean(t.s.str()) + ")");
        }
        fact(okc[g][m[g]], at(hp, "c"), num_str(r.c[g]) + " " + relation(tol) + " the model's residue v_h^T (b - a) = " + clean(t.c.str()));
      }
    }
  }

  // ---- (c) recovered heads
  void check_heads() {
    const size_t nh = c_.heads.size();
    const Qn* tol = c_.mode == Mode::binary ? &c_.tol_heads : nullptr;
    // reproduction of every answer
    std::string first_bad;
    long n_bad = 0;
    std::vector<RatHead> rat;
    if (c_.mode == Mode::exact) {
      for (const auto& h : c_.heads) {
        RatHead r;
        for (const auto& x : h.W) r.W.push_back(x.q);
        for (const auto& x : h.v) r.v.push_back(x.q);
        rat.push_back(std::move(r));
      }
    }
    std::vector<BallHead> balls;
    for (const auto& h : c_.heads) {
      BallHead b;
      for (const auto& x : h.W) b.W.push_back(x.b);
      for (const auto& x : h.v) b.v.push_back(x.b);
      balls.push_back(std::move(b));
    }
    for (size_t i = 0; i < c_.queries.size(); ++i) {
      Tri t;
      if (c_.mode == Mode::exact) {
        Pq got;
        std::string why;
        t = exact_ok_[i] && eval_exact(got, rat, d_, c_.queries[i].q, c_.L, why) && fmpz_poly_q_equal(got.v, exact_[i].v) ? Tri::yes : Tri::no;
      } else if (wild_[i]) {
        t = Tri::no;  // not evaluated (reported at answers[i])
      } else {
        t = matches_truth(c_.queries[i].q, [&](Ab& y, slong prec) { eval_arb(y, balls, d_, c_.queries[i].q, prec); }, tol);
      }
      ++rep_.checks;
      if (t != Tri::yes && ++n_bad <= 4) first_bad += (first_bad.empty() ? "" : ", ") + at("answers", i);
    }
    if (n_bad > 0)
      fail("heads", "f with the recovered heads " + relation(tol) + " the model's value at " + std::to_string(n_bad) + " of " +
                        std::to_string(c_.queries.size()) + " queries: " + first_bad + (n_bad > 4 ? ", ..." : ""));
    // entries against the canonical model, up to the order of heads
    if (nh != canon_.size()) {
      fact(false, "heads", std::to_string(nh) + " heads recorded, the model's canonical form has " + std::to_string(canon_.size()));
      return;
    }
    const size_t ne = static_cast<size_t>(d_) * d_ + d_;
    auto entry = [&](const HeadRec& h, size_t e) -> const Num& { return e < h.W.size() ? h.W[e] : h.v[e - h.W.size()]; };
    auto truth = [&](const RatHead& h, size_t e) -> const Qn& { return e < h.W.size() ? h.W[e] : h.v[e - h.W.size()]; };
    std::vector<std::vector<std::vector<char>>> ok(nh, std::vector<std::vector<char>>(nh, std::vector<char>(ne)));
    for (size_t g = 0; g < nh; ++g)
      for (size_t h = 0; h < nh; ++h)
        for (size_t e = 0; e < ne; ++e) ok[g][h][e] = num_matches(entry(c_.heads[g], e), truth(canon_[h], e), tol);
    const std::vector<int> m = best_assignment(static_cast<int>(nh), [&](int g, int h) {
      return static_cast<int>(std::count(ok[g][h].begin(), ok[g][h].end(), 0));
    });
    for (size_t g = 0; g < nh; ++g)
      for (size_t e = 0; e < ne; ++e)
        fact(ok[g][m[g]][e], head_path(g, d_, e),
             num_str(entry(c_.heads[g], e)) + " " + relation(tol) + " the canonical model's entry " + clean(truth(canon_[m[g]], e).str()));
  }
};

}  // namespace

CertificateReport check_certificate(const std::string& text) {
  const Cert c = read_certificate(text);
  CertificateReport rep;
  Checker(c, rep).run();
  return rep;
}

std::string report_text(const CertificateReport& r, const std::string& file) {
  std::string out = "mhaq check-certificate " + file + ": ";
  if (r.ok()) {
    out += "ok\n  " + r.arith + ", d=" + std::to_string(r.d) + ", H=" + std::to_string(r.H) + ": " + std::to_string(r.queries) + " queries, " +
           std::to_string(r.pairs) + " pairs, " + std::to_string(r.heads) + " heads\n  " + std::to_string(r.checks) +
           " facts re-derived from the recorded model: answers, pair interpolants, heads, query structure, count and length\n";
    return out;
  }
  out += std::to_string(r.failures.size()) + " failure(s)\n";
  for (const auto& f : r.failures) out += "  FAIL " + f.path + ": " + f.message + "\n";
  return out;
}

nlohmann::json report_json(const CertificateReport& r, const std::string& file) {
  nlohmann::json fs = nlohmann::json::array();
  for (const auto& f : r.failures) fs.push_back({{"path", f.path}, {"message", f.message}});
  return {{"status", r.ok() ? "ok" : "checker_rejected"}, {"file", file},       {"arith", r.arith}, {"d", r.d},           {"H", r.H},
          {"queries", r.queries},            {"pairs", r.pairs},    {"heads", r.heads}, {"checks", r.checks}, {"failures", fs}};
}

}  // namespace mhaq::check
