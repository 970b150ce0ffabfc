#include "mhaq/oracle/server.hpp"

#include <flint/fmpz.h>

#include <cmath>
#include <cstdio>
#include <istream>
#include <ostream>

#include "mhaq/base/json_in.hpp"
#include "mhaq/base/text.hpp"
#include "line_cursor.hpp"
#include "mhaq/model/certified_eval.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/oracle/protocol.hpp"

namespace mhaq {

using nlohmann::json;
using namespace oracle_protocol;

namespace {
// Float weights (a torch model's, say) have W denominators beyond a machine
// word: the grid oracles' integer path does not apply to them.
template <class Fn>
bool fits_grid(Fn&& fn) {
  try {
    fn();
    return true;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::input) throw;
    return false;
  }
}
}  // namespace

ServedModel::ServedModel(Model m, Arith arith, long bits) : transformer_(false), attention_(std::move(m)), d_(attention_.d), arith_(arith), bits_(bits) {
  attention_.validate();
  grid_ = fits_grid([&] { (void)attention_.w_denominator(); });
}
ServedModel::ServedModel(TransformerModel m, Arith arith, long bits) : transformer_(true), tm_(std::move(m)), d_(tm_.d), arith_(arith), bits_(bits) {
  tm_.validate();
  grid_ = fits_grid([&] { (void)tm_.w_denominator(); });
}
ServedModel::~ServedModel() = default;

std::string ServedModel::describe() const {
  const std::string a = arith_name(arith_);
  return std::string(transformer_ ? "transformer" : "attention") + ", d = " + std::to_string(d_) + ", " + a +
         (arith_facts(arith_).fixed_bits > 0 ? std::string() : " at " + std::to_string(bits_) + " bits");
}

std::string ServedModel::kind_name() const { return transformer_ ? "transformer" : "attention"; }

namespace {
// A decimal at least 2^-e (three significant digits, rounded up).
std::string pow2_decimal_up(long e) {
  const double l = -static_cast<double>(e) * 0.30102999566398120;
  const double k = std::floor(l);
  char b[64];
  std::snprintf(b, sizeof b, "%.2fe%ld", std::ceil(std::pow(10.0, l - k) * 100.0 + 1.0) / 100.0, static_cast<long>(k));
  return b;
}
}  // namespace

// Floats state their accuracy: each answer within 2^(1-p) |answer| of f(X)
// (the answer enclosed well beyond p bits and rounded; the rare answer whose
// enclosure cannot meet that carries its own radius: float_answer).
json ServedModel::hello_reply(const std::string& name) const {
  json h{{"type", "hello"}, {"protocol", version}, {"d", d_}, {"name", name}};
  if (arith_facts(arith_).rigorous) h["radius"] = true;
  else h["accuracy"] = {{"rel", pow2_decimal_up(arith_facts(arith_).bits(bits_) - 1)}};
  return h;
}

Ball ServedModel::enclose(const Query& q, long prec) {
  if (q.empty()) throw_input("an empty query");
  for (const Run& r : q)
    if (static_cast<int>(r.token.size()) != d_) throw_input("a token of dimension " + std::to_string(r.token.size()) + ", the model has d = " + std::to_string(d_));
  PrecisionScope scope(prec);
  // the oracles of model/ take tokens on a grid (1/den)Z: their fast integer path
  fmpz_t l;
  fmpz_init_set_ui(l, 1);
  for (const Run& r : q)
    for (const Rational& x : r.token) fmpz_lcm(l, l, fmpq_denref(x.raw()));
  const bool small = fmpz_bits(l) <= 40;
  const long den = small ? fmpz_get_si(l) : 0;
  fmpz_clear(l);
  if (!small || !grid_) return transformer_ ? evaluate_transformer_ball(tm_, q) : evaluate_ball(attention_, q);
  auto it = by_grid_.find({den, prec});
  if (it == by_grid_.end())
    it = by_grid_.emplace(std::make_pair(den, prec), transformer_ ? OracleStack<Ball>::transformer(tm_, den) : OracleStack<Ball>::model(attention_, den)).first;
  return it->second.top().query(q);
}

