// A list of queries held compactly. A pair's queries [a x k, b] repeat the
// same two tokens for every k, so a token that a recent query already holds
// is stored once and each query is a few (token, count) runs. The records
// of a run (the keeping oracle of a repair, the recording oracle under
// certificates and the float judge) hold their queries here: at d = 64 a
// query as a Query is about 2 KB, here about 40 bytes plus its share of the
// tokens.
#pragma once
#include <array>
#include <cstddef>
#include <vector>

#include "mhaq/stages/1-oracle/oracle.hpp"

namespace mhaq {

class QueryLog {
 public:
  void push_back(const Query& q);
  std::size_t size() const { return starts_.size(); }
  bool empty() const { return starts_.empty(); }
  // Query i as asked (a copy built from the stored runs).
  Query operator[](std::size_t i) const;
  // Every query, in order: a full copy, for a reader that needs the list.
  std::vector<Query> all() const;
  void clear();
  // Distinct tokens stored (a token repeated far apart is stored again).
  std::size_t tokens() const { return tokens_.size(); }

 private:
  struct StoredRun {
    std::size_t token;
    long count;
  };
  std::size_t intern(const QVec& t);
  std::vector<QVec> tokens_;
  std::vector<StoredRun> runs_;
  std::vector<std::size_t> starts_;  // index in runs_ of each query's first run
  static constexpr std::size_t kRecent = 4;
  std::array<std::size_t, kRecent> recent_{};  // the tokens stored last, compared first
  std::size_t recent_n_ = 0;
};

}  // namespace mhaq
