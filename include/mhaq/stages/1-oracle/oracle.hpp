// The black-box interface: the only thing the learner is given.
// A query is any finite sequence of rational vectors, written as runs
// (token, multiplicity) so that "k copies of a, then b" costs O(1) to state.
// The base class counts queries and records the longest one; implementations
// cannot bypass the count (non-virtual interface).
#pragma once
#include <cstdint>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/arith/rational.hpp"

namespace mhaq {

struct Run {
  QVec token;
  long count = 1;
};
using Query = std::vector<Run>;
long query_length(const Query& q);

template <class T>
class Oracle {
 public:
  virtual ~Oracle() = default;
  Oracle() = default;
  Oracle(const Oracle&) = delete;
  Oracle& operator=(const Oracle&) = delete;

  // Returns f(X) at the final token of the sequence, in arithmetic T.
  T query(const Query& q) {
    const long len = query_length(q);
    if (len < 1) throw_internal("empty query");
    ++queries_;
    if (len > max_length_) max_length_ = len;
    return answer(q);
  }
  long queries() const { return queries_; }
  long max_length() const { return max_length_; }
  virtual int dim() const = 0;
  // The arithmetic context answers live in (precision, or tau = e^{1/L}).
  virtual const Field<T>& field() const = 0;

 private:
  virtual T answer(const Query& q) = 0;
  long queries_ = 0;
  long max_length_ = 0;
};

}  // namespace mhaq
