// Oracles that answer from a hidden Model. The model is a private member with
// no accessor: code holding an Oracle<T>& cannot reach it.
#pragma once
#include <memory>

#include "mhaq/model.hpp"
#include "mhaq/oracle.hpp"
#include "mhaq/random.hpp"

namespace mhaq {

// An approximate oracle (claim 4): the exact value rounded to `bits` bits
// (0 = no rounding) plus seeded noise uniform in [-eps, eps]. A ball learner
// receives balls that contain the exact value (radius covers rounding and
// noise), so ball runs certify bounds over every perturbation up to eps.
struct OracleNoise {
  long bits = 0;
  Rational eps;  // 0 = no noise
  std::uint64_t seed = 1;
  bool active() const { return bits > 0 || !eps.is_zero(); }
};

struct IntModel;  // integer-scaled copy of the model (oracle fast path)

// Exact value of f at the final token, evaluated in T: scores are computed
// exactly in Q, then exp in T (ball: rigorous enclosure; exact: tau powers).
template <class T>
class ModelOracle final : public Oracle<T> {
 public:
  // token_den: every token entry must lie in (1/token_den)Z; the exact oracle
  // needs it to fix L = (lcm of W denominators) * token_den^2.
  ModelOracle(Model m, long token_den, OracleNoise noise = {});
  int dim() const override { return model_.d; }
  const Field<T>& field() const override { return field_; }

 private:
  T answer(const Query& q) override;
  Model model_;
  long token_den_;
  Field<T> field_;
  OracleNoise noise_;
  Rng noise_rng_{1};
  std::shared_ptr<const IntModel> int_model_;
};

// Evaluates f(X) exactly on rational tokens, in Q(tau) (for checks that do not
// go through any learner, e.g. certificates and golden files).
QTau evaluate_exact(const Model& m, const Query& q, long L);
// Encloses f(X) in Arb balls at the working precision, for any rational model
// and tokens (no grid or denominator limits; certificate tolerances).
Ball evaluate_ball(const Model& m, const Query& q);

}  // namespace mhaq
