// The learner's view of an external oracle (docs/oracle-protocol.md): a
// child process that answers batches of queries over JSON lines.
//
//  * ExternalSession owns the child and the protocol: the handshake, batches
//    of up to 256 queries (the learner's upcoming queries are sent ahead when
//    the caller announces them: plans are non-adaptive; the batch after the
//    one awaited goes out before its reply, so the child answers while the
//    learner reads), strict reading of
//    every reply, the transcript (appended per batch, flushed) and the
//    replay of a transcript (--resume: only the missing queries are asked).
//    Any fault ends the child (bye as far as its input takes it at once, end
//    of input, its process group killed) and throws OracleFailure (ErrorKind
//    oracle_failed), and so does every later answer(); the transcript keeps
//    every batch received before it. Every other end (finish(), or the
//    destructor on any exception) sends bye, closes the child's input, waits
//    up to the timeout for it to exit and then ends its process group.
//    In a run across MPI ranks (base/distribute.hpp) rank 0 alone runs the
//    child, reads the resume file and writes the transcript; every rank
//    reads its answers, and its faults, from rank 0 (external_shared.cpp).
//  * ExternalOracle<T> is an Oracle<T> for T = Ball, Mpfr, double. Ball
//    answers are [y +- (radius + abs + rel |y| + conversion)]: on success the
//    learner's enclosures are certified under the stated bound. Floats take y
//    rounded to their precision, with the stated bound as the accuracy their
//    decisions assume. There is no exact instance: the answers are reals, not
//    elements of Q(tau).
#pragma once
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/model/answer_errors.hpp"
#include "mhaq/oracle/child_process.hpp"
#include "mhaq/oracle/protocol.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/stages/1-oracle/query_log.hpp"

namespace mhaq {

class ByteReader;  // arith/value_bytes.hpp

// A bound |answer - f(X)| <= abs + rel |answer| (either part may be absent).
struct ErrorStatement {
  std::optional<Rational> abs, rel;
  bool stated() const { return abs.has_value() || rel.has_value(); }
  std::string str() const;  // "abs 1e-13, rel 0" style, exact rationals
};
// Parses --oracle-error: "EPS" (absolute), "abs:EPS", "rel:EPS" or
// "abs:EPS,rel:EPS", each EPS a non-negative decimal; Error(usage) otherwise.
ErrorStatement parse_error_statement(const std::string& text);

struct ExternalOptions {
  std::string command;
  double timeout_seconds = oracle_protocol::default_timeout_seconds;
  std::string transcript;  // append every query and answer here ("" = none)
  std::string resume;      // replay this transcript first ("" = none)
  // a checkpoint's journal of the oracle's answers, in the transcript's
  // format: appended before the transcript, and continued when it is also
  // the resume file ("" = none)
  std::string journal;
  long batch = oracle_protocol::max_batch_queries;
};

// A rational for messages: itself when short, else about 6 digits and itself.
std::string shown_entry(const Rational& x);
// Why queries reaching `length` tokens and token entries of magnitude
// `entry` lie beyond the hello's statement (longer than its max_length, or
// beyond its max_entry), naming both numbers; "" when it covers them.
std::string beyond_hello(const oracle_protocol::OracleHello& h, long length, const Rational& entry);

class ExternalSession {
 public:
  // Reads the resume file (Error(input) when malformed or for another d or
  // model kind), opens the transcript, starts the child and handshakes. In a
  // run across ranks rank 0 does so, and every rank learns the hello, or
  // throws what rank 0 met.
  ExternalSession(const ExternalOptions& o, int d, oracle_protocol::ModelKind kind, const std::string& arith);
  ExternalSession(const ExternalSession&) = delete;
  ExternalSession& operator=(const ExternalSession&) = delete;

  int dim() const { return d_; }
  const oracle_protocol::OracleHello& hello() const { return hello_; }
  // The queries the learner will ask next, in order (sent ahead in batches).
  void expect(std::vector<Query> upcoming);
  // The answer to q: replayed from the resume file when recorded there,
  // else asked (with the expected queries that follow q, up to a batch).
  // In a run across ranks every rank asks the same queries in the same
  // order, and each answer, or the fault met in its place, is rank 0's.
  oracle_protocol::Answer answer(const Query& q);
  long asked() const { return asked_; }        // queries sent to the child (0 on ranks other than 0)
  long replayed() const { return replayed_; }  // answers taken from the resume file (likewise)
  long batches() const { return batch_no_; }
  // The fault that ended the session, if one did.
  const std::optional<oracle_protocol::OracleFailure>& failure() const { return failure_; }
  // Receives the batches still in flight, sends bye, closes the child's
  // input, waits for it to exit and ends its process group; a note when it
  // did not exit cleanly. Later calls return "".
  std::string finish();
  ~ExternalSession();

