// First-order sensitivity of the recovered parameters (proofs/11).
#include "mhaq/tools/sensitivity.hpp"

#include <arb.h>

#include <cmath>
#include <functional>
#include <limits>

#include "mhaq/base/error.hpp"
#include "mhaq/arith/field.hpp"

namespace mhaq {

namespace {

// Pair values and head scales at some precision, heads of base pairs labelled.
struct Values {
  std::vector<PairFit<Ball>> pair;  // one per plan pair
  std::vector<Ball> wnorm, vnorm;   // per head
  Ball f_first;                     // the answer to [b_1]
};

Ball fit_value(const PairFit<Ball>& fit, long k) {
  const Ball one(1L), kk(k);
  Ball v = fit.P;
  for (size_t h = 0; h < fit.r.size(); ++h) v += fit.c[h] / (one + fit.r[h] * kk);
  return v;
}

// M = d(P, r, c)/d(f_0..f_{K-1}) for one pair: G^{-1} for K = 2H+1 samples,
// the least-squares pseudo-inverse (G^T G)^{-1} G^T for K > 2H+1.
Mat<Ball> pair_inverse(const PairFit<Ball>& fit, int K) {
  const int H = static_cast<int>(fit.r.size()), n = 2 * H + 1;
  const Ball one(1L);
  Mat<Ball> G(K, n);
  for (int k = 0; k < K; ++k) {
    G(k, 0) = one;
    for (int h = 0; h < H; ++h) {
      const Ball inv = one / (one + fit.r[h] * Ball(static_cast<long>(k)));
      G(k, 1 + h) = -(fit.c[h] * Ball(static_cast<long>(k)) * inv * inv);
      G(k, 1 + H + h) = inv;
    }
  }
  Mat<Ball> A(n, n), R(n, K), M;
  if (K == n) {
    A = G;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) R(i, j) = Ball(i == j ? 1L : 0L);
  } else {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        Ball s(0L);
        for (int k = 0; k < K; ++k) s += G(k, i) * G(k, j);
        A(i, j) = s;
      }
      for (int k = 0; k < K; ++k) R(i, k) = G(k, i);
    }
  }
  Field<Ball>{}.solve(M, A, R);  // Error(unable) when not certified at this precision
  return M;
}

bool accurate(const Ball& x) { return arb_rel_accuracy_bits(x.raw()) >= 40 || arb_is_zero(x.raw()); }

