// The float judge's evidence for attention runs (proofs/40-float-judge.md):
// what run/judge.hpp's rules weigh for mpfr and double. The run is replayed
// in Arb balls over its own answers, each the ball of its stated error
// (model/answer_errors.hpp); its heads are then bounded against the balls.
#pragma once
#include <string>
#include <vector>

#include "mhaq/analysis/ball_replay.hpp"
#include "mhaq/run/judge.hpp"
#include "mhaq/run/run_result.hpp"

namespace mhaq {

// The precisions the replay tries for a float run at `bits` whose estimate
// gives kappa_rel (NaN: unknown) and whose tolerance is 2^tol_log2: the
// least whole number of 64-bit limbs at which rounding adds at most about
// 2^-16 of the tolerance, then bits + 64 (the answers hold no more).
std::vector<long> judge_precisions(long bits, double kappa_rel, double tol_log2);

// Sets facts.certified_log2 (or facts.judge_note) and the record's judge
// fields from the run `res` (learned with keep_fit_samples) over its
// recorded queries and answers. With the self-check no, also whether the
// replay certifies the contradiction (facts.contradiction).
template <class T>
void judge_float_attention(const Field<T>& F, int d, const LearnOptions& lo, const std::vector<Query>& queries, const std::vector<T>& answers,
                           const AnswerErrors& errors, const LearnResult<T>& res, double kappa_rel, RunFacts& facts, RecoverResult& r);

// The verdict on a float learner that threw e (inconsistent or
// not_identifiable rest on tolerance decisions): it stands when the replay in
// balls over the answers within their stated errors reaches the same
// certified end; otherwise unable, saying so. Other kinds pass unchanged.
template <class T>
Verdict judge_float_failure(const Field<T>& F, int d, const LearnOptions& lo, const std::vector<Query>& queries, const std::vector<T>& answers,
                            const AnswerErrors& errors, const Error& e);

// The same for a float transformer run (`res` from learn_transformer over
// `queries` and `answers`): the transformer learner replayed in balls, told
// the neuron count the run found unless lo states it (said in the
// assumption), its results bounded against the run's.
template <class T>
void judge_float_transformer(const Field<T>& F, int d, const TransformerLearnOptions& lo, const std::vector<Query>& queries,
                             const std::vector<T>& answers, const AnswerErrors& errors, const TransformerLearnResult<T>& res, RunFacts& facts,
                             RecoverResult& r);
template <class T>
Verdict judge_float_transformer_failure(const Field<T>& F, int d, const TransformerLearnOptions& lo, const std::vector<Query>& queries,
                                        const std::vector<T>& answers, const AnswerErrors& errors, const Error& e);

}  // namespace mhaq
