// Stage 5, heads of bounded rank (include/mhaq/stages/5-solve/low_rank.hpp),
// written once for every field.
#include "mhaq/stages/5-solve/low_rank.hpp"

#include <algorithm>
#include <string>

#include "mhaq/arith/all_fields.hpp"

namespace mhaq {

namespace {
// The entry of largest |midpoint| among those `use` selects, in absolute value:
// the scale of the floats' rank and agreement decisions.
template <ArithField F, class Use>
typename F::value_type largest_entry(const F& fld, const Mat<typename F::value_type>& M, Use use) {
  typename F::value_type s = fld.from(Rational(0));
  auto best = fld.enclose(s);
  for (int i = 0; i < M.rows(); ++i)
    for (int j = 0; j < M.cols(); ++j)
      if (use(i, j)) {
        auto e = fld.enclose(M(i, j));
        if (e.cmp_mid_abs(best) > 0) {
          best = std::move(e);
          s = fld.abs(M(i, j));
        }
      }
  return s;
}

}  // namespace

template <ArithField F>
PivotedRank pivoted_rank(const F& fld, Mat<typename F::value_type> A) {
  using T = typename F::value_type;
  const T zero = fld.from(Rational(0));
  const T scale = largest_entry(fld, A, [](int, int) { return true; });
  const int n = A.rows(), m = A.cols();
  std::vector<char> row_done(static_cast<size_t>(n), 0), col_done(static_cast<size_t>(m), 0);
  PivotedRank out;
  for (int t = 0; t < std::min(n, m); ++t) {
    int pr = -1, pc = -1;
    bool undecided = false;
    auto best = fld.enclose(zero);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < m; ++c) {
        if (row_done[static_cast<size_t>(r)] || col_done[static_cast<size_t>(c)]) continue;
        const Truth z = fld.equal(A(r, c), zero, scale);
        if (z == Truth::unknown) undecided = true;
        if (z != Truth::no) continue;
        auto e = fld.enclose(A(r, c));
        if (pr < 0 || e.cmp_mid_abs(best) > 0) {
          best = std::move(e);
          pr = r;
          pc = c;
        }
      }
    if (pr < 0) {
      out.decided = !undecided;
      return out;
    }
    row_done[static_cast<size_t>(pr)] = col_done[static_cast<size_t>(pc)] = 1;
    out.rows.push_back(pr);
    out.cols.push_back(pc);
    ++out.rank;
    for (int r = 0; r < n; ++r) {
      if (row_done[static_cast<size_t>(r)]) continue;
      const T f = A(r, pc) / A(pr, pc);
      for (int c = 0; c < m; ++c)
        if (!col_done[static_cast<size_t>(c)]) A(r, c) = A(r, c) - f * A(pr, c);
    }
  }
  return out;  // every row or every column holds a pivot
}

namespace {

// The skeleton's prediction M[:, J_k] M[I_k, J_k]^{-1} M[I_k, :] (d x d).
template <ArithField F>
Mat<typename F::value_type> skeleton(const F& fld, const Mat<typename F::value_type>& M, const SkeletonRank& s, const std::string& who) {
  using T = typename F::value_type;
  const int d = M.rows(), k = s.rank;
  Mat<T> P(d, d, fld.from(Rational(0)));
  if (k == 0) return P;
  Mat<T> A(k, k), Rows(k, d), X;
  for (int a = 0; a < k; ++a) {
    for (int b = 0; b < k; ++b) A(a, b) = M(s.rows[static_cast<size_t>(a)], s.cols[static_cast<size_t>(b)]);
    for (int j = 0; j < d; ++j) Rows(a, j) = M(s.rows[static_cast<size_t>(a)], j);
  }
  const Truth t = fld.solve(X, A, Rows);
  if (t == Truth::no) throw_internal(who + ": the skeleton's block is singular after its pivots were decided nonzero");
  if (t == Truth::unknown) throw_unable(who + ": the skeleton's " + std::to_string(k) + " x " + std::to_string(k) + " block cannot be solved at this precision");
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      T acc = P(i, j);
      for (int a = 0; a < k; ++a) acc = acc + M(i, s.cols[static_cast<size_t>(a)]) * X(a, j);
      P(i, j) = acc;
    }
  return P;
}

}  // namespace

template <ArithField F>
SkeletonRank complete_low_rank(const F& fld, const Plan& plan, Mat<typename F::value_type>& M, int head) {
  using T = typename F::value_type;
  const int d = plan.d, R = plan.rank;
  if (R < 1 || R >= d) throw_internal("complete_low_rank: a rank bound R with 1 <= R < d is needed");
  const std::string who = "head " + std::to_string(head + 1);
  const std::string bound = "--rank " + std::to_string(R);
  const T scale = largest_entry(fld, M, [&](int i, int j) { return plan.asked(i, j); });
  Mat<T> block(R, R + 1);
  for (int i = 0; i < R; ++i)
    for (int j = 0; j <= R; ++j) block(i, j) = M(i, j);
  const PivotedRank p = pivoted_rank(fld, block);
  if (!p.decided)
    throw_unable(who + ": the rank of its log-poles at the offsets 1.." + std::to_string(R) + " and final tokens 1.." + std::to_string(R + 1) +
                 " is undecided: " + std::to_string(p.rank) +
                 " pivots are certainly nonzero, the next is neither certainly nonzero nor certainly zero at this precision (balls never certify a zero, "
                 "so a rank below the bound cannot be certified: if every head has rank " + std::to_string(p.rank) + ", state --rank " +
                 std::to_string(std::max(1, p.rank)) + "; else --arith exact)");
  SkeletonRank s{p.rank, p.rows, p.cols};
  const Mat<T> P = skeleton(fld, M, s, who);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      if (!plan.asked(i, j)) {
        M(i, j) = P(i, j);
        continue;
      }
      if (fld.equal(P(i, j), M(i, j), scale) != Truth::no) continue;
      // The asked entries fit no matrix of rank k with this skeleton. The
      // bound certainly fails when the columns 0..R have rank R + 1.
      Mat<T> cols(d, R + 1);
      for (int r = 0; r < d; ++r)
        for (int c = 0; c <= R; ++c) cols(r, c) = M(r, c);
      const PivotedRank q = pivoted_rank(fld, cols);
      if (q.rank == R + 1)
        throw_inconsistent(who + ": its rank is " + rank_bound_marker() + " " + bound + ": its log-poles at the final tokens 1.." + std::to_string(R + 1) +
                           " have rank " + std::to_string(R + 1) + " (the check column " + std::to_string(R + 1) +
                           " disagrees with the skeleton of the first " + std::to_string(R) + "); raise --rank (at most d - 1 = " +
                           std::to_string(d - 1) + "), or leave it out");
      throw_degenerate(who + ": its log-poles fit no matrix of the detected rank " + std::to_string(s.rank) + " (entry (" + std::to_string(i + 1) + ", " +
                       std::to_string(j + 1) + ") disagrees with the skeleton): this draw lowered the rank of the block at the offsets 1.." +
                       std::to_string(R) + " and final tokens 1.." + std::to_string(R + 1));
    }
  return s;
}

#define MHAQ_INSTANTIATE(F)                                                                                   \
  template PivotedRank pivoted_rank<F>(const F&, Mat<F::value_type>);                                        \
  template SkeletonRank complete_low_rank<F>(const F&, const Plan&, Mat<F::value_type>&, int);
MHAQ_FOR_EACH_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
