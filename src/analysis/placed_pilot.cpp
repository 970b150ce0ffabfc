// The placed design's pilots (docs/math/designs.md#placed): an estimate of
// the heads good enough to place their poles.
#include "mhaq/oracle/pilot_oracle.hpp"
#include "mhaq/stages/learner.hpp"
#include "placed_internal.hpp"

namespace mhaq::placed_detail {

// A pilot pair with clustered poles or a pole outside the window gives a wild
// value, which must not spoil the others.
std::vector<double> trimmed_least_squares(const DMat& A, const std::vector<double>& y) {
  const int m = static_cast<int>(A.size()), d = static_cast<int>(A[0].size());
  std::vector<char> keep(m, 1);
  std::vector<double> x(d, 0.0);
  for (int kept = m;; --kept) {
    DMat N(d, std::vector<double>(d, 0.0));
    std::vector<double> rhs(d, 0.0);
    for (int i = 0; i < m; ++i)
      if (keep[i])
        for (int r = 0; r < d; ++r) {
          rhs[r] += A[i][r] * y[i];
          for (int c = 0; c < d; ++c) N[r][c] += A[i][r] * A[i][c];
        }
    x = rhs;
    if (!solve_dense(N, x)) return std::vector<double>(d, 0.0);
    if (kept <= d + 2) return x;
    std::vector<double> res, kres;
    int worst = -1;
    for (int i = 0; i < m; ++i) {
      double e = -y[i];
      for (int r = 0; r < d; ++r) e += A[i][r] * x[r];
      res.push_back(std::fabs(e));
      if (keep[i]) {
        kres.push_back(std::fabs(e));
        if (worst < 0 || std::fabs(e) > res[worst]) worst = i;
      }
    }
    std::nth_element(kres.begin(), kres.begin() + kres.size() / 2, kres.end());
    if (res[worst] <= 10 * kres[kres.size() / 2] + 1e-12) return x;
    keep[worst] = 0;
  }
}

namespace {

// The grid pilot: the scaled design's final tokens B, offsets (2d of them:
// the scaled design's and a second orthogonal draw), poles where they fall;
// every base pair (i, j) and the within links (delta_1 + delta_i, b_1), each on
// the grid and fitted from free starts. Heads are put in the order of pair
// (1, 1): at (i, j) by residues, which do not depend on b_j; at (i, 1) through
// its link, whose poles are products and residues sums. W_h b_j and v_h by
// trimmed least squares. A rough estimate is all it needs to be: the placed
// rounds check where every pole lands.

// W_h b_j from the m equations delta_ij^T (W_h b_j) = log r_h(i, j) (a pole
// outside the grid's window is seen only as "far": its log r is clipped to
// the window's edge, and likely trimmed); v_h from delta_i^T v_h =
// -median_j c_h(i, j) / s_j (the offsets of b_j are delta_i scaled by s_j,
// so the residues c_h(i, j) = -s_j delta_i^T v_h); W_h = [W_h b_j] B^{-1}, or
// with biases (d + 1 final tokens, log r = delta^T (W_h b_j + c_h))
// [W_h c_h] = [W_h b_j + c_h] A^{-1}.
Estimate pilot_solve(const std::vector<std::vector<GridFit>>& fit, const std::vector<std::vector<std::vector<int>>>& order, const std::vector<QVec>& base,
                     const std::vector<std::vector<QVec>>& offs, const std::vector<int>& scale_log2, const Draws& dr, int H, double window) {
  const int d = dr.B.rows(), n = dr.B.cols(), m = static_cast<int>(base.size());
  std::vector<DMat> A(n, DMat(m));  // [j][i]: the offsets of b_j
  DMat A0(m);
  for (int i = 0; i < m; ++i) {
    A0[i] = to_doubles(base[i]);
    for (int j = 0; j < n; ++j) A[j][i] = to_doubles(offs[j][i]);
  }
  const DMat BInv = finals_inverse(dr.B);
  if (BInv.empty()) throw_internal("placed design: the pilot's B is singular after the draw check");
  Estimate est;
  est.d = d;
  for (int h = 0; h < H; ++h) {
    DMat Wb(d, std::vector<double>(n, 0.0));
    std::vector<double> cmed(m);
    for (int j = 0; j < n; ++j) {
      std::vector<double> y(m);
      for (int i = 0; i < m; ++i) {
        // a pole outside the grid's window is seen only as "far": its log r
        // is clipped to the window's edge (and likely trimmed)
        double l = fit[i][j].l[order[i][j][h]].to_double();
        if (!std::isfinite(l)) l = 0;
        y[i] = std::clamp(l, -window, window);
      }
      const std::vector<double> w = trimmed_least_squares(A[j], y);
      for (int r = 0; r < d; ++r) Wb[r][j] = w[r];
    }
    for (int i = 0; i < m; ++i) {
      std::vector<double> c;
      for (int j = 0; j < n; ++j) {
        const double x = std::ldexp(fit[i][j].c[order[i][j][h]].to_double(), -scale_log2[j]);
        c.push_back(std::isfinite(x) ? -x : 0);
      }
      std::nth_element(c.begin(), c.begin() + n / 2, c.end());
      cmed[i] = c[n / 2];
    }
    DMat W(d, std::vector<double>(n, 0.0));  // [W_h c_h] with biases
    for (int r = 0; r < d; ++r)
      for (int c = 0; c < n; ++c)
        for (int t = 0; t < n; ++t) W[r][c] += Wb[r][t] * BInv[t][c];
    if (n > d) {
      std::vector<double> ch(d);
      for (int r = 0; r < d; ++r) {
        ch[r] = W[r][d];
        W[r].resize(d);
      }
      est.c.push_back(ch);
    }
    est.W.push_back(W);
    est.v.push_back(trimmed_least_squares(A0, cmed));
  }
  return est;
}

// x 2^k on the token grid 1/den: exact for k >= 0 (x is on the grid), rounded
// to the nearest grid point for k < 0.
QVec scaled_on_grid(const QVec& x, int k, long den) {
  QVec y;
  const Rational s = k >= 0 ? Rational(1L << k) : Rational(1, 1UL << -k), half(1, 2);
  for (const Rational& t : x) y.push_back(k >= 0 ? t * s : (t * s * Rational(den) + half).floor() / Rational(den));
  return y;
}

// A fitted pair's reach: its largest |log r|, NaN when a pole is not finite
// (the fit failed: it says nothing about the scale).
double pole_reach(const GridFit& g) {
  double r = 0;
  for (const Mpfr& l : g.l) r = std::isfinite(l.to_double()) ? std::max(r, std::fabs(l.to_double())) : std::nan("");
  return r;
}

// The scale probe's bounds on a final token's first two pairs' reaches. A
// reach beyond kReachWild (the pilot's window of log r, about 12) says
// little: a pole out of the window, or a fit of crowded poles from noisy
// answers, whose spare poles wander anywhere (torch's float64 answers at
// 65,537 tokens, stated to 2^-31, give reaches up to 1e42). When the reaches
// within it are all below kReachLow the poles crowd (torch's default
// initialisation puts them within about 0.5 of 0 at d = 8); when both are
// above kReachHigh, or one beyond the window and the other above
// kReachTarget, poles leave the window. The scale then moves the
// reach to about kReachTarget, near the drawn models' pilots (whose first
// two pairs at d = 8 reach at least 2.2 at every final token, 3 to 8
// typically).
constexpr double kReachLow = 1.5, kReachHigh = 10, kReachWild = 12, kReachTarget = 5;
constexpr int kScaleLimit = 10;  // the offsets' scale stays within 2^-10 .. 2^10
constexpr int kProbes = 4;       // probes at most per final token

// The power of 2 by which to scale offsets whose first pairs reach r1 and r2
// (0: keep them).
int scale_step(double r1, double r2) {
  if (std::isnan(r1) || std::isnan(r2)) return 0;  // a fit failed
  const double lo = std::min(r1, r2), hi = std::max(r1, r2);
  if (lo > kReachHigh || (hi > kReachWild && lo > kReachTarget)) return std::min(-1, static_cast<int>(std::lround(-std::log2(lo / kReachTarget))));
  const double in = hi <= kReachWild ? hi : lo;  // the largest reach within the window
  if (in < kReachLow) return in > 0 ? std::max(1, static_cast<int>(std::lround(std::log2(kReachTarget / in)))) : kScaleLimit;
  return 0;
}

}  // namespace

// The pilot's base pairs: every final token b_j with the offsets `base`
// scaled by 2^scale_log2[j] (offs[j]), fitted into fit[i][j] and pooled; the
// scales, as the status lists them.
template <class T>
std::string scaled_pairs(Asker<T>& ask, const Field<Mpfr>& F, const Draws& dr, const std::vector<QVec>& base, const std::vector<Counts>& grid,
                         const std::vector<Mpfr>& K, int H, long p, double abs, long den, const std::optional<Rational>& max_entry, std::vector<std::vector<GridFit>>& fit,
                         std::vector<std::vector<QVec>>& offs, std::vector<int>& scale_log2, std::vector<PairObs>& pool) {
  const int d = dr.B.rows(), n = dr.B.cols(), m = static_cast<int>(base.size());
  // The scale probe, per final token (with heads of low rank, |W_h b_j|
  // differs much from one b_j to the next): log r = delta^T W_h b is linear
  // in delta, so offsets scaled by 2^k move every pole by that factor. The
  // first two pairs of b_j are fitted; while their reaches say the poles
  // crowd or leave the window (scale_step), the offsets of b_j are scaled by
  // the power of 2 that brings them nearest kReachTarget and the two pairs
  // asked again (the pairs of a discarded scale are not pooled). The
  // probe of b_j starts at the median scale of the final tokens before it
  // (scale 1 for b_1): one model's tokens mostly want one scale. Every token
  // is probed before the other pairs are asked; when every scale is 1 the
  // pilot asks what it asked without a probe (in another order).
  const int n_probe = std::min(m, 2);
  std::vector<Mpfr> f0(n);
  auto fit_pair = [&](int i, int j) {
    const QVec b = dr.B.col(j);
    QVec a(d);
    for (int r = 0; r < d; ++r) a[r] = b[r] + offs[j][i][r];
    fit[i][j] = fit_free(F, K, ask.pair(a, b, grid, f0[j]), H, p, abs);
  };
  // the largest scale of b_j's offsets at or below k whose tokens lie within
  // the oracle's max_entry (k itself without one)
  auto within = [&](int j, int k) {
    for (; k > -62; --k) {
      bool ok = true;
      for (const QVec& o : base) ok = ok && within_entry(dr.B.col(j), scaled_on_grid(o, k, den), max_entry);
      if (ok) return k;
    }
    throw_unable("placed design: the grid pilot's offsets at a final token do not come within the oracle's max_entry " + max_entry->str());
  };
  auto probe = [&](int j) {
    for (int n = 1;; ++n) {
      scale_log2[j] = within(j, scale_log2[j]);
      offs[j].clear();
      for (const QVec& o : base) offs[j].push_back(scaled_on_grid(o, scale_log2[j], den));
      for (int i = 0; i < n_probe; ++i) fit_pair(i, j);
      int next = std::clamp(scale_log2[j] + scale_step(pole_reach(fit[0][j]), pole_reach(fit[n_probe - 1][j])), -kScaleLimit, kScaleLimit);
      if (next > scale_log2[j]) next = std::max(scale_log2[j], within(j, next));
      if (next == scale_log2[j] || n == kProbes) break;
      scale_log2[j] = next;
    }
  };
  auto median_scale = [&](int n) {  // the lower median of the first n tokens' scales
    std::vector<int> s(scale_log2.begin(), scale_log2.begin() + n);
    std::nth_element(s.begin(), s.begin() + (n - 1) / 2, s.end());
    return s[(n - 1) / 2];
  };
  for (int j = 0; j < n; ++j) {
    if (j > 0) scale_log2[j] = median_scale(j);
    f0[j] = ask(Query{Run{dr.B.col(j), 1}});
    probe(j);
  }
  // a token whose probe ended 2 or more binary orders from the median (a
  // noisy fit of crowded poles can look spread: the first token, probed
  // without a median to start from, most often) is probed once more from
  // the median
  const int med = median_scale(n);
  for (int j = 0; j < n; ++j)
    if (std::abs(scale_log2[j] - med) >= 2) {
      scale_log2[j] = med;
      probe(j);
    }
  std::string scales;
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      if (i >= n_probe) fit_pair(i, j);
      pool.push_back(observe(to_doubles(offs[j][i]), j, fit[i][j]));
    }
    scales += (j ? "," : "") + std::to_string(scale_log2[j]);
  }
  return scales;
}

