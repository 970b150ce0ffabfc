#include "mhaq/oracle/transformer_oracle.hpp"

#include "mhaq/arith/jet.hpp"
#include "mhaq/base/precision.hpp"

#include <type_traits>

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

namespace {
// Exact answers and balls hold their own error.
template <class T>
T answer_of(const TransformerModel& m, const Query& q, const Field<T>& f, flint::Mag& err) {
  mag_zero(err.v);
  return evaluate_transformer(m, q, f);
}

void round_midpoint(const Ball& exact, Mpfr& answer, Ball& sent) {
  arf_get_mpfr(answer.raw(), arb_midref(exact.raw()), MPFR_RNDN);
  arf_set_mpfr(arb_midref(sent.raw()), answer.raw());
}
void round_midpoint(const Ball& exact, double& answer, Ball& sent) {
  answer = arf_get_d(arb_midref(exact.raw()), ARF_RND_NEAR);
  arf_set_d(arb_midref(sent.raw()), answer);
}

// A float answer: T(X) enclosed 64 bits beyond the learner's precision, its
// midpoint rounded to nearest; err bounds |answer - T(X)|.
template <class T>
T rounded_answer(const TransformerModel& m, const Query& q, long learner, flint::Mag& err) {
  Ball exact;
  {
    PrecisionScope scope(learner + 64);
    exact = evaluate_transformer(m, q, Field<Ball>{});
  }
  T a;
  Ball sent;
  round_midpoint(exact, a, sent);
  const Ball diff = sent - exact;
  arb_get_mag(err.v, diff.raw());
  return a;
}
Mpfr answer_of(const TransformerModel& m, const Query& q, const Field<Mpfr>&, flint::Mag& err) {
  return rounded_answer<Mpfr>(m, q, working_precision(), err);
}
double answer_of(const TransformerModel& m, const Query& q, const Field<double>&, flint::Mag& err) { return rounded_answer<double>(m, q, 53, err); }
}  // namespace

template <class T>
T TransformerOracle<T>::answer(const Query& q) {
  check_query_grid(q, model_.d, token_den_);
  return answer_of(model_, q, field_, slot(reserve_slots(1)));
}

template <class T>
std::string TransformerOracle<T>::error_assumption() const {
  return "the transformer's own answers: each the midpoint of an Arb enclosure of T(X), rounded to the learner's precision (each answer's "
         "rounding bound computed)";
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