// One attempt at the working precision; false when some row sum is not
// certified to 40 bits (the caller raises the precision).
bool compose_at(const Plan& plan, const Values& V, Sensitivity& S, bool chaining) {
  const int d = plan.d, H = plan.H, K = plan.samples;
  const long cols = static_cast<long>(plan.queries().size());
  QMat DinvT, Binv;
  if (!inverse(plan.Delta.transpose(), DinvT) || !inverse(plan.B, Binv)) throw_internal("sensitivity: B or Delta singular");
  std::vector<Mat<Ball>> M(static_cast<size_t>(d) * d);
  S.pair_cond = 0;
  for (size_t p = 0; p < M.size(); ++p) {
    M[p] = pair_inverse(V.pair[p], K);
    for (int i = 0; i < M[p].rows(); ++i) {
      Ball rs(0L);
      for (int k = 0; k < M[p].cols(); ++k) {
        Ball x = M[p](i, k);
        arb_abs(x.raw(), x.raw());
        rs += x;
      }
      S.pair_cond = std::max(S.pair_cond, arf_get_d(arb_midref(rs.raw()), ARF_RND_NEAR));
    }
  }
  // f(0) of base pairs at b_s, s > 0: f_first + sum_i lambda_i (P_(i,0) - f_first), Delta lambda = b_s - b_1.
  std::vector<std::vector<Ball>> lambda(d, std::vector<Ball>(d));
  const QVec b1 = plan.B.col(0);
  for (int s = 1; s < d; ++s) {
    const QVec l = matvec(DinvT.transpose(), plan.B.col(s) - b1);
    for (int i = 0; i < d; ++i) lambda[s][i] = Ball(l[i]);
  }
  std::vector<Ball> fabs(cols);
  fabs[0] = V.f_first;
  for (size_t p = 0; p < plan.pairs.size(); ++p)
    for (long k = 1; k < K; ++k) fabs[plan.query_index(static_cast<long>(p), k)] = fit_value(V.pair[p], k);
  for (auto& f : fabs) arb_abs(f.raw(), f.raw());

  S.d = d;
  S.H = H;
  S.columns = cols;
  S.bits = working_precision();
  S.J.assign(static_cast<size_t>(S.rows()) * cols, 0.0);
  S.scale.assign(S.rows(), 0.0);
  S.answer_abs.assign(cols, 0.0);
  for (long j = 0; j < cols; ++j) S.answer_abs[j] = arf_get_d(arb_midref(fabs[j].raw()), ARF_RND_NEAR);
  S.kappa = S.kappa_rel = S.kappa_rms = 0;
  // Only answer 0 and the base pairs' answers reach the parameters (link
  // pairs only order the heads), so J is zero in every other column.
  std::vector<long> live{0};
  for (size_t p = 0; p < static_cast<size_t>(d) * d; ++p)
    for (long k = 1; k < K; ++k) live.push_back(plan.query_index(static_cast<long>(p), k));
  std::vector<Ball> acc(cols);
  auto base = [&](int t, int s) { return static_cast<size_t>(s) * d + t; };
  auto add = [&](long col, const Ball& coef, const Ball& m) { arb_addmul(acc[col].raw(), coef.raw(), m.raw(), working_precision()); };
  // Adds coef * d(theta_row of base pair (t,s)) / d answers; returns coef * dtheta/df(0) (not yet distributed).
  auto add_pair = [&](int t, int s, int row, const Ball& coef, Ball& f0coef) {
    const size_t p = base(t, s);
    for (long k = 1; k < K; ++k) add(plan.query_index(static_cast<long>(p), k), coef, M[p](row, k));
    arb_addmul(f0coef.raw(), coef.raw(), M[p](row, 0).raw(), working_precision());
  };
  for (int h = 0; h < H; ++h) {
    for (int a = 0; a < d; ++a) {
      for (int b = 0; b <= d; ++b) {  // b < d: W_h(a, b); b == d: v_h(a)
        for (long j : live) arb_zero(acc[j].raw());
        std::vector<Ball> f0(d, Ball(0L));
        if (b < d) {
          // W_h = Delta^{-T} L_h B^{-1}, L_h(t,s) = log r_h(t,s)
          for (int t = 0; t < d; ++t)
            for (int s = 0; s < d; ++s) {
              const Rational q = DinvT(a, t) * Binv(s, b);
              if (q.is_zero()) continue;
              const Ball coef = Ball(q) / V.pair[base(t, s)].r[h];
              add_pair(t, s, 1 + h, coef, f0[s]);
            }
        } else {
          // v_h = -Delta^{-T} C_h, C_h(t) = c_h(t, 1)
          for (int t = 0; t < d; ++t)
            if (!DinvT(a, t).is_zero()) add_pair(t, 0, 1 + H + h, Ball(-DinvT(a, t)), f0[0]);
        }
        // chaining: f(0) at b_1 is answer 0; at b_s it is a combination of answer 0 and the limits P_(i,1)
        Ball c0 = f0[0];
        std::vector<Ball> pc(d, Ball(0L));
        for (int s = 1; s < d; ++s) {
          Ball rest(1L);
          for (int i = 0; i < d; ++i) {
            arb_addmul(pc[i].raw(), lambda[s][i].raw(), f0[s].raw(), working_precision());
            rest -= lambda[s][i];
          }
          arb_addmul(c0.raw(), rest.raw(), f0[s].raw(), working_precision());
        }
        for (int i = 0; i < d && chaining; ++i)
          if (!arb_is_zero(pc[i].raw())) add_pair(i, 0, 0, pc[i], c0);
        arb_add(acc[0].raw(), acc[0].raw(), c0.raw(), working_precision());

        const int row = b < d ? S.row_W(h, a, b) : S.row_v(h, a);
        Ball s1(0L), srel(0L), s2(0L);
        for (long j : live) {
          Ball x = acc[j];
          arb_abs(x.raw(), x.raw());
          s1 += x;
          const Ball y = x * fabs[j];
          srel += y;
          s2 += y * y;
          S.J[static_cast<size_t>(row) * cols + j] = arf_get_d(arb_midref(acc[j].raw()), ARF_RND_NEAR);
        }
        if (!accurate(s1) || !accurate(srel) || !accurate(s2)) return false;
        const Ball& sc = b < d ? V.wnorm[h] : V.vnorm[h];
        if (!arb_is_positive(sc.raw())) throw_degenerate("sensitivity: a head has a zero W or v (not canonical)");
        const double scale = arf_get_d(arb_midref(sc.raw()), ARF_RND_NEAR);
        S.scale[row] = scale;
        const double k1 = arf_get_d(arb_midref(s1.raw()), ARF_RND_NEAR) / scale;
        if (k1 > S.kappa) {
          S.kappa = k1;
          S.kappa_row = row;
        }
        S.kappa_rel = std::max(S.kappa_rel, arf_get_d(arb_midref(srel.raw()), ARF_RND_NEAR) / scale);
        S.kappa_rms = std::max(S.kappa_rms, std::sqrt(arf_get_d(arb_midref(s2.raw()), ARF_RND_NEAR)) / scale);
      }
    }
  }
  return true;
}

