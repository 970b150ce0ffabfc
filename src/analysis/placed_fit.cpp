// The placed design's weighted pair fit on the grid of ratios
// (docs/math/designs.md#placed), and the small double algebra of the design.
#include "placed_internal.hpp"

namespace mhaq::placed_detail {

// The inverse of a square double matrix (rows of the result), empty when
// singular.
DMat dinverse(const DMat& A) {
  const int n = static_cast<int>(A.size());
  DMat inv(n, std::vector<double>(n));
  for (int c = 0; c < n; ++c) {
    std::vector<double> e(n, 0.0);
    e[c] = 1;
    if (!solve_dense(A, e)) return {};
    for (int r = 0; r < n; ++r) inv[r][c] = e[r];
  }
  return inv;
}

Mpfr md(double x) {
  Mpfr m;
  mpfr_set_d(m.raw(), x, MPFR_RNDN);
  return m;
}

double uniform(Rng& rng) { return static_cast<double>(rng.uniform_int(-(1L << 20), 1L << 20)) / static_cast<double>(1L << 20); }

// |A| |A^{-1}| in the max-row-sum norm, log2 (+inf when singular).
double log2_cond(const DMat& A) {
  const DMat inv = dinverse(A);
  if (inv.empty()) return INFINITY;
  auto norm = [](const DMat& M) {
    double m = 0;
    for (const auto& row : M) {
      double s = 0;
      for (double x : row) s += std::fabs(x);
      m = std::max(m, s);
    }
    return m;
  };
  return std::log2(norm(A) * norm(inv));
}

// The Euclidean norm of a rational vector, to 20 bits.
Rational norm_of(const QVec& x) {
  Rational s(0);
  for (const Rational& t : x) s += t * t;
  return (s * Rational(1L << 40)).isqrt_floor() / Rational(1L << 20);
}

QVec on_grid(const std::vector<double>& x, long den) {
  QVec q;
  for (double t : x) q.push_back(Rational(std::llround(t * static_cast<double>(den)), static_cast<unsigned long>(den)));
  return q;
}

bool within_entry(const QVec& b, const QVec& delta, const std::optional<Rational>& max_entry) {
  if (!max_entry) return true;
  for (size_t r = 0; r < b.size(); ++r) {
    const Rational a = b[r] + delta[r];
    if (*max_entry < (a.sign() < 0 ? -a : a)) return false;
  }
  return true;
}

QVec offset_within(const QVec& b, const QVec& delta, const std::optional<Rational>& max_entry, long den, int* k_out) {
  if (k_out) *k_out = 0;
  if (within_entry(b, delta, max_entry)) return delta;
  const Rational g(den);
  for (int k = 1; k <= 62; ++k) {
    const Rational s(1, 1UL << k);
    QVec x;
    bool zero = true;
    for (const Rational& t : delta) {
      const Rational y = t * s * g;  // toward zero on the grid: |b + x| stays within
      x.push_back((y.sign() < 0 ? -((-y).floor()) : y.floor()) / g);
      zero = zero && x.back().is_zero();
    }
    if (zero) break;
    if (within_entry(b, x, max_entry)) {
      if (k_out) *k_out = k;
      return x;
    }
  }
  throw_unable("placed design: an offset vanishes on the tokens' grid before its token comes within the oracle's max_entry " + max_entry->str());
}

std::vector<double> to_doubles(const QVec& q) {
  std::vector<double> x;
  for (const Rational& t : q) x.push_back(t.approx_double());
  return x;
}

Estimate estimate_of(const std::vector<LearnedHead<Mpfr>>& heads, int d) {
  Estimate est;
  est.d = d;
  for (const auto& hd : heads) {
    DMat W(d, std::vector<double>(d));
    std::vector<double> v(d);
    for (int r = 0; r < d; ++r) {
      v[r] = hd.v[r].to_double();
      for (int c = 0; c < d; ++c) W[r][c] = hd.W(r, c).to_double();
    }
    est.W.push_back(W);
    est.v.push_back(v);
    if (!hd.c.empty()) {
      std::vector<double> c(d);
      for (int r = 0; r < d; ++r) c[r] = hd.c[r].to_double();
      est.c.push_back(c);
    }
  }
  return est;
}

std::vector<double> column_of(const Estimate& est, int h, const std::vector<double>& b) {
  const int d = est.d;
  std::vector<double> x(d, 0.0);
  for (int r = 0; r < d; ++r)
    for (int c = 0; c < d; ++c) x[r] += est.W[h][r][c] * b[c];
  if (!est.c.empty())
    for (int r = 0; r < d; ++r) x[r] += est.c[h][r];
  return x;
}

QMat finals_matrix(const QMat& B) {
  const int d = B.rows(), n = B.cols();
  if (n == d) return B;
  QMat A(n, n);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) A(r, c) = r < d ? B(r, c) : Rational(1);
  return A;
}

