// Stage 5: final solves and the learner's own evaluation of its heads.
#include "mhaq/stages/5-solve/solve.hpp"

#include "mhaq/arith/all_fields.hpp"

namespace mhaq {

template <ArithField F>
std::vector<LearnedHead<typename F::value_type>> solve_heads(const F& fld, const Plan& plan,
                                                            const std::vector<PairFit<typename F::value_type>>& labelled, int H) {
  using T = typename F::value_type;
  const int d = plan.d;
  QMat DeltaInvT, BInv;
  if (!inverse(plan.Delta.transpose(), DeltaInvT) || !inverse(plan.B, BInv)) throw_internal("B or Delta singular after the draw check");
  const T zero = fld.from(Rational(0));
  std::vector<LearnedHead<T>> heads;
  for (int h = 0; h < H; ++h) {
    Mat<T> L(d, d);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) L(i, j) = fld.log(labelled[plan.base_index(i, j)].r[h]);
    LearnedHead<T> head{Mat<T>(d, d), {}};
    Mat<T> M(d, d);  // Delta^{-T} L_h
    for (int i = 0; i < d; ++i) {
      T vi = zero;
      for (int t = 0; t < d; ++t) vi = vi - fld.from(DeltaInvT(i, t)) * labelled[plan.base_index(t, 0)].c[h];
      head.v.push_back(vi);
      for (int j = 0; j < d; ++j) {
        T s = zero;
        for (int t = 0; t < d; ++t) s = s + fld.from(DeltaInvT(i, t)) * L(t, j);
        M(i, j) = s;
      }
    }
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) {
        T s = zero;
        for (int t = 0; t < d; ++t) s = s + M(i, t) * fld.from(BInv(t, j));
        head.W(i, j) = s;
      }
    heads.push_back(std::move(head));
  }
  return heads;
}

template <ArithField F>
typename F::value_type evaluate_heads(const F& fld, const std::vector<LearnedHead<typename F::value_type>>& heads, const Query& q) {
  using T = typename F::value_type;
  const T zero = fld.from(Rational(0));
  const QVec& xN = q.back().token;
  const int d = static_cast<int>(xN.size());
  T total = zero;
  for (const auto& h : heads) {
    std::vector<T> Wx(d, zero);  // W_h x_N
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j)
        if (!xN[j].is_zero()) Wx[i] = Wx[i] + h.W(i, j) * fld.from(xN[j]);
    auto dot_t = [&](const QVec& x, const std::vector<T>& y) {
      T s = zero;
      for (int i = 0; i < d; ++i)
        if (!x[i].is_zero()) s = s + fld.from(x[i]) * y[i];
      return s;
    };
    const T sN = dot_t(xN, Wx);
    T num = zero, den = zero;
    for (const auto& run : q) {
      const T w = fld.exp(dot_t(run.token, Wx) - sN) * fld.from(Rational(run.count));
      num = num + w * dot_t(run.token, h.v);
      den = den + w;
    }
    total = total + num / den;
  }
  return total;
}

#define MHAQ_INSTANTIATE(F)                                                                                                    \
  template std::vector<LearnedHead<F::value_type>> solve_heads<F>(const F&, const Plan&, const std::vector<PairFit<F::value_type>>&, \
                                                                   int);                                                       \
  template F::value_type evaluate_heads<F>(const F&, const std::vector<LearnedHead<F::value_type>>&, const Query&);
MHAQ_FOR_EACH_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
