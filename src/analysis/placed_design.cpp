// The placed design (docs/math/designs.md#placed): poles put on a ladder from
// an estimate, pairs asked on the grid of ratios, labels by place and
// residue, the bilinear solve, the first-order estimate and the self-check.
#include <cstdio>

#include "placed_internal.hpp"

namespace mhaq {

using namespace placed_detail;

std::vector<Counts> placed_grid(int n, long k_max) {
  if (n < 3 || k_max < 2) throw Error(ErrorKind::usage, "placed design: the grid needs at least 3 ratios and k_max >= 2");
  std::vector<Counts> g{{0, 1}};
  const double e = std::log(static_cast<double>(k_max));
  for (int t = 0; t < n; ++t) {
    const double x = -e + 2 * e * t / (n - 1);  // log of the ratio k/m
    Counts c = x >= 0 ? Counts{std::min(k_max, std::lround(std::exp(x))), 1} : Counts{1, std::min(k_max, std::lround(std::exp(-x)))};
    const Counts& last = g.back();
    if (last.k * c.m >= c.k * last.m) continue;  // ratios strictly increasing
    g.push_back(c);
  }
  return g;
}

namespace {

// The offsets for one final token: `m` = d offsets, offset i putting head h at
// log r = targets[i][h]. With M = [W_1 b .. W_H b] (d x H), an offset is
// M (M^T M)^{-1} t plus a part orthogonal to every W_h b; the ladder's order
// is permuted per offset and the orthogonal parts drawn at random, and of
// `tries` candidates the best conditioned with no small residue is kept.
struct Placement {
  DMat Delta;    // Delta[i] = delta_i (rows)
  DMat targets;  // targets[i][h]
};

Placement place_offsets(const Estimate& est, const std::vector<double>& b, const std::vector<double>& ladder, double shift_range, Rng& rng, int tries) {
  const int d = est.d, H = static_cast<int>(est.W.size());
  DMat M(d, std::vector<double>(H));  // columns W_h b (+ c_h with biases)
  for (int h = 0; h < H; ++h) {
    const std::vector<double> x = column_of(est, h, b);
    for (int r = 0; r < d; ++r) M[r][h] = x[r];
  }
  DMat G(H, std::vector<double>(H));
  for (int a = 0; a < H; ++a)
    for (int c = 0; c < H; ++c)
      for (int r = 0; r < d; ++r) G[a][c] += M[r][a] * M[r][c];
  const DMat Ginv = dinverse(G);
  if (Ginv.empty())
    throw_unable(
        "placed design: the pilot's W_h b are linearly dependent at a "
        "final token, so the poles cannot be placed");
  double pscale = 0;  // the typical length of M G^{-1} t per unit target
  for (int r = 0; r < d; ++r)
    for (int c = 0; c < H; ++c) {
      double s = 0;
      for (int a = 0; a < H; ++a) s += M[r][a] * Ginv[a][c];
      pscale = std::max(pscale, std::fabs(s));
    }
  const double tspan = std::fabs(ladder.front()) + std::fabs(ladder.back());
  Placement best;
  double best_score = INFINITY;
  for (int t = 0; t < tries; ++t) {
    Placement p;
    for (int i = 0; i < d; ++i) {
      std::vector<int> perm(H);
      std::iota(perm.begin(), perm.end(), 0);
      for (int a = H - 1; a > 0; --a) std::swap(perm[a], perm[rng.uniform_int(0, a)]);
      std::vector<double> tg(H), delta(d, 0.0);
      // a common shift per offset: with the ladder alone every offset's
      // targets would have the same sum, and the offsets would lose a dimension
      const double shift = shift_range * uniform(rng);
      for (int h = 0; h < H; ++h) tg[h] = ladder[perm[h]] + shift;
      std::vector<double> y(H, 0.0);  // G^{-1} t
      for (int a = 0; a < H; ++a)
        for (int c = 0; c < H; ++c) y[a] += Ginv[a][c] * tg[c];
      std::vector<double> z(d);  // a random vector, projected off span(M)
      for (int r = 0; r < d; ++r) z[r] = uniform(rng);
      std::vector<double> mz(H, 0.0), coef(H, 0.0);
      for (int a = 0; a < H; ++a)
        for (int r = 0; r < d; ++r) mz[a] += M[r][a] * z[r];
      for (int a = 0; a < H; ++a)
        for (int c = 0; c < H; ++c) coef[a] += Ginv[a][c] * mz[c];
      for (int r = 0; r < d; ++r) {
        double proj = 0, lin = 0;
        for (int a = 0; a < H; ++a) {
          proj += M[r][a] * coef[a];
          lin += M[r][a] * y[a];
        }
        delta[r] = lin + 3 * pscale * tspan / H * (z[r] - proj);
      }
      p.Delta.push_back(delta);
      p.targets.push_back(tg);
    }
    double score = log2_cond(p.Delta);
    double rmin = INFINITY, rsum = 0;
    for (int i = 0; i < d; ++i)
      for (int h = 0; h < H; ++h) {
        double c = 0;
        for (int r = 0; r < d; ++r) c += est.v[h][r] * p.Delta[i][r];
        rmin = std::min(rmin, std::fabs(c));
        rsum += std::fabs(c);
      }
    const double rel = rmin / (rsum / (d * H));
    score -= std::log2(std::min(1.0, 4 * rel));
    if (score < best_score) {
      best_score = score;
      best = p;
    }
  }
  if (!std::isfinite(best_score)) throw_unable("placed design: no candidate offsets are independent at a final token");
  return best;
}

// The pairs asked so far: for each of the n final tokens b_j (n = d, or d + 1
// with biases) its d placed offsets (as asked, and as doubles), each pair's
// fit and the log r it was placed at; pair (i, j) is entry i*n + j. A round
// asks the final tokens it is told to (all in the first) and replaces their
// entries; the others keep theirs.
struct RoundData {
  int d = 0, n = 0;
  std::vector<DMat> Deltas;
  std::vector<std::vector<QVec>> Dq;
  std::vector<GridFit> fits;  // [i*n + j]
  std::vector<std::vector<double>> l0s;
  std::vector<std::vector<Ball>> answers;  // [i*n + j]: the pair's answers as balls, f(0) first
  double worst_resid = 0, worst_cond = 0;
  // per final token, the factor on its placed offsets: 1/4 more each time
  // none of its pairs fit (its column W_h b_j far off, its poles far outside
  // the grid's window), back to 1 once some do
  std::vector<double> shrink;
};

struct Ladder {
  std::vector<double> rungs;
  double gap = INFINITY, shift = 0;
};

// Whether the last round adds links at b_1 (the tokens' grid must hold
// quarters of b_1's offsets).
bool links_wanted(int d, const PlacedOptions& opt) { return d >= opt.links_from_d && opt.tokens.den % 4 == 0; }

// The links' queries: d - 1 pairs at b_1 on the round's grid, each without
// its t = 0 answer (b_1's own, asked already).
long link_queries(int d, const std::vector<Counts>& grid, const PlacedOptions& opt) {
  return links_wanted(d, opt) ? static_cast<long>(d - 1) * static_cast<long>(grid.size() - 1) : 0;
}

template <class T>
void ask_round(RoundData& rd, std::vector<PairObs>& pool, std::vector<KeptPair>& kept, const std::vector<char>& ask, Asker<T>& answer, const Field<Mpfr>& F, const Draws& dr, const Estimate& est, const Ladder& lad,
               Rng& rng, const std::vector<Counts>& grid, const PlacedOptions& opt) {
  const int d = dr.B.rows(), n = dr.B.cols(), H = opt.H;
  const std::vector<Mpfr> K = ratios(grid);
  rd.d = d;
  rd.n = n;
  rd.Deltas.resize(n);
  rd.Dq.resize(n);
  rd.fits.resize(static_cast<size_t>(d) * n);
  rd.l0s.resize(static_cast<size_t>(d) * n);
  rd.answers.resize(static_cast<size_t>(d) * n);
  rd.shrink.resize(n, 1.0);
  for (int j = 0; j < n; ++j) {
    if (!ask[j]) continue;
    const QVec bq = dr.B.col(j);
    const std::vector<double> b = to_doubles(bq);
    Placement pl = place_offsets(est, b, lad.rungs, lad.shift, rng, 60);
    for (auto& dl : pl.Delta)
      for (double& x : dl) x *= rd.shrink[j];
    const Ball f0b = answer.ball(Query{Run{bq, 1}});
    const Mpfr f0 = Asker<T>::midpoint(f0b);
    // the pairs this round replaces, kept for the final columns
    for (int i = 0; i < static_cast<int>(rd.Dq[j].size()); ++i) kept.push_back(KeptPair{j, rd.Dq[j][i], rd.fits[static_cast<size_t>(i) * n + j]});
    rd.Deltas[j].clear();
    rd.Dq[j].clear();
    for (int i = 0; i < d; ++i) {
      // b_1's offsets on the grid 4/den when links follow, so that theirs,
      // u delta_11 + w delta_i1 with u, w in Z/4, are on the tokens' grid
      // within the oracle's max_entry the offset may be asked scaled down
      // (on its grid); the fits and the solve see the offset asked
      const long gden = j == 0 && links_wanted(d, opt) ? opt.tokens.den / 4 : opt.tokens.den;
      const QVec dq = offset_within(bq, on_grid(pl.Delta[i], gden), opt.max_entry, gden);
      rd.Deltas[j].push_back(to_doubles(dq));
      rd.Dq[j].push_back(dq);
      QVec a(d);
      for (int r = 0; r < d; ++r) a[r] = bq[r] + dq[r];
      std::vector<Ball>& balls = rd.answers[static_cast<size_t>(i) * n + j];
      balls.assign(1, f0b);
      const std::vector<Mpfr> f = answer.pair(a, bq, grid, f0, &balls);
      std::vector<double> l0(H, 0.0);  // the placed log r on the rounded offset
      for (int h = 0; h < H; ++h)
        for (int r = 0; r < d; ++r)
          for (int c = 0; c < d; ++c) l0[h] += rd.Deltas[j][i][r] * est.W[h][r][c] * b[c];
      if (!est.c.empty())  // log r = delta^T (W_h b + c_h)
        for (int h = 0; h < H; ++h)
          for (int r = 0; r < d; ++r) l0[h] += rd.Deltas[j][i][r] * est.c[h][r];
      GridFit g = fit_on_grid(F, K, f, l0, opt.answer_bits, opt.answer_abs);
      if (g.max_resid > kResidualLimit) {  // the placed start led astray: free starts
        GridFit g2 = fit_free(F, K, f, H, opt.answer_bits, opt.answer_abs);
        if (g2.cost < g.cost) g = std::move(g2);
      }
      pool.push_back(observe(rd.Deltas[j][i], j, g));
      rd.fits[static_cast<size_t>(i) * n + j] = std::move(g);
      rd.l0s[static_cast<size_t>(i) * n + j] = l0;
    }
    int fitted = 0;
    for (int i = 0; i < d; ++i) fitted += rd.fits[static_cast<size_t>(i) * n + j].max_resid <= kResidualLimit;
    rd.shrink[j] = fitted == 0 ? rd.shrink[j] / 4 : 1.0;
  }
  rd.worst_resid = rd.worst_cond = 0;
  for (const GridFit& g : rd.fits) {
    rd.worst_resid = std::max(rd.worst_resid, g.max_resid);
    rd.worst_cond = std::max(rd.worst_cond, g.log2_cond);
  }
}

// The pairs' heads in the estimate's order: per pair, the assignment that best
// matches both the placed poles (in rungs) and the residues -v_h^T delta that
// `vpred` predicts; at the final tokens marked in `by_residue` (whose poles
// missed their places, so the places say nothing) the residues alone. L, C and
// their errors eL, eC are [h][i*n + j].
struct Labels {
  std::vector<std::vector<Mpfr>> L, C;
  std::vector<std::vector<double>> eL, eC;
  std::vector<std::vector<double>> tL;  // L's typical errors (typical_l)
  double max_dev = 0;              // largest |log r fitted - log r placed|
  std::vector<double> token_dev;   // the same per final token
  std::string misplaced;           // the first pair with a pole half a rung or more off
  bool ambiguous = false;          // a pair labelled by residues alone has two residues
                                   // within their errors (the labels there are a guess)
};

Labels label_round(const RoundData& rd, const std::vector<std::vector<double>>& vpred, int H, double gap, const std::vector<char>& by_residue) {
  const int d = rd.d, n = rd.n;
  const size_t np = static_cast<size_t>(d) * n;
  Labels lb{std::vector<std::vector<Mpfr>>(H, std::vector<Mpfr>(np)),
            std::vector<std::vector<Mpfr>>(H, std::vector<Mpfr>(np)),
            std::vector<std::vector<double>>(H, std::vector<double>(np)),
            std::vector<std::vector<double>>(H, std::vector<double>(np)),
            std::vector<std::vector<double>>(H, std::vector<double>(np)),
            0,
            std::vector<double>(n, 0.0),
            "",
            false};
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < d; ++i) {
      const size_t p = static_cast<size_t>(i) * n + j;
      const GridFit& g = rd.fits[p];
      const std::vector<double>& l0 = rd.l0s[p];
      std::vector<double> c0(H, 0.0), fl(H), fc(H);
      double cs = 1e-300;
      for (int h = 0; h < H; ++h) {
        for (int r = 0; r < d; ++r) c0[h] -= vpred[h][r] * rd.Deltas[j][i][r];
        cs = std::max(cs, std::fabs(c0[h]));
        fl[h] = g.l[h].to_double();
        fc[h] = g.c[h].to_double();
      }
      const double wplace = by_residue[j] ? 0.0 : 1.0 / gap;
      if (by_residue[j])
        for (int a = 0; a < H; ++a)
          for (int b = a + 1; b < H; ++b)
            if (!(std::fabs(fc[a] - fc[b]) > kResidualLimit * (g.err_c[a] + g.err_c[b]))) lb.ambiguous = true;
      const std::vector<int> sg = best_permutation(H, [&](const std::vector<int>& s2) {
        double tot = 0;
        for (int h = 0; h < H; ++h) tot += wplace * std::fabs(fl[s2[h]] - l0[h]) + std::fabs(fc[s2[h]] - c0[h]) / cs;
        return tot;
      });
      for (int h = 0; h < H; ++h) {
        const int q = sg[h];
        const double dev = std::fabs(fl[q] - l0[h]);
        lb.max_dev = std::max(lb.max_dev, dev);
        lb.token_dev[j] = std::max(lb.token_dev[j], dev);
        if (!(dev < gap / 2) && lb.misplaced.empty()) lb.misplaced = "pair (i=" + std::to_string(i + 1) + ", j=" + std::to_string(j + 1) + ")";
        lb.L[h][p] = g.l[q];
        lb.C[h][p] = g.c[q];
        lb.eL[h][p] = g.err_l[q];
        lb.tL[h][p] = typical_l(g, q);
        lb.eC[h][p] = g.err_c[q];
      }
    }
  return lb;
}

// v_h (in double, for labels only) by weighted least squares on c_h(i, j) =
// -delta_ij^T v_h over the pairs of the final tokens marked in `use`; empty
// when they do not determine it.
std::vector<std::vector<double>> v_from_tokens(const RoundData& rd, const Labels& lb, int H, const std::vector<char>& use) {
  const int d = rd.d, n = rd.n;
  std::vector<std::vector<double>> v;
  for (int h = 0; h < H; ++h) {
    DMat N(d, std::vector<double>(d, 0.0));
    std::vector<double> x(d, 0.0);
    for (int j = 0; j < n; ++j) {
      if (!use[j]) continue;
      for (int i = 0; i < d; ++i) {
        const size_t p = static_cast<size_t>(i) * n + j;
        const double e = std::max(lb.eC[h][p], 1e-300), w2 = 1 / (e * e), c = lb.C[h][p].to_double();
        if (!std::isfinite(w2) || !std::isfinite(c)) continue;
        for (int r = 0; r < d; ++r) {
          x[r] -= w2 * rd.Deltas[j][i][r] * c;
          for (int q = 0; q < d; ++q) N[r][q] += w2 * rd.Deltas[j][i][r] * rd.Deltas[j][i][q];
        }
      }
    }
    if (!solve_dense(N, x)) return {};
    v.push_back(x);
  }
  return v;
}

// One head's solve and its first-order errors (absolute: the fits' weights
// carry the stated answer error), in the metric of max_rel_error, and the
// largest disagreement of its residues with -delta^T v in units of their errors.
struct HeadSolve {
  LearnedHead<Mpfr> head;
  double rel_error = 0, check_ratio = 0;
};

// W_h b_j (+ c_h) = Delta_j^{-T} L_h(:, j); W_h = [W_h b_j]_j B^{-1}, or with
// biases [W_h c_h] = [W_h b_j + c_h]_j A^{-1} (Binv holds B^{-1} or A^{-1}).
double solve_W(const Field<Mpfr>& F, const RoundData& rd, const Labels& lb, int h, const Mat<Mpfr>& Binv, Mat<Mpfr>& W, std::vector<Mpfr>& c_out, HeadParts& parts) {
  const int d = rd.d, n = rd.n;
  Mat<Mpfr>& Wb = parts.Wb;
  DMat& eWb = parts.eWb;
  Wb = Mat<Mpfr>(d, n);
  eWb.assign(d, std::vector<double>(n, 0.0));
  for (int j = 0; j < n; ++j) {
    Mat<Mpfr> A(d, d), rhs(d, 1), y;
    for (int i = 0; i < d; ++i) {
      rhs(i, 0) = lb.L[h][static_cast<size_t>(i) * n + j];
      for (int r = 0; r < d; ++r) A(i, r) = F.from(rd.Dq[j][i][r]);
    }
    if (F.solve(y, A, rhs) != Truth::yes) throw_unable("placed design: the offsets of a final token are singular");
    const DMat Ainv = dinverse(rd.Deltas[j]);
    for (int r = 0; r < d; ++r) {
      Wb(r, j) = y(r, 0);
      for (int i = 0; i < d; ++i) eWb[r][j] += std::fabs(Ainv[r][i]) * lb.eL[h][static_cast<size_t>(i) * n + j];
    }
  }
  W = Mat<Mpfr>(d, d);
  c_out.assign(n > d ? d : 0, Mpfr(0L));
  return head_from_columns(Wb, eWb, Binv, W, c_out);
}

// v_h by weighted least squares on c_h(i, j) = -delta_ij^T v_h over all pairs.
HeadSolve solve_v(const Field<Mpfr>& F, const RoundData& rd, const Labels& lb, int h, Mat<Mpfr> W, std::vector<Mpfr> c, double w_rel, HeadParts& parts) {
  const int d = rd.d, n = rd.n;
  Mat<Mpfr> N(d, d), rhs(d, 1), vv;
  DMat Nd(d, std::vector<double>(d, 0.0));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < d; ++i) {
      const size_t p = static_cast<size_t>(i) * n + j;
      const double wt = 1 / std::max(lb.eC[h][p], 1e-300);
      const Mpfr w2 = md(wt * wt);
      for (int r = 0; r < d; ++r) {
        const Mpfr wd = w2 * F.from(rd.Dq[j][i][r]);
        rhs(r, 0) -= wd * lb.C[h][p];
        for (int c = 0; c < d; ++c) {
          N(r, c) += wd * F.from(rd.Dq[j][i][c]);
          Nd[r][c] += wt * wt * rd.Deltas[j][i][r] * rd.Deltas[j][i][c];
        }
      }
    }
  if (F.solve(vv, N, rhs) != Truth::yes) throw_unable("placed design: the residues do not determine v");
  const DMat Ninv = dinverse(Nd);
  HeadSolve hs{LearnedHead<Mpfr>{std::move(W), std::vector<Mpfr>(d), std::move(c)}, 0, 0};
  double vn2 = 0, ev2 = 0;
  std::vector<double> ev(d, 0.0);  // worst-case first-order error of v: |N^{-1} D^T W^2| on the residues' errors
  for (int r = 0; r < d; ++r) {
    hs.head.v[r] = vv(r, 0);
    vn2 += vv(r, 0).to_double() * vv(r, 0).to_double();
  }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < d; ++i) {
      const double e = lb.eC[h][static_cast<size_t>(i) * n + j], wt = 1 / std::max(e, 1e-300);
      for (int r = 0; r < d; ++r) {
        double g = 0;
        for (int c = 0; c < d; ++c) g += Ninv[r][c] * rd.Deltas[j][i][c];
        ev[r] += std::fabs(g) * wt * wt * e;
      }
    }
  for (int r = 0; r < d; ++r) ev2 += ev[r] * ev[r];
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < d; ++i) {
      const size_t p = static_cast<size_t>(i) * n + j;
      double pred = 0, ep = 0;
      for (int r = 0; r < d; ++r) {
        pred -= rd.Deltas[j][i][r] * hs.head.v[r].to_double();
        ep += std::fabs(rd.Deltas[j][i][r]) * ev[r];
      }
      hs.check_ratio = std::max(hs.check_ratio, std::fabs(pred - lb.C[h][p].to_double()) / (lb.eC[h][p] + ep + 1e-300));
    }
  parts.ev = ev;
  parts.v_rel = std::sqrt(ev2 / std::max(vn2, 1e-300));
  hs.rel_error = w_rel + parts.v_rel;
  return hs;
}

