#include "mhaq/model_oracle.hpp"

#include <flint/fmpz.h>

#include "mhaq/error.hpp"

namespace mhaq {

namespace {
// f(X) for one model, generic over the answer type: scores exactly in Q,
// then softmax weights e^{s_i - s_max} in T.
template <class T>
T evaluate(const Model& m, const Query& q, const Field<T>& F) {
  const QVec& xN = q.back().token;
  T total = F.from(Rational(0));
  for (const auto& h : m.heads) {
    const QVec Wx = matvec(h.W, xN);
    std::vector<Rational> s;
    s.reserve(q.size());
    Rational smax;
    for (size_t i = 0; i < q.size(); ++i) {
      s.push_back(dot(q[i].token, Wx));
      if (i == 0 || s[i] > smax) smax = s[i];
    }
    T num = F.from(Rational(0)), den = F.from(Rational(0));
    for (size_t i = 0; i < q.size(); ++i) {
      const T w = F.exp(s[i] - smax) * F.from(Rational(q[i].count));
      num = num + w * F.from(dot(h.v, q[i].token));
      den = den + w;
    }
    total = total + num / den;
  }
  return total;
}

}  // namespace

template <class T>
ModelOracle<T>::ModelOracle(Model m, long token_den) : model_(std::move(m)), token_den_(token_den) {
  model_.validate();
  if (token_den_ < 1) throw Error(ErrorKind::usage, "token denominator must be positive");
  if constexpr (Field<T>::is_exact) {
    const __int128 L = static_cast<__int128>(model_.w_denominator()) * token_den_ * token_den_;
    if (L > (static_cast<__int128>(1) << 40)) throw_input("exact oracle: L = m q^2 too large; use smaller denominators");
    field_.L = static_cast<long>(L);
  }
}

template <class T>
T ModelOracle<T>::answer(const Query& q) {
  for (const auto& r : q) {
    if (static_cast<int>(r.token.size()) != model_.d)
      throw_input("query token has dimension " + std::to_string(r.token.size()) + ", model has " + std::to_string(model_.d));
    for (const auto& x : r.token) {
      Rational scaled = x * Rational(token_den_);
      if (!scaled.is_integer()) throw_input("query entry " + x.str() + " is not in (1/" + std::to_string(token_den_) + ")Z");
    }
  }
  return evaluate(model_, q, field_);
}

QTau evaluate_exact(const Model& m, const Query& q, long L) {
  Field<QTau> F;
  F.L = L;
  return evaluate(m, q, F);
}

template class ModelOracle<QTau>;
template class ModelOracle<Ball>;
template class ModelOracle<Mpfr>;
template class ModelOracle<double>;

}  // namespace mhaq
