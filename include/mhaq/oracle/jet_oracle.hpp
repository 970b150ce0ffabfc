// The oracle the sensitivity analysis differentiates through (analysis/sensitivity).
#pragma once
#include "mhaq/arith/jet.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"

namespace mhaq {

// Answers of another oracle as jets: the q-th answer (0-based) is the
// variable with index q, so the learner's outputs carry d output / d answer q.
// `constant` (>= 0) makes that one answer a constant (proofs/11's broken variant).
// `memo`: the pair fits of the run these answers came from (FitMemo).
template <class B, class D = B>
class JetOracle final : public Oracle<Jet<B, D>> {
 public:
  explicit JetOracle(Oracle<B>& inner, int constant = -1, const FitMemo<B>* memo = nullptr)
      : inner_(inner), field_(inner.field(), memo), constant_(constant) {}
  int dim() const override { return inner_.dim(); }
  const Field<Jet<B, D>>& field() const override { return field_; }

 private:
  Jet<B, D> answer(const Query& q) override {
    const int i = next_++;
    return i == constant_ ? Jet<B, D>(inner_.query(q)) : Jet<B, D>::variable(inner_.query(q), i);
  }
  Oracle<B>& inner_;
  Field<Jet<B, D>> field_;
  int constant_;
  int next_ = 0;
};

}  // namespace mhaq
