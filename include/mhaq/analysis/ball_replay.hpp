// The float judge's evidence (proofs/40-float-judge.md): a float run (mpfr,
// double) replayed by the learner in Arb balls over the run's own queries,
// each answer y_j the ball [y_j +- e_j] of the error its oracle states
// (model/answer_errors.hpp). If the replay finishes, every step it took is
// certified for every choice of answers inside those balls (ball mode's
// contract), so its heads contain the canonical heads of any attention model
// with at most H heads whose values lie within the stated errors: the truth,
// when the oracle is such a model and its statement holds. The distance from
// the float run's heads to those balls then bounds the run's max_rel_error.
//
// Cost: the replay asks nothing and fits no pair in floating point; each
// pair's Krawczyk test starts from the float run's own fit (FitStarts), at a
// precision chosen from what the bound needs, not the run's.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "mhaq/arith/fit_starts.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/model/answer_errors.hpp"
#include "mhaq/stages/learner.hpp"
#include "mhaq/stages/transformer_learner.hpp"

namespace mhaq {

struct BallReplay {
  bool finished = false;  // the learner ran to its end in balls
  // !finished: why (the learner's error kind and message, or a query the
  // replay asked that the run did not)
  ErrorKind failure = ErrorKind::unable;
  std::string why;
  std::vector<LearnedHead<Ball>> heads;
  std::optional<Ball> beta;  // with LearnOptions::bias
  Truth self_check = Truth::unknown;  // when asked: no = an answer certainly contradicts every model in the balls
  long self_check_failed = -1;
  long bits = 0;  // the replay's working precision
  std::string route;  // "pairs" (certify_by_pairs) or "replay" (replay_in_balls)
};

// A float run's recorded answers as balls at the working precision: answer j
// the ball [answers[j] +- errors(j)].
template <class T>
std::vector<Ball> answer_balls(const Field<T>& F, const std::vector<T>& answers, const AnswerErrors& errors);

// The direct route for a run that took the plain path (paper or lean
// schedule, H known, no repair, fallback or oversampling; learned with
// keep_fit_samples): the run's pair fits certified in balls, its labels
// certified as the only ones the boxes allow, its final solve in balls.
// !finished (with why) when the route does not apply or a step is not
// certified: the caller then replays the learner.
template <class T>
BallReplay certify_by_pairs(const Field<T>& F, const LearnOptions& lo, const LearnResult<T>& run, const std::vector<Query>& queries,
                            const std::vector<T>& answers, const AnswerErrors& errors, long bits);

// The learner (options lo, self-check as asked) in balls at `bits` over the
// recorded queries and answers, answer j the ball [answers[j] +- errors(j)];
// `starts` (may be null) seeds the pair fits. Never throws for the
// learner's outcomes (they are in the result); Error(internal) and usage
// errors pass.
template <class T>
BallReplay replay_in_balls(const Field<T>& F, int d, const LearnOptions& lo, const std::vector<Query>& queries, const std::vector<T>& answers,
                           const AnswerErrors& errors, const FitStarts* starts, long bits, bool self_check);

// The starts of a run learned with keep_fit_samples: its pair fits by their samples.
template <class T>
FitStarts fit_starts(const Field<T>& F, const LearnResult<T>& run);

// log2 of a certified upper bound of max_rel_error(got, canon) for every
// canon whose heads lie in `balls` (up to their order): per pair of heads
// sup ||W - W*||_F / s(W*) + ||v - v*|| / s(v*) over the balls, the scale of
// a norm that may be zero counting as unbounded; the least over the
// assignments of the largest over heads. With biases W stands for [W c] and
// beta's relative error is one more term of the maximum (max_rel_error's
// metric). +inf when the head counts differ, one side has beta and the other
// not, or no scale is certainly positive.
template <class T>
double certified_distance_log2(const Field<T>& F, const std::vector<LearnedHead<T>>& got, const std::vector<LearnedHead<Ball>>& balls,
                               const T* got_beta = nullptr, const Ball* ball_beta = nullptr);

// The transformer learner (options lo; a float run's neuron count told,
// since balls cannot certify that two region values are equal) in balls at
// `bits` over the recorded queries and answers, each the ball of its stated
// error. A query the run did not ask (the adaptive path went another way)
// ends the replay unfinished. Never throws for the learner's outcomes.
struct TransformerBallReplay {
  bool finished = false;
  ErrorKind failure = ErrorKind::unable;
  std::string why;
  TransformerLearnResult<Ball> res;
  long bits = 0;
};
template <class T>
TransformerBallReplay replay_transformer_in_balls(const Field<T>& F, int d, const TransformerLearnOptions& lo, const std::vector<Query>& queries,
                                                  const std::vector<T>& answers, const AnswerErrors& errors, long bits);

// log2 of a certified upper bound of the transformer metric of max_rel_error
// (heads matched by W, neurons under that order by u and U; their two worst
// errors added) of `got` against every canonical transformer whose heads
// and neurons lie in `balls`. The head matching must be certified: each
// float head's nearest ball head certainly nearer than any other, so the
// truth's matching is the one bounded. +inf with why otherwise.
template <class T>
double certified_transformer_distance_log2(const Field<T>& F, const TransformerLearnResult<T>& got, const TransformerLearnResult<Ball>& balls,
                                           std::string& why);

}  // namespace mhaq
