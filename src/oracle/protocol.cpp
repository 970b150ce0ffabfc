#include "mhaq/oracle/protocol.hpp"

#include <mpfr.h>

#include <cmath>
#include <limits>
#include <set>

#include "mhaq/base/json_in.hpp"
#include "mhaq/base/text.hpp"
#include "line_cursor.hpp"

namespace mhaq::oracle_protocol {

using nlohmann::json;

const char* fault_name(Fault f) {
  switch (f) {
    case Fault::spawn: return "spawn";
    case Fault::exited: return "exited";
    case Fault::timeout: return "timeout";
    case Fault::line_too_long: return "line_too_long";
    case Fault::garbage: return "garbage";
    case Fault::not_finite: return "not_finite";
    case Fault::wrong_count: return "wrong_count";
    case Fault::wrong_id: return "wrong_id";
    case Fault::duplicate_id: return "duplicate_id";
    case Fault::handshake: return "handshake";
    case Fault::oracle_error: return "oracle_error";
    case Fault::no_radius: return "no_radius";
  }
  return "?";
}

const char* model_kind_name(ModelKind k) { return k == ModelKind::attention ? "attention" : "transformer"; }

// Numerator and denominator within 2^53 are doubles exactly, and IEEE
// division rounds their quotient correctly to nearest, ties to even: the
// common case (tokens on a dyadic grid) takes that path; MPFR's correctly
// rounded conversion the others.
double nearest_double(const Rational& q) {
  const fmpz* n = fmpq_numref(q.raw());
  const fmpz* dn = fmpq_denref(q.raw());
  constexpr slong exact = slong(1) << 53;
  if (!COEFF_IS_MPZ(*n) && !COEFF_IS_MPZ(*dn) && *n <= exact && *n >= -exact && *dn <= exact)
    return static_cast<double>(*n) / static_cast<double>(*dn);
  mpq_t m;
  mpq_init(m);
  fmpq_get_mpq(m, q.raw());
  mpfr_t f;
  mpfr_init2(f, 53);
  mpfr_set_q(f, m, MPFR_RNDN);
  const double out = mpfr_get_d(f, MPFR_RNDN);
  mpfr_clear(f);
  mpq_clear(m);
  return out;
}

namespace {

Rational rational_of_double(double x) {
  // exact: a double is a dyadic rational
  mpq_t m;
  mpq_init(m);
  mpq_set_d(m, x);
  Rational q;
  fmpq_set_mpq(q.raw(), m);
  mpq_clear(m);
  return q;
}

// A line as a JSON object, or the fault it is.
json parse_line(const std::string& line, const std::string& what, const std::string& context) {
  json j;
  try {
    j = parse_json_text(line);
  } catch (const Error& e) {
    const std::string m = e.what();
    // NaN and Infinity are not JSON, but some writers (Python's json) emit them
    const bool nonfinite = line.find("NaN") != std::string::npos || line.find("Infinity") != std::string::npos ||
                           m.find("beyond a double") != std::string::npos;
    throw OracleFailure(nonfinite ? Fault::not_finite : Fault::garbage, what + " is not valid JSON (" + m + "): " + quote_text(line) + context);
  }
  if (!j.is_object()) throw OracleFailure(Fault::garbage, what + " is not a JSON object: " + quote_text(line) + context);
  return j;
}

bool non_finite_text(const std::string& s) {
  std::string t;
  for (char c : s) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t.find("nan") != std::string::npos || t.find("inf") != std::string::npos;
}

// A number field: a JSON number (float64) or a decimal string, exactly.
Rational number_field(const json& v, const std::string& where, bool& from_float, double& f64) {
  from_float = false;
  if (v.is_number_integer()) {
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(1) << 62) throw OracleFailure(Fault::garbage, where + ": integer too large, send a decimal string");
      f64 = static_cast<double>(u);
      return Rational(static_cast<long>(u));
    }
    const long n = v.get<long>();
    if (n > (1L << 62) || n < -(1L << 62)) throw OracleFailure(Fault::garbage, where + ": integer too large, send a decimal string");
    f64 = static_cast<double>(n);
    return Rational(n);
  }
  if (v.is_number_float()) {
    const double x = v.get<double>();
    if (!std::isfinite(x)) throw OracleFailure(Fault::not_finite, where + " is not finite");
    from_float = true;
    f64 = x;
    return rational_of_double(x);
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (non_finite_text(s)) throw OracleFailure(Fault::not_finite, where + " is not finite: " + quote_text(s));
    try {
      Rational q = Rational::parse(s, static_cast<size_t>(max_value_chars));
      f64 = nearest_double(q);
      return q;
    } catch (const Error& e) {
      throw OracleFailure(Fault::garbage, where + ": " + e.what());
    }
  }
  throw OracleFailure(Fault::garbage, where + ": expected a number or a decimal string, got " + json_shown(v));
}

