// The float judge's replay source (analysis/ball_replay, proofs/40): a float
// run's recorded answers, each as the ball of its stated error, served in the
// order the run asked them. A query the run did not ask means the replay took
// another path than the run: it cannot follow, and says so (unable).
#pragma once
#include <string>
#include <utility>
#include <vector>
#include "mhaq/arith/field.hpp"
#include "mhaq/arith/fit_starts.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"

namespace mhaq {

class RecordedBalls final : public Oracle<Ball> {
 public:
  // starts: the float run's pair fits, the ball fits' starting points (may be null).
  RecordedBalls(int d, std::vector<Query> queries, std::vector<Ball> answers, const FitStarts* starts)
      : d_(d), queries_(std::move(queries)), answers_(std::move(answers)) {
    field_.starts = starts;
    field_.point_inverse = true;
  }
  int dim() const override { return d_; }
  const Field<Ball>& field() const override { return field_; }

 private:
  Ball answer(const Query& q) override {
    if (next_ >= answers_.size())
      throw_unable("the replay in balls asked for more queries than the run asked (its decisions differ from the run's at this precision)");
    if (!same_query(q, queries_[next_]))
      throw_unable("the replay in balls asked query " + std::to_string(next_ + 1) +
                   " differently from the run (its decisions differ from the run's at this precision)");
    return answers_[next_++];
  }
  int d_;
  Field<Ball> field_;
  std::vector<Query> queries_;
  std::vector<Ball> answers_;
  size_t next_ = 0;
};

}  // namespace mhaq
