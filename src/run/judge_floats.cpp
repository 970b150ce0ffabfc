// The float judge's evidence for attention runs (run/judge_floats.hpp, proofs/40).
#include "mhaq/run/judge_floats.hpp"

#include <cmath>
#include <optional>

#include "mhaq/run/report.hpp"

namespace mhaq {

std::vector<long> judge_precisions(long bits, double kappa_rel, double tol_log2) {
  const long cap = 64 * ((bits + 127) / 64);
  long q = cap;
  if (std::isfinite(kappa_rel) && kappa_rel > 0 && std::isfinite(tol_log2)) {
    const double need = std::log2(kappa_rel) - tol_log2 + 24;
    q = std::clamp(64 * static_cast<long>(std::ceil(need / 64)), 64L, cap);
  }
  std::vector<long> out{q};
  if (q < cap) out.push_back(cap);
  return out;
}

namespace {

// The learner's options for the replay: a bound H0 that the run met with H0
// heads is the known H0; below it, no replay can show that no further head
// hides under the answers' error (empty why otherwise).
LearnOptions replay_options(const LearnOptions& lo, int heads_found, std::string& why) {
  LearnOptions l = lo;
  if (!lo.heads_is_bound) return l;
  if (heads_found == lo.H) {
    l.heads_is_bound = false;
    return l;
  }
  why = "told only a bound H0 = " + std::to_string(lo.H) + " and finding " + std::to_string(heads_found) +
        " heads, approximate answers cannot show that no further head hides below their error: state the head count (--heads " +
        std::to_string(heads_found) + ") to have the heads found certified";
  return l;
}

// One attempt at `bits`: the direct route, else the learner replayed (its
// starts from the run's fits made on first use: the direct route needs none).
template <class T>
BallReplay attempt(const Field<T>& F, int d, const LearnOptions& l, const std::vector<Query>& queries, const std::vector<T>& answers,
                   const AnswerErrors& errors, const LearnResult<T>& res, std::optional<FitStarts>& starts, long bits, bool self_check) {
  if (!self_check) {
    BallReplay b = certify_by_pairs(F, l, res, queries, answers, errors, bits);
    if (b.finished) return b;
  }
  if (!starts) starts = fit_starts(F, res);
  return replay_in_balls(F, d, l, queries, answers, errors, &*starts, bits, self_check);
}

}  // namespace

template <class T>
void judge_float_attention(const Field<T>& F, int d, const LearnOptions& lo, const std::vector<Query>& queries, const std::vector<T>& answers,
                           const AnswerErrors& errors, const LearnResult<T>& res, double kappa_rel, RunFacts& facts, RecoverResult& r) {
  r.judge.answer_assumption = errors.error_assumption();
  std::string why;
  const LearnOptions l = replay_options(lo, res.heads_found, why);
  if (!why.empty()) {
    record_judge_note(r, facts, why);
    return;
  }
  std::optional<FitStarts> starts;
  const bool check = facts.self_check == Truth::no;
  double best = NAN;
  for (long bits : judge_precisions(F.precision(), kappa_rel, facts.tolerance_log2)) {
    const BallReplay b = attempt(F, d, l, queries, answers, errors, res, starts, bits, check);
    r.judge.judge_bits = bits;
    r.judge.judge_route = b.route;
    if (!b.finished) {
      why = "the replay in balls at " + std::to_string(bits) + " bits stopped: " + b.why;
      continue;
    }
    if (check && b.self_check == Truth::no) {
      facts.contradiction = true;
      return;
    }
    const double bound = certified_distance_log2(F, res.heads, b.heads, res.beta ? &*res.beta : nullptr, b.beta ? &*b.beta : nullptr);
    if (!std::isfinite(bound)) {
      why = "the balls of the replay at " + std::to_string(bits) + " bits do not bound every head's scale away from zero";
      continue;
    }
    if (std::isnan(best) || bound < best) best = bound;
    if (bound <= facts.tolerance_log2) break;
  }
  if (!record_certified_bound(r, facts, best)) record_judge_note(r, facts, why);
}

namespace {
// A float learner's failure against its replay's: it stands when the replay
// reached the same certified end, else unable.
Verdict failure_against_replay(const Error& e, bool finished, ErrorKind failure, const std::string& why) {
  const Verdict v{status_of(e.kind()), e.what()};
  if (!finished && failure == e.kind())
    return {v.status, v.message + "; the replay in balls over the answers within their stated errors certifies it (" + why + ")"};
  const std::string replay = finished ? "finishes" : "ends " + std::string(status_name(status_of(failure))) + " (" + why + ")";
  return {Status::unable, v.message + "; but the replay in balls over the answers within their stated errors " + replay +
                              ", so the answers' error or the precision may explain it: more accurate answers or more --bits can decide"};
}
bool replayed_failure(const Error& e) { return e.kind() == ErrorKind::inconsistent || e.kind() == ErrorKind::not_identifiable; }
}  // namespace

template <class T>
Verdict judge_float_failure(const Field<T>& F, int d, const LearnOptions& lo, const std::vector<Query>& queries, const std::vector<T>& answers,
                            const AnswerErrors& errors, const Error& e) {
  if (!replayed_failure(e)) return {status_of(e.kind()), e.what()};
  const long bits = judge_precisions(F.precision(), NAN, 0).back();
  const BallReplay b = replay_in_balls(F, d, lo, queries, answers, errors, nullptr, bits, false);
  return failure_against_replay(e, b.finished, b.failure, b.why);
}

template <class T>
void judge_float_transformer(const Field<T>& F, int d, const TransformerLearnOptions& lo, const std::vector<Query>& queries,
                             const std::vector<T>& answers, const AnswerErrors& errors, const TransformerLearnResult<T>& res, RunFacts& facts,
                             RecoverResult& r) {
  TransformerLearnOptions l = lo;
  std::string assumed = errors.error_assumption();
  if (l.neurons == 0) {
    l.neurons = static_cast<int>(res.neurons.size());
    assumed += "; and a transformer with the " + std::to_string(res.neurons.size()) + " neurons found (balls cannot certify a count of neurons)";
  }
  r.judge.answer_assumption = assumed;
  const long bits = judge_precisions(F.precision(), NAN, facts.tolerance_log2).back();
  r.judge.judge_bits = bits;
  r.judge.judge_route = "replay";
  std::string why;
  const TransformerBallReplay b = replay_transformer_in_balls(F, d, l, queries, answers, errors, bits);
  double bound = NAN;
  if (!b.finished) {
    why = "the replay in balls at " + std::to_string(bits) + " bits stopped: " + b.why;
  } else if (facts.self_check == Truth::no && b.res.self_check == Truth::no) {
    facts.contradiction = true;
    return;
  } else {
    bound = certified_transformer_distance_log2(F, res, b.res, why);
  }
  if (!record_certified_bound(r, facts, bound)) record_judge_note(r, facts, why);
}

template <class T>
Verdict judge_float_transformer_failure(const Field<T>& F, int d, const TransformerLearnOptions& lo, const std::vector<Query>& queries,
                                        const std::vector<T>& answers, const AnswerErrors& errors, const Error& e) {
  if (!replayed_failure(e)) return {status_of(e.kind()), e.what()};
  // the run's own options: a failure the replay reaches too is certified
  // (ball mode's contract); one it cannot reach is not
  const TransformerBallReplay b = replay_transformer_in_balls(F, d, lo, queries, answers, errors, judge_precisions(F.precision(), NAN, 0).back());
  return failure_against_replay(e, b.finished, b.failure, b.why);
}

#define MHAQ_INSTANTIATE(T)                                                                                                                 \
  template void judge_float_attention<T>(const Field<T>&, int, const LearnOptions&, const std::vector<Query>&, const std::vector<T>&,     \
                                         const AnswerErrors&, const LearnResult<T>&, double, RunFacts&, RecoverResult&);                  \
  template Verdict judge_float_failure<T>(const Field<T>&, int, const LearnOptions&, const std::vector<Query>&, const std::vector<T>&,     \
                                          const AnswerErrors&, const Error&);                                                               \
  template void judge_float_transformer<T>(const Field<T>&, int, const TransformerLearnOptions&, const std::vector<Query>&,                  \
                                           const std::vector<T>&, const AnswerErrors&, const TransformerLearnResult<T>&, RunFacts&,          \
                                           RecoverResult&);                                                                                  \
  template Verdict judge_float_transformer_failure<T>(const Field<T>&, int, const TransformerLearnOptions&, const std::vector<Query>&,       \
                                                      const std::vector<T>&, const AnswerErrors&, const Error&);
MHAQ_INSTANTIATE(Mpfr)
MHAQ_INSTANTIATE(double)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