bool finite_heads(const std::vector<LearnedHead<Mpfr>>& heads);

// Every head of one labelling; the result's estimate, self-check and note.
// With biases also beta = f([b_1]) - v^T b_1 (v = sum_h v_h; no query of its own).
void solve_round(const Field<Mpfr>& F, const Draws& dr, const Mat<Mpfr>& Binv, const RoundData& rd, const Labels& lb, int H, PlacedResult& out,
                 std::vector<HeadParts>& parts) {
  const int n = dr.B.cols();
  double est_rel = 0, check_ratio = 0;
  out.heads.clear();
  out.log2_cond_offsets = 0;
  for (int j = 0; j < n; ++j) out.log2_cond_offsets = std::max(out.log2_cond_offsets, log2_cond(rd.Deltas[j]));
  parts.assign(H, HeadParts{});
  for (int h = 0; h < H; ++h) {
    Mat<Mpfr> W;
    std::vector<Mpfr> c;
    const double w_rel = solve_W(F, rd, lb, h, Binv, W, c, parts[h]);
    HeadSolve hs = solve_v(F, rd, lb, h, std::move(W), std::move(c), w_rel, parts[h]);
    est_rel = std::isnan(hs.rel_error) || std::isnan(est_rel) ? std::nan("") : std::max(est_rel, hs.rel_error);
    // a NaN (a head the fits do not determine) stays NaN: std::max would drop it
    check_ratio = std::isnan(hs.check_ratio) || std::isnan(check_ratio) ? std::nan("") : std::max(check_ratio, hs.check_ratio);
    out.heads.push_back(std::move(hs.head));
  }
  out.beta.reset();
  if (n > rd.d) {
    Mpfr beta = Asker<Mpfr>::midpoint(rd.answers[0][0]);  // f([b_1]), pair (1, 1)'s first answer
    for (const auto& hd : out.heads)
      for (int r = 0; r < rd.d; ++r) beta -= hd.v[r] * F.from(dr.B(r, 0));
    out.beta = beta;
  }
  // no estimate (NaN: the judge says unable) unless every error is a finite positive number
  out.estimate_log2 = est_rel > 0 && std::isfinite(est_rel) ? std::log2(est_rel) : std::nan("");
  const bool finite = std::isfinite(check_ratio) && finite_heads(out.heads);
  out.self_check = finite && rd.worst_resid <= kResidualLimit && check_ratio <= kResidualLimit ? Truth::yes : Truth::no;
  char note[160];
  if (finite)
    std::snprintf(note, sizeof note, "largest weighted pair residual %.3g stated errors, residues across final tokens agree to %.3g of their errors",
                  rd.worst_resid, check_ratio);
  else
    std::snprintf(note, sizeof note, "largest weighted pair residual %.3g stated errors, but a head's solve is not finite (its labelled pairs do not determine it)",
                  rd.worst_resid);
  out.self_check_note = note;
}

