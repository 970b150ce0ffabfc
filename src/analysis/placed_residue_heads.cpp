// The placed design's re-estimate on the pooled pairs
// (docs/math/designs.md#placed): residues against a readout, the columns
// W_h b_j from the pairs, and readouts v_h from unlabelled residues by meet
// in the middle. A fitted pair at offset
// delta shows the residues c_h = -delta^T v_h of every head, in no known
// order. Any d + 1 offsets are linearly dependent, sum_k lambda_k delta_k = 0,
// so the residues of one head at them satisfy sum_k lambda_k c_h(k) = 0, while
// a choice that mixes heads does so only by accident. The H^(d+1) choices are
// searched as two halves (H^ceil((d+1)/2) sums each, sorted, matched within
// the residues' tolerances), and every choice that closes gives a candidate
// v by least squares on its d + 1 equations. The candidates are unchecked:
// the caller keeps those that most other pairs agree with.
// Non-rigorous (approx_): doubles throughout; it only proposes estimates.
#include <algorithm>
#include <cmath>
#include <set>

#include "mhaq/analysis/placed_design.hpp"
#include "mhaq/arith/field.hpp"
#include "placed_internal.hpp"

namespace mhaq {

namespace {

// The sums sum_k lambda_k c_{q_k}(k) over the choices q of one half (offsets
// [from, to)), with their tolerances sum_k |lambda_k| tol; `code` is the
// choice in base H.
struct HalfSum {
  double sum = 0, tol = 0;
  long code = 0;
};

std::vector<HalfSum> half_sums(const std::vector<int>& pick, const std::vector<double>& lambda, int from, int to, int H, const std::vector<std::vector<double>>& c,
                               const std::vector<std::vector<double>>& tol) {
  std::vector<HalfSum> out(1);
  for (int k = from; k < to; ++k) {
    std::vector<HalfSum> next;
    next.reserve(out.size() * static_cast<size_t>(H));
    for (const HalfSum& s : out)
      for (int q = 0; q < H; ++q)
        next.push_back(HalfSum{s.sum + lambda[k] * c[pick[k]][q], s.tol + std::fabs(lambda[k]) * tol[pick[k]][q], s.code * H + q});
    out = std::move(next);
  }
  return out;
}

}  // namespace

std::vector<std::vector<double>> placed_residue_candidates(const std::vector<std::vector<double>>& delta, const std::vector<std::vector<double>>& c,
                                                           const std::vector<std::vector<double>>& tol, int H, Rng& rng, int sets, long max_half) {
  std::vector<std::vector<double>> out;
  const int np = static_cast<int>(delta.size());
  if (np == 0 || H < 1) return out;
  const int d = static_cast<int>(delta[0].size()), n = d + 1, m = (n + 1) / 2;
  if (np < n) return out;
  double half = 1;
  for (int k = 0; k < m; ++k) half *= H;
  if (half > static_cast<double>(max_half)) return out;  // too many choices per half
  for (int set = 0; set < sets; ++set) {
    std::vector<int> pick;
    while (static_cast<int>(pick.size()) < n) {
      const int p = static_cast<int>(rng.uniform_int(0, np - 1));
      if (std::find(pick.begin(), pick.end(), p) == pick.end()) pick.push_back(p);
    }
    // lambda: sum_{k<d} lambda_k delta_k = delta_d, lambda_d = -1
    std::vector<std::vector<double>> A(d, std::vector<double>(d));
    std::vector<double> lambda(delta[pick[d]]);
    for (int r = 0; r < d; ++r)
      for (int k = 0; k < d; ++k) A[r][k] = delta[pick[k]][r];
    if (!solve_dense(A, lambda)) continue;
    lambda.push_back(-1);
    const std::vector<HalfSum> a = [&] {
      std::vector<HalfSum> s = half_sums(pick, lambda, 0, m, H, c, tol);
      std::sort(s.begin(), s.end(), [](const HalfSum& x, const HalfSum& y) { return x.sum < y.sum; });
      return s;
    }();
    double amax = 0;
    for (const HalfSum& s : a) amax = std::max(amax, s.tol);
    for (const HalfSum& b : half_sums(pick, lambda, m, n, H, c, tol)) {
      // every a with |a.sum + b.sum| <= a.tol + b.tol lies in this window
      const double lo = -b.sum - b.tol - amax, hi = -b.sum + b.tol + amax;
      auto it = std::lower_bound(a.begin(), a.end(), lo, [](const HalfSum& x, double v) { return x.sum < v; });
      for (; it != a.end() && it->sum <= hi; ++it) {
        if (!(std::fabs(it->sum + b.sum) <= it->tol + b.tol)) continue;
        // the choice: offsets [0, m) from a's code, [m, n) from b's
        std::vector<int> q(n);
        long ca = it->code, cb = b.code;
        for (int k = n - 1; k >= m; --k) q[k] = static_cast<int>(cb % H), cb /= H;
        for (int k = m - 1; k >= 0; --k) q[k] = static_cast<int>(ca % H), ca /= H;
        // v by weighted least squares on the d + 1 equations -delta_k^T v = c_{q_k}(k)
        std::vector<std::vector<double>> N(d, std::vector<double>(d, 0.0));
        std::vector<double> x(d, 0.0);
        for (int k = 0; k < n; ++k) {
          const std::vector<double>& dl = delta[pick[k]];
          const double w = 1 / tol[pick[k]][q[k]], w2 = w * w;
          for (int r = 0; r < d; ++r) {
            x[r] -= w2 * dl[r] * c[pick[k]][q[k]];
            for (int t = 0; t < d; ++t) N[r][t] += w2 * dl[r] * dl[t];
          }
        }
        if (solve_dense(N, x)) out.push_back(std::move(x));
        if (static_cast<long>(out.size()) >= 4 * max_half) return out;  // accidents without end: enough to choose from
      }
    }
  }
  return out;
}

}  // namespace mhaq

