// Machine checks for the lemmas written up in proofs/. One check per page:
// symbolic (FLINT multivariate polynomials) where the statement is a
// polynomial identity, exhaustive where it is a finite count, and exact
// randomized (Q or Q(tau)) where it is a property of the running code.
//
// Every check can fail: ProveOptions::break_lemma swaps in a deliberately
// wrong variant of one statement (a wrong sign, an off-by-one count, a
// perturbed identity), and the check of that lemma must then report FAIL.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace mhaq {

struct LemmaCheck {
  std::string id;      // page stem, e.g. "02-interpolation"
  std::string title;
  std::string method;  // "symbolic", "exhaustive", "exact randomized", or a combination
  long cases = 0;      // number of identities / instances checked
  bool pass = false;
  std::string detail;  // what was checked; the first failure when pass is false
};

struct ProveOptions {
  // Empty: check the true statements. Otherwise a lemma id (the full page
  // stem or just its number, "01".."08", "11".."22", "30", "31"): that lemma's check uses a wrong
  // variant of its statement and must fail.
  std::string break_lemma;
  long multiplier = 1;           // scales every randomized case count (>= 1)
  std::uint64_t seed = 20261202; // randomized checks are reproducible
};

// Page stems in order: 01-pair-identity ... 08-exactness-of-Q-tau, 11-first-order-sensitivity ... 16-transformer-canonical, 17-baselines,
// 18-compact-query-count ... 20-compact-limits, 21-repair-witness, 22-single-crossing, 30-pair-sensitivity-closed-form, 31-mean-value-certified-bound.
std::vector<std::string> proof_lemma_ids();

// Runs one lemma's check; throws Error(usage) for an unknown id.
LemmaCheck run_proof_check(const std::string& id, const ProveOptions& opt);

// Runs all of them, in page order.
std::vector<LemmaCheck> run_proof_checks(const ProveOptions& opt);

}  // namespace mhaq