Rational nonneg_field(const json& v, const std::string& where) {
  bool ff = false;
  double f = 0;
  Rational q = number_field(v, where, ff, f);
  if (q.sign() < 0) throw OracleFailure(Fault::garbage, where + " is negative: " + json_shown(v));
  return q;
}

std::string type_of(const json& j) {
  const auto it = j.find("type");
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string hello_line(int d, ModelKind kind, const std::string& arith) {
  return json{{"type", "hello"}, {"protocol", version}, {"d", d}, {"model_kind", model_kind_name(kind)}, {"arith", arith}, {"max_line", max_line_bytes}}.dump();
}

json runs_json(const Query& q, bool with_floats) {
  json runs = json::array();
  for (const Run& r : q) {
    json tok = json::array(), x = json::array();
    for (const Rational& e : r.token) {
      tok.push_back(e.str());
      if (with_floats) x.push_back(nearest_double(e));
    }
    json o{{"token", tok}};
    if (with_floats) o["x"] = x;
    o["count"] = r.count;
    runs.push_back(o);
  }
  return runs;
}

Query query_from_runs(const json& j, int d, const std::string& path) {
  if (!j.is_array() || j.empty()) throw_input(path + ": expected a non-empty array of runs");
  Query q;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string p = json_index_path(path, i);
    const json& tok = json_member(j[i], p, "token");
    if (!tok.is_array() || static_cast<long>(tok.size()) != d) throw_input(json_key_path(p, "token") + ": expected " + std::to_string(d) + " entries");
    Run r;
    for (size_t k = 0; k < tok.size(); ++k) {
      if (!tok[k].is_string()) throw_input(json_index_path(json_key_path(p, "token"), k) + ": expected an exact rational string");
      r.token.push_back(Rational::parse(tok[k].get<std::string>()));
    }
    r.count = json_long(json_member(j[i], p, "count"), 1, 1L << 40, json_key_path(p, "count"));
    q.push_back(std::move(r));
  }
  return q;
}

std::string runs_text(const Query& q, bool with_floats) {
  // nlohmann's compact dump: object keys sorted ("count" < "token" < "x"),
  // strings here need no escaping, numbers as nlohmann prints them
  std::string out = "[";
  for (size_t i = 0; i < q.size(); ++i) {
    const Run& r = q[i];
    if (i) out += ',';
    out += "{\"count\":";
    out += std::to_string(r.count);
    out += ",\"token\":[";
    for (size_t k = 0; k < r.token.size(); ++k) {
      if (k) out += ',';
      out += '"';
      out += r.token[k].str();
      out += '"';
    }
    out += ']';
    if (with_floats) {
      out += ",\"x\":[";
      for (size_t k = 0; k < r.token.size(); ++k) {
        if (k) out += ',';
        // the bytes nlohmann's dump prints for a double (its shortest
        // round-trip form, "null" beyond the range), without a JSON value
        const double x = nearest_double(r.token[k]);
        if (!std::isfinite(x)) {
          out += "null";
          continue;
        }
        char buf[64];
        out.append(buf, nlohmann::detail::to_chars(buf, buf + sizeof buf, x));
      }
      out += ']';
    }
    out += '}';
  }
  out += ']';
  return out;
}

std::string batch_line_of(long batch, const std::vector<long>& ids, const std::vector<std::string>& runs) {
  if (ids.size() != runs.size()) throw_internal("batch_line: ids and queries differ in number");
  size_t n = 64;
  for (const std::string& r : runs) n += r.size() + 32;
  std::string out;
  out.reserve(n);
  out += "{\"batch\":";
  out += std::to_string(batch);
  out += ",\"queries\":[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ',';
    out += "{\"id\":";
    out += std::to_string(ids[i]);
    out += ",\"runs\":";
    out += runs[i];
    out += '}';
  }
  out += "],\"type\":\"batch\"}";
  return out;
}

std::string batch_line(long batch, const std::vector<long>& ids, const std::vector<Query>& queries) {
  std::vector<std::string> runs;
  runs.reserve(queries.size());
  for (const Query& q : queries) runs.push_back(runs_text(q, true));
  return batch_line_of(batch, ids, runs);
}