DMat finals_inverse(const QMat& B) {
  const QMat A = finals_matrix(B);
  DMat Ad(A.rows(), std::vector<double>(A.cols()));
  for (int r = 0; r < A.rows(); ++r)
    for (int c = 0; c < A.cols(); ++c) Ad[r][c] = A(r, c).approx_double();
  return dinverse(Ad);
}

Mat<Mpfr> finals_inverse(const Field<Mpfr>& F, const QMat& B) {
  const QMat A = finals_matrix(B);
  const int n = A.rows();
  Mat<Mpfr> Binv, Bm(n, n), I(n, n);
  for (int r = 0; r < n; ++r) {
    I(r, r) = Mpfr(1L);
    for (int c = 0; c < n; ++c) Bm(r, c) = F.from(A(r, c));
  }
  if (F.solve(Binv, Bm, I) != Truth::yes) throw_internal("placed design: B singular after the draw check");
  return Binv;
}

PairObs observe(const std::vector<double>& delta, int j, const GridFit& g) {
  PairObs o{delta, j, g.max_resid, {}, {}, {}, {}};
  for (size_t q = 0; q < g.c.size(); ++q) {
    o.c.push_back(g.c[q].to_double());
    o.l.push_back(g.l[q].to_double());
    o.ec.push_back(q < g.err_c.size() ? g.err_c[q] : INFINITY);
    o.el.push_back(q < g.err_l.size() ? g.err_l[q] : INFINITY);
  }
  return o;
}

namespace {

// One pair's weighted least-squares problem on the grid: x = (P, c_1..c_H,
// l_1..l_H) with r_h = exp(l_h), residuals (f(t) - P - sum c_h/(1 + r_h t)) w(t).
struct GridProblem {
  const Field<Mpfr>& F;
  const std::vector<Mpfr>& K;
  const std::vector<Mpfr>& f;
  std::vector<Mpfr> w;
  int H, n, m;

