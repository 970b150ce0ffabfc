// mhaq verify, internal: the verdicts, the per-claim tally and the helpers
// shared by verify.cpp (claims 1-4, the rates study) and verify_transformer.cpp
// (claim 5). Not installed.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "mhaq/evidence/verify.hpp"
#include "mhaq/run/arith_policy.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/run/run_result.hpp"

namespace mhaq::verify_internal {


inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

inline long token_range_of(const VerifyOptions& o) { return o.token_range > 0 ? o.token_range : default_tokens(o.arith).range; }
inline long token_den_of(const VerifyOptions& o) { return default_tokens(o.arith).den; }
inline long bits_of(const VerifyOptions& o) { return arith_facts(o.arith).bits(o.bits); }
inline double tolerance_of(const VerifyOptions& o) { return o.tolerance > 0 ? o.tolerance : std::exp2(-static_cast<double>(bits_of(o)) / 4.0); }

inline std::string fmt(double x, int prec = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", prec, x);
  return buf;
}
inline std::string fixed(double x, int prec = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", prec, x);
  return buf;
}

// repaired: a correct recovery that needed repaired pairs (learner.hpp, Repair)
// or the fallback's extra queries (lean, compact: equal residues); it is not a
// pass of the query-count claims, which are asserted on the plain runs only.
enum class TrialVerdict { pass, fail, degenerate, unable, not_identifiable, repaired };

struct Outcome {
  TrialVerdict v = TrialVerdict::pass;
  double figure = 0;  // recovery: 0 (exact), max radius (ball), max rel error (floats)
  std::string reason;
};

// A trial's recovery, judged by recover's status (run/judge.hpp) and
// re-checked against the truth here, so a wrong "ok" would still fail.
// The verdict of a status that is not ok, or nothing for ok.
inline std::optional<Outcome> status_outcome(const VerifyOptions& o, const RecoverResult& r) {
  const std::string why = r.judge.message;
  switch (r.judge.status) {
    case Status::ok: return std::nullopt;
    case Status::degenerate: return Outcome{TrialVerdict::degenerate, 0, "degenerate draw: " + why};
    case Status::not_identifiable: return Outcome{TrialVerdict::not_identifiable, 0, "not identifiable: " + why};
    case Status::unable:
      if (truth_test_of(o.arith) == TruthTest::equality) return Outcome{TrialVerdict::fail, 0, "status unable in exact mode: " + why};
      return Outcome{TrialVerdict::unable, 0, "unable: " + why};
    default: return Outcome{TrialVerdict::fail, 0, std::string("status ") + status_name(r.judge.status) + ": " + why};
  }
}

struct ClaimTally {
  ClaimTally(std::string i, std::string t) : id(std::move(i)), text(std::move(t)) {}
  std::string id, text;
  int trials = 0, passes = 0, failures = 0, degenerate = 0, unable = 0, not_identifiable = 0, repaired = 0;
  bool any_value = false;
  double worst = 0;
  std::string worst_text;
  std::vector<FailingTrial> failing;

  void add(TrialVerdict v) {
    ++trials;
    if (v == TrialVerdict::pass) ++passes;
    else if (v == TrialVerdict::fail) ++failures;
    else if (v == TrialVerdict::degenerate) ++degenerate;
    else if (v == TrialVerdict::not_identifiable) ++not_identifiable;
    else if (v == TrialVerdict::repaired) ++repaired;
    else ++unable;
  }
  void value(double x) {
    if (!any_value || x > worst) worst = x;
    any_value = true;
  }
  ClaimRow row() const {
    ClaimRow r;
    r.id = id;
    r.text = text;
    r.trials = trials, r.passes = passes, r.failures = failures, r.degenerate = degenerate;
    r.unable = unable, r.not_identifiable = not_identifiable, r.repaired = repaired;
    r.worst = worst_text;
    if (any_value && std::isfinite(worst)) r.worst_value = worst;
    r.failing = failing;
    return r;
  }
};

inline std::string recovery_criterion(const VerifyOptions& o) {
  switch (truth_test_of(o.arith)) {
    case TruthTest::equality: return "equality in Q";
    case TruthTest::containment: return "every output ball contains the truth";
    case TruthTest::rel_error: break;
  }
  return "max rel. error <= " + fmt(tolerance_of(o));
}

inline std::string recovery_worst_text(const VerifyOptions& o, const ClaimTally& c) {
  if (!c.any_value) return "-";
  switch (truth_test_of(o.arith)) {
    case TruthTest::equality: return "error 0 (exact)";
    case TruthTest::containment: return "max radius " + fmt(c.worst);
    case TruthTest::rel_error: break;
  }
  return "max rel. error " + fmt(c.worst);
}

// Claim 5's row: the transformer trials' verdicts, re-checked against the
// truth, and the most queries of a passing trial.
struct Claim5Tally {
  explicit Claim5Tally(const VerifyOptions& o);
  void add(const VerifyOptions& o, const TrialSpec& t, const TransformerTrial& tr);
  ClaimRow row(const VerifyOptions& o);
  ClaimTally c;
  long max_q = 0;
  double max_ratio = 0;
};

// A claim-5 trial: the transformer drawn for trial `index`, recovered, with
// the stated condition its canonical truth violates ("" if none).
TransformerTrial transformer_trial(const VerifyOptions& o, int index, std::uint64_t seed);

}  // namespace mhaq::verify_internal