Sensitivity compose(const Plan& plan, const std::function<Values()>& values, bool chaining = true) {
  for (long prec = 128; prec <= (1L << 16); prec *= 2) {
    PrecisionScope scope(prec);
    try {
      const Values V = values();
      Sensitivity S;
      if (compose_at(plan, V, S, chaining)) return S;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unable) throw;
    }
  }
  throw_unable("sensitivity: row sums not certified below 2^16 bits");
}

Ball norm2(const std::vector<Ball>& xs) {
  Ball s(0L);
  for (const auto& x : xs) s += x * x;
  arb_sqrt(s.raw(), s.raw(), working_precision());
  return s;
}

Ball to_ball(const Mpfr& x) {
  Ball b;
  arf_set_mpfr(arb_midref(b.raw()), x.raw());
  return b;
}

}  // namespace

std::vector<signed char> Sensitivity::worst_signs() const {
  std::vector<signed char> s(columns);
  for (long j = 0; j < columns; ++j) s[j] = J[static_cast<size_t>(kappa_row) * columns + j] < 0 ? -1 : 1;
  return s;
}

Sensitivity sensitivity_from_model(const Model& canon, const Plan& plan, bool ignore_chaining) {
  if (canon.num_heads() != plan.H) throw Error(ErrorKind::usage, "sensitivity: the plan's H must equal the canonical head count");
  return compose(plan, [&] {
    Values V;
    const int d = canon.d;
    QVec v(d, Rational(0));
    for (const auto& h : canon.heads) v = v + h.v;
    for (const auto& pr : plan.pairs) {
      PairFit<Ball> f{Ball(dot(v, pr.final_token + pr.offset)), {}, {}};
      for (const auto& h : canon.heads) {
        Ball r(dot(pr.offset, matvec(h.W, pr.final_token)));
        arb_exp(r.raw(), r.raw(), working_precision());
        f.r.push_back(r);
        f.c.push_back(Ball(-dot(h.v, pr.offset)));
      }
      V.pair.push_back(std::move(f));
    }
    for (const auto& h : canon.heads) {
      std::vector<Ball> w, vv;
      for (int i = 0; i < d; ++i) {
        vv.emplace_back(h.v[i]);
        for (int j = 0; j < d; ++j) w.emplace_back(h.W(i, j));
      }
      V.wnorm.push_back(norm2(w));
      V.vnorm.push_back(norm2(vv));
    }
    V.f_first = Ball(dot(v, plan.B.col(0)));
    return V;
  }, !ignore_chaining);
}