namespace {
// Arb prints an interval that contains the ball: [mid +/- rad], or an exact
// value without brackets.
long ball_digits(long bits) { return std::max(17L, static_cast<long>(static_cast<double>(bits) * 0.30103) + 3); }
// The midpoint and radius decimals of Arb's printing of b.
std::pair<std::string, std::string> ball_text(const Ball& b, long digits) {
  char* s = arb_get_str(b.raw(), digits, 0);
  std::string t = s;
  flint_free(s);
  std::string mid = t, rad = "0";
  if (!t.empty() && t.front() == '[') {
    t = t.substr(1, t.size() - 2);
    const size_t pm = t.find("+/- ");
    mid = pm == 0 ? "0" : t.substr(0, pm - 1);
    rad = t.substr(pm + 4);
  }
  return {mid, rad};
}
void put_ball(ServedAnswer& a, const Ball& b, long digits) {
  auto [mid, rad] = ball_text(b, digits);
  a.value = std::move(mid);
  a.radius = std::move(rad);
}
}  // namespace

json served_answer_json(const ServedAnswer& a) {
  json j{{"id", a.id}};
  if (a.f64) j["value"] = *a.f64;
  else j["value"] = a.value;
  if (a.radius) j["radius"] = *a.radius;
  if (a.digits) j["digits"] = *a.digits;
  if (a.bits) j["bits"] = *a.bits;
  if (a.correctly_rounded) j["correctly_rounded"] = *a.correctly_rounded;
  return j;
}

ServedAnswer ServedModel::certified(long id, const Query& q, long digits, long max_bits) {
  ServedAnswer a;
  a.id = id;
  if (!transformer_) {
    if (q.empty()) throw_input("an empty query");
    for (const Run& r : q)
      if (static_cast<int>(r.token.size()) != d_) throw_input("a token of dimension " + std::to_string(r.token.size()) + ", the model has d = " + std::to_string(d_));
    try {
      const CertifiedValue v = certified_answer(attention_, q, digits, max_bits);
      // "[-]d.ddd...e[+-]XX": half a unit in the last of `digits` places is 5e(XX - digits)
      const size_t e = v.decimal.find('e');
      const long ex = std::stol(v.decimal.substr(e + 1));
      a.value = v.decimal;
      a.radius = "5e" + std::to_string(ex - digits);
      a.digits = digits;
      a.bits = v.bits;
      a.correctly_rounded = true;
      return a;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unable) throw;
    }
  }
  // a ball printed with a few digits more than asked: Arb widens the radius
  // to cover the shortened midpoint
  const long prec = std::max(bits_, certified_start_bits(digits));
  put_ball(a, enclose(q, prec), std::min(ball_digits(prec), digits + 5));
  a.correctly_rounded = false;
  return a;
}

void ServedModel::append_answer(long id, const Query& q, std::string& out) {
  if (!arith_facts(arith_).rigorous) {
    out += answer(id, q).dump();
    return;
  }
  // the bytes answer(id, q).dump() prints: keys in order, decimals need no escaping
  const auto [mid, rad] = ball_text(enclose(q, bits_), ball_digits(bits_));
  out += "{\"id\":";
  out += std::to_string(id);
  out += ",\"radius\":\"";
  out += rad;
  out += "\",\"value\":\"";
  out += mid;
  out += "\"}";
}

ServedAnswer ServedModel::answer_value(long id, const Query& q) {
  ServedAnswer a;
  a.id = id;
  if (arith_facts(arith_).rigorous) {
    put_ball(a, enclose(q, bits_), ball_digits(bits_));
    return a;
  }
  // floats: enclose well beyond the precision (until the enclosure is within
  // 2^-(p+1) of the value, or 4p + 64 bits), round the midpoint
  const long p = arith_facts(arith_).bits(bits_);
  Ball b;
  for (long prec = p + 64;; prec *= 2) {
    b = enclose(q, prec);
    flint::Mag lo;
    arb_get_mag_lower(lo.v, b.raw());
    mag_mul_2exp_si(lo.v, lo.v, -(p + 1));
    if (mag_cmp(arb_radref(b.raw()), lo.v) <= 0 || prec > 4 * p + 64) break;
  }
  PrecisionScope wide(4 * p + 128);
  Ball sent;  // the value as the learner reads it
  if (arith_facts(arith_).fixed_bits > 0) {  // double: the value itself
    const double v = arf_get_d(arb_midref(b.raw()), ARF_RND_NEAR);
    a.f64 = v;
    arb_set_d(sent.raw(), v);
  } else {
    PrecisionScope scope(p);
    Mpfr m;
    arf_get_mpfr(m.raw(), arb_midref(b.raw()), MPFR_RNDN);
    const std::string text = m.str(static_cast<long>(static_cast<double>(p) * 0.30103) + 3);
    a.value = text;
    // the decimal enclosed at 4p + 128 bits (its exact p/q may be long: a
    // tiny value's denominator has about |exponent| digits)
    if (arb_set_str(sent.raw(), text.c_str(), 4 * p + 128) != 0) throw_internal("oracle: cannot read back its own answer " + text);
  }
  // the promise 2^(1-p) |value| broken (a value near 0): this answer's own radius
  const Ball err = sent - b;
  flint::Mag e, allowed;
  arb_get_mag(e.v, err.raw());
  arb_get_mag_lower(allowed.v, sent.raw());
  mag_mul_2exp_si(allowed.v, allowed.v, 1 - p);
  if (mag_cmp(e.v, allowed.v) > 0) a.radius = pow2_decimal_up(-fmpz_get_si(MAG_EXPREF(e.v)));
  return a;
}