template <class T>
Estimate grid_pilot(Asker<T>& ask, const Field<Mpfr>& F, const Draws& dr, const QMat& extra, const std::vector<Counts>& grid, int H, long p, double abs,
                    long den, const std::optional<Rational>& max_entry, std::string& status, std::vector<PairObs>& pool) {
  const int d = dr.B.rows(), n = dr.B.cols();
  const double window = std::log(static_cast<double>(grid.back().k)) + 1;
  const std::vector<Mpfr> K = ratios(grid);
  std::vector<QVec> base;
  for (int i = 0; i < d; ++i) base.push_back(dr.Delta.col(i));
  for (int i = 0; i < extra.cols(); ++i) base.push_back(extra.col(i));
  const int m = static_cast<int>(base.size());
  std::vector<std::vector<GridFit>> fit(m, std::vector<GridFit>(n));  // [i][j]
  std::vector<std::vector<QVec>> offs(n);                             // [j][i]: the offsets of b_j, scaled
  std::vector<int> scale_log2(n, 0);
  const std::string scales = scaled_pairs(ask, F, dr, base, grid, K, H, p, abs, den, max_entry, fit, offs, scale_log2, pool);
  const QVec b1 = dr.B.col(0);
  const std::vector<QVec>& offs1 = offs[0];
  const Mpfr f01 = ask(Query{Run{b1, 1}});
  // order[i][j][h]: the index in fit[i][j] of head h (the order of fit[0][0])
  std::vector<std::vector<std::vector<int>>> order(m, std::vector<std::vector<int>>(n));
  auto dbl = [](const std::vector<Mpfr>& x, int k = 0) {
    std::vector<double> y;
    for (const Mpfr& t : x) y.push_back(std::ldexp(t.to_double(), k));
    return y;
  };
  std::vector<int> id(H);
  std::iota(id.begin(), id.end(), 0);
  order[0][0] = id;
  for (int i = 1; i < m; ++i) {
    QVec a(d), sum(d);
    for (int r = 0; r < d; ++r) sum[r] = offs1[0][r] + offs1[i][r];
    // within the oracle's max_entry the link may be asked at 2^-k times the
    // sum, and its poles and residues are then 2^-k times the sums
    int k = 0;
    const QVec link_offset = offset_within(b1, sum, max_entry, den, &k);
    const double sc = std::ldexp(1.0, -k);
    for (int r = 0; r < d; ++r) a[r] = b1[r] + link_offset[r];
    const GridFit link = fit_free(F, K, ask.pair(a, b1, grid, f01), H, p, abs);
    pool.push_back(observe(to_doubles(link_offset), 0, link));
    const auto l1 = dbl(fit[0][0].l), c1 = dbl(fit[0][0].c), li = dbl(fit[i][0].l), ci = dbl(fit[i][0].c), ll = dbl(link.l), cl = dbl(link.c);
    double cs = 1e-300;
    for (int h = 0; h < H; ++h) cs = std::max({cs, std::fabs(c1[h]), std::fabs(ci[h])});
    // sigma: head h of (1,1) is head sigma[h] of (i,1); each sum must meet a
    // distinct link head
    order[i][0] = best_permutation(H, [&](const std::vector<int>& sg) {
      std::vector<char> used(H, 0);
      double tot = 0;
      for (int h = 0; h < H; ++h) {
        double bd = INFINITY;
        int bq = -1;
        for (int q = 0; q < H; ++q) {
          if (used[q]) continue;
          const double dd = std::fabs(sc * (l1[h] + li[sg[h]]) - ll[q]) + std::fabs(sc * (c1[h] + ci[sg[h]]) - cl[q]) / cs;
          if (!(dd >= bd)) bd = dd, bq = q;
        }
        if (bq < 0) return static_cast<double>(INFINITY);
        used[bq] = 1;
        tot += bd;
      }
      return tot;
    });
    if (order[i][0].empty()) order[i][0] = id;
  }
  for (int i = 0; i < m; ++i) {
    // residues in the units of the offsets of b_1 (those of b_j are scaled by 2^(k_j - k_1))
    const auto ci = dbl(fit[i][0].c);
    for (int j = 1; j < n; ++j) {
      const auto cj = dbl(fit[i][j].c, scale_log2[0] - scale_log2[j]);
      order[i][j] = best_permutation(H, [&](const std::vector<int>& sg) {  // head h is head sg[h] of (i,j)
        double tot = 0;
        for (int h = 0; h < H; ++h) tot += std::fabs(ci[order[i][0][h]] - cj[sg[h]]);
        return tot;
      });
      if (order[i][j].empty()) order[i][j] = id;
    }
  }
  Estimate est = pilot_solve(fit, order, base, offs, scale_log2, dr, H, window);
  // the status names the scales when one is not 1
  status = std::all_of(scale_log2.begin(), scale_log2.end(), [](int k) { return k == 0; }) ? "ok" : "ok, the offsets of each final token scaled by 2^(" + scales + ")";
  return est;
}

