// An external oracle in a run across MPI ranks (docs/mpi.md): rank 0 alone
// runs the child process, reads the resume file and writes the transcript,
// so no query is asked twice and the transcript is one file; the other ranks
// hold a session without a child. The run is the same on every rank, so
// every rank asks the same queries in the same order; each answer comes from
// rank 0. When a rank's window of answers runs out, rank 0 answers the query
// asked and, while that query was the plan's next one, the plan's queries
// after it (the learner asks Plan::queries() in order), making the very calls
// one process makes, and broadcasts the answers as exact values with the
// first fault or error met. Every rank then takes its answers from the window
// in order and meets the fault where one process meets it, so the answers,
// the counts, the verdict and the transcript are those of one process.
#include <flint/fmpq.h>

#include <cstring>
#include <exception>

#include "mhaq/arith/value_bytes.hpp"
#include "mhaq/base/distribute.hpp"
#include "mhaq/oracle/external_oracle.hpp"

namespace mhaq {

using oracle_protocol::Answer;
using oracle_protocol::Fault;
using oracle_protocol::OracleFailure;

namespace {
// Answers rank 0 gives in one broadcast: about 0.1 to 2 KB each; the other
// ranks wait while rank 0 asks, so fewer, larger windows cost them nothing.
constexpr long kSharedAnswers = 4096;

void write_rational(std::string& out, const Rational& q) { write_text(out, q.str()); }
Rational read_rational(ByteReader& in) {
  const std::string s = in.text();
  Rational q;
  if (fmpq_set_str(q.raw(), s.c_str(), 10) != 0) throw_internal("external oracle: a malformed shared answer");
  return q;
}
long read_long(ByteReader& in) {
  const std::string s = in.text();
  try {
    return std::stol(s);
  } catch (const std::exception&) {
    throw_internal("external oracle: a malformed shared answer");
  }
}
}  // namespace

ExternalSession::ExternalSession(const ExternalOptions& o, int d, oracle_protocol::ModelKind kind, const std::string& arith)
    : d_(d), kind_(kind), opt_(o), across_(run_across_ranks()) {
  if (!across_) {
    start(arith);
    return;
  }
  // rank 0 starts the child; every rank learns its hello, or the fault that
  // ended the handshake (any other error root_computes rethrows everywhere)
  std::string image = root_computes([&] {
    std::string out;
    try {
      start(arith);
    } catch (const OracleFailure& f) {
      write_shared(out, Shared{'F', -1, {}, static_cast<long>(f.fault()), f.detail()});
      return out;
    }
    write_shared(out, Shared{'H', -1, {}, 0, hello_.raw.dump()});
    return out;
  });
  ByteReader in(image);
  const Shared e = read_shared(in);
  if (!in.done()) throw_internal("external oracle: a malformed shared hello");
  if (e.tag != 'H') meet(e);
  if (!is_root()) hello_ = oracle_protocol::parse_hello(e.text, d_, " (during the handshake, read on MPI rank 0)");
}

Answer ExternalSession::answer(const Query& q) {
  if (!across_) return answer_here(q);
  if (window_.empty()) share_window(q);
  Shared e = std::move(window_.front());
  window_.pop_front();
  // rank 0 answered ahead only the plan's next queries, which the learner asks in order
  if (e.ahead >= 0 && (static_cast<size_t>(e.ahead) >= expected_.size() || !same_query(expected_[static_cast<size_t>(e.ahead)], q)))
    throw_internal("external oracle: the learner left its plan where MPI rank 0 had answered ahead of it");
  if (e.tag != 'A') meet(e);
  return std::move(e.answer);
}

void ExternalSession::share_window(const Query& q) {
  const std::string image = root_computes([&] {
    std::string out;
    // one answer, or the fault or error met in its place (which ends the window)
    auto one = [&](const Query& x, long ahead) {
      try {
        write_shared(out, Shared{'A', ahead, answer_here(x), 0, {}});
        return true;
      } catch (const OracleFailure& f) {
        write_shared(out, Shared{'F', ahead, {}, static_cast<long>(f.fault()), f.detail()});
      } catch (const Error& e) {
        write_shared(out, Shared{'E', ahead, {}, static_cast<long>(e.kind()), e.what()});
      } catch (const std::exception& e) {
        write_shared(out, Shared{'E', ahead, {}, static_cast<long>(ErrorKind::internal), e.what()});
      }
      return false;
    };
    const size_t at = pos_;
    if (!one(q, -1) || pos_ != at + 1) return out;  // pos_ moved on: q was the plan's next query
    for (long n = 1; n < kSharedAnswers && pos_ < expected_.size(); ++n) {
      const long j = static_cast<long>(pos_);
      if (!one(expected_[pos_], j)) break;
    }
    return out;
  });
  ByteReader in(image);
  while (!in.done()) window_.push_back(read_shared(in));
  if (window_.empty()) throw_internal("external oracle: an empty window of shared answers");
}

void ExternalSession::meet(const Shared& e) {
  if (e.tag == 'F') {
    // rank 0's session ended at this fault (fail()); the other ranks' end here
    if (!failure_) failure_.emplace(static_cast<Fault>(e.code), e.text);
    finished_ = true;
    throw *failure_;
  }
  if (e.tag == 'E') throw Error(static_cast<ErrorKind>(e.code), e.text);
  throw_internal("external oracle: a malformed shared answer");
}

void ExternalSession::write_shared(std::string& out, const Shared& e) {
  out.push_back(e.tag);
  write_text(out, std::to_string(e.ahead));
  if (e.tag != 'A') {
    write_text(out, std::to_string(e.code));
    write_text(out, e.text);
    return;
  }
  const Answer& a = e.answer;
  write_rational(out, a.value);
  write_text(out, a.radius ? "1" : "0");
  if (a.radius) write_rational(out, *a.radius);
  write_text(out, a.from_float64 ? "1" : "0");
  write_text(out, std::string(reinterpret_cast<const char*>(&a.f64), sizeof(double)));
  write_text(out, a.raw);
}

ExternalSession::Shared ExternalSession::read_shared(ByteReader& in) {
  Shared e;
  e.tag = in.bytes(1)[0];
  e.ahead = read_long(in);
  if (e.tag != 'A') {
    if (e.tag != 'F' && e.tag != 'E' && e.tag != 'H') throw_internal("external oracle: a malformed shared answer");
    e.code = read_long(in);
    e.text = in.text();
    return e;
  }
  Answer& a = e.answer;
  a.value = read_rational(in);
  if (in.text() == "1") a.radius = read_rational(in);
  a.from_float64 = in.text() == "1";
  const std::string f = in.text();
  if (f.size() != sizeof(double)) throw_internal("external oracle: a malformed shared answer");
  std::memcpy(&a.f64, f.data(), sizeof(double));
  a.raw = in.text();
  return e;
}

}  // namespace mhaq
