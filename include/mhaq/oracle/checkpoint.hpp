// Checkpoints of a long run (recover --checkpoint, --resume-checkpoint;
// docs/formats.md#checkpoint). The state kept is the oracle's answers and
// the pair fits (the bulk of the work after the answers). Labels and solves
// are a deterministic function of the fits and the options, recomputed on
// resume; a fit is served again only for the same key (FitStore,
// stages/3-fit/fit_store.hpp), so the resumed run prints the same bytes.
//
//  * CheckpointJournal owns the file: a header line that names the run
//    (format, version, program, arithmetic and the run's fingerprint), then
//    one line per answer, appended and flushed as answers arrive, each with
//    its index, a hash of its query, the answer and its stated error written
//    exactly (Arb's dump of the binary value; Q(tau) elements as FLINT's
//    polynomial quotient) and a checksum of the line. A kill leaves at most
//    an unfinished last line, which a resume drops. Any other defect (another
//    run's header, a newer format, a line altered or out of order) is
//    Error(input) with a message of its own, before any query.
//    Fit lines (format version 2) are "fit", a 128-bit hash of the fit's
//    key, its exact image and a checksum, appended and flushed as each pair
//    is fitted, on any thread. A version 1 file (answers only) still resumes.
//  * CheckpointOracle<T> sits on the oracle's source: the answers of the file
//    are served first, each only to the query it was recorded for (another
//    query is Error(input)), then the source answers and the journal grows.
//    It states the answers' errors in the order given (the float judge).
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mhaq/model/answer_errors.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/stages/3-fit/fit_store.hpp"

namespace mhaq {

// What a run asks of checkpoints (recover's options).
struct CheckpointSpec {
  std::string path;         // the checkpoint file
  bool resume = false;      // continue the run the file holds (else start it; the file must not exist)
  std::string fingerprint;  // what determines the run, one line of text (options, model file, ...)
  mutable long replayed = 0;  // filled by the run: answers served from the file (never in the output)
  mutable long fits_replayed = 0;  // filled by the run: pair fits served from the file (never in the output)
};
// The journal of an external oracle's answers beside the checkpoint FILE:
// FILE.oracle, in the transcript's format (docs/formats.md#checkpoint).
std::string checkpoint_oracle_journal(const std::string& path);

inline constexpr int checkpoint_version = 2;

class CheckpointJournal final : public FitStore {
 public:
  // Starts the file (written atomically) or reads it back (resume): a torn
  // last line is dropped from the file, every other line checked.
  CheckpointJournal(const CheckpointSpec& s, const std::string& arith);
  ~CheckpointJournal();
  CheckpointJournal(const CheckpointJournal&) = delete;
  CheckpointJournal& operator=(const CheckpointJournal&) = delete;

  struct Entry {
    std::uint64_t query_hash = 0;
    std::string answer, error;  // exact texts (answer_text, error_text)
  };
  long replayable() const { return static_cast<long>(replay_.size()); }
  long replayed() const { return next_; }
  // The next recorded entry, checked against the query asked now.
  const Entry& take(std::uint64_t query_hash);
  // One more answer to the file (buffered until flush()).
  void append(std::uint64_t query_hash, const std::string& answer, const std::string& error);
  // Written through to the file, then checkpoint_kill_point.
  void flush();
  const std::string& path() const { return path_; }
  // FitStore: the fits of the file; a new fit is written through at once
  long fits_served() const { return fits_served_.load(); }
  const std::string* find_fit(const std::string& key) const override;
  void put_fit(const std::string& key, const std::string& image) override;

