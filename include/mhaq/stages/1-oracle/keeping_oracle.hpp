// An oracle wrapper the learner uses to draw one offset afresh
// (stages/learner.hpp, Repair): the second attempt is served the answers the
// first one already received.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/stages/1-oracle/query_log.hpp"

namespace mhaq {

// Passes queries through, keeping every answer. Once serve_kept() is on (a
// second attempt on a plan that shares queries with the first), a query asked
// before is answered from the record and not sent. Off during the first
// attempt, so that a plan whose draw repeats a query still sends every one
// (claims 2 and 3 count them).
template <class T>
class KeepingOracle final : public Oracle<T> {
 public:
  explicit KeepingOracle(Oracle<T>& inner) : inner_(inner) {}
  int dim() const override { return inner_.dim(); }
  const Field<T>& field() const override { return inner_.field(); }
  long sent() const { return sent_; }
  bool any_order() const override { return !serve_ && inner_.any_order(); }
  // The index of kept answers is built here, from the record of the first
  // attempt in the order asked (the first answer to a repeated query is the
  // one kept), so that a run that never repairs never forms the keys.
  void serve_kept() {
    if (!serve_)
      for (size_t i = 0; i < asked_.size(); ++i) kept_.emplace(key(asked_[i]), answers_[i]);
    asked_.clear();
    answers_.clear();
    serve_ = true;
  }

 private:
  static std::string key(const Query& q) {
    std::string k;
    for (const Run& r : q) {
      k += std::to_string(r.count) + ':';
      for (const Rational& x : r.token) k += x.str() + ',';
      k += ';';
    }
    return k;
  }
  std::vector<T> answer_all(const std::vector<Query>& qs, std::size_t begin, std::size_t end, int threads) override {
    std::vector<T> a = inner_.query_all(qs, begin, end, threads);
    sent_ += static_cast<long>(end - begin);
    for (std::size_t i = begin; i < end; ++i) asked_.push_back(qs[i]);
    answers_.insert(answers_.end(), a.begin(), a.end());
    return a;
  }
  T answer(const Query& q) override {
    if (!serve_) {
      ++sent_;
      T a = inner_.query(q);
      asked_.push_back(q);
      answers_.push_back(a);
      return a;
    }
    const std::string k = key(q);
    const auto it = kept_.find(k);
    if (it != kept_.end()) return it->second;
    ++sent_;
    T a = inner_.query(q);
    kept_.emplace(k, a);
    return a;
  }
  Oracle<T>& inner_;
  QueryLog asked_;  // before serve_kept(): every query and its answer, in order
  std::vector<T> answers_;
  std::map<std::string, T> kept_;
  long sent_ = 0;
  bool serve_ = false;
};

}  // namespace mhaq
