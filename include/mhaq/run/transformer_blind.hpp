// Blind transformer runs: the learner against an oracle whose truth the run
// does not hold, its status decided from the answers alone; the truth is
// compared afterwards, by a separate function that the run never calls.
//
// The types keep the two apart: learn_transformer_blind takes an Oracle<QTau>&
// (answers only; a TransformerOracle keeps its model private) and returns a
// BlindTransformerRun, which holds no truth; compare_blind takes the run and
// the truth, after the run has ended.
#pragma once
#include <string>

#include "mhaq/arith/numbers.hpp"
#include "mhaq/model/transformer.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/stages/transformer_learner.hpp"

namespace mhaq {

struct BlindTransformerRun {
  std::string status = "ok";  // the judge's status name: ok, degenerate, unable, inconsistent, not_identifiable
  std::string message;        // why, unless ok
  TransformerModel learned;   // canonical, exact rationals; empty unless the learner returned
  double resolution_deg = -1; // the certified angular resolution of the path's crossings (-1: none)
  long queries = 0;
  long max_length = 0;
};

// Exact arithmetic only (the comparison is by equality of canonical forms).
// Usage, input and internal errors propagate; every other error is a status.
BlindTransformerRun learn_transformer_blind(Oracle<QTau>& oracle, const TransformerLearnOptions& opt);

struct BlindComparison {
  bool exact_match = false;  // canonical forms equal (up to permuting heads and neurons)
  std::string difference;    // how they differ, when they do
};
BlindComparison compare_blind(const BlindTransformerRun& run, const TransformerModel& truth);

// The stated condition a canonical transformer violates, named, or "" when
// it meets them all (README "One-layer transformers"): d = 1 with two or more
// heads; a head invisible in the odd part (sum_j u_j U_{h,j} = 0); ubar_j = 0;
// two neurons on one hyperplane (parallel or antiparallel ubar); a signed
// subset of the jumps u_j U_{.,j} summing to zero (m <= 12). For judging a
// not_identifiable verdict afterwards (verify); the learner never calls it.
std::string violated_condition(const TransformerModel& canonical);

}  // namespace mhaq
