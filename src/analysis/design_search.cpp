// Query designs: the first-order prediction and the tuned design (design_search.hpp).
#include "mhaq/analysis/design_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "mhaq/arith/all_fields.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/parallel.hpp"
#include "mhaq/oracle/pilot_oracle.hpp"

namespace mhaq {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// The search (search_design): random starts, then local searches from the
// best of them, on the p-norm of the rows' amplifications (p = 4: smoother
// than the max, so a move that lowers several rows is not lost behind one).
constexpr int kSearchStarts = 1000, kSearchSteps = 24000, kSearchBranches = 8;
constexpr double kSearchNorm = 4;

Mpfr mpfr_of(double x) {
  Mpfr m;
  mpfr_set_d(m.raw(), x, MPFR_RNDN);
  return m;
}

std::vector<double> col_d(const QMat& M, int j) {
  std::vector<double> x(M.rows());
  for (int i = 0; i < M.rows(); ++i) x[i] = M(i, j).approx_double();
  return x;
}

// One base pair's first-order sensitivities at the estimate: for the samples
// f(0..2H), d log r_h / d f(k), d c_h / d f(k), d P / d f(k), and |f(k)|.
struct PairSens {
  bool ok = false;
  std::vector<std::vector<double>> dl, dc;  // [h][k]
  std::vector<double> dP, fabs;             // [k]
};

// The pair's poles and residues at the estimate.
struct PairPoint {
  std::vector<double> r, c;
  double P = 0;
  bool ok = false;
};
PairPoint pair_point(const HeadsEstimate& est, const std::vector<double>& delta, const std::vector<double>& b) {
  const int d = est.d, H = est.heads();
  PairPoint pt;
  pt.r.resize(H);
  pt.c.resize(H);
  for (int h = 0; h < H; ++h) {
    double l = 0, ch = 0;
    for (int i = 0; i < d; ++i) {
      double wb = 0;
      for (int j = 0; j < d; ++j) wb += est.W[h][i * d + j] * b[j];
      l += delta[i] * wb;
      ch -= est.v[h][i] * delta[i];
      pt.P += est.v[h][i] * (b[i] + delta[i]);
    }
    if (!(std::fabs(l) < 600)) return pt;  // beyond double's exp: hopeless anyway
    pt.r[h] = std::exp(l);
    pt.c[h] = ch;
  }
  pt.ok = true;
  return pt;
}

// Closed form (proofs/30): with Q(x) = prod_g (1 + r_g x), rho_h = -1/r_h and
// the Lagrange basis l_k of the nodes 0..2H, a perturbation df of the samples
// moves the interpolant by R/Q^2, R the interpolant of Q(k)^2 df(k); so
//   d log r_h / d f(k) = Q(k)^2 l_k(rho_h) / (c_h G_h),   G_h = prod_{g != h} (1 - r_g/r_h)^2,
//   d c_h / d f(k)     = c_h d log r_h / d f(k)
//                        + Q(k)^2 l_k(rho_h) [sum_{m != k} 1/(rho_h - m) - sum_{g != h} 2 r_g/(1 + r_g rho_h)] / (r_h G_h),
//   d P / d f(k)       = Q(k)^2 / (prod_{m != k} (k - m) prod_g r_g^2).
PairSens pair_sens(const HeadsEstimate& est, const std::vector<double>& delta, const std::vector<double>& b) {
  const int H = est.heads(), n = 2 * H + 1;
  PairSens out;
  const PairPoint pt = pair_point(est, delta, b);
  if (!pt.ok) return out;
  const std::vector<double>& r = pt.r;
  const std::vector<double>& c = pt.c;
  std::vector<double> Q2(n), lead(n);
  double pr2 = 1;
  for (int g = 0; g < H; ++g) pr2 *= r[g] * r[g];
  out.fabs.resize(n);
  for (int k = 0; k < n; ++k) {
    double q = 1, f = pt.P, w = 1;
    for (int g = 0; g < H; ++g) {
      q *= 1 + r[g] * k;
      f += c[g] / (1 + r[g] * k);
    }
    for (int m = 0; m < n; ++m)
      if (m != k) w *= k - m;
    Q2[k] = q * q;
    lead[k] = w;
    out.fabs[k] = std::fabs(f);
  }
  out.dl.assign(H, std::vector<double>(n));
  out.dc.assign(H, std::vector<double>(n));
  out.dP.resize(n);
  for (int k = 0; k < n; ++k) out.dP[k] = Q2[k] / (lead[k] * pr2);
  for (int h = 0; h < H; ++h) {
    const double rho = -1 / r[h];
    double G = 1, dG = 0;
    for (int g = 0; g < H; ++g) {
      if (g == h) continue;
      const double t = 1 - r[g] / r[h];
      G *= t * t;
      dG += 2 * r[g] / (1 + r[g] * rho);
    }
    if (G == 0 || c[h] == 0) return out;
    for (int k = 0; k < n; ++k) {
      double lk = 1, dl = 0;
      for (int m = 0; m < n; ++m)
        if (m != k) {
          lk *= rho - m;
          dl += 1 / (rho - m);
        }
      lk /= lead[k];
      const double base = Q2[k] * lk;
      out.dl[h][k] = base / (c[h] * G);
      out.dc[h][k] = c[h] * out.dl[h][k] + base * (dl - dG) / (r[h] * G);
    }
  }
  for (const auto& row : out.dl)
    for (double x : row)
      if (!std::isfinite(x)) return out;
  out.ok = true;
  return out;
}

// The same by inverting the pair's Jacobian d f(k) / d (P, r, c) in MPFR
// (the check of the closed form, tests and `mhaq prove`).
PairSens pair_sens_matrix(const HeadsEstimate& est, const std::vector<double>& delta, const std::vector<double>& b) {
  const int H = est.heads(), n = 2 * H + 1;
  PairSens out;
  const PairPoint pt = pair_point(est, delta, b);
  if (!pt.ok) return out;
  PrecisionScope scope(256);
  const Field<Mpfr> F{};
  Mat<Mpfr> J(n, n), I(n, n, Mpfr(0L)), X;
  out.fabs.resize(n);
  for (int k = 0; k < n; ++k) {
    I(k, k) = Mpfr(1L);
    J(k, 0) = Mpfr(1L);
    double fk = pt.P;
    for (int h = 0; h < H; ++h) {
      fk += pt.c[h] / (1 + pt.r[h] * k);
      const Mpfr inv = Mpfr(1L) / (Mpfr(1L) + F.from(Rational(k)) * mpfr_of(pt.r[h]));
      J(k, 1 + h) = -(mpfr_of(pt.c[h]) * F.from(Rational(k)) * inv * inv);
      J(k, 1 + H + h) = inv;
    }
    out.fabs[k] = std::fabs(fk);
  }
  if (F.solve(X, J, I) != Truth::yes) return out;
  out.dl.assign(H, std::vector<double>(n));
  out.dc.assign(H, std::vector<double>(n));
  out.dP.resize(n);
  for (int k = 0; k < n; ++k) {
    out.dP[k] = X(0, k).to_double();
    for (int h = 0; h < H; ++h) {
      out.dl[h][k] = X(1 + h, k).to_double() / pt.r[h];
      out.dc[h][k] = X(1 + H + h, k).to_double();
    }
  }
  out.ok = true;
  return out;
}

// The composition of the pairs' sensitivities (proofs/30, "prediction"):
// rows W_h(a, b) and v_h(a), columns the answer [b_1] and every base pair's
// samples k = 1..2H.
// log2 kappa_rms (pnorm = 0), or the p-norm over rows of the rows' rms
// amplifications (the search's smoothed score); *log2_worst receives log2
// kappa (row sums of |J|) when given.
double compose(const HeadsEstimate& est, const QMat& B, const QMat& Delta, const std::vector<PairSens>& ps, double pnorm = 0,
               double* log2_worst = nullptr) {
  const int d = est.d, H = est.heads(), n = 2 * H + 1;
  for (const auto& p : ps)
    if (!p.ok) return kInf;
  QMat Dinv, Binv;
  if (!inverse(Delta, Dinv) || !inverse(B, Binv)) return kInf;
  // lambda_j = Delta^{-1} (b_j - b_1): f(0) at b_j = f(b_1) + sum_l lambda_jl (P_l1 - f(b_1))
  std::vector<std::vector<double>> lam(d, std::vector<double>(d, 0.0));
  for (int j = 1; j < d; ++j) {
    const QVec l = matvec(Dinv, B.col(j) - B.col(0));
    for (int t = 0; t < d; ++t) lam[j][t] = l[t].approx_double();
  }
  std::vector<std::vector<double>> di(d, std::vector<double>(d)), bi(d, std::vector<double>(d));
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      di[i][j] = Dinv(i, j).approx_double();
      bi[i][j] = Binv(i, j).approx_double();
    }
  auto pidx = [d](int i, int j) { return j * d + i; };
  // d f0_j / d f(b_1), and |f(b_1)| (pair (1,1)'s k = 0 value)
  std::vector<double> a0(d, 1.0);
  for (int j = 1; j < d; ++j) {
    double s = 1;
    for (int l = 0; l < d; ++l) s += lam[j][l] * (ps[pidx(l, 0)].dP[0] - 1);
    a0[j] = s;
  }
  const double fb1 = ps[pidx(0, 0)].fabs[0];
  double worst = 0, worst_abs = 0;
  std::vector<double> logs;
  auto take = [&](double x) {
    worst = std::max(worst, x);
    if (pnorm > 0) logs.push_back(std::log2(x));
  };
  std::vector<double> S(d);
  for (int h = 0; h < H; ++h) {
    double nw = 0, nv = 0;
    for (double x : est.W[h]) nw += x * x;
    for (double x : est.v[h]) nv += x * x;
    nw = nw > 0 ? std::sqrt(nw) : 1;
    nv = nv > 0 ? std::sqrt(nv) : 1;
    for (int a = 0; a < d; ++a)
      for (int bb = 0; bb < d; ++bb) {
        // W_h(a, b) = sum_ij Dinv(i, a) L_h(i, j) Binv(j, b)
        double ss = 0, sa = 0, c0 = 0;
        for (int j = 0; j < d; ++j) {
          S[j] = 0;
          for (int i = 0; i < d; ++i) {
            const PairSens& p = ps[pidx(i, j)];
            const double kap = di[i][a] * bi[j][bb];
            for (int k = 1; k < n; ++k) {
              if (j == 0) continue;  // first column: added below with the chaining
              const double x = kap * p.dl[h][k];
              ss += x * x * p.fabs[k] * p.fabs[k];
              sa += std::fabs(x);
            }
            S[j] += kap * p.dl[h][0];
            c0 += kap * p.dl[h][0] * a0[j];
          }
        }
        for (int l = 0; l < d; ++l) {
          const PairSens& p = ps[pidx(l, 0)];
          double chain = 0;
          for (int j = 1; j < d; ++j) chain += S[j] * lam[j][l];
          const double kap = di[l][a] * bi[0][bb];
          for (int k = 1; k < n; ++k) {
            const double x = kap * p.dl[h][k] + chain * p.dP[k];
            ss += x * x * p.fabs[k] * p.fabs[k];
            sa += std::fabs(x);
          }
        }
        ss += c0 * fb1 * c0 * fb1;
        sa += std::fabs(c0);
        take(std::sqrt(ss) / nw);
        worst_abs = std::max(worst_abs, sa / nw);
      }
    for (int a = 0; a < d; ++a) {
      // v_h(a) = -sum_i Dinv(i, a) c_h(i, 1)
      double ss = 0, sa = 0, c0 = 0;
      for (int i = 0; i < d; ++i) {
        const PairSens& p = ps[pidx(i, 0)];
        for (int k = 1; k < n; ++k) {
          const double x = di[i][a] * p.dc[h][k];
          ss += x * x * p.fabs[k] * p.fabs[k];
          sa += std::fabs(x);
        }
        c0 += di[i][a] * p.dc[h][0];
      }
      ss += c0 * fb1 * c0 * fb1;
      sa += std::fabs(c0);
      take(std::sqrt(ss) / nv);
      worst_abs = std::max(worst_abs, sa / nv);
    }
  }
  if (!(worst > 0 && std::isfinite(worst))) return kInf;
  if (log2_worst) *log2_worst = worst_abs > 0 && std::isfinite(worst_abs) ? std::log2(worst_abs) : kInf;
  if (pnorm > 0) {
    const double m = std::log2(worst);
    double s = 0;
    for (double l : logs) s += std::exp2(pnorm * (l - m));
    return m + std::log2(s) / pnorm;
  }
  return worst > 0 && std::isfinite(worst) ? std::log2(worst) : kInf;
}

}  // namespace

