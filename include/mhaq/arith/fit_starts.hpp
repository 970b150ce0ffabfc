// Starting points for the ball pair fits of a replay (the float judge,
// analysis/ball_replay.hpp): the fits a float run made, found by the values
// they fitted and the head count. The key is the pair's values after the
// first, as doubles: those are answers, equal in the run and in the replay,
// while the first (a chained f(0)) differs in its last bits. A start only
// decides whether Krawczyk's test (Field<Ball>::certify) succeeds, never what
// it proves, so a key that finds another pair's fit costs at most a failed
// test; a missing one costs the filter's own MPFR fit.
#pragma once
#include <map>
#include <utility>
#include <vector>

#include "mhaq/arith/numbers.hpp"

namespace mhaq {

class FitStarts {
 public:
  // x = (P, r_1..r_H, c_1..c_H) of the fit of the values f with H heads.
  void add(const std::vector<double>& f, int H, std::vector<Ball> x) {
    if (f.size() < 2) return;
    starts_.insert_or_assign(Key{H, std::vector<double>(f.begin() + 1, f.end())}, std::move(x));
  }
  const std::vector<Ball>* find(const std::vector<Ball>& f, int H) const {
    if (f.size() < 2 || starts_.empty()) return nullptr;
    Key k{H, {}};
    k.second.reserve(f.size() - 1);
    for (size_t i = 1; i < f.size(); ++i) k.second.push_back(f[i].mid_double());
    const auto it = starts_.find(k);
    return it == starts_.end() ? nullptr : &it->second;
  }
  size_t size() const { return starts_.size(); }

 private:
  using Key = std::pair<int, std::vector<double>>;
  std::map<Key, std::vector<Ball>> starts_;
};

}  // namespace mhaq