bool finite_heads(const std::vector<LearnedHead<Mpfr>>& heads) {
  for (const auto& hd : heads)
    for (int r = 0; r < static_cast<int>(hd.v.size()); ++r) {
      if (!std::isfinite(hd.v[r].to_double())) return false;
      if (!hd.c.empty() && !std::isfinite(hd.c[r].to_double())) return false;
      for (int c = 0; c < hd.W.cols(); ++c)
        if (!std::isfinite(hd.W(r, c).to_double())) return false;
    }
  return true;
}

// Heads that hold together: each column W_h b_j from the last round's d pairs
// of b_j and the earlier rounds' pairs there that its heads label (the
// self-check and the certified bound stay on the last round).
int combine_last(const Mat<Mpfr>& Binv, const RoundData& rd, const Labels& lb, const std::vector<KeptPair>& kept, const std::vector<HeadParts>& parts, int H,
                 PlacedResult& out) {
  const int d = rd.d, n = rd.n;
  std::vector<std::vector<std::vector<PlacedColumnRow>>> last(H, std::vector<std::vector<PlacedColumnRow>>(n));
  for (int h = 0; h < H; ++h)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < d; ++i) {
        const size_t p = static_cast<size_t>(i) * n + j;
        last[h][j].push_back(PlacedColumnRow{rd.Dq[j][i], lb.L[h][p], lb.eL[h][p], lb.tL[h][p]});
      }
  return combine_columns(Binv, last, kept, parts, out);
}

