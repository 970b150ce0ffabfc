// The float judge's first-order estimate composed from a run's own pair fits
// and final solves (proofs/38-composed-estimate.md), instead of the learner
// replayed on jets (proofs/35).
//
// With L_h(i, j) = log r_h(i, j) of the labelled base pairs,
//     W_h = Delta^{-T} L_h B^{-1},      v_h = -Delta^{-T} C_h,  C_h(t) = c_h(t, 1),
// and each pair's derivatives in closed form (proofs/30), the row of J for
// W_h(a, b) has, per answer:
//   * a sample k >= 1 of pair (i, j), j >= 1 (that pair's own answer, no
//     other pair or chaining reads it): DiT(a, i) Bi(j, b) g_ij(k), with
//     g = d log r_h / d f(k); its row sums over those answers are the entries
//     of |DiT| P |Bi| for P(i, j) = sum_k |g_ij(k)| (weighted by |f|, or
//     squared, for kappa_rel and kappa_rms);
//   * a sample k >= 1 of pair (l, 1), read by that pair and, through its
//     limit P(l, 1), by the chained f(0) of every pair (i, j >= 2):
//     DiT(a, l) Bi(1, b) g_l1(k) + X(a, b, l) dP_l1(k),
//     X(a, b, l) = sum_{j >= 2} (DiT G0)(a, j) Bi(j, b) lambda_j(l), with
//     G0(i, j) = g_ij(0) and lambda_j = Delta^{-1} (b_j - b_1);
//   * the answer to [b_1]: sum_j (DiT G0)(a, j) Bi(j, b) a0_j with a0_1 = 1 and
//     a0_j = 1 + sum_l lambda_j(l) (dP_l1(0) - 1).
// Every number is an ErrDouble (a double with a running bound of its error,
// arith/err_double.hpp), so each row sum carries a bound, as the replay's do.
#include <algorithm>
#include <cmath>
#include <limits>

#include "mhaq/analysis/sensitivity.hpp"
#include "mhaq/arith/err_double.hpp"

