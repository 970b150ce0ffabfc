// The learner of ALGORITHM.md sections 3-5, written once for every Field<T>.
#include "mhaq/stages/learner.hpp"

#include "mhaq/base/parallel.hpp"
#include "mhaq/stages/1-oracle/model_oracle.hpp"  // evaluate_exact: the attention formula, for the self-check only

#include <algorithm>
#include <functional>
#include <limits>
#include <string>

namespace mhaq {

namespace {

Truth t_and(Truth a, Truth b) {
  if (a == Truth::no || b == Truth::no) return Truth::no;
  return a == Truth::yes && b == Truth::yes ? Truth::yes : Truth::unknown;
}
Truth t_or(Truth a, Truth b) {
  if (a == Truth::yes || b == Truth::yes) return Truth::yes;
  return a == Truth::no && b == Truth::no ? Truth::no : Truth::unknown;
}

template <class T>
Truth equal(const Field<T>& F, const T& a, const T& b) {
  return F.is_zero(a - b);
}

[[noreturn]] void rethrow_with(const Error& e, const std::string& where) { throw Error(e.kind(), where + ": " + e.what()); }

std::string pair_name(const PairSpec& p) {
  const char* k = p.kind == PairKind::base ? "base" : p.kind == PairKind::within ? "within-link" : "across-link";
  return std::string(k) + " pair (i=" + std::to_string(p.i + 1) + ", j=" + std::to_string(p.j + 1) + ")";
}

// A head permutation: perm[h] = index in the other pair.
using Perm = std::vector<int>;

// Rigorous assignment: the unique permutation whose every entry is not
// certainly incompatible. The true assignment always passes (the data come
// from a model), so uniqueness certifies it (proofs/03).
Perm assign_rigorous(int H, const std::function<Truth(int, int)>& compat, bool exact, const std::string& what) {
  std::vector<std::vector<Truth>> c(H, std::vector<Truth>(H));
  for (int h = 0; h < H; ++h)
    for (int g = 0; g < H; ++g) c[h][g] = compat(h, g);
  Perm cur(H, -1), found;
  std::vector<bool> used(H, false);
  int solutions = 0;
  bool unknown_used = false;
  std::function<void(int, bool)> rec = [&](int h, bool unk) {
    if (solutions >= 2) return;
    if (h == H) {
      if (++solutions == 1) found = cur;
      unknown_used = unknown_used || unk;
      return;
    }
    for (int g = 0; g < H; ++g)
      if (!used[g] && c[h][g] != Truth::no) {
        used[g] = true;
        cur[h] = g;
        rec(h + 1, unk || c[h][g] == Truth::unknown);
        used[g] = false;
      }
  };
  rec(0, false);
  if (solutions == 0) throw_inconsistent(what + ": no head assignment fits the link pair (the answers are not those of a model with this many heads)");
  if (solutions > 1) {
    if (exact || !unknown_used) throw_degenerate(what + ": ambiguous link, several head assignments fit exactly");
    throw_unable(what + ": cannot tell head assignments apart at this precision");
  }
  return found;
}

// Floating-point assignment (approx_): greedy on a log-scale mismatch cost,
// as a user's float implementation would do.
Perm assign_nearest(int H, const std::function<double(int, int)>& cost) {
  std::vector<std::tuple<double, int, int>> cand;
  for (int h = 0; h < H; ++h)
    for (int g = 0; g < H; ++g) cand.emplace_back(cost(h, g), h, g);
  std::sort(cand.begin(), cand.end());
  Perm perm(H, -1);
  std::vector<bool> used(H, false);
  for (const auto& [cst, h, g] : cand)
    if (perm[h] < 0 && !used[g]) { perm[h] = g; used[g] = true; }
  return perm;
}

template <class T>
double log2_dist(const Field<T>& F, const T& a, const T& b) {
  if constexpr (Field<T>::is_rigorous) {
    (void)F; (void)a; (void)b;
    return 0;
  } else {
    return F.log2_abs(a - b);
  }
}

template <class T>
PairFit<T> permuted(const PairFit<T>& f, const Perm& p) {
  PairFit<T> out{f.P, {}, {}};
  for (int g : p) { out.r.push_back(f.r[g]); out.c.push_back(f.c[g]); }
  return out;
}

// Heads of `cur` put in the order of `ref`, using link pair `link`:
// within links (poles multiply, residues add) or across links (poles
// multiply, residues equal).
template <class T>
Perm link_perm(const Field<T>& F, const PairFit<T>& ref, const PairFit<T>& cur, const PairFit<T>& link, bool within,
               const std::string& what) {
  const int H = static_cast<int>(ref.r.size());
  if constexpr (Field<T>::is_rigorous) {
    auto compat = [&](int h, int g) {
      const T prod = ref.r[h] * cur.r[g];
      const T sum = ref.c[h] + cur.c[g];
      Truth any = Truth::no;
      for (int l = 0; l < H; ++l) {
        Truth t = equal(F, link.r[l], prod);
        t = within ? t_and(t, equal(F, link.c[l], sum))
                   : t_and(t, t_and(equal(F, link.c[l], ref.c[h]), equal(F, cur.c[g], ref.c[h])));
        any = t_or(any, t);
      }
      return any;
    };
    return assign_rigorous(H, compat, Field<T>::is_exact, what);
  } else {
    std::vector<T> lr, lc, ll;
    for (int h = 0; h < H; ++h) { lr.push_back(F.log(ref.r[h])); lc.push_back(F.log(cur.r[h])); ll.push_back(F.log(link.r[h])); }
    auto cost = [&](int h, int g) {
      double best = std::numeric_limits<double>::infinity();
      const T want_res = within ? ref.c[h] + cur.c[g] : ref.c[h];
      for (int l = 0; l < H; ++l) {
        const double e = std::max(log2_dist(F, ll[l], lr[h] + lc[g]), log2_dist(F, link.c[l], want_res));
        best = std::min(best, within ? e : std::max(e, log2_dist(F, cur.c[g], ref.c[h])));
      }
      return best;
    };
    return assign_nearest(H, cost);
  }
}

// Lean schedule: label by residues alone, c_h(i,j) = c_h(i,1).
template <class T>
Perm residue_perm(const Field<T>& F, const PairFit<T>& ref, const PairFit<T>& cur, const std::string& what) {
  const int H = static_cast<int>(ref.r.size());
  if constexpr (Field<T>::is_rigorous) {
    return assign_rigorous(H, [&](int h, int g) { return equal(F, cur.c[g], ref.c[h]); }, Field<T>::is_exact, what);
  } else {
    return assign_nearest(H, [&](int h, int g) { return log2_dist(F, cur.c[g], ref.c[h]); });
  }
}

}  // namespace

template <class T>
PairFit<T> interpolate_linear(const Field<T>& F, const std::vector<T>& f, int H);

template <class T>
std::vector<int> link_permutation(const Field<T>& F, const PairFit<T>& ref, const PairFit<T>& cur, const PairFit<T>& link,
                                  bool within, const std::string& what) {
  return link_perm(F, ref, cur, link, within, what);
}

// approx_: Gauss-Newton steps on P + sum c_h/(1 + r_h k) = f(k), k = 0..K-1,
// for floats. With K = 2H+1 samples these are Newton steps on the pair's own
// equations: the linear route through the coefficients of N and Q is worse
// conditioned than the map from samples to (P, r, c), and two steps bring the
// fit to that map's accuracy. With K > 2H+1 (oversampling) they minimise the
// sum of squared residuals (solve_ls).
// Least-squares solve of the K x n system A x = b (K >= n): plain solve when
// square, else the augmented system [I A; A^T 0] [s; x] = [b; 0], whose
// conditioning is that of A, not of A^T A. approx_ (floats).
template <class T>
void solve_ls(const Field<T>& F, Mat<T>& x, const Mat<T>& A, const Mat<T>& b) {
  const int K = A.rows(), n = A.cols();
  if (K == n) return F.solve(x, A, b);
  const T one = F.from(Rational(1)), zero = F.from(Rational(0));
  Mat<T> M(K + n, K + n), rhs(K + n, 1), y;
  for (int i = 0; i < K + n; ++i) {
    for (int j = 0; j < K + n; ++j) M(i, j) = zero;
    rhs(i, 0) = i < K ? b(i, 0) : zero;
  }
  for (int k = 0; k < K; ++k) {
    M(k, k) = one;
    for (int j = 0; j < n; ++j) M(k, K + j) = M(K + j, k) = A(k, j);
  }
  F.solve(y, M, rhs);
  x = Mat<T>(n, 1);
  for (int j = 0; j < n; ++j) x(j, 0) = y(K + j, 0);
}

template <class T>
T residual_ss(const Field<T>& F, const std::vector<T>& f, const PairFit<T>& fit) {
  const T one = F.from(Rational(1));
  T ss = F.from(Rational(0));
  for (size_t k = 0; k < f.size(); ++k) {
    T v = fit.P - f[k];
    for (size_t h = 0; h < fit.r.size(); ++h) v = v + fit.c[h] / (one + fit.r[h] * F.from(Rational(static_cast<long>(k))));
    ss = ss + v * v;
  }
  return ss;
}

template <class T>
void polish_pair(const Field<T>& F, const std::vector<T>& f, PairFit<T>& fit, int steps) {
  const int H = static_cast<int>(fit.r.size()), n = 2 * H + 1, K = static_cast<int>(f.size());
  const T one = F.from(Rational(1));
  for (int it = 0; it < steps; ++it) {
    Mat<T> J(K, n), g(K, 1), dx;
    for (int k = 0; k < K; ++k) {
      const T kk = F.from(Rational(k));
      T s = fit.P - f[k];
      J(k, 0) = one;
      for (int h = 0; h < H; ++h) {
        const T inv = one / (one + fit.r[h] * kk);
        s = s + fit.c[h] * inv;
        J(k, 1 + h) = -(fit.c[h] * kk * inv * inv);
        J(k, 1 + H + h) = inv;
      }
      g(k, 0) = s;
    }
    try {
      solve_ls(F, dx, J, g);
    } catch (const Error&) {
      return;
    }
    // Damped: a step is taken, halved up to 8 times, only if it lowers the
    // sum of squared residuals and keeps every pole positive.
    const T before = residual_ss(F, f, fit);
    T scale = one;
    bool taken = false;
    for (int half = 0; half < 8 && !taken; ++half) {
      PairFit<T> trial = fit;
      trial.P = fit.P - scale * dx(0, 0);
      bool pos = true;
      for (int h = 0; h < H; ++h) {
        trial.r[h] = fit.r[h] - scale * dx(1 + h, 0);
        trial.c[h] = fit.c[h] - scale * dx(1 + H + h, 0);
        pos = pos && F.is_positive(trial.r[h]) == Truth::yes;
      }
      if (pos && F.is_positive(before - residual_ss(F, f, trial)) != Truth::no) {
        fit = std::move(trial);
        taken = true;
      }
      scale = scale / F.from(Rational(2));
    }
    if (!taken) return;
  }
}

// Values of a fit at k (generic).
template <class T>
T fit_value(const Field<T>& F, const PairFit<T>& fit, long k) {
  const T kk = F.from(Rational(k)), one = F.from(Rational(1));
  T v = fit.P;
  for (size_t h = 0; h < fit.r.size(); ++h) v = v + fit.c[h] / (one + fit.r[h] * kk);
  return v;
}

// Oversampling (K > 2H+1 values): exact and ball fits use the first 2H+1
// values and must agree with the rest (exact: equality; balls: overlap, the
// only certain statement); floats fit all K values by least squares (the
// linearised system, then damped Gauss-Newton on the pair's own equations).
template <class T>
PairFit<T> fit_oversampled(const Field<T>& F, const std::vector<T>& f, int H) {
  const size_t n = 2 * static_cast<size_t>(H) + 1;
  if constexpr (Field<T>::is_rigorous) {
    PairFit<T> fit = interpolate_pair(F, std::vector<T>(f.begin(), f.begin() + n), H);
    for (size_t k = n; k < f.size(); ++k) {
      const T e = fit_value(F, fit, static_cast<long>(k)) - f[k];
      if (F.is_zero(e) == Truth::no)
        throw_inconsistent("value k = " + std::to_string(k) + " disagrees with the type-(" + std::to_string(H) + "," + std::to_string(H) +
                           ") fit of the first " + std::to_string(n) + " values");
    }
    return fit;
  } else {
    if (f.size() == n) return interpolate_pair(F, f, H);
    PairFit<T> fit = interpolate_linear(F, f, H);
    polish_pair(F, f, fit, 3);
    return fit;
  }
}

template <class T>
PairFit<T> interpolate_pair(const Field<T>& F, const std::vector<T>& f, int H) {
  if constexpr (std::is_same_v<T, Ball>) {
    // Filter, then certify: fit the midpoints (tight, but not yet a proof for
    // the sample balls), then certify with a Krawczyk test against the actual
    // balls. If that fails, the plain ball pipeline below is still rigorous.
    // The approximate fit runs in MPFR at the working precision (approx_).
    try {
      std::vector<Mpfr> mid(f.size());
      for (size_t k = 0; k < f.size(); ++k) arf_get_mpfr(mid[k].raw(), arb_midref(f[k].raw()), MPFR_RNDN);
      const PairFit<Mpfr> am = interpolate_linear(Field<Mpfr>{}, mid, H);
      auto to_ball = [](const Mpfr& x) {
        Ball b;
        arb_set_interval_mpfr(b.raw(), x.raw(), x.raw(), working_precision());
        return b;
      };
      PairFit<Ball> approx{to_ball(am.P), {}, {}};
      for (size_t h = 0; h < am.r.size(); ++h) {
        approx.r.push_back(to_ball(am.r[h]));
        approx.c.push_back(to_ball(am.c[h]));
      }
      if (F.certify_pair(f, approx.P, approx.r, approx.c)) return approx;
    } catch (const Error&) {
      // no usable approximation: fall through to the plain ball pipeline
    }
  }
  PairFit<T> fit = interpolate_linear(F, f, H);
  // Double needs it (errors drop by up to 50x on hard draws); at MPFR
  // precisions the gain is marginal and it would double the pair cost.
  if constexpr (Field<T>::tag == Arith::ieee) polish_pair(F, f, fit, 2);
  return fit;
}

template <class T>
PairFit<T> interpolate_linear(const Field<T>& F, const std::vector<T>& f, int H) {
  const int n = 2 * H + 1, K = static_cast<int>(f.size());
  if (K < n || (K > n && Field<T>::is_rigorous)) throw_internal("interpolate_pair: need 2H+1 values (more only for floats)");
  // N(k) - f(k) (Q(k) - 1) = f(k), unknowns n_0..n_H, q_1..q_H (q_0 = 1);
  // with K > 2H+1 values (floats), solved in the least-squares sense.
  Mat<T> A(K, n), rhs(K, 1), x;
  for (int k = 0; k < K; ++k) {
    Rational km(1);
    for (int m = 0; m <= H; ++m) {
      A(k, m) = F.from(km);
      if (m >= 1) A(k, H + m) = -(f[k] * F.from(km));
      km *= Rational(k);
    }
    rhs(k, 0) = f[k];
  }
  if constexpr (Field<T>::is_rigorous) F.solve(x, A, rhs);
  else solve_ls(F, x, A, rhs);
  std::vector<T> N, Q{F.from(Rational(1))};
  for (int m = 0; m <= H; ++m) N.push_back(x(m, 0));
  for (int m = 1; m <= H; ++m) Q.push_back(x(H + m, 0));
  const std::vector<T> dQ = poly_derivative(F, Q);
  PairFit<T> out;
  out.P = N[H] / Q[H];
  for (const T& rho : F.real_roots(Q)) {
    const T r = F.from(Rational(-1)) / rho;
    out.r.push_back(r);
    out.c.push_back(r * poly_eval(N, rho) / poly_eval(dQ, rho));
  }
  return out;
}

template <class T>
PairFit<T> interpolate_pair_minimal(const Field<T>& F, const std::vector<T>& f, int H0, double threshold_log2) {
  // m = 0 is the constant P = f(0): a pair where every head is invisible
  // (zero residues); the caller reports it as a degenerate draw.
  for (int m = 0; m <= H0; ++m) {
    PairFit<T> fit{f[0], {}, {}};
    try {
      if (m > 0) fit = interpolate_pair(F, std::vector<T>(f.begin(), f.begin() + 2 * m + 1), m);
    } catch (const Error& e) {
      // A singular or inconsistent type-(m,m) fit means m is too small. With
      // floats and balls an undecidable fit at m below the true type is also
      // just "not this m"; the certification burden sits on the agreement test.
      if (e.kind() == ErrorKind::degenerate || e.kind() == ErrorKind::inconsistent) continue;
      if (e.kind() == ErrorKind::unable && m < H0) continue;
      throw;
    }
    Truth agree = Truth::yes;
    for (int k = 2 * m + 1; k < static_cast<int>(f.size()) && agree != Truth::no; ++k) {
      const T pred = fit_value(F, fit, k);
      Truth t;
      if constexpr (Field<T>::is_rigorous) {
        t = equal(F, pred, f[k]);
      } else {
        const double scale = std::max(0.0, F.log2_abs(f[k]));
        t = F.log2_abs(pred - f[k]) <= threshold_log2 + scale ? Truth::yes : Truth::no;
      }
      agree = t_and(agree, t);
    }
    if (agree == Truth::yes) return fit;
    if (agree == Truth::unknown)
      throw_unable("cannot certify that a type-(" + std::to_string(m) + "," + std::to_string(m) + ") function fits all " +
                   std::to_string(f.size()) + " values at " + std::to_string(working_precision()) +
                   " bits (an exact zero is never certified by balls; use --arith exact)");
  }
  throw_inconsistent("no type-(m,m) function with m <= " + std::to_string(H0) + " fits the " + std::to_string(f.size()) + " values");
}

Plan learner_plan(int d, const LearnOptions& opt, int* redraws) {
  Rng rng(opt.seed);
  const Draws dr = draw_tokens(rng, d, opt.tokens);
  if (redraws) *redraws = dr.redraws;
  return make_plan(opt.schedule, dr.B, dr.Delta, opt.H, opt.samples_per_pair);
}

template <class T>
LearnResult<T> learn(Oracle<T>& oracle, const LearnOptions& opt) {
  const Field<T>& F = oracle.field();
  const int d = oracle.dim(), H = opt.H;
  if (H < 1) throw Error(ErrorKind::usage, "head count must be at least 1");
  LearnResult<T> res;
  res.plan = learner_plan(d, opt, &res.redraws);
  const Plan& plan = res.plan;
  const std::vector<Query> qs = plan.queries();
  std::vector<T> ans;
  ans.reserve(qs.size());
  for (const auto& q : qs) ans.push_back(oracle.query(q));

  QMat DeltaInvT, BInv;
  if (!inverse(plan.Delta.transpose(), DeltaInvT) || !inverse(plan.B, BInv)) throw_internal("B or Delta singular after draw check");

  const size_t per_pair = static_cast<size_t>(plan.samples) - 1;
  std::vector<PairFit<T>>& fits = res.fits;
  fits.resize(plan.pairs.size());
  if constexpr (!Field<T>::is_rigorous) {
    // floating-point judgement for claim 3: agreement within 2^(-bits/3), relative
    res.fit_threshold_log2 = -static_cast<double>(Field<T>::tag == Arith::ieee ? 53 : working_precision()) / 3.0;
  }
  auto fit = [&](size_t p, const T& f0) {
    std::vector<T> f{f0};
    for (size_t k = 0; k < per_pair; ++k) f.push_back(ans[1 + p * per_pair + k]);
    try {
      if (opt.heads_is_bound) {
        fits[p] = interpolate_pair_minimal(F, f, H, res.fit_threshold_log2);
        if constexpr (!Field<T>::is_rigorous)
          if (f.size() > 2 * fits[p].r.size() + 1) polish_pair(F, f, fits[p], 3);
      } else {
        fits[p] = fit_oversampled(F, f, H);
      }
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::inconsistent && !opt.heads_is_bound)
        rethrow_with(Error(e.kind(), std::string(e.what()) + "; the values fit no exact " + std::to_string(H) +
                                         "-head model (is H below the true head count, or are the answers approximate?)"),
                     pair_name(plan.pairs[p]));
      rethrow_with(e, pair_name(plan.pairs[p]));
    }
  };
  // Chaining (proofs/04): v^T delta_i from the limits of the pairs (i, 1),
  // then v^T b for any b from Delta lambda = b - b_1, lambda exact in Q.
  const T& fb1 = ans[0];
  parallel_for(0, static_cast<size_t>(d), opt.threads, [&](size_t i) { fit(i, fb1); });
  std::vector<T> vdelta;
  for (int i = 0; i < d; ++i) vdelta.push_back(fits[i].P - fb1);
  const QVec b1 = plan.B.col(0);
  auto f0_of = [&](const QVec& b) {
    const QVec lambda = matvec(DeltaInvT.transpose(), b - b1);
    T s = fb1;
    for (int i = 0; i < d; ++i)
      if (!lambda[i].is_zero()) s = s + F.from(lambda[i]) * vdelta[i];
    return s;
  };
  parallel_for(static_cast<size_t>(d), plan.pairs.size(), opt.threads, [&](size_t p) { fit(p, f0_of(plan.pairs[p].final_token)); });
  // With only a bound H0, every pair must show the same minimal type m (the
  // canonical head count); a pair showing fewer has colliding poles or a zero
  // residue at this draw.
  size_t Hf = fits[0].r.size();
  for (const auto& ft : fits) Hf = std::max(Hf, ft.r.size());
  for (size_t p = 0; p < fits.size(); ++p)
    if (fits[p].r.size() != Hf)
      throw_degenerate(pair_name(plan.pairs[p]) + ": shows " + std::to_string(fits[p].r.size()) + " heads where other pairs show " +
                       std::to_string(Hf) + " (colliding poles or a zero residue at this draw)");
  if (Hf == 0) throw_degenerate("no pair shows any head: every answer is the same constant");
  res.heads_found = static_cast<int>(Hf);