// The last round's pairs into the result, for ball mode's certification.
void keep_pairs(const RoundData& rd, const Draws& dr, const std::vector<Counts>& grid, PlacedResult& out) {
  const int d = rd.d, n = rd.n;
  out.grid = grid;
  out.B = dr.B;
  out.pairs.clear();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < d; ++i) {
      const size_t p = static_cast<size_t>(i) * n + j;
      out.pairs.push_back(PlacedPair{i, j, rd.Dq[j][i], rd.answers[p], rd.fits[p].P, rd.fits[p].c, rd.fits[p].l});
    }
}

// The grid of the rounds, and a round's queries per final token asked.
std::vector<Counts> round_grid(const PlacedOptions& opt) { return placed_grid(opt.grid > 0 ? opt.grid : std::min(60, 10 * opt.H + 10), opt.k_max); }
long token_queries(int d, const std::vector<Counts>& grid) { return 1 + static_cast<long>(d) * static_cast<long>(grid.size() - 1); }

// The final tokens: d, or d + 1 with biases.
int finals_count(int d, const PlacedOptions& opt) { return opt.bias ? d + 1 : d; }

// The grid pilot's queries: at every final token [b] and its 2d pairs (the
// design's offsets and orthogonal_on_grid's), then [b_1] again and its 2d - 1 links.
long grid_pilot_queries(int d, const PlacedOptions& opt) {
  const long g = static_cast<long>(placed_grid(opt.pilot_grid, opt.k_max).size()) - 1, m = 2L * d;
  return finals_count(d, opt) * (1 + m * g) + 1 + (m - 1) * g;
}