namespace mhaq {

namespace {

using E = ErrDouble;
constexpr double kU = ErrDouble::u;
constexpr double kNoBound = std::numeric_limits<double>::infinity();

E e_abs(const E& x) { return {std::fabs(x.mid), x.rad}; }
// a / b: |a'/b' - a/b| <= (rad a + |a/b| rad b) / (|b| - rad b) for every a'
// within rad a of a and b' within rad b of b, plus the quotient's rounding
E e_div(const E& a, const E& b) {
  const double m = a.mid / b.mid;
  const double low = std::fabs(b.mid) - b.rad;
  if (!(low > 0)) return {m, kNoBound};
  const double am = std::fabs(m) * (1 + 4 * kU);
  return {m, (a.rad + am * b.rad) / low * (1 + 4 * kU) + kU * std::fabs(m)};
}
// the larger of two nonnegative quantities: within the larger bound of the
// larger exact value
E e_max(const E& a, const E& b) { return {std::max(a.mid, b.mid), std::max(a.rad, b.rad)}; }
E e_of(double x) { return E::rounded(x); }
E e_of(const Mpfr& x) { return E::rounded(x.to_double()); }
// a rational as a double (FLINT rounds towards zero: within 2u)
E e_of(const Rational& q) {
  const double m = q.approx_double();
  return {m, 2 * kU * std::fabs(m) + 0x1p-1074};
}

// One labelled base pair's derivatives (proofs/30), heads in the run's order:
// k = 0..2H is the sample f(k).
struct PairDerivs {
  std::vector<E> dP;                     // d P / d f(k)
  std::vector<std::vector<E>> dlog, dc;  // [h][k]: d log r_h / d f(k), d c_h / d f(k)
  E cond;                                // the largest row sum of |d(P, r, c)/d f|
};

// The closed form at the fit's values. 1 - r_g/r_h (where poles that nearly
// collide cancel) is formed in the run's field and then rounded; the rest in
// ErrDouble. False when a number is not finite or a divisor not certainly
// nonzero.
template <class T>
bool pair_derivs(const Field<T>& F, const PairFit<T>& fit, PairDerivs& out) {
  const int H = fit.heads(), n = 2 * H + 1;
  std::vector<E> r, c;
  for (int h = 0; h < H; ++h) {
    r.push_back(e_of(fit.r[h]));
    c.push_back(e_of(fit.c[h]));
  }
  const T one = F.from(Rational(1));
  std::vector<std::vector<E>> t(H, std::vector<E>(H));  // t[g][h] = 1 - r_g / r_h = 1 + r_g rho_h
  for (int h = 0; h < H; ++h)
    for (int g = 0; g < H; ++g)
      if (g != h) t[g][h] = e_of(one - fit.r[g] / fit.r[h]);
  std::vector<E> Q2(n), lead(n);
  E pr2(1L);
  for (int g = 0; g < H; ++g) pr2 = pr2 * r[g] * r[g];
  for (int k = 0; k < n; ++k) {
    E q(1L);
    for (int g = 0; g < H; ++g) q = q * (E(1L) + r[g] * E(static_cast<long>(k)));
    Q2[k] = q * q;
    Rational w(1);
    for (int m = 0; m < n; ++m)
      if (m != k) w *= Rational(k - m);
    lead[k] = e_of(w);
  }
  out.dP.resize(n);
  for (int k = 0; k < n; ++k) out.dP[k] = e_div(Q2[k], lead[k] * pr2);
  out.dlog.assign(H, std::vector<E>(n));
  out.dc.assign(H, std::vector<E>(n));
  E cond(0L);
  for (int h = 0; h < H; ++h) {
    const E rho = -e_div(E(1L), r[h]);
    E G(1L), dG(0L);
    for (int g = 0; g < H; ++g) {
      if (g == h) continue;
      G = G * t[g][h] * t[g][h];
      dG = dG + e_div(E(2L) * r[g], t[g][h]);
    }
    std::vector<E> tm(n), inv_tm(n);
    for (int m = 0; m < n; ++m) {
      tm[m] = rho - E(static_cast<long>(m));
      inv_tm[m] = e_div(E(1L), tm[m]);
    }
    E sr(0L), sc(0L);
    for (int k = 0; k < n; ++k) {
      E lk(1L), dl(0L);
      for (int m = 0; m < n; ++m)
        if (m != k) {
          lk = lk * tm[m];
          dl = dl + inv_tm[m];
        }
      const E base = e_div(Q2[k] * lk, lead[k]);
      out.dlog[h][k] = e_div(base, c[h] * G);
      out.dc[h][k] = c[h] * out.dlog[h][k] + e_div(base * (dl - dG), r[h] * G);
      sr = sr + e_abs(r[h] * out.dlog[h][k]);
      sc = sc + e_abs(out.dc[h][k]);
    }
    cond = e_max(e_max(cond, sr), sc);
  }
  E sp(0L);
  for (int k = 0; k < n; ++k) sp = sp + e_abs(out.dP[k]);
  out.cond = e_max(cond, sp);
  for (const E& x : out.dP)
    if (!x.finite()) return false;
  for (int h = 0; h < H; ++h)
    for (int k = 0; k < n; ++k)
      if (!out.dlog[h][k].finite() || !out.dc[h][k].finite()) return false;
  return out.cond.finite();
}

// The row sums of one parameter: of |J|, of |J| |f| and of (|J| |f|)^2.
struct RowSums {
  E s1{0L}, srel{0L}, s2{0L};
  void add(const E& coef, const E& w) {
    const E a = e_abs(coef), y = a * w;
    s1 = s1 + a;
    srel = srel + y;
    s2 = s2 + y * y;
  }
};

// What the rows are measured against and what they give: the kappas, their
// bounds and the row attaining kappa.
struct Kappas {
  double kappa = 0, kappa_rel = 0, kappa_rms = 0, e1 = 0, erel = 0, erms = 0;
  long row = 0;
  bool finite = true;
  void take(const RowSums& s, double scale, long r) {
    finite = finite && s.s1.finite() && s.srel.finite() && s.s2.finite();
    if (s.s1.mid / scale > kappa) {
      kappa = s.s1.mid / scale;
      row = r;
    }
    kappa_rel = std::max(kappa_rel, s.srel.mid / scale);
    const double rms = std::sqrt(s.s2.mid);
    kappa_rms = std::max(kappa_rms, rms / scale);
    e1 = std::max(e1, s.s1.rad / scale);
    erel = std::max(erel, s.srel.rad / scale);
    // |sqrt x - sqrt y| <= min(sqrt |x - y|, |x - y| / sqrt x), and sqrt's rounding
    const double er = std::min(std::sqrt(s.s2.rad), rms > 0 ? s.s2.rad / rms : kNoBound) + kU * rms;
    erms = std::max(erms, er / scale);
  }
};

// Delta^{-T} and B^{-1} (exact in Q, then rounded) and the chaining's
// lambda_j = Delta^{-1} (b_j - b_1), j >= 2 (lam[j][l]).
struct Inverses {
  std::vector<std::vector<E>> DiT, Bi, lam;
};
bool inverses_of(const Plan& plan, Inverses& out) {
  const int d = plan.d;
  QMat BInv, DeltaInv;  // Delta^{-T} is the transpose of Delta^{-1}
  if (!inverse(plan.B, BInv) || !inverse(plan.Delta, DeltaInv)) return false;
  out.DiT.assign(d, std::vector<E>(d));
  out.Bi.assign(d, std::vector<E>(d));
  out.lam.assign(d, std::vector<E>(d, E(0L)));
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      out.DiT[i][j] = e_of(DeltaInv(j, i));
      out.Bi[i][j] = e_of(BInv(i, j));
    }
  for (int j = 1; j < d; ++j) {
    const QVec l = matvec(DeltaInv, plan.B.col(j) - plan.B.col(0));
    for (int t = 0; t < d; ++t) out.lam[j][t] = e_of(l[t]);
  }
  return true;
}

// The rows of every head (W_h entries, then v_h), per the header comment:
// their row sums into K, their scales into S.scale.
void compose_rows(const Plan& plan, const Inverses& D, const std::vector<PairDerivs>& pd, const std::vector<E>& w, const std::vector<double>& sw,
                  const std::vector<double>& sv, bool chain_f0, Sensitivity& S, Kappas& K) {
  const int d = plan.d, H = S.H, n = 2 * H + 1;
  auto col = [&plan](int i, int j, int k) { return static_cast<size_t>(plan.query_index(plan.base_index(i, j), k)); };
  auto pair = [&pd, &plan](int i, int j) -> const PairDerivs& { return pd[plan.base_index(i, j)]; };
  const auto& DiT = D.DiT;
  const auto& Bi = D.Bi;
  // a0_j: the derivative of the chained f(0) at b_j by the answer to [b_1]
  std::vector<E> a0(d, E(1L));
  for (int j = 1; j < d; ++j)
    for (int l = 0; l < d; ++l) a0[j] = a0[j] + D.lam[j][l] * (pair(l, 0).dP[0] - E(1L));
  if (!chain_f0)  // the chained f(0) as constants
    for (int j = 1; j < d; ++j) a0[j] = E(0L);
  for (int h = 0; h < H; ++h) {
    // the pairs' own sums P (j >= 2), then |DiT| P |Bi| (DiT^2 P Bi^2 for the squares)
    std::vector<std::vector<RowSums>> P(d, std::vector<RowSums>(d));
    for (int i = 0; i < d; ++i)
      for (int j = 1; j < d; ++j)
        for (int k = 1; k < n; ++k) P[i][j].add(pair(i, j).dlog[h][k], w[col(i, j, k)]);
    std::vector<std::vector<RowSums>> DP(d, std::vector<RowSums>(d));  // |DiT| P
    std::vector<std::vector<E>> M(d, std::vector<E>(d, E(0L)));          // DiT G0
    for (int a = 0; a < d; ++a)
      for (int j = 0; j < d; ++j)
        for (int i = 0; i < d; ++i) {
          const E x = e_abs(DiT[a][i]);
          if (j >= 1) {
            DP[a][j].s1 = DP[a][j].s1 + x * P[i][j].s1;
            DP[a][j].srel = DP[a][j].srel + x * P[i][j].srel;
            DP[a][j].s2 = DP[a][j].s2 + x * x * P[i][j].s2;
          }
          M[a][j] = M[a][j] + DiT[a][i] * pair(i, j).dlog[h][0];
        }
    std::vector<E> N(d);
    for (int a = 0; a < d; ++a)
      for (int b = 0; b < d; ++b) {
        RowSums s;
        for (int j = 1; j < d; ++j) {
          const E y = e_abs(Bi[j][b]);
          s.s1 = s.s1 + DP[a][j].s1 * y;
          s.srel = s.srel + DP[a][j].srel * y;
          s.s2 = s.s2 + DP[a][j].s2 * y * y;
        }
        E c0(0L);
        for (int j = 0; j < d; ++j) {
          N[j] = M[a][j] * Bi[j][b];
          c0 = c0 + N[j] * a0[j];
        }
        s.add(c0, w[0]);
        for (int l = 0; l < d; ++l) {
          E X(0L);
          for (int j = 1; j < d; ++j) X = X + N[j] * D.lam[j][l];
          if (!chain_f0) X = E(0L);
          const E direct = DiT[a][l] * Bi[0][b];
          const PairDerivs& q = pair(l, 0);
          for (int k = 1; k < n; ++k) s.add(direct * q.dlog[h][k] + X * q.dP[k], w[col(l, 0, k)]);
        }
        const int row = S.row_W(h, a, b);
        S.scale[row] = sw[h];
        K.take(s, sw[h], row);
      }
    for (int a = 0; a < d; ++a) {
      RowSums s;
      E c0(0L);
      for (int t = 0; t < d; ++t) {
        const PairDerivs& q = pair(t, 0);
        for (int k = 1; k < n; ++k) s.add(DiT[a][t] * q.dc[h][k], w[col(t, 0, k)]);
        c0 = c0 + DiT[a][t] * q.dc[h][0];
      }
      s.add(c0, w[0]);
      const int row = S.row_v(h, a);
      S.scale[row] = sv[h];
      K.take(s, sv[h], row);
    }
  }
}

}  // namespace