// The paper pilot's options for the learner.
LearnOptions paper_pilot_options(const PlacedOptions& opt) {
  LearnOptions lo;
  lo.H = opt.H;
  lo.schedule = Schedule::paper;
  lo.seed = opt.seed;
  lo.tokens = opt.tokens;
  lo.bias = opt.bias;
  return lo;
}

bool paper_pilot_within(int d, const PlacedOptions& opt) {
  if (!opt.max_entry) return true;
  for (const Query& q : learner_plan(d, paper_pilot_options(opt)).queries())
    for (const Run& run : q)
      if (*opt.max_entry < max_abs(run.token)) return false;
  return true;
}

// The paper pilot: the paper schedule, by the learner itself in MPFR on the
// answers' midpoints, with decisions judged ever more loosely (cheap, and
// enough at H <= 2 from float64 answers).
template <class T>
Estimate paper_pilot(Oracle<T>& oracle, const PlacedOptions& opt, std::string& status) {
  const int d = oracle.dim();
  PilotAnswers<T> answers(oracle);
  Estimate est;
  status = "not run";
  const LearnOptions lo = paper_pilot_options(opt);
  // the answers' accuracy for answers of size about 1
  const double a0 = std::max(-static_cast<double>(opt.answer_bits), opt.answer_abs > 0 ? std::log2(opt.answer_abs) : -INFINITY);
  for (double acc : {a0, a0 / 2, a0 / 4}) {
    if (acc > -8) break;
    PilotOracle<T> po(answers, acc);
    try {
      const LearnResult<Mpfr> res = learn<Mpfr>(po, lo);
      if (res.self_check == Truth::no || static_cast<int>(res.heads.size()) != opt.H) {
        status = "the paper pilot's heads do not reproduce its answers";
        continue;
      }
      est = estimate_of(res.heads, d);
      status = "ok";
      return est;
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input || e.kind() == ErrorKind::internal) throw;
      status = std::string(kind_name(e.kind())) + ": " + e.what();
    }
  }
  return est;
}

template Estimate grid_pilot<Ball>(Asker<Ball>&, const Field<Mpfr>&, const Draws&, const QMat&, const std::vector<Counts>&, int, long, double, long, const std::optional<Rational>&, std::string&, std::vector<PairObs>&);
template Estimate grid_pilot<Mpfr>(Asker<Mpfr>&, const Field<Mpfr>&, const Draws&, const QMat&, const std::vector<Counts>&, int, long, double, long, const std::optional<Rational>&, std::string&, std::vector<PairObs>&);
template Estimate grid_pilot<double>(Asker<double>&, const Field<Mpfr>&, const Draws&, const QMat&, const std::vector<Counts>&, int, long, double, long, const std::optional<Rational>&, std::string&, std::vector<PairObs>&);
template Estimate paper_pilot<Ball>(Oracle<Ball>&, const PlacedOptions&, std::string&);
template Estimate paper_pilot<Mpfr>(Oracle<Mpfr>&, const PlacedOptions&, std::string&);
template Estimate paper_pilot<double>(Oracle<double>&, const PlacedOptions&, std::string&);

}  // namespace mhaq::placed_detail
