// An oracle wrapper that records every query and answer the learner sees, in
// order, and passes them through unchanged (golden files and certificates).
#pragma once
#include <vector>

#include "mhaq/stages/1-oracle/oracle.hpp"

namespace mhaq {

template <class T>
class RecordingOracle final : public Oracle<T> {
 public:
  explicit RecordingOracle(Oracle<T>& inner) : inner_(inner) {}
  int dim() const override { return inner_.dim(); }
  const Field<T>& field() const override { return inner_.field(); }
  std::vector<Query> queries;
  std::vector<T> answers;

 private:
  T answer(const Query& q) override {
    T a = inner_.query(q);
    queries.push_back(q);
    answers.push_back(a);
    return a;
  }
  Oracle<T>& inner_;
};

}  // namespace mhaq