// The grid pilot's ratios per pair after `spent` queries (a paper pilot that
// gave no estimate): its own pilot_grid when the pilot, the first round and
// the links fit the budget; else, at H <= 2 (where the paper pilot came
// first and the least count assumed it), the most that fit, down to 2H + 3
// (two samples beyond a free fit's 2H + 1 unknowns); 0 when none fits.
int grid_pilot_ratios(long spent, int d, const PlacedOptions& opt) {
  const std::vector<Counts> grid = round_grid(opt);
  const long rest = finals_count(d, opt) * token_queries(d, grid) + link_queries(d, grid, opt);
  PlacedOptions p = opt;
  for (int g = opt.pilot_grid;; --g) {
    p.pilot_grid = g;
    if (opt.budget <= 0 || spent + grid_pilot_queries(d, p) + rest <= opt.budget) return g;
    if (opt.H > 2 || g - 1 < 2 * opt.H + 3) return 0;
  }
}

template <class T>
Estimate run_pilot(Oracle<T>& oracle, Asker<T>& answer, const Field<Mpfr>& F, const Draws& dr, Rng& rng, const PlacedOptions& opt, PlacedResult& out,
                   std::vector<PairObs>& pool) {
  const int d = oracle.dim(), H = opt.H;
  const long before = oracle.queries();
  Estimate est;
  if (H <= 2 && paper_pilot_within(d, opt)) {
    est = paper_pilot(oracle, opt, out.pilot_status);
    out.pilot_kind = "paper";
  } else if (H <= 2) {
    out.pilot_status = "the paper pilot's tokens pass the oracle's max_entry " + opt.max_entry->str();
  }
  if (static_cast<int>(est.W.size()) != H) {
    const int ratios = grid_pilot_ratios(oracle.queries() - before, d, opt);
    PlacedOptions pilot = opt;
    pilot.pilot_grid = ratios > 0 ? ratios : opt.pilot_grid;
    const std::vector<Counts> grid = round_grid(opt);
    const long total = oracle.queries() - before + grid_pilot_queries(d, pilot) + finals_count(d, opt) * token_queries(d, grid) + link_queries(d, grid, opt);
    if (ratios == 0)
      throw Error(ErrorKind::budget, "placed design: the paper pilot gave no estimate (" + out.pilot_status + "), and the grid pilot with the first round (and links) would bring the run to " +
                                         std::to_string(total) + " queries, beyond its budget of " + std::to_string(opt.budget) + ": not asked");
    const QMat extra = orthogonal_on_grid(rng, d, norm_of(dr.Delta.col(0)), opt.tokens.den);
    est = grid_pilot(answer, F, dr, extra, placed_grid(pilot.pilot_grid, opt.k_max), H, opt.answer_bits, opt.answer_abs, opt.tokens.den, opt.max_entry, out.pilot_status, pool);
    out.pilot_kind = "grid";
  }
  if (static_cast<int>(est.W.size()) != H) throw_unable("placed design: the pilot gave no estimate of the heads (" + out.pilot_status + ")");
  return est;
}

}  // namespace