namespace {
json error_reply(const std::string& m) { return json{{"type", "error"}, {"message", clean_text(m)}}; }

// A reader of the batch line exactly as mhaq's learner writes it
// (oracle_protocol::batch_line_of: compact, keys in order, tokens as
// "p/q" strings, float64 values beside them): the common case, read without
// building a JSON document. It accepts only lines the general reader reads
// to the same batch and queries; anything else (other spacing or key order,
// a token or number it does not know, a value out of range) makes it give
// up, and the general reader decides, with its own messages.
class CanonicalBatch : oracle_detail::LineCursor {
 public:
  CanonicalBatch(const std::string& line, int d) : LineCursor(line), d_(d) {}
  bool read(long& batch, std::vector<std::pair<long, Query>>& out) {
    try {
      if (!lit("{\"batch\":") || !integer(0, 1L << 60, batch) || !lit(",\"queries\":[")) return false;
      if (peek() == ']') return false;  // an empty batch: the general reader's case
      for (;;) {
        long id = 0;
        if (!lit("{\"id\":") || !integer(0, 1L << 60, id) || !lit(",\"runs\":[")) return false;
        Query q;
        for (;;) {
          Run r;
          if (!lit("{\"count\":") || !integer(1, 1L << 40, r.count) || !lit(",\"token\":[")) return false;
          for (int k = 0; k < d_; ++k) {
            if (k && !lit(",")) return false;
            if (!token(r.token)) return false;
          }
          if (!lit("]")) return false;
          if (lit(",\"x\":[")) {
            for (int k = 0; k < d_; ++k) {
              if (k && !lit(",")) return false;
              if (!number()) return false;
            }
            if (!lit("]")) return false;
          }
          if (!lit("}")) return false;
          q.push_back(std::move(r));
          if (lit(",")) continue;
          if (!lit("]}")) return false;
          break;
        }
        out.emplace_back(id, std::move(q));
        if (lit(",")) continue;
        break;
      }
      return lit("],\"type\":\"batch\"}") && i_ == s_.size();
    } catch (const Error&) {
      return false;
    }
  }

 private:
  // digits of a token part: 1 to 18, leading zeros allowed (the general
  // reader allows them too)
  bool part(long& v) {
    const size_t b = i_;
    long x = 0;
    while (i_ < s_.size() && digit(s_[i_]) && i_ - b < 18) x = 10 * x + (s_[i_++] - '0');
    if (i_ == b || digit(peek())) return false;
    v = x;
    return true;
  }
  // "[-]p/q" or "[-]p" with word-size parts, in lowest terms as Rational::parse gives it
  bool token(QVec& t) {
    if (!lit("\"")) return false;
    const bool neg = lit("-");
    long p = 0, q = 1;
    if (!part(p)) return false;
    if (lit("/") && (!part(q) || q == 0)) return false;
    if (!lit("\"")) return false;
    Rational r;
    fmpq_set_si(r.raw(), neg ? -p : p, static_cast<ulong>(q));
    t.push_back(std::move(r));
    return true;
  }
  // a JSON number (ignored by the server: the token is the exact value) whose
  // size a double holds: the general reader refuses only ones beyond a double
  bool number() {
    lit("-");
    const size_t b = i_;
    while (digit(peek())) ++i_;
    if (i_ == b || (i_ - b > 1 && s_[b] == '0') || i_ - b > 17) return false;
    if (lit(".")) {
      const size_t f = i_;
      while (digit(peek())) ++i_;
      if (i_ == f || i_ - f > 40) return false;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++i_;
      if (peek() == '+' || peek() == '-') ++i_;
      const size_t e = i_;
      while (digit(peek())) ++i_;
      if (i_ == e || i_ - e > 3 || std::stol(s_.substr(e, i_ - e)) > 280) return false;
    }
    return true;
  }
  int d_;
};

}  // namespace

