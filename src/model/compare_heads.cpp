// Recovered heads against the canonical truth (model/compare_heads.hpp).
#include "mhaq/model/compare_heads.hpp"

#include <arb.h>

#include <algorithm>
#include <limits>

#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/base/precision.hpp"
#include "mhaq/stages/4-match/match.hpp"

namespace mhaq {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

bool ball_heads_contain(const std::vector<LearnedHead<Ball>>& got, const Model& canon) {
  if (got.size() != canon.heads.size()) return false;
  const Assignment a = match_heads(static_cast<int>(got.size()), [&](int h, int g) {
    for (int i = 0; i < canon.d; ++i) {
      if (!got[g].v[i].contains(canon.heads[h].v[i])) return Truth::no;
      for (int j = 0; j < canon.d; ++j)
        if (!got[g].W(i, j).contains(canon.heads[h].W(i, j))) return Truth::no;
    }
    return Truth::yes;
  });
  return a.kind != Assignment::Kind::none;
}

bool exact_heads_match(const std::vector<LearnedHead<QTau>>& got, const Model& canon) {
  if (got.size() != canon.heads.size()) return false;
  const Assignment a = match_heads(static_cast<int>(got.size()), [&](int h, int g) {
    for (int i = 0; i < canon.d; ++i) {
      if (!QTauAccess::equal(got[g].v[i], QTau(canon.heads[h].v[i]))) return Truth::no;
      for (int j = 0; j < canon.d; ++j)
        if (!QTauAccess::equal(got[g].W(i, j), QTau(canon.heads[h].W(i, j)))) return Truth::no;
    }
    return Truth::yes;
  });
  return a.kind != Assignment::Kind::none;
}

template <class T>
double max_rel_error_log2(const std::vector<LearnedHead<T>>& got, const Model& canon) {
  if (got.size() != canon.heads.size()) return kInf;
  PrecisionScope scope(std::max(working_precision(), 53L) + 64);
  const Field<T> F{};
  const size_t H = got.size();
  const int d = canon.d;
  auto mid = [&F](const T& x) {
    Ball b = F.enclose(x);
    arb_get_mid_arb(b.raw(), b.raw());
    return b;
  };
  // ||a|| as a ball from squares; a norm that is zero counts as 1
  auto norm_or_one = [](const Ball& sq) {
    Ball s = sq;
    if (arb_is_zero(s.raw())) return Ball(1L);
    arb_sqrt(s.raw(), s.raw(), working_precision());
    return s;
  };
  std::vector<std::vector<double>> cost(H, std::vector<double>(H));
  for (size_t h = 0; h < H; ++h) {
    Ball nw(0L), nv(0L);
    for (int i = 0; i < d; ++i) {
      const Ball v(canon.heads[h].v[i]);
      nv += v * v;
      for (int j = 0; j < d; ++j) {
        const Ball w(canon.heads[h].W(i, j));
        nw += w * w;
      }
    }
    const Ball sw = norm_or_one(nw), sv = norm_or_one(nv);
    for (size_t g = 0; g < H; ++g) {
      Ball dw(0L), dv(0L);
      for (int i = 0; i < d; ++i) {
        const Ball e = mid(got[g].v[i]) - Ball(canon.heads[h].v[i]);
        dv += e * e;
        for (int j = 0; j < d; ++j) {
          const Ball f = mid(got[g].W(i, j)) - Ball(canon.heads[h].W(i, j));
          dw += f * f;
        }
      }
      arb_sqrt(dw.raw(), dw.raw(), working_precision());
      arb_sqrt(dv.raw(), dv.raw(), working_precision());
      Ball e = dw / sw + dv / sv;
      if (arf_is_zero(arb_midref(e.raw()))) {
        cost[h][g] = -kInf;
      } else {
        arb_log_base_ui(e.raw(), e.raw(), 2, working_precision());
        cost[h][g] = e.mid_double();
      }
    }
  }
  double best = kInf;
  bottleneck_matching(cost, &best);
  return best;
}
template double max_rel_error_log2<Mpfr>(const std::vector<LearnedHead<Mpfr>>&, const Model&);
template double max_rel_error_log2<double>(const std::vector<LearnedHead<double>>&, const Model&);
template double max_rel_error_log2<Ball>(const std::vector<LearnedHead<Ball>>&, const Model&);

}  // namespace mhaq
