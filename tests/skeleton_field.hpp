// Where a new arithmetic starts: a number type and its Field with every
// member the learner needs (the ArithField concept of arith/field.hpp), each
// saying what it must do and throwing until it is written. To add an
// arithmetic:
//   1. copy this file to include/mhaq/arith/, rename SkeletonNumber, and write
//      each member to the contract in the comment of arith/field.hpp (exact
//      results, enclosures, or approx_ at a stated tolerance);
//   2. add an enumerator to Arith, its row to arith_facts (what differs: exact,
//      rigorous, floats, bits) and its name to arith_name/parse_arith;
//   3. add the field to MHAQ_FOR_EACH_FIELD (arith/all_fields.hpp), with its
//      jet if it will run the sensitivity, and to with_arith and ArithPolicy
//      (run/arith_policy.hpp);
//   4. add it to the type list of tests/test_field_conformance.cpp, which must
//      pass. This skeleton is run there too, and fails every check.
#pragma once
#include <string>
#include <vector>

#include "mhaq/arith/field.hpp"

namespace mhaq {

struct SkeletonNumber {
  [[noreturn]] static void unwritten(const char* what) { throw Error(ErrorKind::internal, std::string("skeleton field: ") + what + " is not written"); }
  friend SkeletonNumber operator+(const SkeletonNumber&, const SkeletonNumber&) { unwritten("+"); }
  friend SkeletonNumber operator-(const SkeletonNumber&, const SkeletonNumber&) { unwritten("-"); }
  friend SkeletonNumber operator*(const SkeletonNumber&, const SkeletonNumber&) { unwritten("*"); }
  friend SkeletonNumber operator/(const SkeletonNumber&, const SkeletonNumber&) { unwritten("/"); }
  friend SkeletonNumber operator-(const SkeletonNumber&) { unwritten("negation"); }
};

template <>
struct Field<SkeletonNumber> {
  using value_type = SkeletonNumber;
  using N = SkeletonNumber;
  static constexpr Arith tag = Arith::ball;  // its own enumerator (step 2)
  static constexpr bool is_exact = false;     // results exact, decisions never unknown
  static constexpr bool is_rigorous = true;   // results enclose the truth
  static constexpr bool least_squares = false;  // oversampled fits by least squares (floats)

  N from(const Rational&) const { N::unwritten("from: a rational as a number"); }
  N exp(const Rational&) const { N::unwritten("exp of a rational"); }
  N exp(const N&) const { N::unwritten("exp"); }
  N log(const N&) const { N::unwritten("log of a positive number (Error(unable) when not decided positive)"); }
  N abs(const N&) const { N::unwritten("abs"); }
  Truth is_zero(const N&) const { N::unwritten("is_zero (Truth: unknown where the arithmetic cannot decide)"); }
  Truth is_positive(const N&) const { N::unwritten("is_positive"); }
  Truth equal(const N&, const N&) const { N::unwritten("equal"); }
  Truth equal(const N&, const N&, const N&) const { N::unwritten("equal at a scale"); }
  Truth solve(Mat<N>&, const Mat<N>&, const Mat<N>&) const { N::unwritten("solve (no: singular)"); }
  Truth solve_scaled(Mat<N>&, N&, const Mat<N>&, const Mat<N>&) const { N::unwritten("solve_scaled"); }
  Roots<N> real_roots(const std::vector<N>&) const { N::unwritten("real_roots"); }
  CommonRoots<N> common_roots(const std::vector<std::vector<N>>&, const std::vector<N>&, const std::vector<N>&) const {
    N::unwritten("common_roots");
  }
  N relu(const N&) const { N::unwritten("relu"); }
  Rational nearest(const N&, long) const { N::unwritten("nearest"); }
  Ball enclose(const N&) const { N::unwritten("enclose: an Arb ball containing the number"); }
  std::string str(const N&) const { N::unwritten("str"); }

  template <class Fn>
  std::optional<std::vector<N>> filtered(const std::vector<N>&, Fn&&) const {
    N::unwritten("filtered: a cheap approximate solution, or nullopt");
  }
  template <class Fn>
  std::optional<std::vector<N>> enclose_roots(const std::vector<N>&, Fn&&) const {
    N::unwritten("enclose_roots");
  }
  template <class Sys>
  void refine(const Sys&, std::vector<N>&) const {
    N::unwritten("refine: improve an approximate solution of the system");
  }
  template <class Sys>
  Truth certify(const Sys&, std::vector<N>&) const {
    N::unwritten("certify: yes only when the solution is what the contract promises");
  }
};

static_assert(ArithField<Field<SkeletonNumber>>);

}  // namespace mhaq
