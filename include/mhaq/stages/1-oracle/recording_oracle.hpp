// An oracle wrapper that records every query and answer the learner sees, in
// order, and passes them through unchanged (golden files and certificates).
// The queries are held compactly (query_log.hpp); the answers as given.
#pragma once
#include <vector>

#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/stages/1-oracle/query_log.hpp"

namespace mhaq {

template <class T>
class RecordingOracle final : public Oracle<T> {
 public:
  explicit RecordingOracle(Oracle<T>& inner) : inner_(inner) {}
  int dim() const override { return inner_.dim(); }
  const Field<T>& field() const override { return inner_.field(); }
  QueryLog queries;
  bool any_order() const override { return inner_.any_order(); }
  std::vector<T> answers;

 private:
  std::vector<T> answer_all(const std::vector<Query>& qs, std::size_t begin, std::size_t end, int threads) override {
    std::vector<T> a = inner_.query_all(qs, begin, end, threads);
    for (std::size_t i = begin; i < end; ++i) queries.push_back(qs[i]);
    answers.insert(answers.end(), a.begin(), a.end());
    return a;
  }
  T answer(const Query& q) override {
    T a = inner_.query(q);
    queries.push_back(q);
    answers.push_back(a);
    return a;
  }
  Oracle<T>& inner_;
};

}  // namespace mhaq
