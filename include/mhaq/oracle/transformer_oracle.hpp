// The oracle of a hidden one-layer transformer (claim 5): T(X) at the final
// token, in any arithmetic. Scores are exact in Q, the softmax weights e^{s}
// are the field's, and ReLU uses the field's sign decision (exact: decided by
// Arb evaluation of the element of Q(tau); balls: an enclosure of max(g, 0)).
// As for attention, the model is a private member: the learner holds only
// an Oracle<T>&. Float answers are the midpoint of an Arb enclosure of T(X),
// rounded: each states its error bound (AnswerErrors), as ModelOracle's do.
#pragma once
#include "mhaq/oracle/model_oracle.hpp"
#include "mhaq/model/transformer.hpp"

namespace mhaq {

template <class T>
class TransformerOracle final : public Oracle<T>, public KeptAnswerErrors {
 public:
  // `solver`: the exact field's linear solver (other arithmetics ignore it).
  TransformerOracle(TransformerModel m, long token_den, ExactSolver solver = ExactSolver::sparse);
  int dim() const override { return model_.d; }
  const Field<T>& field() const override { return field_; }
  std::string error_assumption() const override;

 private:
  T answer(const Query& q) override;
  TransformerModel model_;
  long token_den_;
  Field<T> field_;
};

// T(X) evaluated directly (checks that do not go through a learner).
QTau evaluate_transformer_exact(const TransformerModel& m, const Query& q, long L);
Ball evaluate_transformer_ball(const TransformerModel& m, const Query& q);
// T in any field, with exact rational parameters (the oracle's formula).
template <class T>
T evaluate_transformer(const TransformerModel& m, const Query& q, const Field<T>& F);

}  // namespace mhaq
