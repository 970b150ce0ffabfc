#include "mhaq/stages/1-oracle/query_log.hpp"

namespace mhaq {

std::size_t QueryLog::intern(const QVec& t) {
  for (std::size_t r = 0; r < recent_n_; ++r)
    if (tokens_[recent_[r]] == t) return recent_[r];
  tokens_.push_back(t);
  const std::size_t k = tokens_.size() - 1;
  // the newest token first: a pair's two tokens stay in the window while its queries come
  for (std::size_t r = (recent_n_ < kRecent ? recent_n_ : kRecent - 1); r > 0; --r) recent_[r] = recent_[r - 1];
  recent_[0] = k;
  if (recent_n_ < kRecent) ++recent_n_;
  return k;
}

void QueryLog::push_back(const Query& q) {
  starts_.push_back(runs_.size());
  for (const Run& r : q) runs_.push_back({intern(r.token), r.count});
}

Query QueryLog::operator[](std::size_t i) const {
  const std::size_t b = starts_.at(i), e = i + 1 < starts_.size() ? starts_[i + 1] : runs_.size();
  Query q;
  q.reserve(e - b);
  for (std::size_t k = b; k < e; ++k) q.push_back(Run{tokens_[runs_[k].token], runs_[k].count});
  return q;
}

std::vector<Query> QueryLog::all() const {
  std::vector<Query> out;
  out.reserve(size());
  for (std::size_t i = 0; i < size(); ++i) out.push_back((*this)[i]);
  return out;
}

void QueryLog::clear() {
  tokens_.clear();
  runs_.clear();
  starts_.clear();
  recent_n_ = 0;
}

}  // namespace mhaq
