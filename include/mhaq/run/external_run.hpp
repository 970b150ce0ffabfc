// The recover drivers' side of recover --oracle (docs/oracle-protocol.md):
// starting the external oracle for a run, the checks of the options that go
// with it, and recording what the session did once the run is over.
#pragma once
#include <memory>

#include "mhaq/oracle/external_oracle.hpp"
#include "mhaq/run/judge.hpp"
#include "mhaq/run/recover_options.hpp"
#include "mhaq/run/run_result.hpp"

namespace mhaq {

template <class T>
struct ExternalSetup {
  std::unique_ptr<ExternalSession> session;
  std::unique_ptr<Oracle<T>> oracle;
  const AnswerErrors* errors = nullptr;  // the oracle's statement of its answers' errors (floats: the judge)
  Rational stated_eps;  // the larger part of the bound in force (the floats' kappa estimate)
};

// Starts the oracle of o.external for T = Ball, Mpfr or double, and records
// its name and the bound in force in r. A fault at the start is reported in r
// (status oracle_failed, no query) and returns false. `upcoming`: the
// learner's planned queries, sent ahead in batches (empty: adaptive learner).
template <class T>
bool start_external(RecoverResult& r, const RecoverOptions& o, int d, oracle_protocol::ModelKind kind, std::vector<Query> upcoming, ExternalSetup<T>& out);

// After the run: the session's counts and exit note into o.external (never
// into the output, which must not depend on a resume); bye when the run went
// through, so the oracle exits cleanly.
void finish_external(const RecoverOptions& o, ExternalSession* s, bool bye);
// An external run that ended unable: more --bits rarely helps, the answers'
// accuracy does; the remedy says so.
void external_remedy(RecoverResult& r, const RecoverOptions& o, Status status);

// Error(usage) for options that do not go with --oracle (exact mode, noise,
// the tuned design's pilot, certificates), or a missing H without a truth.
void check_external_options(const RecoverOptions& o, bool truth_known);

// Refuses a plan of `needed` queries beyond --max-queries before any query:
// true when refused (over_budget reported in r).
bool refuse_over_max_queries(RecoverResult& r, const RecoverOptions& o, long needed);

}  // namespace mhaq
