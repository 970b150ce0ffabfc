// The placed design's new estimate from pooled pair fits (docs/math/designs.md#placed,
// "Re-estimate"): when a round's labels do not hold together, the estimate
// that places the next round is rebuilt from every pair fitted so far.
#include "placed_internal.hpp"

namespace mhaq::placed_detail {

// The re-estimate's heads that its consensus could not start (the old v_h
// too far off to pick their residues): candidates from the residues alone
// (placed_residue_candidates), each refined on the pairs that agree and
// kept when half the distinct offsets or more agree with it, into the
// unfound head whose old v_h is nearest. `match` and `fit_v` are the
// re-estimate's: a pair's residue agreeing with v (or -1), and v by least
// squares on the chosen residues.
template <class Match, class FitV>
void heads_from_residues(const std::vector<const PairObs*>& pairs, const Estimate& est, int H, Rng& rng, Match&& match, FitV&& fit_v,
                         std::vector<std::vector<double>>& vfound, std::vector<int>& support, std::vector<std::vector<char>>& claimed) {
  const int d = est.d, np = static_cast<int>(pairs.size());
  if (std::none_of(vfound.begin(), vfound.end(), [](const auto& v) { return v.empty(); })) return;  // every head found
  std::vector<std::vector<double>> deltas, cs, tols;
  for (int p = 0; p < np; ++p) {
    deltas.push_back(pairs[p]->delta);
    cs.push_back(pairs[p]->c);
    tols.emplace_back();
    for (int q = 0; q < H; ++q) tols.back().push_back(residue_tolerance(*pairs[p], q));
  }
  const std::vector<std::vector<double>> cands = placed_residue_candidates(deltas, cs, tols, H, rng, 3, 1L << 16);
  for (;;) {
    std::vector<double> bv;
    std::vector<int> bq;
    int bcount = -1;
    for (std::vector<double> v : cands) {
      std::vector<int> q(np);
      for (int it = 0; it < 3; ++it) {  // refine on the agreeing pairs
        for (int p = 0; p < np; ++p) q[p] = match(v, p);
        if (std::count_if(q.begin(), q.end(), [](int x) { return x >= 0; }) < d || !fit_v(q, v)) break;
      }
      for (int p = 0; p < np; ++p) q[p] = match(v, p);
      const int n = static_cast<int>(std::count_if(q.begin(), q.end(), [](int x) { return x >= 0; }));
      if (n > bcount) bcount = n, bv = v, bq = q;
    }
    if (bcount < std::max(d + 3, (np + 1) / 2)) break;
    int bh = -1;
    double bd = INFINITY;
    for (int h = 0; h < H; ++h) {
      if (!vfound[h].empty()) continue;
      double dist = 0;
      for (int r = 0; r < d; ++r) dist += (est.v[h][r] - bv[r]) * (est.v[h][r] - bv[r]);
      if (dist < bd) bd = dist, bh = h;
    }
    if (bh < 0) break;
    vfound[bh] = bv;
    support[bh] = bcount;
    for (int p = 0; p < np; ++p)
      if (bq[p] >= 0) claimed[p][bq[p]] = 1;
  }
}

// A new estimate from a round whose labels do not hold together (the
// estimate it was placed by was too coarse): every pair that fits its answers
// still shows the true poles and residues, unlabelled. For each head, v_h is
// found by consensus: d pairs at random, each with the residue nearest the
// current prediction -delta^T v_h, give a candidate v_h; a pair agrees when one
// of its residues (not claimed by a head found before) matches the
// candidate's prediction to within its error; the candidate most pairs agree
// with is refined by least squares on them. Heads the consensus cannot
// start (the old v_h too far off to pick their residues: a grid pilot off by
// about 1 in every head at d = 8, H = 6) come from the residues alone by meet
// in the middle (placed_residue_candidates), kept when half the distinct
// offsets or more agree; heads still without enough agreeing pairs keep their
// old v_h. Then each pair is labelled by residues, and W_h b_j is
// the old one moved least (in norm) to meet delta_ij^T (W_h b_j) = log r_h(i, j)
// at the pairs of b_j whose pole for h is within the window and well
// determined. Only the next round's placement uses it.
Estimate reestimate(const std::vector<PairObs>& pool, const Estimate& est, const Draws& dr, int H, double window, std::uint64_t seed) {
  const int d = est.d;
  Rng rng(seed ^ 0x5e57a7e5ULL);
  std::vector<const PairObs*> pairs;
  for (const PairObs& o : pool) {
    bool fine = o.resid <= kResidualLimit && static_cast<int>(o.c.size()) == H;
    for (int q = 0; fine && q < H; ++q) fine = std::isfinite(o.c[q]) && std::isfinite(o.l[q]);
    if (fine) pairs.push_back(&o);
  }
  const std::vector<const PairObs*> all = pairs;  // for the columns W_h b_j
  pairs = distinct_offsets(pairs);
  const int np = static_cast<int>(pairs.size());
  Estimate out = est;
  if (np < d) return out;
  auto pred = [](const std::vector<double>& v, const PairObs* pd) { return residue_prediction(v, *pd); };
  auto tol = [](const PairObs* pd, int q) { return residue_tolerance(*pd, q); };
  std::vector<std::vector<char>> claimed(np, std::vector<char>(H, 0));
  auto match = [&](const std::vector<double>& v, int p) {  // the residue of pair p matching v, or -1
    const double c0 = pred(v, pairs[p]);
    int best = -1;
    for (int q = 0; q < H; ++q)
      if (!claimed[p][q] && std::fabs(pairs[p]->c[q] - c0) <= tol(pairs[p], q) && (best < 0 || std::fabs(pairs[p]->c[q] - c0) < std::fabs(pairs[p]->c[best] - c0)))
        best = q;
    return best;
  };
  auto nearest = [&](const std::vector<double>& v, int p) {
    const double c0 = pred(v, pairs[p]);
    int best = -1;
    for (int q = 0; q < H; ++q)
      if (!claimed[p][q] && (best < 0 || std::fabs(pairs[p]->c[q] - c0) < std::fabs(pairs[p]->c[best] - c0))) best = q;
    return best;
  };
  // least squares for v over pairs p with residue q[p] >= 0 (weights 1/tol)
  auto fit_v = [&](const std::vector<int>& q, std::vector<double>& v) {
    DMat N(d, std::vector<double>(d, 0.0));
    std::vector<double> x(d, 0.0);
    for (int p = 0; p < np; ++p) {
      if (q[p] < 0) continue;
      const double w = 1 / tol(pairs[p], q[p]), w2 = w * w;
      const std::vector<double>& dl = pairs[p]->delta;
      for (int r = 0; r < d; ++r) {
        x[r] -= w2 * dl[r] * pairs[p]->c[q[p]];
        for (int t = 0; t < d; ++t) N[r][t] += w2 * dl[r] * dl[t];
      }
    }
    if (!solve_dense(N, x)) return false;
    v = x;
    return true;
  };
  std::vector<std::vector<double>> vfound(H);
  std::vector<int> support(H, 0);
  for (int pass = 0; pass < H; ++pass) {
    int bh = -1;
    std::vector<double> bv;
    std::vector<int> bq;
    int bcount = -1;
    for (int h = 0; h < H; ++h) {
      if (!vfound[h].empty()) continue;
      std::vector<int> near(np);
      for (int p = 0; p < np; ++p) near[p] = nearest(est.v[h], p);
      std::vector<double> best_v;
      std::vector<int> best_q;
      int best_n = -1;
      for (int trial = 0; trial < 300; ++trial) {
        std::vector<int> pick;
        while (static_cast<int>(pick.size()) < d) {
          const int p = static_cast<int>(rng.uniform_int(0, np - 1));
          if (std::find(pick.begin(), pick.end(), p) == pick.end()) pick.push_back(p);
        }
        std::vector<int> q(np, -1);
        for (int p : pick) q[p] = near[p];
        std::vector<double> v;
        if (!fit_v(q, v)) continue;
        for (int it = 0; it < 3; ++it) {  // refine on the agreeing pairs
          for (int p = 0; p < np; ++p) q[p] = match(v, p);
          if (std::count_if(q.begin(), q.end(), [](int x) { return x >= 0; }) < d || !fit_v(q, v)) break;
        }
        for (int p = 0; p < np; ++p) q[p] = match(v, p);
        const int n = static_cast<int>(std::count_if(q.begin(), q.end(), [](int x) { return x >= 0; }));
        if (n > best_n) best_n = n, best_v = v, best_q = q;
      }
      if (best_n > bcount) bcount = best_n, bh = h, bv = best_v, bq = best_q;
    }
    // a head is found when more pairs agree than d + 2 (d pairs always can)
    if (bh < 0 || bcount < d + 3) break;
    vfound[bh] = bv;
    support[bh] = bcount;
    for (int p = 0; p < np; ++p)
      if (bq[p] >= 0) claimed[p][bq[p]] = 1;
  }
  heads_from_residues(pairs, est, H, rng, match, fit_v, vfound, support, claimed);  // heads still unfound
  // [W_h c_h] = [W_h b_j + c_h]_j A^{-1} (A = B without biases)
  const int n = dr.B.cols();
  const DMat BInv = finals_inverse(dr.B);
  if (BInv.empty()) return out;
  for (int h = 0; h < H; ++h) {
    if (vfound[h].empty()) continue;
    out.v[h] = vfound[h];
    // W_h b_j (+ c_h): the old column moved least to meet the agreeing pairs of b_j
    DMat X(d, std::vector<double>(n, 0.0));  // X[r][j] = (W_h b_j + c_h)_r
    for (int j = 0; j < n; ++j) {
      const std::vector<double> x0 = column_of(est, h, to_doubles(dr.B.col(j)));
      const std::vector<double> x = column_from_pairs(all, vfound[h], x0, j, H, window);
      for (int r = 0; r < d; ++r) X[r][j] = x[r];
    }
    for (int r = 0; r < d; ++r)
      for (int c = 0; c < n; ++c) {
        double s = 0;
        for (int t = 0; t < n; ++t) s += X[r][t] * BInv[t][c];
        if (c < d) out.W[h][r][c] = s;
        else out.c[h][r] = s;
      }
  }
  return out;
}

}  // namespace mhaq::placed_detail