template <class T>
std::optional<Sensitivity> composed_sensitivity(const Field<T>& field, const LearnOptions& lo, const LearnResult<T>& run, const std::vector<T>& answers,
                                                bool with_pair_cond, bool chain_f0) {
  const Plan& plan = run.plan;
  const int d = plan.d, H = lo.H, n = 2 * H + 1;
  // the learner's path that this composition follows (without biases): every base pair fitted
  // by interpolate_pair from 2H+1 samples, f(0) chained, labelled by a
  // permutation of its heads, then the final solves (not the rank schedule's skeletons)
  if (plan.bias || plan.schedule == Schedule::compact || plan.schedule == Schedule::rank || lo.heads_is_bound || plan.samples != n || plan.H != H ||
      !run.repairs.empty() || run.heads_found != H ||
      static_cast<int>(run.heads.size()) != H || static_cast<int>(run.labelled.size()) != d * d || static_cast<long>(answers.size()) < plan.query_count())
    return std::nullopt;
  for (const PairFit<T>& f : run.labelled)
    if (f.heads() != H || static_cast<int>(f.c.size()) != H) return std::nullopt;
  Inverses D;
  if (!inverses_of(plan, D)) return std::nullopt;
  std::vector<PairDerivs> pd(static_cast<size_t>(d) * d);
  for (int p = 0; p < d * d; ++p)
    if (!pair_derivs(field, run.labelled[p], pd[p])) return std::nullopt;
  Sensitivity S;
  S.d = d;
  S.H = H;
  S.columns = static_cast<long>(answers.size());
  S.bits = working_precision();
  S.derivative_bits = 53;
  S.answer_abs.resize(answers.size());
  std::vector<E> w(answers.size());
  for (size_t q = 0; q < answers.size(); ++q) {
    S.answer_abs[q] = std::fabs(e_of(answers[q]).mid);
    w[q] = e_of(std::fabs(e_of(answers[q]).mid));
  }
  std::vector<double> sw(H), sv(H);
  for (int h = 0; h < H; ++h) {
    std::vector<Ball> wv, vv;
    for (int i = 0; i < d; ++i) {
      vv.push_back(field.enclose(run.heads[h].v[i]));
      for (int j = 0; j < d; ++j) wv.push_back(field.enclose(run.heads[h].W(i, j)));
    }
    sw[h] = parameter_scale(wv);
    sv[h] = parameter_scale(vv);
  }
  S.scale.assign(S.rows(), 0.0);
  Kappas K;
  compose_rows(plan, D, pd, w, sw, sv, chain_f0, S, K);
  S.kappa = K.kappa;
  S.kappa_rel = K.kappa_rel;
  S.kappa_rms = K.kappa_rms;
  S.kappa_row = K.row;
  double ecnd = 0;
  if (with_pair_cond)
    for (const PairDerivs& q : pd) {
      S.pair_cond = std::max(S.pair_cond, q.cond.mid);
      ecnd = std::max(ecnd, q.cond.rad);
    }
  // accepted as the replay's double derivatives are (proofs/33): every bound
  // finite and at most 2^-kEstimateDerivBits of its quantity
  const double f = std::exp2(-static_cast<double>(kEstimateDerivBits));
  if (!K.finite || !(K.e1 <= f * S.kappa && K.erel <= f * S.kappa_rel && K.erms <= f * S.kappa_rms && ecnd <= f * S.pair_cond)) return std::nullopt;
  auto rel = [](double e, double q) { return e == 0 ? 0.0 : e / q; };
  S.kappa_err_rel = std::max({rel(K.e1, S.kappa), rel(K.erel, S.kappa_rel), rel(K.erms, S.kappa_rms), rel(ecnd, S.pair_cond)});
  return S;
}

template std::optional<Sensitivity> composed_sensitivity<Mpfr>(const Field<Mpfr>&, const LearnOptions&, const LearnResult<Mpfr>&, const std::vector<Mpfr>&,
                                                               bool, bool);
template std::optional<Sensitivity> composed_sensitivity<double>(const Field<double>&, const LearnOptions&, const LearnResult<double>&,
                                                                 const std::vector<double>&, bool, bool);

}  // namespace mhaq