int serve_oracle(std::istream& in, std::ostream& out, ServedModel& m, const std::string& name) {
  std::string line;
  bool greeted = false;
  while (std::getline(in, line)) {
    if (static_cast<long>(line.size()) >= max_line_bytes) {
      out << error_reply("a request line over the protocol's limit of " + std::to_string(max_line_bytes) + " bytes").dump() << "\n" << std::flush;
      return exit_code(ErrorKind::input);
    }
    if (greeted) {
      long batch = 0;
      std::vector<std::pair<long, Query>> qs;
      if (CanonicalBatch(line, m.dim()).read(batch, qs)) {
        try {
          std::string text = "{\"answers\":[";
          for (size_t i = 0; i < qs.size(); ++i) {
            if (i) text += ',';
            m.append_answer(qs[i].first, qs[i].second, text);
          }
          text += "],\"batch\":" + std::to_string(batch) + ",\"type\":\"answers\"}\n";
          out << text << std::flush;
        } catch (const Error& e) {
          out << error_reply(e.what()).dump() << "\n" << std::flush;
          return exit_code(e.kind() == ErrorKind::internal ? ErrorKind::internal : ErrorKind::input);
        }
        continue;
      }
    }
    try {
      const json j = parse_json_text(line);
      const std::string type = j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : "";
      if (type == "bye") return 0;
      if (type == "hello") {
        json_long(json_member(j, "hello", "protocol"), version, version, "hello.protocol");
        // a learner that expects the other kind of model would learn nonsense from these answers
        if (j.contains("model_kind") && j["model_kind"] != m.kind_name())
          throw_input("hello.model_kind: this oracle serves " + std::string(m.kind_name() == "transformer" ? "a transformer" : "an attention model") + ", not " + json_shown(j["model_kind"]));
        greeted = true;
        out << m.hello_reply(name).dump() << "\n" << std::flush;
        continue;
      }
      if (type != "batch") throw_input("expected a hello, batch or bye message, got " + json_shown(j));
      if (!greeted) throw_input("a batch before the hello");
      const long batch = json_long(json_member(j, "batch", "batch"), 0, 1L << 60, "batch.batch");
      const json& qs = json_member(j, "batch", "queries");
      if (!qs.is_array()) throw_input("batch.queries: expected an array");
      json answers = json::array();
      for (size_t i = 0; i < qs.size(); ++i) {
        const std::string p = json_index_path("queries", i);
        const long id = json_long(json_member(qs[i], p, "id"), 0, 1L << 60, p + ".id");
        answers.push_back(m.answer(id, query_from_runs(json_member(qs[i], p, "runs"), m.dim(), p + ".runs")));
      }
      out << json{{"type", "answers"}, {"batch", batch}, {"answers", answers}}.dump() << "\n" << std::flush;
    } catch (const Error& e) {
      out << error_reply(e.what()).dump() << "\n" << std::flush;
      return exit_code(e.kind() == ErrorKind::internal ? ErrorKind::internal : ErrorKind::input);
    }
  }
  return 0;
}

std::vector<Query> read_oracle_inputs(const std::string& text, int d) {
  const json j = parse_json_text(text);
  const json& qs = json_member(j, "", "queries");
  if (!qs.is_array() || qs.empty()) throw_input("queries: expected a non-empty array of queries");
  std::vector<Query> out;
  for (size_t i = 0; i < qs.size(); ++i) {
    const std::string p = json_index_path("queries", i);
    out.push_back(qs[i].is_object() ? query_from_runs(json_member(qs[i], p, "runs"), d, p + ".runs") : query_from_runs(qs[i], d, p));
  }
  return out;
}

}  // namespace mhaq