  // Label heads consistently across all base pairs.
  auto base = [&](int i, int j) -> const PairFit<T>& { return fits[static_cast<size_t>(j) * d + i]; };
  const size_t within0 = static_cast<size_t>(d) * d;
  std::vector<std::vector<PairFit<T>>> lab(d, std::vector<PairFit<T>>(d));
  const int within_tokens = opt.schedule == Schedule::paper ? d : 1;
  for (int j = 0; j < within_tokens; ++j) {
    lab[0][j] = base(0, j);
    for (int i = 1; i < d; ++i) {
      const size_t li = within0 + static_cast<size_t>(j) * (d - 1) + (i - 1);
      lab[i][j] = permuted(base(i, j), link_perm(F, lab[0][j], base(i, j), fits[li], true, pair_name(plan.pairs[li])));
    }
  }
  if (opt.schedule == Schedule::paper) {
    const size_t across0 = within0 + static_cast<size_t>(d) * (d - 1);
    for (int j = 1; j < d; ++j) {
      const size_t li = across0 + (j - 1);
      const Perm p = link_perm(F, lab[0][0], lab[0][j], fits[li], false, pair_name(plan.pairs[li]));
      for (int i = 0; i < d; ++i) lab[i][j] = permuted(lab[i][j], p);
    }
  } else {
    for (int j = 1; j < d; ++j)
      for (int i = 0; i < d; ++i)
        lab[i][j] = permuted(base(i, j), residue_perm(F, lab[i][0], base(i, j), "lean labelling at (i=" + std::to_string(i + 1) +
                                                                                  ", j=" + std::to_string(j + 1) + ")"));
  }

