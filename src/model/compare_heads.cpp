// Recovered heads against the canonical truth (model/compare_heads.hpp):
// equality in Q (exact), containment (balls), the relative error (floats);
// with biases c and beta, with an irrational scale the truth's sqrt(root)
// enclosed.
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

namespace {
// A true head's c entry (zero when it has none); a recovered head's (null when it has none).
const Rational& true_c(const HeadQ& h, int i) {
  static const Rational zero;
  return h.c.empty() ? zero : h.c[static_cast<size_t>(i)];
}
template <class T>
const T* got_c(const LearnedHead<T>& h, int i) {
  return h.c.empty() ? nullptr : &h.c[static_cast<size_t>(i)];
}
// A true score entry (of W or c) as a ball: exact, or times sqrt(root)
// (Model::root), enclosed 64 bits beyond the working precision.
Ball score_entry(const Rational& x, long root) {
  if (root == 1) return Ball(x);
  PrecisionScope scope(working_precision() + 64);
  Ball r(root);
  arb_sqrt(r.raw(), r.raw(), working_precision());
  return Ball(x) * r;
}
// The recovered ball contains the true entry x sqrt(root).
bool contains_score(const Ball& got, const Rational& x, long root) {
  return root == 1 ? got.contains(x) : arb_contains(got.raw(), score_entry(x, root).raw()) != 0;
}
}  // namespace

bool ball_heads_contain(const std::vector<LearnedHead<Ball>>& got, const Model& canon, const Ball* beta) {
  if (got.size() != canon.heads.size()) return false;
  if (beta ? !beta->contains(canon.beta) : !canon.beta.is_zero()) return false;
  const Assignment a = match_heads(static_cast<int>(got.size()), [&](int h, int g) {
    for (int i = 0; i < canon.d; ++i) {
      if (!got[g].v[i].contains(canon.heads[h].v[i])) return Truth::no;
      for (int j = 0; j < canon.d; ++j)
        if (!contains_score(got[g].W(i, j), canon.heads[h].W(i, j), canon.root)) return Truth::no;
      const Ball* c = got_c(got[g], i);
      if (c ? !contains_score(*c, true_c(canon.heads[h], i), canon.root) : !true_c(canon.heads[h], i).is_zero()) return Truth::no;
    }
    return Truth::yes;
  });
  return a.kind != Assignment::Kind::none;
}

bool exact_heads_match(const std::vector<LearnedHead<QTau>>& got, const Model& canon, const QTau* beta) {
  if (canon.root != 1) refuse_irrational_scale(canon.root);
  if (got.size() != canon.heads.size()) return false;
  if (beta ? !QTauAccess::equal(*beta, QTau(canon.beta)) : !canon.beta.is_zero()) return false;
  const Assignment a = match_heads(static_cast<int>(got.size()), [&](int h, int g) {
    for (int i = 0; i < canon.d; ++i) {
      if (!QTauAccess::equal(got[g].v[i], QTau(canon.heads[h].v[i]))) return Truth::no;
      for (int j = 0; j < canon.d; ++j)
        if (!QTauAccess::equal(got[g].W(i, j), QTau(canon.heads[h].W(i, j)))) return Truth::no;
      const QTau* c = got_c(got[g], i);
      if (c ? !QTauAccess::equal(*c, QTau(true_c(canon.heads[h], i))) : !true_c(canon.heads[h], i).is_zero()) return Truth::no;
    }
    return Truth::yes;
  });
  return a.kind != Assignment::Kind::none;
}

template <class T>
double max_rel_error_log2(const std::vector<LearnedHead<T>>& got, const Model& canon, const T* beta) {
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
  auto log2_of = [](Ball e) {
    if (arf_is_zero(arb_midref(e.raw()))) return -kInf;
    arb_log_base_ui(e.raw(), e.raw(), 2, working_precision());
    return e.mid_double();
  };
  std::vector<std::vector<double>> cost(H, std::vector<double>(H));
  for (size_t h = 0; h < H; ++h) {
    Ball nw(0L), nv(0L);
    for (int i = 0; i < d; ++i) {
      const Ball v(canon.heads[h].v[i]);
      nv += v * v;
      for (int j = 0; j < d; ++j) {
        const Ball w = score_entry(canon.heads[h].W(i, j), canon.root);
        nw += w * w;
      }
      if (!canon.heads[h].c.empty()) {
        const Ball c = score_entry(canon.heads[h].c[static_cast<size_t>(i)], canon.root);
        nw += c * c;
      }
    }
    const Ball sw = norm_or_one(nw), sv = norm_or_one(nv);
    for (size_t g = 0; g < H; ++g) {
      Ball dw(0L), dv(0L);
      for (int i = 0; i < d; ++i) {
        const Ball e = mid(got[g].v[i]) - Ball(canon.heads[h].v[i]);
        dv += e * e;
        for (int j = 0; j < d; ++j) {
          const Ball f = mid(got[g].W(i, j)) - score_entry(canon.heads[h].W(i, j), canon.root);
          dw += f * f;
        }
        if (got[g].c.empty() && canon.heads[h].c.empty()) continue;
        const Ball f = (got[g].c.empty() ? Ball(0L) : mid(got[g].c[static_cast<size_t>(i)])) - score_entry(true_c(canon.heads[h], i), canon.root);
        dw += f * f;
      }
      arb_sqrt(dw.raw(), dw.raw(), working_precision());
      arb_sqrt(dv.raw(), dv.raw(), working_precision());
      cost[h][g] = log2_of(dw / sw + dv / sv);
    }
  }
  double best = kInf;
  bottleneck_matching(cost, &best);
  if (beta || !canon.beta.is_zero()) {
    const Ball tb(canon.beta);
    Ball e = (beta ? mid(*beta) : Ball(0L)) - tb;
    arb_abs(e.raw(), e.raw());
    best = std::max(best, log2_of(e / norm_or_one(tb * tb)));
  }
  return best;
}
template double max_rel_error_log2<Mpfr>(const std::vector<LearnedHead<Mpfr>>&, const Model&, const Mpfr*);
template double max_rel_error_log2<double>(const std::vector<LearnedHead<double>>&, const Model&, const double*);
template double max_rel_error_log2<Ball>(const std::vector<LearnedHead<Ball>>&, const Model&, const Ball*);

}  // namespace mhaq