OracleHello parse_hello(const std::string& line, int d, const std::string& context) {
  const json j = parse_line(line, "the oracle's hello", context);
  if (type_of(j) == "error")
    throw OracleFailure(Fault::oracle_error, "the oracle refused the handshake: " + quote_text(j.value("message", std::string())) + context);
  if (type_of(j) != "hello") throw OracleFailure(Fault::garbage, "expected the oracle's hello, got " + json_shown(j) + context);
  const auto pv = j.find("protocol");
  if (pv == j.end() || !pv->is_number_integer() || pv->get<long>() != version)
    throw OracleFailure(Fault::handshake, "the oracle speaks protocol " + (pv == j.end() ? std::string("(none)") : json_shown(*pv)) + ", mhaq speaks " +
                                              std::to_string(version) + context);
  const auto dv = j.find("d");
  if (dv == j.end() || !dv->is_number_integer() || dv->get<long>() != d)
    throw OracleFailure(Fault::handshake, "the oracle states d = " + (dv == j.end() ? std::string("(none)") : json_shown(*dv)) + ", the learner's d is " +
                                              std::to_string(d) + context);
  OracleHello h;
  h.raw = j;
  const auto nm = j.find("name");
  if (nm == j.end() || !nm->is_string()) throw OracleFailure(Fault::garbage, "the oracle's hello has no \"name\" string" + context);
  h.name = nm->get<std::string>();
  if (const auto a = j.find("accuracy"); a != j.end()) {
    if (!a->is_object()) throw OracleFailure(Fault::garbage, "hello.accuracy: expected an object {\"abs\": ..., \"rel\": ...}" + context);
    for (const auto& [k, v] : a->items()) {
      if (k == "abs") h.acc_abs = nonneg_field(v, "hello.accuracy.abs");
      else if (k == "rel") h.acc_rel = nonneg_field(v, "hello.accuracy.rel");
      else throw OracleFailure(Fault::garbage, "hello.accuracy: unknown key " + quote_text(k) + context);
    }
  }
  if (const auto r = j.find("radius"); r != j.end()) {
    if (!r->is_boolean()) throw OracleFailure(Fault::garbage, "hello.radius: expected true or false" + context);
    h.radius = r->get<bool>();
  }
  // a positive integer; beyond the range of long it is not one either
  if (const auto m = j.find("max_length"); m != j.end()) {
    if (!m->is_number_integer() || (m->is_number_unsigned() && m->get<unsigned long long>() > 0x7fffffffffffffffULL) || m->get<long long>() < 1)
      throw OracleFailure(Fault::garbage, "hello.max_length: expected a positive integer, got " + json_shown(*m) + context);
    h.max_length = static_cast<long>(m->get<long long>());
  }
  // a positive number, read exactly as the accuracy is; anything else
  // (zero, negative, not a number, not finite) is garbage, as for max_length
  if (const auto e = j.find("max_entry"); e != j.end()) {
    const std::string bad = "hello.max_entry: expected a positive number or decimal string, got " + json_shown(*e) + context;
    Rational q;
    try {
      bool ff = false;
      double f = 0;
      q = number_field(*e, "hello.max_entry", ff, f);
    } catch (const OracleFailure&) {
      throw OracleFailure(Fault::garbage, bad);
    }
    if (q.sign() <= 0) throw OracleFailure(Fault::garbage, bad);
    h.max_entry = std::move(q);
  }
  return h;
}

Answer parse_answer(const json& a, bool need_radius, const std::string& where) {
  if (!a.is_object()) throw OracleFailure(Fault::garbage, where + ": expected an object {\"id\": ..., \"value\": ...}, got " + json_shown(a));
  for (const auto& [k, v] : a.items())
    if (k != "id" && k != "value" && k != "radius") throw OracleFailure(Fault::garbage, where + ": unknown key " + quote_text(k));
  const auto v = a.find("value");
  if (v == a.end()) throw OracleFailure(Fault::garbage, where + ": no \"value\"");
  Answer out;
  out.raw = a.dump();
  out.value = number_field(*v, where + ".value", out.from_float64, out.f64);
  if (const auto r = a.find("radius"); r != a.end()) out.radius = nonneg_field(*r, where + ".radius");
  else if (need_radius) throw OracleFailure(Fault::no_radius, where + ": no \"radius\", but the oracle promised one with every answer");
  return out;
}

namespace {
// A reader of the answers line exactly as mhaq oracle writes it (compact,
// keys in order, ids in the order asked, value and radius as decimal
// strings): the common case, read without building a JSON document. It
// accepts only lines the general reader takes to the same answers; anything
// else makes it give up, and the general reader decides, with its faults and
// messages.
class CanonicalAnswers : oracle_detail::LineCursor {
 public:
  explicit CanonicalAnswers(const std::string& line) : LineCursor(line) {}
  bool read(long batch, const std::vector<long>& ids, bool need_radius, std::vector<Answer>& out) {
    try {
      if (ids.empty() || !lit("{\"answers\":[")) return false;
      for (size_t k = 0; k < ids.size(); ++k) {
        if (k && !lit(",")) return false;
        const size_t start = i_;
        long id = 0;
        if (!lit("{\"id\":") || !integer(0, std::numeric_limits<long>::max(), id) || id != ids[k]) return false;
        Answer a;
        std::string r, v;
        if (lit(",\"radius\":")) {
          if (!decimal(r)) return false;
        } else if (need_radius) {
          return false;
        }
        if (!lit(",\"value\":") || !decimal(v) || !lit("}")) return false;
        a.value = Rational::parse(v, static_cast<size_t>(max_value_chars));
        a.f64 = nearest_double(a.value);
        if (!r.empty()) {
          Rational rad = Rational::parse(r, static_cast<size_t>(max_value_chars));
          if (rad.sign() < 0) return false;
          a.radius = std::move(rad);
        }
        a.raw = s_.substr(start, i_ - start);
        out.push_back(std::move(a));
      }
      if (!lit("],\"batch\":")) return false;
      long b = 0;
      return integer(0, std::numeric_limits<long>::max(), b) && b == batch && lit(",\"type\":\"answers\"}") && i_ == s_.size();
    } catch (const Error&) {
      return false;
    }
  }

