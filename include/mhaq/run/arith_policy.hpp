// The one place above the stages where an arithmetic becomes a number type,
// and where what differs between the arithmetics is written down.
//
// with_arith(a, f) calls f.template operator()<T>() with the number type T of
// the arithmetic a; it is the only switch on Arith outside arith/.
//
// ArithPolicy<T> is the run layer's policy of one arithmetic (in the spirit
// of a traits class): how the working precision is set for the run, how the
// recovered heads are compared with the truth, whether a tolerance judges the
// run, and which optional steps apply. The steps that exist for some
// arithmetics only are run through
//   approximate(f, args...)  ball, mpfr, double (answers are not exact)
//   floats(f, args...)       mpfr, double (judged by a tolerance, with a first-order estimate)
//   balls(f, args...)        ball (rigorous enclosures)
//   exact(f, args...)        exact (Q(tau) answers)
//   chosen_bits(f, args...)  ball, mpfr (--bits sets the precision)
// each of which calls f(args...) for its arithmetics and does nothing for the
// others. f is generic and takes its typed inputs as arguments (or
// std::type_identity<T>{} when it needs only the type), so its body is
// compiled only for the arithmetics it applies to. facts holds the same
// distinctions as values (arith/field.hpp, ArithFacts), for code that works
// with an Arith at run time through arith_facts(a). No code above the stages
// branches on the number type or compares an Arith otherwise
// (tests/stage_purity.sh).
#pragma once
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "mhaq/arith/field.hpp"
#include "mhaq/arith/rational.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/precision.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/run/judge.hpp"
#include "mhaq/run/run_result.hpp"
#include "mhaq/stages/learner.hpp"

namespace mhaq {

template <class Fn>
decltype(auto) with_arith(Arith a, Fn&& f) {
  switch (a) {
    case Arith::exact: return std::forward<Fn>(f).template operator()<QTau>();
    case Arith::ball: return std::forward<Fn>(f).template operator()<Ball>();
    case Arith::mpfr: return std::forward<Fn>(f).template operator()<Mpfr>();
    case Arith::ieee: return std::forward<Fn>(f).template operator()<double>();
  }
  throw_internal("with_arith: unknown arithmetic");
}

// How a run's recovered heads are compared with a known truth.
enum class TruthTest {
  equality,     // exact: equal in Q (exact_match)
  containment,  // balls: every output ball contains the truth (contains_truth, max_radius)
  rel_error     // floats: max_rel_error within a tolerance
};

namespace policy_detail {
struct Skip {
  template <class Fn, class... A>
  static void run(Fn&&, A&&...) {}
};
struct Call {
  template <class Fn, class... A>
  static void run(Fn&& f, A&&... a) {
    std::forward<Fn>(f)(std::forward<A>(a)...);
  }
};
}  // namespace policy_detail

template <class T>
struct ArithPolicy;

// The members every arithmetic defines (src/run/arith_policy.cpp).
template <class N>
struct ArithOps {
  // The working precision of a run at --bits (balls and mpfr); none otherwise.
  static std::unique_ptr<PrecisionScope> precision(long bits);
  // The precision a run reports as "bits" (-1: none, exact).
  static long reported_bits(long bits);
  // Comparison of the recovered heads with the canonical truth, into r and f
  // (exact_match; contains_truth and max_radius; max_rel_error against
  // f.tolerance_log2); f.agrees and f.disagreement are set. beta: the
  // recovered beta of a run with biases (null: none, zero).
  static void compare(RecoverResult& r, RunFacts& f, const Model& canon, const std::vector<LearnedHead<N>>& got, const N* beta = nullptr);
  // Floats: the run's tolerance on max_rel_error (tolerance, or 0 for
  // 2^(acc/4)) into f.tolerance_log2 and r, with the decision tolerance when
  // `decisions`; nothing for exact and balls.
  static void tolerance(RecoverResult& r, RunFacts& f, const Field<N>& F, const Rational& tolerance, bool decisions);
};

// Defined per arithmetic in src/run/arith_policy.cpp.
template <> std::unique_ptr<PrecisionScope> ArithOps<QTau>::precision(long);
template <> long ArithOps<QTau>::reported_bits(long);
template <> void ArithOps<QTau>::compare(RecoverResult&, RunFacts&, const Model&, const std::vector<LearnedHead<QTau>>&, const QTau*);
template <> void ArithOps<QTau>::tolerance(RecoverResult&, RunFacts&, const Field<QTau>&, const Rational&, bool);
template <> std::unique_ptr<PrecisionScope> ArithOps<Ball>::precision(long);
template <> long ArithOps<Ball>::reported_bits(long);
template <> void ArithOps<Ball>::compare(RecoverResult&, RunFacts&, const Model&, const std::vector<LearnedHead<Ball>>&, const Ball*);
template <> void ArithOps<Ball>::tolerance(RecoverResult&, RunFacts&, const Field<Ball>&, const Rational&, bool);
template <> std::unique_ptr<PrecisionScope> ArithOps<Mpfr>::precision(long);
template <> long ArithOps<Mpfr>::reported_bits(long);
template <> void ArithOps<Mpfr>::compare(RecoverResult&, RunFacts&, const Model&, const std::vector<LearnedHead<Mpfr>>&, const Mpfr*);
template <> void ArithOps<Mpfr>::tolerance(RecoverResult&, RunFacts&, const Field<Mpfr>&, const Rational&, bool);
template <> std::unique_ptr<PrecisionScope> ArithOps<double>::precision(long);
template <> long ArithOps<double>::reported_bits(long);
template <> void ArithOps<double>::compare(RecoverResult&, RunFacts&, const Model&, const std::vector<LearnedHead<double>>&, const double*);
template <> void ArithOps<double>::tolerance(RecoverResult&, RunFacts&, const Field<double>&, const Rational&, bool);

template <class T, Arith A, TruthTest Test>
struct ArithPolicyOf : ArithOps<T> {
  using Number = T;
  static constexpr Arith arith = A;
  static constexpr ArithFacts facts = arith_facts(A);
  static constexpr TruthTest truth_test = Test;

