// The machine check of proofs/18-compact-query-count.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// 18: the compact schedule's query count and longest query, exhaustive over
// the plans make_plan really emits, and its labelling graph.
void check_compact_count(const ProveOptions&, bool broken, LemmaCheck& out) {
  long plans = 0, queries = 0;
  for (int d = 1; d <= 12; ++d) {
    QMat B, Dl;
    count_tokens(d, B, Dl);
    for (int H = 1; H <= compact_max_heads; ++H) {
      const long sH = H == 1 ? 1 : H == 2 ? 3 : 2 * H - 2;
      const long want = 1 + 2L * H * d + (H >= 2 && !broken ? d - 1 : 0) + sH * d * (d - 1);
      const Plan p = make_plan(Schedule::compact, B, Dl, H);
      const auto qs = p.queries();
      long longest = 0;
      for (const auto& q : qs) longest = std::max(longest, query_length(q));
      const std::string at = "compact d=" + std::to_string(d) + " H=" + std::to_string(H);
      require(static_cast<long>(qs.size()) == want, at + ": scheduler emits " + std::to_string(qs.size()) + " queries, formula says " + std::to_string(want));
      require(compact_query_count(d, H) == want && schedule_query_count(Schedule::compact, d, H) == want, at + ": library count function disagrees");
      require(compact_samples(H) == sH, at + ": s_H disagrees");
      require(longest == 2L * H + 1, at + ": longest query " + std::to_string(longest) + " != 2H+1");
      // the graph: every base pair but the root is the target of exactly one step
      std::vector<int> targeted(static_cast<size_t>(d) * d, 0);
      for (const LabelStep& st : p.labelling) {
        ++targeted[st.target];
        const PairSpec& t = p.pairs[st.target];
        if (st.rel == Relation::predicted) {
          require(t.j == 0 && st.ref == p.root(), at + ": a predicted step off the first final token");
          require((H >= 2) == (st.link >= 0), at + ": links exactly when H >= 2");
          if (st.link >= 0)
            require(p.pairs[st.link].samples == 2 && p.pairs[st.link].offset == Dl.col(0) + Dl.col(t.i) && p.pairs[st.link].final_token == B.col(0),
                    at + ": a link is not the one-value pair (delta_1 + delta_i, b_1)");
        } else {
          require(st.rel == Relation::poles && t.j >= 1 && p.pairs[st.ref].i == t.i && p.pairs[st.ref].j == 0,
                  at + ": a pole step whose reference is not the same offset at b_1");
          require(t.samples == sH + 1, at + ": a pole pair with the wrong sample count");
        }
      }
      for (int q = 0; q < d * d; ++q) require(targeted[q] == (q == p.root() ? 0 : 1), at + ": base pair " + std::to_string(q) + " labelled " + std::to_string(targeted[q]) + " times");
      ++plans;
      queries += static_cast<long>(qs.size());
    }
  }
  // the two points
  require(compact_query_count(4, 3) <= 90 && compact_query_count(8, 4) <= 432, "1.5 x the floor missed at (4,3) or (8,4)");
  out.cases = plans;
  out.detail = "exhaustive: " + std::to_string(plans) + " compact plans (d=1..12, H=1..8), " + std::to_string(queries) +
               " queries counted and measured from make_plan(...).queries(), labelling graphs checked; (4,3): " + std::to_string(compact_query_count(4, 3)) +
               " <= 90, (8,4): " + std::to_string(compact_query_count(8, 4)) + " <= 432";
}

}  // namespace mhaq::proof