  GridProblem(const Field<Mpfr>& F_, const std::vector<Mpfr>& K_, const std::vector<Mpfr>& f_, int H_, long p, double abs)
      : F(F_), K(K_), f(f_), H(H_), n(static_cast<int>(K_.size())), m(2 * H_ + 1) {
    for (int k = 0; k < n; ++k) {
      // one stated error of this answer: 2^-p |f| + abs
      Mpfr u = F.abs(f[k]);
      if (F.is_zero(u) == Truth::yes && abs == 0) u = Mpfr(Rational(1, 1UL << 60));
      mpfr_mul_2si(u.raw(), u.raw(), -p, MPFR_RNDN);
      if (abs > 0) u += md(abs);
      w.push_back(Mpfr(1L) / u);
    }
  }
  std::vector<Mpfr> poles(const std::vector<Mpfr>& x) const {
    std::vector<Mpfr> r;
    for (int h = 0; h < H; ++h) r.push_back(F.exp(x[1 + H + h]));
    return r;
  }
  // weighted residuals and the denominators 1 + r_h t; returns the squared sum
  Mpfr residuals(const std::vector<Mpfr>& x, std::vector<Mpfr>& res, std::vector<Mpfr>& den) const {
    const std::vector<Mpfr> r = poles(x);
    Mpfr cost(0L);
    res.assign(n, Mpfr(0L));
    den.assign(static_cast<size_t>(n) * H, Mpfr(0L));
    for (int k = 0; k < n; ++k) {
      Mpfr v = x[0];
      for (int h = 0; h < H; ++h) {
        den[static_cast<size_t>(k) * H + h] = Mpfr(1L) + r[h] * K[k];
        v += x[1 + h] / den[static_cast<size_t>(k) * H + h];
      }
      res[k] = (f[k] - v) * w[k];
      cost += res[k] * res[k];
    }
    return cost;
  }
  Mat<Mpfr> jacobian(const std::vector<Mpfr>& x, const std::vector<Mpfr>& den) const {
    Mat<Mpfr> J(n, m);
    const std::vector<Mpfr> r = poles(x);
    for (int k = 0; k < n; ++k) {
      J(k, 0) = w[k];
      for (int h = 0; h < H; ++h) {
        const Mpfr& dd = den[static_cast<size_t>(k) * H + h];
        J(k, 1 + h) = w[k] / dd;
        J(k, 1 + H + h) = -(w[k] * x[1 + h] * r[h] * K[k]) / (dd * dd);
      }
    }
    return J;
  }
  // the start: poles at l0, then P and c by linear least squares (the limit
  // alone when those poles cannot be told apart)
  std::vector<Mpfr> start(const std::vector<double>& l0) const {
    std::vector<Mpfr> x(m);
    for (int h = 0; h < H; ++h) x[1 + H + h] = md(l0[h]);
    const std::vector<Mpfr> r = poles(x);
    Mat<Mpfr> A(H + 1, H + 1), rhs(H + 1, 1), y;
    for (int k = 0; k < n; ++k) {
      std::vector<Mpfr> row{w[k]};
      for (int h = 0; h < H; ++h) row.push_back(w[k] / (Mpfr(1L) + r[h] * K[k]));
      for (int a = 0; a <= H; ++a) {
        rhs(a, 0) += row[a] * f[k] * w[k];
        for (int b = 0; b <= H; ++b) A(a, b) += row[a] * row[b];
      }
    }
    if (F.solve(y, A, rhs) == Truth::yes) {
      for (int a = 0; a <= H; ++a) x[a] = y(a, 0);
    } else {
      x[0] = f.back();
      for (int a = 1; a <= H; ++a) x[a] = Mpfr(0L);
    }
    return x;
  }
  // one Levenberg-Marquardt step from x (cost, res, den updated); false when no step lowers the cost
  bool step(std::vector<Mpfr>& x, Mpfr& cost, std::vector<Mpfr>& res, std::vector<Mpfr>& den, double& lambda) const {
    const Mat<Mpfr> J = jacobian(x, den);
    Mat<Mpfr> JtJ(m, m), Jtr(m, 1);
    for (int k = 0; k < n; ++k)
      for (int a = 0; a < m; ++a) {
        Jtr(a, 0) += J(k, a) * res[k];
        for (int b = a; b < m; ++b) JtJ(a, b) += J(k, a) * J(k, b);
      }
    for (int a = 0; a < m; ++a)
      for (int b = 0; b < a; ++b) JtJ(a, b) = JtJ(b, a);
    for (int tries = 0; tries < 30; ++tries) {
      Mat<Mpfr> A = JtJ, dx;
      for (int a = 0; a < m; ++a) A(a, a) += JtJ(a, a) * md(lambda);
      if (F.solve(dx, A, Jtr) != Truth::yes) return false;
      std::vector<Mpfr> xn = x, rn, dn;
      for (int a = 0; a < m; ++a) xn[a] += dx(a, 0);
      const Mpfr cn = residuals(xn, rn, dn);
      if (F.is_positive(cost - cn) == Truth::yes || (cn - cost).to_double() <= 0) {
        const double gain = (cost - cn).to_double() / std::max(cost.to_double(), 1e-300);
        x = std::move(xn);
        res = std::move(rn);
        den = std::move(dn);
        cost = cn;
        lambda = std::max(lambda / 10, 1e-12);
        return gain > 1e-30;
      }
      lambda *= 10;
    }
    return false;
  }
  // first-order sensitivities G = (J^T J)^{-1} J^T at x, worst case over
  // answer errors of one unit each (the weights' unit)
  void sensitivities(const std::vector<Mpfr>& x, const std::vector<Mpfr>& den, GridFit& out) const {
    const Mat<Mpfr> J = jacobian(x, den);
    Mat<Mpfr> JtJ(m, m), Jt(m, n), G;
    for (int k = 0; k < n; ++k)
      for (int a = 0; a < m; ++a) {
        Jt(a, k) = J(k, a);
        for (int b = 0; b < m; ++b) JtJ(a, b) += J(k, a) * J(k, b);
      }
    out.err_c.assign(H, 0);
    out.err_l.assign(H, 0);
    if (F.solve(G, JtJ, Jt) != Truth::yes) {  // singular at the solution: no first-order bound
      out.err_c.assign(H, INFINITY);
      out.err_l.assign(H, INFINITY);
      out.typ_l.assign(H, INFINITY);
      out.log2_cond = INFINITY;
      return;
    }
    // the residuals' scale per degree of freedom (none when the samples only just determine x)
    const double s = n > m ? std::sqrt(out.cost / (n - m)) : INFINITY;
    out.typ_l.assign(H, INFINITY);
    double gmax = 0, jmax = 0;
    for (int a = 0; a < m; ++a) {
      double g = 0, g2 = 0, j = 0;
      for (int k = 0; k < n; ++k) {
        const double gk = G(a, k).to_double();
        g += std::fabs(gk);
        g2 += gk * gk;
        j += std::fabs(J(k, a).to_double());
      }
      if (a >= 1 && a <= H) out.err_c[a - 1] = g;
      if (a > H) {
        out.err_l[a - 1 - H] = g;
        out.typ_l[a - 1 - H] = std::sqrt(g2) * s;
      }
      gmax = std::max(gmax, g);
      jmax = std::max(jmax, j);
    }
    out.log2_cond = std::log2(gmax * jmax);
  }
};

}  // namespace

