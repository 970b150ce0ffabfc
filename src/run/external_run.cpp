#include "mhaq/run/external_run.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "mhaq/run/judge.hpp"
#include "mhaq/run/report.hpp"

namespace mhaq {

// An oracle that states the longest sequence it answers, or the largest token
// entry its accuracy covers: a planned query beyond either is refused before
// any is asked (the placed design, whose plan is not known ahead, keeps its
// queries within both itself)
void refuse_beyond_hello(const oracle_protocol::OracleHello& h, const std::vector<Query>& planned, const std::string& what, const std::string& otherwise) {
  long longest = 0;
  Rational largest(0);
  for (const Query& q : planned) {
    longest = std::max(longest, query_length(q));
    for (const Run& run : q) largest = std::max(largest, max_abs(run.token));
  }
  if (const std::string why = beyond_hello(h, longest, largest); !why.empty())
    throw Error(ErrorKind::usage, what + " asks " + why + ": start the oracle with a larger limit" + (otherwise.empty() ? "" : ", " + otherwise));
}

template <class T>
bool start_external(RecoverResult& r, const RecoverOptions& o, int d, oracle_protocol::ModelKind kind, std::vector<Query> upcoming, ExternalSetup<T>& out) {
  try {
    out.session = std::make_unique<ExternalSession>(o.external->transport, d, kind, arith_name(o.arith));
  } catch (const oracle_protocol::OracleFailure& f) {
    report_verdict(r, {Status::oracle_failed, f.what()}, o);
    r.evidence.queries = 0;
    r.evidence.max_length = 0;
    r.evidence.heads_recovered = 0;
    return false;
  }
  refuse_beyond_hello(out.session->hello(), upcoming, "this run's schedule", "or use --design placed, which keeps within it");
  OracleStack<T> stack = OracleStack<T>::external(*out.session, o.external->error);
  const ErrorStatement& bound = stack.external_bound();
  r.oracle.name = out.session->hello().name;
  r.oracle.error = bound.str();
  if (bound.abs) out.stated_eps = *bound.abs;
  if (bound.rel && out.stated_eps < *bound.rel) out.stated_eps = *bound.rel;
  if (!upcoming.empty()) out.session->expect(std::move(upcoming));
  out.oracle = std::make_unique<OracleStack<T>>(std::move(stack));
  return true;
}

void finish_external(const RecoverOptions& o, ExternalSession* s) {
  if (!s || !o.external) return;
  if (std::string note = s->finish(); !note.empty()) o.external->exit_note = std::move(note);
  o.external->asked = s->asked();
  o.external->replayed = s->replayed();
}

void external_verdict(Verdict& v, const ExternalSession* s, bool cap_reached) {
  if (s && s->failure()) v = {Status::oracle_failed, s->failure()->what()};
  else if (cap_reached && v.status != Status::over_budget) v = {Status::over_budget, "the run stopped at its --max-queries cap (" + v.message + ")"};
}

void external_remedy(RecoverResult& r, const RecoverOptions& o, Status status) {
  if (o.external && status == Status::over_budget)
    r.judge.remedy = "raise --max-queries above " + std::to_string(o.external->max_queries) + ": the run needs more queries than that";
}

void check_external_options(const RecoverOptions& o, bool truth_known) {
  if (arith_facts(o.arith).exact) throw Error(ErrorKind::usage, "exact mode refuses --oracle: the answers are reals, not elements of Q(tau); use --arith ball, mpfr or double");
  if (!truth_known && o.heads < 1 && o.max_heads < 1) throw Error(ErrorKind::usage, "--oracle without --model needs the learner's --heads H (or --max-heads H0)");
  if (o.oracle_bits != 0 || !o.noise_eps.is_zero() || !o.target_error.is_zero() || o.certificate || o.design == Design::tuned)
    throw Error(ErrorKind::usage, "--oracle takes its answers as they come: no --oracle-bits, --noise, --target-error, --certificate or --design tuned");
}

bool refuse_over_max_queries(RecoverResult& r, const RecoverOptions& o, long least, const std::string& what, const std::string& fewer) {
  if (!o.external || o.external->max_queries <= 0 || least <= o.external->max_queries) return false;
  report_verdict(r, {Status::over_budget, what + " needs " + std::to_string(least) + " queries, more than --max-queries " +
                                              std::to_string(o.external->max_queries) + ": refused before asking any"}, o);
  r.judge.remedy = "raise --max-queries to " + std::to_string(least) + " or more" + (fewer.empty() ? "" : ", or " + fewer);
  r.evidence.queries = 0;
  r.evidence.max_length = 0;
  r.evidence.heads_recovered = 0;
  return true;
}

template bool start_external<Ball>(RecoverResult&, const RecoverOptions&, int, oracle_protocol::ModelKind, std::vector<Query>, ExternalSetup<Ball>&);
template bool start_external<Mpfr>(RecoverResult&, const RecoverOptions&, int, oracle_protocol::ModelKind, std::vector<Query>, ExternalSetup<Mpfr>&);
template bool start_external<double>(RecoverResult&, const RecoverOptions&, int, oracle_protocol::ModelKind, std::vector<Query>, ExternalSetup<double>&);

}  // namespace mhaq
