// The compact schedule's query count against the information floor H(d^2 + d),
// counted on the plans make_plan really emits (proofs/18), beside the paper
// and lean schedules. Built, not run by ctest (tests/bench/compact.sh runs it).
//   usage: compact_ratio [d list] [H list]     (default: 4,8,12,16 and 1,2,4,8)
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "mhaq/stages/2-schedule/schedule.hpp"

using namespace mhaq;

namespace {
std::vector<int> list(const char* s, std::vector<int> dflt) {
  if (!s) return dflt;
  std::vector<int> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');) out.push_back(std::atoi(part.c_str()));
  return out;
}
long emitted(Schedule s, int d, int H) {
  QMat B(d, d), D(d, d);
  for (int i = 0; i < d; ++i) {
    B(i, i) = Rational(1);
    D(i, i) = Rational(1);
    if (i + 1 < d) D(i, i + 1) = Rational(1);
  }
  const Plan p = make_plan(s, B, D, H);
  long longest = 0;
  const auto qs = p.queries();
  for (const auto& q : qs) longest = std::max(longest, query_length(q));
  if (longest != 2L * H + 1 || static_cast<long>(qs.size()) != schedule_query_count(s, d, H)) std::abort();  // proofs/05, 18
  return static_cast<long>(qs.size());
}
}  // namespace

int main(int argc, char** argv) {
  const std::vector<int> ds = list(argc > 1 ? argv[1] : nullptr, {4, 8, 12, 16});
  const std::vector<int> Hs = list(argc > 2 ? argv[2] : nullptr, {1, 2, 4, 8});
  std::printf("queries (ratio to the floor H(d^2+d)), counted on make_plan(...).queries(); longest query 2H+1 in every plan\n\n");
  std::printf("%4s %3s %7s %15s %15s %15s %6s\n", "d", "H", "floor", "paper", "lean", "compact", "s_H");
  for (int d : ds)
    for (int H : Hs) {
      const double floor = static_cast<double>(H) * (d * d + d);
      const long p = emitted(Schedule::paper, d, H), l = emitted(Schedule::lean, d, H), c = emitted(Schedule::compact, d, H);
      std::printf("%4d %3d %7.0f %7ld (%5.3f) %7ld (%5.3f) %7ld (%5.3f) %6d%s\n", d, H, floor, p, p / floor, l, l / floor, c, c / floor,
                  compact_samples(H), c / floor > 1.5 ? "  > 1.5" : "");
    }
  std::printf("\ncompact targets: (4,3) compact %ld <= 90; (8,4) compact %ld <= 432\n", emitted(Schedule::compact, 4, 3), emitted(Schedule::compact, 8, 4));
  return 0;
}