GridFit fit_on_grid(const Field<Mpfr>& F, const std::vector<Mpfr>& K, const std::vector<Mpfr>& f, const std::vector<double>& l0, long p, double abs) {
  const int H = static_cast<int>(l0.size());
  const GridProblem pb(F, K, f, H, p, abs);
  std::vector<Mpfr> x = pb.start(l0), res, den;
  Mpfr cost = pb.residuals(x, res, den);
  double lambda = 1e-3;
  for (int it = 0; it < 80 && pb.step(x, cost, res, den, lambda); ++it) {
  }
  GridFit out;
  out.P = x[0];
  for (int h = 0; h < H; ++h) {
    out.c.push_back(x[1 + h]);
    out.l.push_back(x[1 + H + h]);
  }
  for (int k = 0; k < pb.n; ++k) out.max_resid = std::max(out.max_resid, std::fabs(res[k].to_double()));
  out.cost = cost.to_double();
  pb.sensitivities(x, den, out);
  return out;
}

// A pair's fit with no placed start (the pilot's pairs): the rational
// interpolant through 2H+1 of the values spread over the grid (its poles, if
// real), and ladders of H poles evenly spread over log r in [-10, 10] at a few
// shifts, each refined; the fit with the smallest weighted cost is kept.
GridFit fit_free(const Field<Mpfr>& F, const std::vector<Mpfr>& K, const std::vector<Mpfr>& f, int H, long p, double abs) {
  const int n = static_cast<int>(K.size()), m = 2 * H + 1;
  std::vector<std::vector<double>> starts;
  {
    Mat<Mpfr> A(m, m), rhs(m, 1), x;
    for (int e = 0; e < m; ++e) {
      const int k = static_cast<int>(std::lround(static_cast<double>(e) * (n - 1) / (m - 1)));
      Mpfr km(1L);
      for (int a = 0; a <= H; ++a) {
        A(e, a) = km;
        if (a >= 1) A(e, H + a) = -(f[k] * km);
        km = km * K[k];
      }
      rhs(e, 0) = f[k];
    }
    if (F.solve(x, A, rhs) == Truth::yes) {
      std::vector<Mpfr> Q{Mpfr(1L)};
      for (int a = 1; a <= H; ++a) Q.push_back(x(H + a, 0));
      if (F.is_zero(Q[H]) == Truth::no) {
        const Roots<Mpfr> roots = F.real_roots(Q);
        if (roots.ok == Truth::yes && static_cast<int>(roots.roots.size()) == H) {
          std::vector<double> l;
          for (const Mpfr& rho : roots.roots) {
            const double r = -1 / rho.to_double();
            if (r > 0 && std::isfinite(std::log(r))) l.push_back(std::log(r));
          }
          if (static_cast<int>(l.size()) == H) starts.push_back(l);
        }
      }
    }
  }
  for (double shift : {0.0, 0.5, -0.5}) {
    std::vector<double> l(H);
    for (int h = 0; h < H; ++h) l[h] = H == 1 ? shift : -10 + 20.0 * (h + 0.5 + shift / 2) / H;
    starts.push_back(l);
  }
  GridFit best;
  bool have = false;
  for (const auto& l : starts) {
    try {
      GridFit g = fit_on_grid(F, K, f, l, p, abs);
      if (!have || g.cost < best.cost) {
        best = std::move(g);
        have = true;
      }
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unable) throw;
    }
  }
  if (!have) throw_unable("placed design: a pilot pair could not be fitted from any start");
  return best;
}

std::vector<Mpfr> ratios(const std::vector<Counts>& grid) {
  std::vector<Mpfr> t;
  for (const Counts& c : grid) t.push_back(Mpfr(Rational(c.k, static_cast<unsigned long>(c.m))));
  return t;
}

}  // namespace mhaq::placed_detail
