#include "mhaq/oracle/server.hpp"

#include <flint/fmpz.h>

#include <istream>
#include <ostream>

#include "mhaq/base/json_in.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/model/certified_eval.hpp"
#include "mhaq/model/model_oracle.hpp"
#include "mhaq/model/transformer_oracle.hpp"
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
  const std::string a = arith_ == Arith::ball ? "ball" : arith_ == Arith::mpfr ? "mpfr" : "double";
  return std::string(transformer_ ? "transformer" : "attention") + ", d = " + std::to_string(d_) + ", " + a +
         (arith_ == Arith::ieee ? std::string() : " at " + std::to_string(bits_) + " bits");
}

json ServedModel::hello_reply(const std::string& name) const {
  json h{{"type", "hello"}, {"protocol", version}, {"d", d_}, {"name", name}};
  if (arith_ == Arith::ball) h["radius"] = true;
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
  auto& o = by_grid_[{den, prec}];
  if (!o) {
    if (transformer_) o = std::make_unique<TransformerOracle<Ball>>(tm_, den);
    else o = std::make_unique<ModelOracle<Ball>>(attention_, den);
  }
  return o->query(q);
}

namespace {
// Arb prints an interval that contains the ball: [mid +/- rad], or an exact
// value without brackets.
long ball_digits(long bits) { return std::max(17L, static_cast<long>(static_cast<double>(bits) * 0.30103) + 3); }
void put_ball(json& a, const Ball& b, long digits) {
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
  a["value"] = mid;
  a["radius"] = rad;
}
}  // namespace

json ServedModel::certified(long id, const Query& q, long digits, long max_bits) {
  json a{{"id", id}};
  if (!transformer_) {
    if (q.empty()) throw_input("an empty query");
    for (const Run& r : q)
      if (static_cast<int>(r.token.size()) != d_) throw_input("a token of dimension " + std::to_string(r.token.size()) + ", the model has d = " + std::to_string(d_));
    try {
      const CertifiedValue v = certified_answer(attention_, q, digits, max_bits);
      // "[-]d.ddd...e[+-]XX": half a unit in the last of `digits` places is 5e(XX - digits)
      const size_t e = v.decimal.find('e');
      const long ex = std::stol(v.decimal.substr(e + 1));
      a["value"] = v.decimal;
      a["radius"] = "5e" + std::to_string(ex - digits);
      a["digits"] = digits;
      a["bits"] = v.bits;
      a["correctly_rounded"] = true;
      return a;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unable) throw;
    }
  }
  // a ball printed with a few digits more than asked: Arb widens the radius
  // to cover the shortened midpoint
  const long prec = std::max(bits_, certified_start_bits(digits));
  put_ball(a, enclose(q, prec), std::min(ball_digits(prec), digits + 5));
  a["correctly_rounded"] = false;
  return a;
}

json ServedModel::answer(long id, const Query& q) {
  json a{{"id", id}};
  if (arith_ == Arith::ball) {
    put_ball(a, enclose(q, bits_), ball_digits(bits_));
    return a;
  }
  // floats: enclose well beyond the precision, round the midpoint
  const long p = arith_ == Arith::ieee ? 53 : bits_;
  const Ball b = enclose(q, p + 64);
  if (arith_ == Arith::ieee) {
    a["value"] = arf_get_d(arb_midref(b.raw()), ARF_RND_NEAR);
    return a;
  }
  PrecisionScope scope(p);
  Mpfr m;
  arf_get_mpfr(m.raw(), arb_midref(b.raw()), MPFR_RNDN);
  a["value"] = m.str(static_cast<long>(static_cast<double>(p) * 0.30103) + 3);
  return a;
}

namespace {
json error_reply(const std::string& m) { return json{{"type", "error"}, {"message", clean_text(m)}}; }
}  // namespace

int serve_oracle(std::istream& in, std::ostream& out, ServedModel& m, const std::string& name) {
  std::string line;
  bool greeted = false;
  while (std::getline(in, line)) {
    if (static_cast<long>(line.size()) >= max_line_bytes) {
      out << error_reply("a request line over the protocol's limit of " + std::to_string(max_line_bytes) + " bytes").dump() << "\n" << std::flush;
      return exit_code(ErrorKind::input);
    }
    try {
      const json j = parse_json_text(line);
      const std::string type = j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : "";
      if (type == "bye") return 0;
      if (type == "hello") {
        json_long(json_member(j, "protocol", "hello"), version, version, "hello.protocol");
        greeted = true;
        out << m.hello_reply(name).dump() << "\n" << std::flush;
        continue;
      }
      if (type != "batch") throw_input("expected a hello, batch or bye message, got " + json_shown(j));
      if (!greeted) throw_input("a batch before the hello");
      const long batch = json_long(json_member(j, "batch", "batch"), 0, 1L << 60, "batch.batch");
      const json& qs = json_member(j, "queries", "batch");
      if (!qs.is_array()) throw_input("batch.queries: expected an array");
      json answers = json::array();
      for (size_t i = 0; i < qs.size(); ++i) {
        const std::string p = json_index_path("queries", i);
        const long id = json_long(json_member(qs[i], "id", p), 0, 1L << 60, p + ".id");
        answers.push_back(m.answer(id, query_from_runs(json_member(qs[i], "runs", p), m.dim(), p + ".runs")));
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
  const json& qs = json_member(j, "queries", "");
  if (!qs.is_array() || qs.empty()) throw_input("queries: expected a non-empty array of queries");
  std::vector<Query> out;
  for (size_t i = 0; i < qs.size(); ++i) {
    const std::string p = json_index_path("queries", i);
    out.push_back(qs[i].is_object() ? query_from_runs(json_member(qs[i], "runs", p), d, p + ".runs") : query_from_runs(qs[i], d, p));
  }
  return out;
}

}  // namespace mhaq