  res.labelled.resize(static_cast<size_t>(d) * d);
  for (int j = 0; j < d; ++j)
    for (int i = 0; i < d; ++i) res.labelled[static_cast<size_t>(j) * d + i] = lab[i][j];

  // Final solves (proofs/03): W_h = Delta^{-T} L_h B^{-1}, v_h = -Delta^{-T} C_h,
  // with the inverses exact in Q and applied in T.
  for (int h = 0; h < res.heads_found; ++h) {
    Mat<T> Lh(d, d);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) Lh(i, j) = F.log(lab[i][j].r[h]);
    LearnedHead<T> head{Mat<T>(d, d), {}};
    Mat<T> M(d, d);  // Delta^{-T} L_h
    for (int i = 0; i < d; ++i) {
      T vi = F.from(Rational(0));
      for (int t = 0; t < d; ++t) vi = vi - F.from(DeltaInvT(i, t)) * lab[t][0].c[h];
      head.v.push_back(vi);
      for (int j = 0; j < d; ++j) {
        T s = F.from(Rational(0));
        for (int t = 0; t < d; ++t) s = s + F.from(DeltaInvT(i, t)) * Lh(t, j);
        M(i, j) = s;
      }
    }
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) {
        T s = F.from(Rational(0));
        for (int t = 0; t < d; ++t) s = s + M(i, t) * F.from(BInv(t, j));
        head.W(i, j) = s;
      }
    res.heads.push_back(std::move(head));
  }
  if constexpr (Field<T>::is_exact) {
    // Self-check at no query cost: the recovered heads must reproduce every
    // answer exactly. It catches a wrong --heads (too small), which no single
    // pair can reveal from its 2H+1 values.
    Model rec;
    rec.d = d;
    for (const auto& h : res.heads) {
      HeadQ hq{QMat(d, d), QVec(d)};
      for (int i = 0; i < d; ++i) {
        if (!h.v[i].is_rational(hq.v[i])) throw_inconsistent("recovered v is not rational");
        for (int j = 0; j < d; ++j)
          if (!h.W(i, j).is_rational(hq.W(i, j))) throw_inconsistent("recovered W is not rational");
      }
      rec.heads.push_back(std::move(hq));
    }
    std::vector<char> same(qs.size(), 0);
    parallel_for(0, qs.size(), opt.threads, [&](size_t q) { same[q] = evaluate_exact(rec, qs[q], F.L) == ans[q]; });
    for (size_t q = 0; q < qs.size(); ++q)
      if (!same[q])
        throw_inconsistent("recovered heads do not reproduce answer " + std::to_string(q + 1) + " of " + std::to_string(qs.size()) +
                           ": the answers are not those of a model with " + std::to_string(res.heads_found) + " heads");
    res.self_checked = true;
  }
  return res;
}

#define MHAQ_INSTANTIATE(T)                                                            \
  template PairFit<T> interpolate_pair<T>(const Field<T>&, const std::vector<T>&, int); \
  template LearnResult<T> learn<T>(Oracle<T>&, const LearnOptions&);                     \
  template PairFit<T> interpolate_pair_minimal<T>(const Field<T>&, const std::vector<T>&, int, double); \
  template std::vector<int> link_permutation<T>(const Field<T>&, const PairFit<T>&, const PairFit<T>&, const PairFit<T>&, bool, \
                                                const std::string&);
MHAQ_INSTANTIATE(QTau)
MHAQ_INSTANTIATE(Ball)
MHAQ_INSTANTIATE(Mpfr)
MHAQ_INSTANTIATE(double)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
