// Oracles that answer from a hidden Model. The model is a private member with
// no accessor: code holding an Oracle<T>& cannot reach it.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "mhaq/model/answer_errors.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/base/random.hpp"

namespace mhaq {

// An approximate oracle (claim 4): the exact value rounded to `bits` bits
// (0 = no rounding) plus noise of size at most eps:
//  * uniform:  seeded, uniform in [-eps, eps];
//  * signs:    eps * signs[q] for the q-th answer (0-based; a fixed pattern,
//              e.g. the worst case of the first-order error, see sensitivity.hpp);
//  * envelope: ball learners only: the answer is a ball containing every
//              value within eps of the (rounded) exact value, so a ball run
//              bounds the result for every perturbation up to eps at once.
// A ball learner always receives balls that contain the exact value (radius
// covers rounding and noise), so ball runs certify bounds.
enum class NoisePattern { uniform, signs, envelope };
const char* noise_pattern_name(NoisePattern p);
NoisePattern parse_noise_pattern(const std::string& s);  // throws Error(usage)

struct OracleNoise {
  long bits = 0;
  Rational eps;  // 0 = no noise
  std::uint64_t seed = 1;
  NoisePattern pattern = NoisePattern::uniform;
  std::vector<signed char> signs;  // pattern == signs: one entry (-1, 0, +1) per answer
  bool active() const { return bits > 0 || !eps.is_zero(); }
};

struct IntModel;  // integer-scaled copy of the model (oracle fast path)

// Exact value of f at the final token, evaluated in T: scores are computed
// exactly in Q, then exp in T (ball: rigorous enclosure; exact: tau powers).
// Float answers are the midpoint of an Arb enclosure, rounded: each states
// its own error bound (AnswerErrors), rounding and stated noise included.
template <class T>
class ModelOracle final : public Oracle<T>, public KeptAnswerErrors {
 public:
  // token_den: every token entry must lie in (1/token_den)Z; the exact oracle
  // needs it to fix L = (lcm of W denominators) * token_den^2. `solver`:
  // the exact field's linear solver (other arithmetics ignore it).
  ModelOracle(Model m, long token_den, OracleNoise noise = {}, ExactSolver solver = ExactSolver::sparse);
  int dim() const override { return model_.d; }
  const Field<T>& field() const override { return field_; }
  // Without noise every answer is a function of its query alone: a batch is
  // answered on several threads, each answer in its own slot.
  bool any_order() const override;
  std::string error_assumption() const override;

 private:
  T answer(const Query& q) override;
  // The answer, and its error bound into err (zero for balls and exact answers).
  T answer_with_error(const Query& q, flint::Mag& err);
  std::vector<T> answer_all(const std::vector<Query>& qs, std::size_t begin, std::size_t end, int threads) override;
  Field<T> make_field() const;
  Model model_;
  long token_den_;
  Field<T> field_;
  OracleNoise noise_;
  ExactSolver solver_;
  Rng noise_rng_{1};
  // answers given so far (index into noise_.signs); atomic because a batch is
  // answered on several threads (answer_all)
  std::atomic<long> answered_{0};
  std::shared_ptr<const IntModel> int_model_;
};
// Exact answers are elements of Q(tau), rounded and perturbed exactly when
// the oracle is approximate; the other arithmetics round an enclosure.
template <>
QTau ModelOracle<QTau>::answer(const Query& q);
template <>
QTau ModelOracle<QTau>::answer_with_error(const Query& q, flint::Mag& err);
template <>
Field<QTau> ModelOracle<QTau>::make_field() const;
// Exact answers share the field's caches: asked one at a time.
template <>
bool ModelOracle<QTau>::any_order() const;

// The arithmetic an oracle's answers live in: Q(tau) with L = w_den token_den^2
// (exact), the stated accuracy of rounding and noise (floats), or balls.
template <class T>
Field<T> oracle_field(long w_den, long token_den, const OracleNoise& noise, ExactSolver solver = ExactSolver::sparse);
template <>
Field<QTau> oracle_field<QTau>(long w_den, long token_den, const OracleNoise& noise, ExactSolver solver);
template <>
Field<Ball> oracle_field<Ball>(long w_den, long token_den, const OracleNoise& noise, ExactSolver solver);
// Error(input) unless every token has dimension d and entries in (1/token_den)Z.
void check_query_grid(const Query& q, int d, long token_den);
// Evaluates f(X) exactly on rational tokens, in Q(tau) (for checks that do not
// go through any learner, e.g. certificates and golden files); refuses a
// model with Model::root > 1 (refuse_irrational_scale).
QTau evaluate_exact(const Model& m, const Query& q, long L);
// The exact oracle's cost measure of one answer (oracle side: it reads the
// model): sum over heads of (largest score - smallest score) over the query's
// tokens. Times L it bounds the tau-degree of the answer's numerator and
// denominator (each head contributes a fraction whose exponents span L times
// its score range), so it is known before the answer is computed.
Rational answer_score_spread(const Model& m, const Query& q);
// Encloses f(X) in Arb balls at the working precision, for any rational model
// and tokens (no grid or denominator limits; certificate tolerances).
Ball evaluate_ball(const Model& m, const Query& q);

}  // namespace mhaq