  template <bool Applies>
  using Step = std::conditional_t<Applies, policy_detail::Call, policy_detail::Skip>;
  template <class Fn, class... Args>
  static void approximate(Fn&& f, Args&&... a) {
    Step<facts.approximate()>::run(std::forward<Fn>(f), std::forward<Args>(a)...);
  }
  template <class Fn, class... Args>
  static void floats(Fn&& f, Args&&... a) {
    Step<facts.floats>::run(std::forward<Fn>(f), std::forward<Args>(a)...);
  }
  template <class Fn, class... Args>
  static void balls(Fn&& f, Args&&... a) {
    Step<facts.rigorous>::run(std::forward<Fn>(f), std::forward<Args>(a)...);
  }
  template <class Fn, class... Args>
  static void exact(Fn&& f, Args&&... a) {
    Step<facts.exact>::run(std::forward<Fn>(f), std::forward<Args>(a)...);
  }
  template <class Fn, class... Args>
  static void chosen_bits(Fn&& f, Args&&... a) {
    Step<facts.chosen_bits>::run(std::forward<Fn>(f), std::forward<Args>(a)...);
  }
};

template <>
struct ArithPolicy<QTau> : ArithPolicyOf<QTau, Arith::exact, TruthTest::equality> {};
template <>
struct ArithPolicy<Ball> : ArithPolicyOf<Ball, Arith::ball, TruthTest::containment> {};
template <>
struct ArithPolicy<Mpfr> : ArithPolicyOf<Mpfr, Arith::mpfr, TruthTest::rel_error> {};
template <>
struct ArithPolicy<double> : ArithPolicyOf<double, Arith::ieee, TruthTest::rel_error> {};

// The precision a run of arithmetic a at --bits reports as "bits" (-1: none).
inline long reported_bits_of(Arith a, long bits) {
  return with_arith(a, [bits]<class T>() { return ArithPolicy<T>::reported_bits(bits); });
}

// The truth test of an arithmetic chosen at run time.
inline TruthTest truth_test_of(Arith a) {
  return with_arith(a, []<class T>() { return ArithPolicy<T>::truth_test; });
}

}  // namespace mhaq