Sensitivity sensitivity_from_fits(const LearnResult<Mpfr>& res) {
  const Plan& plan = res.plan;
  if (res.heads_found != plan.H) throw Error(ErrorKind::usage, "sensitivity: needs a run with the head count known");
  const int d = plan.d;
  return compose(plan, [&] {
    Values V;
    auto conv = [](const PairFit<Mpfr>& f) {
      PairFit<Ball> b{to_ball(f.P), {}, {}};
      for (size_t h = 0; h < f.r.size(); ++h) {
        b.r.push_back(to_ball(f.r[h]));
        b.c.push_back(to_ball(f.c[h]));
      }
      return b;
    };
    for (size_t p = 0; p < plan.pairs.size(); ++p)
      V.pair.push_back(conv(p < static_cast<size_t>(d) * d ? res.labelled[p] : res.fits[p]));
    for (const auto& h : res.heads) {
      std::vector<Ball> w, vv;
      for (int i = 0; i < d; ++i) {
        vv.push_back(to_ball(h.v[i]));
        for (int j = 0; j < d; ++j) w.push_back(to_ball(h.W(i, j)));
      }
      V.wnorm.push_back(norm2(w));
      V.vnorm.push_back(norm2(vv));
    }
    V.f_first = fit_value(V.pair[0], 0);
    return V;
  });
}

namespace {
// log2 of an upper bound of a nonnegative ball's magnitude (rounded up); -inf for 0.
double log2_upper(const Ball& x) {
  mag_t m;
  mag_init(m);
  arb_get_mag(m, x.raw());
  double out = -std::numeric_limits<double>::infinity();
  if (!mag_is_zero(m)) {
    Ball l;
    arf_set_mag(arb_midref(l.raw()), m);
    arb_log_base_ui(l.raw(), l.raw(), 2, 64);
    arb_get_ubound_arf(arb_midref(l.raw()), l.raw(), 64);
    out = arf_get_d(arb_midref(l.raw()), ARF_RND_UP);
  }
  mag_clear(m);
  return out;
}
double log2_mid(const Ball& x) {
  if (arf_is_zero(arb_midref(x.raw()))) return -std::numeric_limits<double>::infinity();
  Ball l;
  arf_abs(arb_midref(l.raw()), arb_midref(x.raw()));
  arb_log_base_ui(l.raw(), l.raw(), 2, 64);
  return arf_get_d(arb_midref(l.raw()), ARF_RND_NEAR);
}

template <class T>
Ball entry_ball(const T& x) {
  Ball b;
  if constexpr (std::is_same_v<T, Mpfr>) arf_set_mpfr(arb_midref(b.raw()), x.raw());
  else if constexpr (std::is_same_v<T, double>) arf_set_d(arb_midref(b.raw()), x);
  else arf_set(arb_midref(b.raw()), arb_midref(x.raw()));
  return b;
}

// Scaled entrywise distance (as a ball) between recovered head g and true head h.
template <class T, class Get>
Ball head_distance(const LearnedHead<T>& g, const HeadQ& h, int d, Get entry) {
  std::vector<Ball> w, v;
  for (int i = 0; i < d; ++i) {
    v.emplace_back(h.v[i]);
    for (int j = 0; j < d; ++j) w.emplace_back(h.W(i, j));
  }
  const Ball sw = norm2(w), sv = norm2(v);
  Ball worst(0L);
  for (int i = 0; i < d; ++i) {
    Ball e = entry(g.v[i]) - Ball(h.v[i]);
    arb_abs(e.raw(), e.raw());
    e /= sv;
    arb_max(worst.raw(), worst.raw(), e.raw(), working_precision());
    for (int j = 0; j < d; ++j) {
      Ball f = entry(g.W(i, j)) - Ball(h.W(i, j));
      arb_abs(f.raw(), f.raw());
      f /= sw;
      arb_max(worst.raw(), worst.raw(), f.raw(), working_precision());
    }
  }
  return worst;
}

long metric_precision() { return std::max(working_precision(), 53L) + 64; }
}  // namespace