std::vector<std::vector<double>> pair_sensitivities(const HeadsEstimate& est, const QVec& delta, const QVec& b, bool closed) {
  std::vector<double> dd, bd;
  for (const auto& x : delta) dd.push_back(x.approx_double());
  for (const auto& x : b) bd.push_back(x.approx_double());
  const PairSens p = closed ? pair_sens(est, dd, bd) : pair_sens_matrix(est, dd, bd);
  std::vector<std::vector<double>> out;
  if (!p.ok) return out;
  for (const auto& row : p.dl) out.push_back(row);
  for (const auto& row : p.dc) out.push_back(row);
  out.push_back(p.dP);
  return out;
}

double predicted_log2_kappa_rms(const HeadsEstimate& est, const QMat& B, const QMat& Delta) {
  const int d = est.d;
  std::vector<PairSens> ps;
  for (int j = 0; j < d; ++j)
    for (int i = 0; i < d; ++i) ps.push_back(pair_sens(est, col_d(Delta, i), col_d(B, j)));
  return compose(est, B, Delta, ps);
}

double predicted_log2_kappa(const HeadsEstimate& est, const QMat& B, const QMat& Delta) {
  const int d = est.d;
  std::vector<PairSens> ps;
  for (int j = 0; j < d; ++j)
    for (int i = 0; i < d; ++i) ps.push_back(pair_sens(est, col_d(Delta, i), col_d(B, j)));
  double w = kInf;
  compose(est, B, Delta, ps, 0, &w);
  return w;
}

