// Stage 1: the black-box interface, the only thing the learner is given.
// A query is any finite sequence of rational vectors, written as runs
// (token, multiplicity) so that "k copies of a, then b" costs O(1) to state.
// The base class counts queries and records the longest one; implementations
// cannot bypass the count (non-virtual interface), nor a limit set on it. The
// oracle also hands the learner the arithmetic its answers live in
// (precision, the field Q(tau), the accuracy an approximate oracle states):
// a Field<T>, nothing more.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/arith/rational.hpp"
#include "mhaq/base/distribute.hpp"
#include "mhaq/base/error.hpp"

namespace mhaq {

struct Run {
  QVec token;
  long count = 1;
};
using Query = std::vector<Run>;
long query_length(const Query& q);  // Error(internal) for a run with count < 1
bool same_query(const Query& a, const Query& b);

template <class T>
class Oracle {
 public:
  virtual ~Oracle() = default;
  Oracle() = default;
  Oracle(const Oracle&) = delete;
  Oracle& operator=(const Oracle&) = delete;

  // Returns f(X) at the final token of the sequence, in arithmetic T.
  T query(const Query& q) {
    count(q);
    return answer(q);
  }
  // Answers to qs[begin, end), in order: the same answers, counts and records
  // as query() on each in turn. An oracle whose answers do not depend on the
  // order they are asked in (any_order()) may compute them on up to
  // `threads` threads, and in a run across ranks share them out among the
  // ranks; every other oracle is asked one query at a time.
  std::vector<T> query_all(const std::vector<Query>& qs, std::size_t begin, std::size_t end, int threads) {
    std::vector<T> out;
    if (!any_order() || (threads <= 1 && !run_across_ranks()) || (cap_ > 0 && queries_ + static_cast<long>(end - begin) > cap_)) {
      out.reserve(end - begin);
      for (std::size_t i = begin; i < end; ++i) out.push_back(query(qs[i]));
      return out;
    }
    for (std::size_t i = begin; i < end; ++i) count(qs[i]);
    return answer_all(qs, begin, end, threads);
  }
  // True when every answer is a function of its query alone (no noise
  // stream, no session, no record that depends on the order asked).
  virtual bool any_order() const { return false; }
  long queries() const { return queries_; }
  long max_length() const { return max_length_; }
  // At most `cap` queries in all (0: no limit): the query after the cap-th
  // is refused, uncounted, with Error(budget, why), and so is every later
  // one, so that a learner that catches the error cannot go on asking.
  void limit(long cap, std::string why) {
    cap_ = cap;
    why_ = std::move(why);
  }
  bool limit_reached() const { return reached_; }
  virtual int dim() const = 0;
  virtual const Field<T>& field() const = 0;

 private:
  virtual T answer(const Query& q) = 0;
  // Called by query_all only when any_order(): the answers of qs[begin, end).
  virtual std::vector<T> answer_all(const std::vector<Query>& qs, std::size_t begin, std::size_t end, int) {
    std::vector<T> out;
    out.reserve(end - begin);
    for (std::size_t i = begin; i < end; ++i) out.push_back(answer(qs[i]));
    return out;
  }
  // One more query asked: its length checked and counted.
  void count(const Query& q) {
    const long len = query_length(q);
    if (len < 1) throw_internal("empty query");
    if (cap_ > 0 && queries_ >= cap_) {
      reached_ = true;
      throw Error(ErrorKind::budget, why_);
    }
    ++queries_;
    if (len > max_length_) max_length_ = len;
  }
  long queries_ = 0;
  long max_length_ = 0;
  long cap_ = 0;
  bool reached_ = false;
  std::string why_;
};

// Answers from a recorded list, in order (a run replayed on the same
// queries, e.g. to differentiate it). Each query must equal the recorded one.
template <class T>
class ReplayOracle final : public Oracle<T> {
 public:
  ReplayOracle(int d, Field<T> field, std::vector<Query> queries, std::vector<T> answers)
      : d_(d), field_(std::move(field)), queries_(std::move(queries)), answers_(std::move(answers)) {}
  int dim() const override { return d_; }
  const Field<T>& field() const override { return field_; }

 private:
  T answer(const Query& q) override {
    if (next_ >= answers_.size() || !same_query(q, queries_[next_])) throw_internal("replay oracle: the learner asked a query that was not recorded");
    return answers_[next_++];
  }
  int d_;
  Field<T> field_;
  std::vector<Query> queries_;
  std::vector<T> answers_;
  size_t next_ = 0;
};

}  // namespace mhaq

namespace mhaq {

// The odd part X -> T(X) - T(-X) of another oracle (two of its queries per
// answer). For a one-layer transformer it is a multi-head attention model
// with value vectors sum_j u_j U_{h,j} (docs/math/transformer.md, proofs/13).
template <class T>
class OddPartOracle final : public Oracle<T> {
 public:
  explicit OddPartOracle(Oracle<T>& inner) : inner_(inner) {}
  int dim() const override { return inner_.dim(); }
  const Field<T>& field() const override { return inner_.field(); }
  static Query negated(const Query& q) {
    Query n = q;
    for (auto& r : n)
      for (auto& x : r.token) x = -x;
    return n;
  }

 private:
  T answer(const Query& q) override {
    // two statements: the order of the inner queries is part of the record
    // (an operator's operands are evaluated in no fixed order)
    const T plus = inner_.query(q);
    return plus - inner_.query(negated(q));
  }
  Oracle<T>& inner_;
};

}  // namespace mhaq