template <class T>
double param_error_log2(const std::vector<LearnedHead<T>>& got, const Model& canon) {
  if (got.size() != canon.heads.size()) return std::numeric_limits<double>::infinity();
  PrecisionScope scope(metric_precision());
  const size_t H = got.size();
  // cost[h][g] as log2; best bijection by exhaustive search for small H, greedy otherwise
  std::vector<std::vector<double>> cost(H, std::vector<double>(H));
  for (size_t h = 0; h < H; ++h)
    for (size_t g = 0; g < H; ++g) cost[h][g] = log2_mid(head_distance(got[g], canon.heads[h], canon.d, [](const T& x) { return entry_ball(x); }));
  std::vector<int> perm(H);
  for (size_t i = 0; i < H; ++i) perm[i] = static_cast<int>(i);
  double best = std::numeric_limits<double>::infinity();
  if (H <= 8) {
    do {
      double w = -std::numeric_limits<double>::infinity();
      for (size_t h = 0; h < H; ++h) w = std::max(w, cost[h][perm[h]]);
      best = std::min(best, w);
    } while (std::next_permutation(perm.begin(), perm.end()));
  } else {
    std::vector<bool> used(H, false);
    best = -std::numeric_limits<double>::infinity();
    for (size_t h = 0; h < H; ++h) {
      size_t bg = H;
      for (size_t g = 0; g < H; ++g)
        if (!used[g] && (bg == H || cost[h][g] < cost[h][bg])) bg = g;
      used[bg] = true;
      best = std::max(best, cost[h][bg]);
    }
  }
  return best;  // log2 of the error
}

bool certified_param_error_log2(const std::vector<LearnedHead<Ball>>& got, const Model& canon, double& bound) {
  if (got.size() != canon.heads.size()) return false;
  PrecisionScope scope(metric_precision());
  const int d = canon.d;
  double worst = -std::numeric_limits<double>::infinity();
  std::vector<bool> used(got.size(), false);
  for (const auto& h : canon.heads) {
    size_t found = got.size();
    for (size_t g = 0; g < got.size() && found == got.size(); ++g) {
      if (used[g]) continue;
      bool in = true;
      for (int i = 0; i < d && in; ++i) {
        in = got[g].v[i].contains(h.v[i]);
        for (int j = 0; j < d && in; ++j) in = got[g].W(i, j).contains(h.W(i, j));
      }
      if (in) found = g;
    }
    if (found == got.size()) return false;
    used[found] = true;
    // sup over the ball of |x - theta| / s: the ball x - theta bounds it
    worst = std::max(worst, log2_upper(head_distance(got[found], h, d, [](const Ball& x) { return x; })));
  }
  bound = worst;
  return true;
}

double certified_relative_radius_log2(const std::vector<LearnedHead<Ball>>& got) {
  PrecisionScope scope(metric_precision());
  double worst = -std::numeric_limits<double>::infinity();
  for (const auto& g : got) {
    const int d = static_cast<int>(g.v.size());
    std::vector<Ball> w, v;
    for (int i = 0; i < d; ++i) {
      v.push_back(g.v[i]);
      for (int j = 0; j < d; ++j) w.push_back(g.W(i, j));
    }
    const Ball sw = norm2(w), sv = norm2(v);
    if (!arb_is_positive(sw.raw()) || !arb_is_positive(sv.raw())) return std::numeric_limits<double>::infinity();
    // rad / lower(scale), rounded up
    auto rel = [](const Ball& x, const Ball& s) {
      Ball r;
      arf_set_mag(arb_midref(r.raw()), arb_radref(x.raw()));
      Ball lo;
      arb_get_lbound_arf(arb_midref(lo.raw()), s.raw(), working_precision());
      arb_div(r.raw(), r.raw(), lo.raw(), working_precision());
      return log2_upper(r);
    };
    for (int i = 0; i < d; ++i) {
      worst = std::max(worst, rel(g.v[i], sv));
      for (int j = 0; j < d; ++j) worst = std::max(worst, rel(g.W(i, j), sw));
    }
  }
  return worst;  // log2
}

template double param_error_log2<Mpfr>(const std::vector<LearnedHead<Mpfr>>&, const Model&);
template double param_error_log2<double>(const std::vector<LearnedHead<double>>&, const Model&);
template double param_error_log2<Ball>(const std::vector<LearnedHead<Ball>>&, const Model&);

}  // namespace mhaq