namespace {

// A column move of the search: column `col` of B (col < d) or of Delta
// (col >= d), replaced by its value plus a uniform step on the grid.
struct Candidate {
  QMat B, Delta;
  std::vector<PairSens> ps;  // base pair (i, j) at j * d + i
  double score = kInf;
};

void rescore(const HeadsEstimate& est, Candidate& c, int only_col) {
  const int d = est.d;
  if (c.ps.empty()) c.ps.resize(static_cast<size_t>(d) * d);
  for (int j = 0; j < d; ++j)
    for (int i = 0; i < d; ++i) {
      if (only_col >= 0 && only_col != j && only_col != d + i) continue;
      c.ps[j * d + i] = pair_sens(est, col_d(c.Delta, i), col_d(c.B, j));
    }
  c.score = compose(est, c.B, c.Delta, c.ps, kSearchNorm);
}

}  // namespace

TunedDesign search_design(const HeadsEstimate& est, const TunedOptions& opt) {
  const int d = est.d, H = est.heads();
  if (d < 1 || H < 1) throw Error(ErrorKind::usage, "design search: empty estimate");
  if (opt.tokens.range < 1 || opt.tokens.den < 1) throw Error(ErrorKind::usage, "design search: token range and denominator must be positive");
  const long den = opt.tokens.den;
  const int starts = opt.candidates > 0 ? opt.candidates : kSearchStarts;
  const int steps = opt.steps > 0 ? opt.steps : kSearchSteps;
  const int keep = std::min(starts, kSearchBranches);
  TunedDesign out;
  // 1. random starts: the scaled design at offset scales 1/2, 3/4, 1 and 3/2
  // times its own, and uniform entries at the same scales
  const Draws ref = [&] {
    Rng r(opt.seed);
    return draw_scaled(r, d, H, opt.tokens);
  }();
  const Rational root = (Rational(static_cast<long>(d)) * Rational(1L << 40) / Rational(3)).isqrt_floor() / Rational(1L << 20);
  const Rational nb = root * Rational(opt.tokens.range) / Rational(den);
  const Rational mult[] = {Rational(1, 2), Rational(3, 4), Rational(1), Rational(3, 2)};
  std::vector<Candidate> pool(starts);
  parallel_for(0, static_cast<size_t>(starts), opt.threads, [&](size_t s) {
    Candidate& c = pool[s];
    Rng sub(opt.seed ^ (0x9E3779B97F4A7C15ULL * (s + 1)));
    const Rational sd = design_offset_scale(H) * mult[s % 4];
    if (s == 0) {
      c.B = ref.B;
      c.Delta = ref.Delta;
    } else if ((s / 4) % 2 == 0) {
      c.B = orthogonal_on_grid(sub, d, nb, den);
      c.Delta = orthogonal_on_grid(sub, d, nb * sd, den);
    } else {  // uniform entries, B on [-range, range]/den, Delta sd times wider
      const long rb = opt.tokens.range, rd = (sd * Rational(rb)).floor().to_long();
      c.B = QMat(d, d);
      c.Delta = QMat(d, d);
      for (int r = 0; r < d; ++r)
        for (int k = 0; k < d; ++k) {
          c.B(r, k) = Rational(sub.uniform_int(-rb, rb), static_cast<unsigned long>(den));
          c.Delta(r, k) = Rational(sub.uniform_int(-rd, rd), static_cast<unsigned long>(den));
        }
    }
    rescore(est, c, -1);
  });
  out.evaluations += starts;
  out.log2_kappa_start = compose(est, pool[0].B, pool[0].Delta, pool[0].ps, 0);
  std::vector<size_t> order(starts);
  for (int s = 0; s < starts; ++s) order[s] = s;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pool[a].score < pool[b].score; });
  // 2. local search from the best starts, each on its own stream: one column
  // of B or Delta at a time moves by a uniform step on the grid whose size
  // adapts (grown after a success, shrunk after a failure)
  std::vector<Candidate> branch(keep);
  parallel_for(0, static_cast<size_t>(keep), opt.threads, [&](size_t b) {
    Candidate cur = pool[order[b]];
    Rng rng(opt.seed ^ (0xD1B54A32D192ED03ULL * (b + 1)));
    std::vector<double> step(2 * d, 0.25);
    for (int it = 0; it < steps / keep && std::isfinite(cur.score); ++it) {
      const int col = static_cast<int>(rng.uniform_int(0, 2 * d - 1));
      Candidate c = cur;
      QMat& M = col < d ? c.B : c.Delta;
      const int k = col < d ? col : col - d;
      double norm = 0;
      for (int r = 0; r < d; ++r) norm += M(r, k).approx_double() * M(r, k).approx_double();
      const long range = std::max(1L, std::lround(step[col] * std::sqrt(norm / d) * static_cast<double>(den)));
      for (int r = 0; r < d; ++r) M(r, k) += Rational(rng.uniform_int(-range, range), static_cast<unsigned long>(den));
      rescore(est, c, col);
      if (c.score < cur.score) {
        cur = std::move(c);
        step[col] = std::min(1.0, step[col] * 1.5);
      } else {
        step[col] = std::max(1.0 / 1024, step[col] * 0.85);
      }
    }
    branch[b] = std::move(cur);
  });
  out.evaluations += keep * (steps / keep);
  // the branch with the smallest predicted kappa_rms (the max over rows, not the search's smoothed score)
  int bi = -1;
  double bs = kInf;
  for (int b = 0; b < keep; ++b) {
    const double v = compose(est, branch[b].B, branch[b].Delta, branch[b].ps, 0);
    if (v < bs) {
      bs = v;
      bi = b;
    }
  }
  if (bi < 0) throw_degenerate("design search: no candidate design has a finite predicted amplification on the pilot's estimate");
  out.draws.B = branch[bi].B;
  out.draws.Delta = branch[bi].Delta;
  out.log2_kappa_predicted = bs;
  compose(est, out.draws.B, out.draws.Delta, branch[bi].ps, 0, &out.log2_kappa_predicted_worst);
  out.estimate = est;
  return out;
}

