#include "mhaq/oracle/transformer_oracle.hpp"

#include "mhaq/arith/jet.hpp"

namespace mhaq {

template <class T>
T evaluate_transformer(const TransformerModel& m, const Query& q, const Field<T>& F) {
  const QVec& xN = q.back().token;
  const int d = m.d;
  const T zero = F.from(Rational(0));
  // z_h: the attention average of the tokens for each head
  std::vector<std::vector<T>> z(m.heads(), std::vector<T>(d, zero));
  for (int h = 0; h < m.heads(); ++h) {
    const QVec Wx = matvec(m.W[h], xN);
    std::vector<Rational> s;
    Rational smax;
    for (size_t i = 0; i < q.size(); ++i) {
      s.push_back(dot(q[i].token, Wx));
      if (i == 0 || s[i] > smax) smax = s[i];
    }
    T den = zero;
    std::vector<T> num(d, zero);
    for (size_t i = 0; i < q.size(); ++i) {
      const T w = F.exp(s[i] - smax) * F.from(Rational(q[i].count));
      den = den + w;
      for (int a = 0; a < d; ++a)
        if (!q[i].token[a].is_zero()) num[a] = num[a] + w * F.from(q[i].token[a]);
    }
    for (int a = 0; a < d; ++a) z[h][a] = num[a] / den;
  }
  T out = zero;
  for (int j = 0; j < m.neurons(); ++j) {
    T g = zero;
    for (int h = 0; h < m.heads(); ++h)
      for (int a = 0; a < d; ++a)
        if (!m.U[h][j][a].is_zero()) g = g + F.from(m.U[h][j][a]) * z[h][a];
    out = out + F.from(m.u[j]) * F.relu(g);
  }
  return out;
}

template <class T>
TransformerOracle<T>::TransformerOracle(TransformerModel m, long token_den, ExactSolver solver)
    : model_(std::move(m)), token_den_(token_den) {
  model_.validate();
  if (token_den_ < 1) throw Error(ErrorKind::usage, "token denominator must be positive");
  field_ = oracle_field<T>(model_.w_denominator(), token_den_, OracleNoise{}, solver);
}

template <class T>
T TransformerOracle<T>::answer(const Query& q) {
  check_query_grid(q, model_.d, token_den_);
  return evaluate_transformer(model_, q, field_);
}

QTau evaluate_transformer_exact(const TransformerModel& m, const Query& q, long L) { return evaluate_transformer(m, q, Field<QTau>(L)); }
Ball evaluate_transformer_ball(const TransformerModel& m, const Query& q) { return evaluate_transformer(m, q, Field<Ball>{}); }

template class TransformerOracle<QTau>;
template class TransformerOracle<Ball>;
template class TransformerOracle<Mpfr>;
template class TransformerOracle<double>;
template QTau evaluate_transformer<QTau>(const TransformerModel&, const Query&, const Field<QTau>&);
template Ball evaluate_transformer<Ball>(const TransformerModel&, const Query&, const Field<Ball>&);
template Mpfr evaluate_transformer<Mpfr>(const TransformerModel&, const Query&, const Field<Mpfr>&);
template double evaluate_transformer<double>(const TransformerModel&, const Query&, const Field<double>&);

}  // namespace mhaq