namespace mhaq::placed_detail {

// The residue -delta^T v a pair predicts for a head with readout v, and the
// tolerance (8 stated errors) within which one of its fitted residues agrees.
double residue_prediction(const std::vector<double>& v, const PairObs& o) {
  double c = 0;
  for (size_t r = 0; r < v.size(); ++r) c -= v[r] * o.delta[r];
  return c;
}
double residue_tolerance(const PairObs& o, int q) { return 8 * o.ec[q] + 1e-9 * (1 + std::fabs(o.c[q])); }

// W_h b_j for one head and final token j: the least squares (trimmed) of
// delta^T (W_h b_j) = log r over the pairs of b_j whose residue matches v's
// prediction and whose pole is inside the window and well determined; with
// fewer than d + 2 such pairs, the old column x0 moved least (in norm) to meet them.
std::vector<double> column_from_pairs(const std::vector<const PairObs*>& pairs, const std::vector<double>& v, const std::vector<double>& x0, int j, int H,
                                      double window) {
  const int d = static_cast<int>(x0.size());
  const int np = static_cast<int>(pairs.size());
  DMat A;
  std::vector<double> y;
  for (int p = 0; p < np; ++p) {
    if (pairs[p]->j != j) continue;
    const double c0 = residue_prediction(v, *pairs[p]);
    int q = -1;
    for (int t = 0; t < H; ++t)
      if (std::fabs(pairs[p]->c[t] - c0) <= residue_tolerance(*pairs[p], t) && (q < 0 || std::fabs(pairs[p]->c[t] - c0) < std::fabs(pairs[p]->c[q] - c0))) q = t;
    if (q < 0 || !(std::fabs(pairs[p]->l[q]) < window) || !(pairs[p]->el[q] < 0.05)) continue;
    A.push_back(pairs[p]->delta);
    y.push_back(pairs[p]->l[q]);
  }
  std::vector<double> x = x0;
  const int k = static_cast<int>(A.size());
  if (k >= d + 2) return trimmed_least_squares(A, y);
  if (k == 0) return x;
  DMat G(k, std::vector<double>(k, 0.0));
  std::vector<double> z(k);
  for (int a = 0; a < k; ++a) {
    z[a] = y[a];
    for (int r = 0; r < d; ++r) z[a] -= A[a][r] * x0[r];
    for (int b = 0; b < k; ++b)
      for (int r = 0; r < d; ++r) G[a][b] += A[a][r] * A[b][r];
  }
  if (solve_dense(G, z))
    for (int a = 0; a < k; ++a)
      for (int r = 0; r < d; ++r) x[r] += A[a][r] * z[a];
  return x;
}

// The pairs with distinct offsets, the first of each: residues do not depend
// on b_j, so an offset asked at several final tokens (the grid pilot's) is one
// equation for v and counts once, or a candidate fitted exactly to d offsets
// would gather all their copies.
std::vector<const PairObs*> distinct_offsets(std::vector<const PairObs*> pairs) {
  std::set<std::vector<double>> seen;
  pairs.erase(std::remove_if(pairs.begin(), pairs.end(), [&](const PairObs* o) { return !seen.insert(o->delta).second; }), pairs.end());
  return pairs;
}

}  // namespace mhaq::placed_detail