 private:
  // a string of the characters of a decimal (its grammar is Rational::parse's)
  bool decimal(std::string& t) {
    if (!lit("\"")) return false;
    const size_t b = i_;
    while (i_ < s_.size() && (digit(s_[i_]) || s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == '-' || s_[i_] == '+')) ++i_;
    if (i_ == b || !lit("\"")) return false;
    t.assign(s_, b, i_ - 1 - b);
    return true;
  }
};
}  // namespace

std::vector<Answer> parse_answers(const std::string& line, long batch, const std::vector<long>& ids, bool need_radius, const std::string& context) {
  {
    std::vector<Answer> fast;
    fast.reserve(ids.size());
    if (CanonicalAnswers(line).read(batch, ids, need_radius, fast)) return fast;
  }
  const json j = parse_line(line, "the reply to batch " + std::to_string(batch), context);
  if (type_of(j) == "error") throw OracleFailure(Fault::oracle_error, "the oracle replied with an error: " + quote_text(j.value("message", std::string()), 400) + context);
  if (type_of(j) != "answers") throw OracleFailure(Fault::garbage, "expected {\"type\": \"answers\", ...}, got " + json_shown(j) + context);
  const auto b = j.find("batch");
  if (b == j.end() || !b->is_number_integer() || b->get<long>() != batch)
    throw OracleFailure(Fault::wrong_id, "the reply names batch " + (b == j.end() ? std::string("(none)") : json_shown(*b)) + ", expected " + std::to_string(batch) + context);
  const auto as = j.find("answers");
  if (as == j.end() || !as->is_array()) throw OracleFailure(Fault::garbage, "the reply has no \"answers\" array" + context);
  if (as->size() != ids.size())
    throw OracleFailure(Fault::wrong_count, std::to_string(as->size()) + " answers to a batch of " + std::to_string(ids.size()) + " queries" + context);
  std::vector<std::optional<Answer>> slot(ids.size());
  for (size_t i = 0; i < as->size(); ++i) {
    const std::string where = "answers[" + std::to_string(i) + "]";
    const json& a = (*as)[i];
    const auto id = a.is_object() ? a.find("id") : a.end();
    if (!a.is_object() || id == a.end() || !id->is_number_integer())
      throw OracleFailure(Fault::garbage, where + ": expected an object with an integer \"id\", got " + json_shown(a) + context);
    const long n = id->get<long>();
    size_t k = 0;
    while (k < ids.size() && ids[k] != n) ++k;
    if (k == ids.size()) throw OracleFailure(Fault::wrong_id, where + ": id " + std::to_string(n) + " is not in batch " + std::to_string(batch) + context);
    if (slot[k]) throw OracleFailure(Fault::duplicate_id, where + ": id " + std::to_string(n) + " answered twice" + context);
    try {
      slot[k] = parse_answer(a, need_radius, where + " (id " + std::to_string(n) + ")");
    } catch (const OracleFailure& f) {
      throw OracleFailure(f.fault(), f.detail() + context);
    }
  }
  std::vector<Answer> out;
  out.reserve(ids.size());
  for (auto& s : slot) out.push_back(std::move(*s));
  return out;
}

std::string describe_query(long id, const Query& q) {
  std::string s = "query " + std::to_string(id) + " (";
  for (size_t i = 0; i < q.size(); ++i) {
    if (i) s += ", ";
    std::string t = "[";
    for (size_t k = 0; k < q[i].token.size(); ++k) t += (k ? ", " : "") + q[i].token[k].str();
    t += "]";
    if (t.size() > 120) t = t.substr(0, 117) + "...]";
    s += t;
    if (q[i].count != 1) s += " x " + std::to_string(q[i].count);
    if (s.size() > 600) {
      s += ", ...";
      break;
    }
  }
  return s + ")";
}

}  // namespace mhaq::oracle_protocol
