// The machine check of proofs/05-query-count.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// Query counts of the scheduler, exhaustive over d <= 12, H <= 8.
void check_query_count(const ProveOptions&, bool broken, LemmaCheck& out) {
  long plans = 0, queries = 0;
  for (int d = 1; d <= 12; ++d) {
    // invertible integer B (unit upper triangular plus ones) and Delta (unit lower triangular)
    QMat B, Dl;
    count_tokens(d, B, Dl);
    require(!det(B).is_zero() && !det(Dl).is_zero(), "test tokens singular");
    for (int H = 1; H <= 8; ++H) {
      const long paper = 4L * H * d * d - 2L * H + 1 - (broken ? 1 : 0);
      const long lean = 1 + 2L * H * (static_cast<long>(d) * d + d - 1);
      for (Schedule s : {Schedule::paper, Schedule::lean}) {
        const Plan p = make_plan(s, B, Dl, H);
        const auto qs = p.queries();
        long longest = 0;
        for (const auto& q : qs) longest = std::max(longest, query_length(q));
        const long want = s == Schedule::paper ? paper : lean;
        const std::string at = std::string(schedule_name(s)) + " d=" + std::to_string(d) + " H=" + std::to_string(H);
        require(static_cast<long>(qs.size()) == want, at + ": scheduler emits " + std::to_string(qs.size()) + " queries, formula says " + std::to_string(want));
        require(longest == 2L * H + 1, at + ": longest query " + std::to_string(longest) + " != 2H+1");
        require((s == Schedule::paper ? paper_query_bound(d, H) : lean_query_count(d, H)) == want, at + ": library count function disagrees");
        const long pairs = static_cast<long>(p.pairs.size());
        require(pairs == (s == Schedule::paper ? 2L * d * d - 1 : static_cast<long>(d) * d + d - 1), at + ": wrong number of pairs");
        ++plans;
        queries += static_cast<long>(qs.size());
      }
    }
  }
  out.cases = plans;
  out.detail = "exhaustive: " + std::to_string(plans) + " plans (paper and lean, d=1..12, H=1..8), " + std::to_string(queries) +
               " queries counted and measured from make_plan(...).queries()";
}

}  // namespace mhaq::proof