long placed_least_queries(int d, const PlacedOptions& opt) {
  const std::vector<Counts> grid = round_grid(opt);
  return (opt.H <= 2 ? schedule_query_count(Schedule::paper, d, opt.H, 0, opt.bias) : grid_pilot_queries(d, opt)) +
         finals_count(d, opt) * token_queries(d, grid) + link_queries(d, grid, opt);
}

namespace {

// The pilot may ask more than placed_least_queries counted (the scale probe
// asks again at each scale it leaves): a first round (of `cost` queries, as
// the rounds count theirs) that cannot finish within the budget after the
// pilot's `spent` is not begun, rather than asked until the cap stops it.
void first_round_within(long spent, long cost, bool links, const PlacedResult& out, const PlacedOptions& opt) {
  if (opt.budget > 0 && spent + cost > opt.budget)
    throw Error(ErrorKind::budget, "placed design: its pilot asked " + std::to_string(out.pilot_queries) + " queries (" + out.pilot_status + "), and its first round" +
                                       (links ? " and links" : "") + " would bring the run to " + std::to_string(spent + cost) + ", beyond its budget of " +
                                       std::to_string(opt.budget) + ": not asked");
}

}  // namespace

template <class T>
PlacedResult learn_placed(Oracle<T>& oracle, const PlacedOptions& opt) {
  const int d = oracle.dim(), H = opt.H;
  if (H < 1 || H > d) throw Error(ErrorKind::usage, "--design placed needs 1 <= H <= d (the poles are placed through d-dimensional offsets)");
  if (const long least = placed_least_queries(d, opt); opt.budget > 0 && least > opt.budget)
    throw Error(ErrorKind::budget, "placed design: its pilot, first round and links (d >= " + std::to_string(opt.links_from_d) + ") need " + std::to_string(least) + " queries, beyond its budget of " +
                                       std::to_string(opt.budget) + ": not asked");
  PlacedResult out;
  const long before = oracle.queries();
  const Field<Mpfr> F;
  Rng rng(opt.seed ^ 0x91ace5eedULL);
  Draws dr = draw_scaled(rng, d, H, opt.tokens);
  // with biases a final token b_{d+1} from its own stream, affinely
  // independent of B's columns (the other draws stay those without biases)
  if (opt.bias) {
    Rng brng(opt.seed ^ 0x6166666e65ULL);
    dr.B = with_affine_final(brng, dr.B, opt.tokens);
  }
  const int n = dr.B.cols();
  const Mat<Mpfr> Binv = finals_inverse(F, dr.B);  // the final tokens' solve, for every round's heads
  // the offsets need room within the oracle's max_entry: the final tokens
  // within half of it (drawn at about sqrt(d/3) in norm)
  if (opt.max_entry) {
    Rational largest(0);
    for (int j = 0; j < n; ++j) largest = std::max(largest, max_abs(dr.B.col(j)));
    if (*opt.max_entry < Rational(2) * largest)
      throw Error(ErrorKind::usage, "--design placed: its final tokens have entries up to " + largest.str() + " (about " + std::to_string(largest.approx_double()) +
                                        "), more than half the oracle's max_entry " + opt.max_entry->str() + ", which leaves its offsets no room: start the oracle with a larger limit");
  }
  const std::vector<Counts> grid = round_grid(opt);
  Asker<T> answer(oracle, opt.errors, opt.max_entry);
  std::vector<PairObs> pool;  // every fitted pair, for a new estimate when labels fail
  Estimate est = run_pilot(oracle, answer, F, dr, rng, opt, out, pool);
  out.pilot_queries = oracle.queries() - before;
  Ladder lad;
  lad.shift = opt.ladder_shift;
  for (int h = 0; h < H; ++h)
    lad.rungs.push_back(H == 1 ? (opt.ladder_top + opt.ladder_bottom) / 2 : opt.ladder_top + (opt.ladder_bottom - opt.ladder_top) * h / (H - 1));
  if (H > 1) lad.gap = std::fabs(opt.ladder_bottom - opt.ladder_top) / (H - 1);
  const long token_cost = token_queries(d, grid);
  // the links' queries, kept back from further rounds (ball mode's labelling needs them from d = 24)
  const long link_cost = link_queries(d, grid, opt);
  RoundData rd;
  std::vector<KeptPair> kept;  // earlier rounds' pairs, replaced by later ones
  std::vector<HeadParts> parts;
  std::vector<char> ask(n, 1);
  first_round_within(oracle.queries() - before, n * token_cost + link_cost, link_cost > 0, out, opt);
  for (int round = 1;; ++round) {
    out.rounds = round;
    const long design_before = oracle.queries();
    ask_round(rd, pool, kept, ask, answer, F, dr, est, lad, rng, grid, opt);
    out.design_queries += oracle.queries() - design_before;
    out.worst_pair_log2_cond = rd.worst_cond;
    // labels, then the solve. When the residues disagree across final tokens
    // (a wrong label somewhere), relabel (no new queries), at most three
    // times: a final token with a pole half a rung or more off its place is
    // labelled by residues alone, with the v_h of the final tokens whose poles
    // all kept their places (or, if there are none, of the solve itself)
    std::vector<std::vector<double>> vpred = est.v;
    std::vector<char> by_residue(n, 0);
    Labels lb;
    for (int relabel = 0;; ++relabel) {
      lb = label_round(rd, vpred, H, lad.gap, by_residue);
      solve_round(F, dr, Binv, rd, lb, H, out, parts);
      if (out.self_check == Truth::yes || relabel == 3 || !finite_heads(out.heads)) break;
      std::vector<char> placed(n, 0);
      for (int j = 0; j < n; ++j) {
        placed[j] = by_residue[j] == 0 && lb.token_dev[j] < lad.gap / 2;
        if (!placed[j]) by_residue[j] = 1;
      }
      vpred = v_from_tokens(rd, lb, H, placed);
      if (vpred.empty()) vpred = estimate_of(out.heads, d).v;
    }
    if (lb.ambiguous && out.self_check == Truth::yes) {  // residues alone cannot tell two heads apart there
      out.self_check = Truth::no;
      out.self_check_note += "; a final token labelled by residues alone has two equal residues";
    }
    // another round on this round's heads, while poles land far from their
    // places and the budget allows: it asks again only the final tokens with
    // a pole more than a quarter rung off, placed by the estimate's W_h b_j
    // there (the solve's own column for that token)
    long redo = 0;
    for (int j = 0; j < n; ++j) {
      ask[j] = !(lb.token_dev[j] <= lad.gap / 4);
      redo += ask[j];
    }
    const bool affordable = opt.budget == 0 || oracle.queries() - before + redo * token_cost + link_cost <= opt.budget;
    if (round < opt.max_rounds && redo > 0 && affordable) {
      // the solve's heads when they hold together, else a new estimate from the pairs' fits
      if (out.self_check == Truth::yes && finite_heads(out.heads)) {
        est = estimate_of(out.heads, d);
      } else {
        est = reestimate(pool, est, dr, H, std::log(static_cast<double>(opt.k_max)), opt.seed + static_cast<std::uint64_t>(round));
        ++out.reestimates;
      }
      continue;
    }
    out.rounds_end = redo == 0 ? "held" : round >= opt.max_rounds ? "rounds" : "budget";
    out.tokens_off = static_cast<int>(redo);
    out.next_round_queries = redo * token_cost;
    out.pairs_missed = static_cast<int>(std::count_if(rd.fits.begin(), rd.fits.end(), [](const GridFit& g) { return !(g.max_resid <= kResidualLimit); }));
    out.max_pole_shift = lb.max_dev;
    out.misplaced = lb.misplaced;
    if (out.self_check == Truth::yes && finite_heads(out.heads)) out.pairs_combined = combine_last(Binv, rd, lb, kept, parts, H, out);
    keep_pairs(rd, dr, grid, out);
    // links at b_1 for ball mode's labelling (proofs/37 (4)), within the budget
    if (links_wanted(d, opt) && (opt.budget == 0 || oracle.queries() - before + link_cost <= opt.budget)) {
      std::vector<std::vector<double>> l1(H), c1(H);
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < d; ++i) {
          l1[h].push_back(lb.L[h][static_cast<size_t>(i) * n].to_double());
          c1[h].push_back(lb.C[h][static_cast<size_t>(i) * n].to_double());
        }
      const long links_before = oracle.queries();
      out.links = ask_links(answer, F, dr.B.col(0), rd.Dq[0], l1, c1, grid, rd.answers[0][0], opt, opt.ladder_top + opt.ladder_shift);
      out.design_queries += oracle.queries() - links_before;
    }
    return out;
  }
}

template PlacedResult learn_placed<Ball>(Oracle<Ball>&, const PlacedOptions&);
template PlacedResult learn_placed<Mpfr>(Oracle<Mpfr>&, const PlacedOptions&);
template PlacedResult learn_placed<double>(Oracle<double>&, const PlacedOptions&);

}  // namespace mhaq
