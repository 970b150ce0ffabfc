// What an approximate oracle states about its answers: for each answer it
// gave, a bound on |answer - f(X)|, and the assumption under which the
// bounds hold. The float judge (analysis/ball_replay.hpp, proofs/40) replays
// a float run in balls of these radii; its ok holds under that assumption.
// The oracles of a model state their own rounding (they enclose f(X) in Arb
// balls and round the midpoint) plus any stated noise; an external oracle
// states what --oracle-error, its hello's accuracy or its radii say, else
// the assumption that its answers are correctly rounded (oracle/).
#pragma once
#include <string>
#include <vector>

#include "mhaq/arith/flint_wrappers.hpp"

namespace mhaq {

class AnswerErrors {
 public:
  virtual ~AnswerErrors() = default;
  // The bound on the error of the index-th answer given (0-based, in the
  // order given); Error(internal) past the answers given.
  virtual const flint::Mag& answer_error(long index) const = 0;
  // The assumption the bounds rest on, in words (reported with the verdict).
  virtual std::string error_assumption() const = 0;
};

// Error bounds kept in the order the answers were given: one slot per answer,
// filled by the threads that answer a batch (each its own slots).
class KeptAnswerErrors : public AnswerErrors {
 public:
  const flint::Mag& answer_error(long index) const override;
  // Slots for n more answers; returns the index of the first.
  long reserve_slots(long n) {
    const long first = static_cast<long>(errors_.size());
    errors_.resize(errors_.size() + static_cast<size_t>(n));
    return first;
  }
  flint::Mag& slot(long index) { return errors_[static_cast<size_t>(index)]; }

 private:
  std::vector<flint::Mag> errors_;
};

}  // namespace mhaq