 private:
  std::string path_;
  std::vector<Entry> replay_;
  long next_ = 0;       // entries of replay_ served
  long written_ = 0;    // answer lines in the file
  std::string buffer_;  // lines not yet written
  std::FILE* file_ = nullptr;
  std::unordered_map<std::string, std::string> fits_;  // a key's hash -> its fit's image, as read (never changed after)
  long fits_written_ = 0;                              // fit lines in the file
  mutable std::atomic<long> fits_served_{0};           // fits found by find_fit
  std::mutex mu_;                                      // the file and buffer_, for put_fit on the learner's threads
  void write_through();                                // buffer_ to the file (under mu_)
};

// Tests only: under MHAQ_CHECKPOINT_KILL_AFTER=K, the process ends itself by
// SIGKILL once a journal holds K answers or more (a kill at a known point);
// under MHAQ_CHECKPOINT_KILL_AFTER_FITS=K, once it holds K pair fits.
void checkpoint_kill_point(long answers_journaled);
void checkpoint_kill_point_fits(long fits_journaled);

// FNV-1a (64 bits) of the bytes, as 16 hexadecimal digits: the checksums of
// the file, and the hash of a model file in a fingerprint.
std::string fnv1a_hex(const std::string& bytes);
// A query's hash (equal queries hash equal; the same on every machine).
std::uint64_t checkpoint_query_hash(const Query& q);
// Exact texts of an answer and back: Arb's arb_dump_str of the binary value
// (ball: midpoint and radius; MPFR and double: the value, radius 0), FLINT's
// fmpz_poly_q string for Q(tau). Reading a malformed text is Error(input).
std::string answer_text(const QTau& x);
std::string answer_text(const Ball& x);
std::string answer_text(const Mpfr& x);
std::string answer_text(double x);
void answer_from_text(const std::string& s, QTau& out);
void answer_from_text(const std::string& s, Ball& out);
void answer_from_text(const std::string& s, Mpfr& out);  // at out's precision, which must hold the value exactly
void answer_from_text(const std::string& s, double& out);
std::string error_text(const flint::Mag& e);
void error_from_text(const std::string& s, flint::Mag& out);

template <class T>
class CheckpointOracle final : public Oracle<T>, public AnswerErrors {
 public:
  // errors: the source's statement of its answers' errors (null: none kept;
  // the stack keeps them for float answers only).
  CheckpointOracle(Oracle<T>& source, const AnswerErrors* errors, CheckpointJournal& j) : source_(source), errors_(errors), j_(j) {}
  int dim() const override { return source_.dim(); }
  const Field<T>& field() const override { return source_.field(); }
  bool any_order() const override { return source_.any_order(); }
  const flint::Mag& answer_error(long index) const override {
    if (index < static_cast<long>(replayed_errors_.size())) return replayed_errors_[static_cast<size_t>(index)];
    if (!errors_) throw_internal("checkpoint oracle: the source states no errors");
    return errors_->answer_error(index - static_cast<long>(replayed_errors_.size()));
  }
  std::string error_assumption() const override {
    if (!errors_) throw_internal("checkpoint oracle: the source states no errors");
    return errors_->error_assumption();
  }

 private:
  // the error of each answer goes with it (empty when the source states none)
  std::string error_of(long source_index) const { return errors_ ? error_text(errors_->answer_error(source_index)) : std::string(); }
  T replay(const Query& q) {
    const CheckpointJournal::Entry& e = j_.take(checkpoint_query_hash(q));
    T a{};
    answer_from_text(e.answer, a);
    replayed_errors_.emplace_back();
    if (!e.error.empty()) error_from_text(e.error, replayed_errors_.back());
    return a;
  }
  T answer(const Query& q) override {
    if (j_.replayed() < j_.replayable()) return replay(q);
    T a = source_.query(q);
    j_.append(checkpoint_query_hash(q), answer_text(a), error_of(source_.queries() - 1));
    j_.flush();
    return a;
  }
  std::vector<T> answer_all(const std::vector<Query>& qs, std::size_t begin, std::size_t end, int threads) override {
    std::vector<T> out;
    out.reserve(end - begin);
    std::size_t i = begin;
    for (; i < end && j_.replayed() < j_.replayable(); ++i) out.push_back(replay(qs[i]));
    if (i == end) return out;
    const long before = source_.queries();
    std::vector<T> fresh = source_.query_all(qs, i, end, threads);
    for (std::size_t k = 0; k < fresh.size(); ++k) {
      j_.append(checkpoint_query_hash(qs[i + k]), answer_text(fresh[k]), error_of(before + static_cast<long>(k)));
      out.push_back(std::move(fresh[k]));
    }
    j_.flush();
    return out;
  }
  Oracle<T>& source_;
  const AnswerErrors* errors_;
  CheckpointJournal& j_;
  std::vector<flint::Mag> replayed_errors_;
};

}  // namespace mhaq
