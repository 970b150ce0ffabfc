// The recover drivers' side of recover --oracle (docs/oracle-protocol.md):
// starting the external oracle for a run, the checks of the options that go
// with it, and recording what the session did once the run is over.
#pragma once
#include <memory>
#include <vector>
#include <string>

#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/judge.hpp"
#include "mhaq/run/recover_options.hpp"
#include "mhaq/run/run_result.hpp"

namespace mhaq {

template <class T>
struct ExternalSetup {
  std::unique_ptr<ExternalSession> session;
  std::unique_ptr<OracleStack<T>> oracle;  // the external source, unrecorded
  Rational stated_eps;  // the larger part of the bound in force (the floats' kappa estimate)
};

// Starts the oracle of o.external for T = Ball, Mpfr or double, and records
// its name and the bound in force in r. A fault at the start is reported in r
// (status oracle_failed, no query) and returns false. `upcoming`: the
// learner's planned queries, sent ahead in batches (empty: adaptive learner).
template <class T>
bool start_external(RecoverResult& r, const RecoverOptions& o, int d, oracle_protocol::ModelKind kind, std::vector<Query> upcoming, ExternalSetup<T>& out);

// Error(usage), before any query, when a `planned` query is longer than the
// hello's max_length or has a token entry beyond its max_entry; the message
// names both numbers, `what` asks them ("this run's schedule") and
// `otherwise` is a further remedy ("" for none).
void refuse_beyond_hello(const oracle_protocol::OracleHello& h, const std::vector<Query>& planned, const std::string& what, const std::string& otherwise);

// After the run, however it ended: the session finishes (bye, the end of
// the oracle's input, its exit awaited, its process group ended) and its
// counts and exit note go into o.external (never into the output, which
// must not depend on a resume).
void finish_external(const RecoverOptions& o, ExternalSession* s);
// The verdict when the session or the cap ended the run, whatever the
// learner made of the error it met: the oracle's fault (oracle_failed), or
// the query after --max-queries (over_budget).
void external_verdict(Verdict& v, const ExternalSession* s, bool cap_reached);
// An external run stopped at --max-queries: its remedy names the cap (the
// other remedies come from run_remedy).
void external_remedy(RecoverResult& r, const RecoverOptions& o, Status status);

// Error(usage) for options that do not go with --oracle (exact mode, noise,
// the tuned design's pilot, certificates), or a missing H without a truth.
void check_external_options(const RecoverOptions& o, bool truth_known);

// --max-queries N. A run that surely needs more than N queries (`least`,
// described by `what`) is refused before any query: true when refused
// (over_budget reported in r, with `fewer`, a way to ask fewer, in its
// remedy when not empty).
bool refuse_over_max_queries(RecoverResult& r, const RecoverOptions& o, long least, const std::string& what, const std::string& fewer);
// Otherwise the learner's oracle answers at most N queries: the next one
// ends the run over_budget (Oracle::limit).
template <class T>
void cap_queries(const RecoverOptions& o, Oracle<T>& learner_oracle) {
  if (!o.external || o.external->max_queries <= 0) return;
  learner_oracle.limit(o.external->max_queries, "stopped at --max-queries " + std::to_string(o.external->max_queries) + ": the run asked for query " +
                                                     std::to_string(o.external->max_queries + 1) + " (beyond its plan, the learner's queries are adaptive)");
}

}  // namespace mhaq