template <class T>
TunedDesign choose_tuned_design(Oracle<T>& oracle, const TunedOptions& opt) {
  if (opt.H < 1) throw Error(ErrorKind::usage, "tuned design: H must be at least 1");
  if (opt.pilot_bits < 16) throw Error(ErrorKind::usage, "tuned design: the pilot needs at least 16 bits");
  const int d = oracle.dim();
  const long before = oracle.queries();
  TunedDesign out;
  Rng prng(opt.seed ^ 0x51a7e5eedULL);
  LearnOptions lo;
  lo.H = opt.H;
  lo.heads_is_bound = opt.heads_is_bound;
  lo.schedule = Schedule::lean;
  lo.seed = opt.seed;
  lo.tokens = opt.tokens;
  lo.threads = opt.threads;
  lo.draws = draw_scaled(prng, d, opt.H, opt.tokens);
  HeadsEstimate est;
  {
    PrecisionScope scope(opt.pilot_bits);
    PilotAnswers<T> answers(oracle);
    // decisions judged at the answers' accuracy, then ever more loosely: the
    // pilot needs a few correct digits, not a certified run
    const double a0 = opt.answer_acc_log2 < 0 ? opt.answer_acc_log2 : -static_cast<double>(opt.pilot_bits);
    out.pilot_status = "not run";
    for (double acc : {a0, a0 / 2, a0 / 4, a0 / 8}) {
      if (acc > -8) break;
      PilotOracle<T> po(answers, acc);
      try {
        const LearnResult<Mpfr> res = learn<Mpfr>(po, lo);
        if (res.self_check != Truth::yes) {
          out.pilot_status = "the pilot's heads do not reproduce its answers at 2^" + std::to_string(static_cast<long>(acc / 2));
          continue;
        }
        est.d = d;
        for (const auto& h : res.heads) {
          std::vector<double> W, v;
          for (int i = 0; i < d; ++i) {
            v.push_back(h.v[i].to_double());
            for (int j = 0; j < d; ++j) W.push_back(h.W(i, j).to_double());
          }
          est.W.push_back(W);
          est.v.push_back(v);
        }
        out.pilot_acc_log2 = acc;
        out.pilot_status = "ok";
        break;
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input || e.kind() == ErrorKind::internal) throw;
        out.pilot_status = std::string(kind_name(e.kind())) + ": " + e.what();
      }
    }
  }
  out.pilot_queries = oracle.queries() - before;
  out.pilot_heads = est.heads();
  if (est.heads() == 0) {
    // no estimate: the scaled design (non-adaptive), from the main stream
    Rng rng(opt.seed);
    out.draws = draw_scaled(rng, d, opt.H, opt.tokens);
    out.log2_kappa_predicted = out.log2_kappa_start = kInf;
    return out;
  }
  TunedDesign s = search_design(est, opt);
  s.pilot_queries = out.pilot_queries;
  s.pilot_status = out.pilot_status;
  s.pilot_heads = out.pilot_heads;
  s.pilot_acc_log2 = out.pilot_acc_log2;
  s.searched = true;
  return s;
}

template TunedDesign choose_tuned_design<Ball>(Oracle<Ball>&, const TunedOptions&);
template TunedDesign choose_tuned_design<Mpfr>(Oracle<Mpfr>&, const TunedOptions&);
template TunedDesign choose_tuned_design<double>(Oracle<double>&, const TunedOptions&);

}  // namespace mhaq
