// The oracle protocol (docs/oracle-protocol.md), version 1: the messages mhaq
// and an external oracle exchange as JSON lines, and the strict reading of
// every message an oracle sends. This layer sits above model/ and below the
// tools: it knows queries and exact rationals, never a model or a learner.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mhaq/arith/rational.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"

namespace mhaq::oracle_protocol {

inline constexpr int version = 1;
// Longest line either side may send, newline included.
inline constexpr long max_line_bytes = 1L << 20;
// Most queries in one batch.
inline constexpr long max_batch_queries = 256;
// Characters of an answer's decimal value or radius.
inline constexpr long max_value_chars = 4096;
// Default seconds to wait for one reply (--oracle-timeout).
inline constexpr double default_timeout_seconds = 60;

// Every way an oracle can fail; each has its own name in messages.
enum class Fault { spawn, exited, timeout, line_too_long, garbage, not_finite, wrong_count, wrong_id, duplicate_id, handshake, oracle_error, no_radius };
const char* fault_name(Fault f);

// A fault of the oracle process. Its kind is ErrorKind::oracle_failed; the
// message names the fault, what happened and the last query sent.
class OracleFailure : public Error {
 public:
  OracleFailure(Fault f, const std::string& detail)
      : Error(ErrorKind::oracle_failed, std::string("oracle fault ") + fault_name(f) + ": " + detail), fault_(f), detail_(detail) {}
  Fault fault() const { return fault_; }
  const std::string& detail() const { return detail_; }  // the message without the fault's name

 private:
  Fault fault_;
  std::string detail_;
};

enum class ModelKind { attention, transformer };
const char* model_kind_name(ModelKind k);

// What the oracle says about itself in its hello.
struct OracleHello {
  std::string name;
  std::optional<Rational> acc_abs, acc_rel;  // its stated accuracy, when given
  bool radius = false;                       // every answer carries a radius
  long max_length = 0;                       // the longest sequence it answers ("max_length"; 0: not stated)
  std::optional<Rational> max_entry;         // the largest |entry| of a token its accuracy covers ("max_entry")
  nlohmann::json raw;                        // the line as received
};

// One answer as received, read exactly: a JSON number is its float64 (the
// nearest double to the text, as strtod reads it), a string its exact value.
struct Answer {
  Rational value;
  std::optional<Rational> radius;
  bool from_float64 = false;  // value came from a JSON number
  double f64 = 0;             // value as the nearest double
  std::string raw;            // the answer object as received, compact JSON with keys in order
};

// The nearest double to q, ties to even (the "x" beside each token).
double nearest_double(const Rational& q);

// ---- mhaq's messages (each one line, without the newline)
std::string hello_line(int d, ModelKind kind, const std::string& arith);
// The runs of a query as JSON: [{"token": [...], "x": [...], "count": n}, ...]
// (with_floats false: without "x", as in transcripts).
nlohmann::json runs_json(const Query& q, bool with_floats);
// Error(input) "<path>: ..." unless j is a runs array of tokens of dimension d.
Query query_from_runs(const nlohmann::json& j, int d, const std::string& path);
// The same runs as the text of runs_json(q, with_floats).dump(), byte for
// byte, written directly (the learner serialises every query it asks).
std::string runs_text(const Query& q, bool with_floats);
std::string batch_line(long batch, const std::vector<long>& ids, const std::vector<Query>& queries);
// The batch line from the queries' runs_text(q, true), already written.
std::string batch_line_of(long batch, const std::vector<long>& ids, const std::vector<std::string>& runs);
inline std::string bye_line() { return R"({"type":"bye"})"; }

// ---- the oracle's messages, read strictly (OracleFailure on any defect;
// `context` is appended to every message, e.g. the last query)
OracleHello parse_hello(const std::string& line, int d, const std::string& context);
// The answers to batch `batch` holding queries `ids`, in the order of ids.
std::vector<Answer> parse_answers(const std::string& line, long batch, const std::vector<long>& ids, bool need_radius, const std::string& context);
// One answer object (also used to replay transcripts); `where` names it.
Answer parse_answer(const nlohmann::json& a, bool need_radius, const std::string& where);

// A short description of a query for messages: "query 17 ([1/2, -3/4] x 4, [1, 0])".
std::string describe_query(long id, const Query& q);

}  // namespace mhaq::oracle_protocol
