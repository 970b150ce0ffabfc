// The reference oracle: the protocol's oracle side (docs/oracle-protocol.md)
// served from a model file, attention or one-layer transformer (mhaq oracle).
// Ball answers are certified: a decimal value and a radius whose interval
// contains f(X) (Arb's printing keeps the ball inside). mpfr answers are
// decimals of the value rounded to the precision, double answers JSON numbers.
#pragma once
#include <iosfwd>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "mhaq/arith/field.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/model/transformer.hpp"
#include "mhaq/oracle/oracle_stack.hpp"

namespace mhaq {

// One served answer: a decimal (ball, mpfr) or a double, a ball's radius,
// and for a certified evaluation its digits, the precision that decided it
// and whether the decimal is correctly rounded.
struct ServedAnswer {
  long id = 0;
  std::string value;                // the decimal
  std::optional<double> f64;        // double answers: the number itself (value unused)
  std::optional<std::string> radius;
  std::optional<long> digits, bits;
  std::optional<bool> correctly_rounded;
};
// {"id": id, "value": ..., ["radius": ...], ...}: the protocol's answer object.
nlohmann::json served_answer_json(const ServedAnswer& a);

class ServedModel {
 public:
  ServedModel(Model m, Arith arith, long bits);
  ServedModel(TransformerModel m, Arith arith, long bits);
  ~ServedModel();
  int dim() const { return d_; }
  std::string describe() const;
  std::string kind_name() const;  // "attention" or "transformer", as the protocol names it
  // One answer, and as the object {"id": id, "value": ..., ["radius": ...]}.
  ServedAnswer answer_value(long id, const Query& q);
  nlohmann::json answer(long id, const Query& q) { return served_answer_json(answer_value(id, q)); }
  // answer(id, q).dump() appended to out, written directly in ball mode.
  void append_answer(long id, const Query& q, std::string& out);
  nlohmann::json hello_reply(const std::string& name) const;
  // One certified evaluation (mhaq oracle --inputs): for attention, f(X)
  // correctly rounded to `digits` significant digits by Arb at rising
  // precision up to max_bits (model/certified_eval.hpp), any exact rational
  // weights (torch's float weights too): {"id", "value": decimal, "radius":
  // half a unit in its last digit, "digits", "bits": precision that decided
  // it (0: exact), "correctly_rounded": true}. A value the cap leaves
  // undecided (zero or a decimal tie), and every transformer value, is a
  // ball instead (at --bits, or more for many digits): {"id", "value", "radius", "correctly_rounded":
  // false}, its interval containing f(X).
  ServedAnswer certified(long id, const Query& q, long digits, long max_bits);

 private:
  Ball enclose(const Query& q, long prec);
  bool transformer_;
  bool grid_ = true;  // the model's W denominators fit the grid oracles of model/ (else the generic evaluation)
  Model attention_;
  TransformerModel tm_;
  int d_;
  Arith arith_;
  long bits_;
  std::map<std::pair<long, long>, OracleStack<Ball>> by_grid_;  // (token denominator, precision)
};

// Serves the protocol on in/out until bye or the end of input; returns the
// exit code (0; 3 when a request was malformed, after replying with an error).
int serve_oracle(std::istream& in, std::ostream& out, ServedModel& m, const std::string& name);

// The queries of an inputs file: {"queries": [RUNS, ...]} with RUNS a list of
// {"token": [...], "count": n} (or {"id": n, "runs": RUNS}); Error(input).
std::vector<Query> read_oracle_inputs(const std::string& text, int d);

}  // namespace mhaq
