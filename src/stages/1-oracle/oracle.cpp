#include "mhaq/stages/1-oracle/oracle.hpp"

namespace mhaq {

long query_length(const Query& q) {
  long n = 0;
  for (const auto& r : q) {
    if (r.count < 1) throw_internal("query run with non-positive count");
    n += r.count;
  }
  return n;
}

bool same_query(const Query& a, const Query& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].count != b[i].count || a[i].token != b[i].token) return false;
  return true;
}

}  // namespace mhaq