 private:
  // One answer from rank 0 in a run across ranks, or what was met in its place.
  struct Shared {
    char tag = 'A';   // 'A' an answer, 'F' an oracle fault, 'E' another error
    long ahead = -1;  // answered ahead of need: the index of its query in the plan (expected_)
    oracle_protocol::Answer answer;
    long code = 0;     // the fault, or the error's kind
    std::string text;  // the fault's detail, or the error's message
  };
  void start(const std::string& arith);                // the resume file, the transcript, the child, the handshake
  oracle_protocol::Answer answer_here(const Query& q);  // answer() on this process's own child
  // Every rank alike: rank 0 answers q and, while q was the plan's next
  // query, the plan's queries after it, and every rank appends the answers to
  // its window, up to the first fault or error met.
  void share_window(const Query& q);
  [[noreturn]] void meet(const Shared& e);  // throws the fault or error rank 0 met
  static void write_shared(std::string& out, const Shared& e);
  static Shared read_shared(ByteReader& in);
  // A batch sent and not yet answered.
  struct InFlight {
    long batch = 0;
    std::vector<long> ids;
    std::vector<Query> qs;
    std::vector<std::string> keys;  // key() of each query
  };
  // Queues qs (keys[i] = key(qs[i])) as one or more batches within the line limit.
  void send_batch(const std::vector<Query>& qs, std::vector<std::string> keys);
  // Adds the expected queries from scan_ on that no cached answer covers, up to a batch.
  void fill(std::vector<Query>& batch, std::vector<std::string>& keys);
  // Keeps the batch after the awaited one in flight while the plan lasts.
  void top_up();
  // Reads the reply to the oldest batch in flight: cache, count, transcript.
  void receive_next();
  static std::string awaited(const InFlight& f);  // a fault's context: the batch awaited
  [[noreturn]] void fail(const oracle_protocol::OracleFailure& f);  // ends the child at once and throws f
  void append_transcript(const std::string& text);
  // Opens a transcript for appending (the header checked, an unfinished last
  // line cut off, the ids continued; a new file gets the header).
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  using File = std::unique_ptr<std::FILE, FileCloser>;  // closed on every way out, a throwing constructor's included
  File open_transcript(const std::string& path);
  std::string context() const;
  // mhaq::beyond_hello for the one query q
  std::string beyond_hello(const Query& q) const;
  static std::string key(const Query& q);
  int d_;
  oracle_protocol::ModelKind kind_;
  ExternalOptions opt_;
  std::unique_ptr<ChildProcess> child_;
  oracle_protocol::OracleHello hello_;
  std::unordered_map<std::string, std::vector<oracle_protocol::Answer>> cache_;  // FIFO per query
  std::unordered_map<std::string, size_t> cache_next_;
  std::unordered_map<std::string, size_t> resumed_;  // the first entries of each cache_ list came from the resume file
  QueryLog expected_;
  std::vector<std::string> expected_keys_;  // key() of each expected query, written once
  size_t pos_ = 0;
  std::deque<InFlight> inflight_;  // oldest first; their replies come in this order
  bool scanning_ = false;           // the plan has queries not yet sent or covered
  size_t scan_ = 0;                 // the next expected query to consider for a batch
  std::unordered_map<std::string, long> spare_;  // cached answers not yet claimed by the scan, per query
  long next_id_ = 0, batch_no_ = 0, asked_ = 0, replayed_ = 0;
  long last_id_ = -1;
  Query last_query_;
  File transcript_;
  File journal_;
  long journaled_ = 0;  // answers appended to the journal by this session
  bool finished_ = false;
  std::optional<oracle_protocol::OracleFailure> failure_;
  bool across_ = false;         // a run across MPI ranks: rank 0 asks, every rank reads
  std::deque<Shared> window_;  // answers from rank 0 not yet taken, in the order asked
};

// Each float answer states its error (AnswerErrors): the bound in force and
// its radius, plus the rounding of the text to the learner's precision; with
// neither, the assumption that the oracle rounded f(X) correctly to what it
// sent (a float64 to half an ulp, a decimal to half a unit in its last place,
// a fraction exactly).
template <class T>
class ExternalOracle final : public Oracle<T>, public KeptAnswerErrors {
 public:
  // stated: the user's bound (--oracle-error); when absent, the oracle's own
  // accuracy from its hello. Ball needs a bound or per-answer radii
  // (Error(usage) otherwise, before any query).
  ExternalOracle(ExternalSession& s, const ErrorStatement& stated);
  int dim() const override { return s_.dim(); }
  const Field<T>& field() const override { return field_; }
  const ErrorStatement& bound() const { return bound_; }  // the bound in force
  std::string error_assumption() const override;

 private:
  T answer(const Query& q) override;
  ExternalSession& s_;
  ErrorStatement bound_;
  Field<T> field_;
};

// The bound in force: the user's when stated, else the oracle's accuracy.
ErrorStatement bound_in_force(const ErrorStatement& user, const oracle_protocol::OracleHello& h);

}  // namespace mhaq
