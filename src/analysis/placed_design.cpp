// The placed design (docs/math/designs.md#placed): pilot, pole placement,
// geometric sampling, weighted pair fits, labelling by place, bilinear solve.
#include "mhaq/analysis/placed_design.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "mhaq/analysis/pilot_oracle.hpp"
#include "mhaq/arith/all_fields.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/stages/2-schedule/design.hpp"
#include "mhaq/stages/learner.hpp"

namespace mhaq {

std::vector<Counts> placed_grid(int n, long k_max) {
  if (n < 3 || k_max < 2)
    throw Error(
        ErrorKind::usage,
        "placed design: the grid needs at least 3 ratios and k_max >= 2");
  std::vector<Counts> g{{0, 1}};
  const double e = std::log(static_cast<double>(k_max));
  for (int t = 0; t < n; ++t) {
    const double x = -e + 2 * e * t / (n - 1); // log of the ratio k/m
    Counts c = x >= 0 ? Counts{std::min(k_max, std::lround(std::exp(x))), 1}
                      : Counts{1, std::min(k_max, std::lround(std::exp(-x)))};
    const Counts &last = g.back();
    if (last.k * c.m >= c.k * last.m)
      continue; // ratios strictly increasing
    g.push_back(c);
  }
  return g;
}

namespace {

using DMat = std::vector<std::vector<double>>;

// A fit that leaves a residual above this many stated answer errors does not
// fit; residues of one head that differ by more than this many of their
// first-order errors across final tokens are not one head's.
constexpr double kResidualLimit = 8;

// Gaussian elimination with partial pivoting on a small dense double system
// (the design's own choices, never a learned value); false when singular.
bool dsolve(DMat A, std::vector<double> &x) {
  const int n = static_cast<int>(A.size());
  for (int c = 0; c < n; ++c) {
    int p = c;
    for (int r = c + 1; r < n; ++r)
      if (std::fabs(A[r][c]) > std::fabs(A[p][c]))
        p = r;
    if (A[p][c] == 0)
      return false;
    std::swap(A[p], A[c]);
    std::swap(x[p], x[c]);
    for (int r = c + 1; r < n; ++r) {
      const double m = A[r][c] / A[c][c];
      for (int t = c; t < n; ++t)
        A[r][t] -= m * A[c][t];
      x[r] -= m * x[c];
    }
  }
  for (int c = n - 1; c >= 0; --c) {
    for (int t = c + 1; t < n; ++t)
      x[c] -= A[c][t] * x[t];
    x[c] /= A[c][c];
  }
  return true;
}

// The inverse of a square double matrix (rows of the result), empty when
// singular.
DMat dinverse(const DMat &A) {
  const int n = static_cast<int>(A.size());
  DMat inv(n, std::vector<double>(n));
  for (int c = 0; c < n; ++c) {
    std::vector<double> e(n, 0.0);
    e[c] = 1;
    if (!dsolve(A, e))
      return {};
    for (int r = 0; r < n; ++r)
      inv[r][c] = e[r];
  }
  return inv;
}

Mpfr md(double x) {
  Mpfr m;
  mpfr_set_d(m.raw(), x, MPFR_RNDN);
  return m;
}

double uniform(Rng &rng) {
  return static_cast<double>(rng.uniform_int(-(1L << 20), 1L << 20)) /
         static_cast<double>(1L << 20);
}

// |A| |A^{-1}| in the max-row-sum norm, log2 (+inf when singular).
double log2_cond(const DMat &A) {
  const DMat inv = dinverse(A);
  if (inv.empty())
    return INFINITY;
  auto norm = [](const DMat &M) {
    double m = 0;
    for (const auto &row : M) {
      double s = 0;
      for (double x : row)
        s += std::fabs(x);
      m = std::max(m, s);
    }
    return m;
  };
  return std::log2(norm(A) * norm(inv));
}

struct Estimate {
  int d = 0;
  std::vector<DMat> W;                // W[h][r][c]
  std::vector<std::vector<double>> v; // v[h]
};

// The offsets for one final token: `m` = d offsets, offset i putting head h at
// log r = targets[i][h]. With M = [W_1 b .. W_H b] (d x H), an offset is
// M (M^T M)^{-1} t plus a part orthogonal to every W_h b; the ladder's order
// is permuted per offset and the orthogonal parts drawn at random, and of
// `tries` candidates the best conditioned with no small residue is kept.
struct Placement {
  DMat Delta;   // Delta[i] = delta_i (rows)
  DMat targets; // targets[i][h]
};

Placement place_offsets(const Estimate &est, const std::vector<double> &b,
                        const std::vector<double> &ladder, double shift_range,
                        Rng &rng, int tries) {
  const int d = est.d, H = static_cast<int>(est.W.size());
  DMat M(d, std::vector<double>(H)); // columns W_h b
  for (int h = 0; h < H; ++h)
    for (int r = 0; r < d; ++r)
      for (int c = 0; c < d; ++c)
        M[r][h] += est.W[h][r][c] * b[c];
  DMat G(H, std::vector<double>(H));
  for (int a = 0; a < H; ++a)
    for (int c = 0; c < H; ++c)
      for (int r = 0; r < d; ++r)
        G[a][c] += M[r][a] * M[r][c];
  const DMat Ginv = dinverse(G);
  if (Ginv.empty())
    throw_unable("placed design: the pilot's W_h b are linearly dependent at a "
                 "final token, so the poles cannot be placed");
  double pscale = 0; // the typical length of M G^{-1} t per unit target
  for (int r = 0; r < d; ++r)
    for (int c = 0; c < H; ++c) {
      double s = 0;
      for (int a = 0; a < H; ++a)
        s += M[r][a] * Ginv[a][c];
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
      for (int a = H - 1; a > 0; --a)
        std::swap(perm[a], perm[rng.uniform_int(0, a)]);
      std::vector<double> tg(H), delta(d, 0.0);
      // a common shift per offset: with the ladder alone every offset's
      // targets would have the same sum, and the offsets would lose a dimension
      const double shift = shift_range * uniform(rng);
      for (int h = 0; h < H; ++h)
        tg[h] = ladder[perm[h]] + shift;
      std::vector<double> y(H, 0.0); // G^{-1} t
      for (int a = 0; a < H; ++a)
        for (int c = 0; c < H; ++c)
          y[a] += Ginv[a][c] * tg[c];
      std::vector<double> z(d); // a random vector, projected off span(M)
      for (int r = 0; r < d; ++r)
        z[r] = uniform(rng);
      std::vector<double> mz(H, 0.0), coef(H, 0.0);
      for (int a = 0; a < H; ++a)
        for (int r = 0; r < d; ++r)
          mz[a] += M[r][a] * z[r];
      for (int a = 0; a < H; ++a)
        for (int c = 0; c < H; ++c)
          coef[a] += Ginv[a][c] * mz[c];
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
        for (int r = 0; r < d; ++r)
          c += est.v[h][r] * p.Delta[i][r];
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
  if (!std::isfinite(best_score))
    throw_unable(
        "placed design: no candidate offsets are independent at a final token");
  return best;
}

// One pair's weighted least-squares fit of f(k) = P + sum_h c_h / (1 + exp(l_h)
// k) (Levenberg-Marquardt from the placed log r), in MPFR. Weights: 1 / (|f(k)|
// 2^-p), so a residual of 1 is one stated answer error.
struct GridFit {
  Mpfr P;
  std::vector<Mpfr> c, l;
  double max_resid = 0; // largest weighted residual
  double cost = 0;      // sum of squared weighted residuals
  std::vector<double> err_c,
      err_l; // first-order worst-case error from the stated answer errors
  double log2_cond = 0;
};

GridFit fit_on_grid(const Field<Mpfr> &F, const std::vector<Mpfr> &K,
                    const std::vector<Mpfr> &f, const std::vector<double> &l0,
                    long p) {
  const int H = static_cast<int>(l0.size()), n = static_cast<int>(K.size()),
            m = 2 * H + 1;
  const Mpfr one(1L);
  std::vector<Mpfr> w(n);
  for (int k = 0; k < n; ++k) {
    Mpfr a = F.abs(f[k]);
    if (F.is_zero(a) == Truth::yes)
      a = Mpfr(Rational(1, 1UL << 60));
    Mpfr u = a;
    mpfr_mul_2si(u.raw(), u.raw(), -p, MPFR_RNDN);
    w[k] = one / u;
  }
  // x = (P, c_1..c_H, l_1..l_H)
  std::vector<Mpfr> x(m);
  auto model = [&](const std::vector<Mpfr> &xx, std::vector<Mpfr> &res,
                   std::vector<Mpfr> *den) -> Mpfr {
    std::vector<Mpfr> r(H);
    for (int h = 0; h < H; ++h)
      r[h] = F.exp(xx[1 + H + h]);
    Mpfr cost(0L);
    res.assign(n, Mpfr(0L));
    if (den)
      den->assign(static_cast<size_t>(n) * H, Mpfr(0L));
    for (int k = 0; k < n; ++k) {
      Mpfr v = xx[0];
      for (int h = 0; h < H; ++h) {
        const Mpfr dd = one + r[h] * K[k];
        if (den)
          (*den)[static_cast<size_t>(k) * H + h] = dd;
        v += xx[1 + h] / dd;
      }
      res[k] = (f[k] - v) * w[k];
      cost += res[k] * res[k];
    }
    return cost;
  };
  // start: the placed poles, then P and c by linear least squares
  {
    Mat<Mpfr> A(m - H, m - H), rhs(m - H, 1), y;
    for (int h = 0; h < H; ++h)
      x[1 + H + h] = md(l0[h]);
    std::vector<Mpfr> r(H);
    for (int h = 0; h < H; ++h)
      r[h] = F.exp(x[1 + H + h]);
    for (int k = 0; k < n; ++k) {
      std::vector<Mpfr> row{w[k]};
      for (int h = 0; h < H; ++h)
        row.push_back(w[k] / (one + r[h] * K[k]));
      for (int a = 0; a <= H; ++a) {
        rhs(a, 0) += row[a] * f[k] * w[k];
        for (int b = 0; b <= H; ++b)
          A(a, b) += row[a] * row[b];
      }
    }
    if (F.solve(y, A, rhs) == Truth::yes) {
      for (int a = 0; a <= H; ++a)
        x[a] = y(a, 0);
    } else { // poles that cannot be told apart at this start: the limit alone,
             // no residues
      x[0] = f.back();
      for (int a = 1; a <= H; ++a)
        x[a] = Mpfr(0L);
    }
  }
  std::vector<Mpfr> res, den;
  Mpfr cost = model(x, res, &den);
  double lambda = 1e-3;
  Mat<Mpfr> JtJ, Jtr;
  auto jacobian = [&](const std::vector<Mpfr> &xx, const std::vector<Mpfr> &dn,
                      Mat<Mpfr> &J) {
    J = Mat<Mpfr>(n, m);
    std::vector<Mpfr> r(H);
    for (int h = 0; h < H; ++h)
      r[h] = F.exp(xx[1 + H + h]);
    for (int k = 0; k < n; ++k) {
      J(k, 0) = w[k];
      for (int h = 0; h < H; ++h) {
        const Mpfr &dd = dn[static_cast<size_t>(k) * H + h];
        J(k, 1 + h) = w[k] / dd;
        J(k, 1 + H + h) = -(w[k] * xx[1 + h] * r[h] * K[k]) / (dd * dd);
      }
    }
  };
  Mat<Mpfr> J;
  for (int it = 0; it < 80; ++it) {
    jacobian(x, den, J);
    JtJ = Mat<Mpfr>(m, m);
    Jtr = Mat<Mpfr>(m, 1);
    for (int k = 0; k < n; ++k)
      for (int a = 0; a < m; ++a) {
        Jtr(a, 0) += J(k, a) * res[k];
        for (int b = a; b < m; ++b)
          JtJ(a, b) += J(k, a) * J(k, b);
      }
    for (int a = 0; a < m; ++a)
      for (int b = 0; b < a; ++b)
        JtJ(a, b) = JtJ(b, a);
    bool moved = false;
    for (int tries = 0; tries < 30; ++tries) {
      Mat<Mpfr> A = JtJ, dx;
      for (int a = 0; a < m; ++a)
        A(a, a) += JtJ(a, a) * md(lambda);
      if (F.solve(dx, A, Jtr) != Truth::yes)
        break;
      std::vector<Mpfr> xn = x, rn, dn;
      for (int a = 0; a < m; ++a)
        xn[a] += dx(a, 0);
      const Mpfr cn = model(xn, rn, &dn);
      if ((cn - cost).to_double() <= 0 ||
          F.is_positive(cost - cn) == Truth::yes) {
        // accept; stop when the step no longer changes the cost
        const double gain =
            (cost - cn).to_double() / std::max(cost.to_double(), 1e-300);
        x = xn;
        res = rn;
        den = dn;
        cost = cn;
        lambda = std::max(lambda / 10, 1e-12);
        moved = gain > 1e-30;
        break;
      }
      lambda *= 10;
    }
    if (!moved)
      break;
  }
  GridFit out;
  out.P = x[0];
  for (int h = 0; h < H; ++h) {
    out.c.push_back(x[1 + h]);
    out.l.push_back(x[1 + H + h]);
  }
  for (int k = 0; k < n; ++k)
    out.max_resid = std::max(out.max_resid, std::fabs(res[k].to_double()));
  out.cost = cost.to_double();
  // first-order sensitivities: G = (J^T J)^{-1} J^T at the fit, worst case over
  // answer errors of at most one unit each (the weights' unit)
  jacobian(x, den, J);
  JtJ = Mat<Mpfr>(m, m);
  Mat<Mpfr> Jt(m, n), Gm;
  for (int k = 0; k < n; ++k)
    for (int a = 0; a < m; ++a) {
      Jt(a, k) = J(k, a);
      for (int b = 0; b < m; ++b)
        JtJ(a, b) += J(k, a) * J(k, b);
    }
  out.err_c.assign(H, 0);
  out.err_l.assign(H, 0);
  if (F.solve(Gm, JtJ, Jt) !=
      Truth::yes) { // singular at the solution: no first-order bound
    out.err_c.assign(H, INFINITY);
    out.err_l.assign(H, INFINITY);
    out.log2_cond = INFINITY;
    return out;
  }
  double gmax = 0, jmax = 0;
  for (int h = 0; h < H; ++h)
    for (int k = 0; k < n; ++k) {
      out.err_c[h] += std::fabs(Gm(1 + h, k).to_double());
      out.err_l[h] += std::fabs(Gm(1 + H + h, k).to_double());
    }
  for (int a = 0; a < m; ++a) {
    double g = 0, j = 0;
    for (int k = 0; k < n; ++k) {
      g += std::fabs(Gm(a, k).to_double());
      j += std::fabs(J(k, a).to_double());
    }
    gmax = std::max(gmax, g);
    jmax = std::max(jmax, j);
  }
  out.log2_cond = std::log2(gmax * jmax);
  return out;
}

// The Euclidean norm of a rational vector, to 20 bits.
Rational norm_of(const QVec &x) {
  Rational s(0);
  for (const Rational &t : x)
    s += t * t;
  return (s * Rational(1L << 40)).isqrt_floor() / Rational(1L << 20);
}

QVec on_grid(const std::vector<double> &x, long den) {
  QVec q;
  for (double t : x)
    q.push_back(Rational(std::llround(t * static_cast<double>(den)),
                         static_cast<unsigned long>(den)));
  return q;
}

std::vector<double> to_doubles(const QVec &q) {
  std::vector<double> x;
  for (const Rational &t : q)
    x.push_back(t.approx_double());
  return x;
}

// A pair's fit with no placed start (the pilot's pairs): the rational
// interpolant through 2H+1 of the values spread over the grid (its poles, if
// real), and ladders of H poles evenly spread over log r in [-10, 10] at a few
// shifts, each refined; the fit with the smallest weighted cost is kept.
GridFit fit_free(const Field<Mpfr> &F, const std::vector<Mpfr> &K,
                 const std::vector<Mpfr> &f, int H, long p) {
  const int n = static_cast<int>(K.size()), m = 2 * H + 1;
  std::vector<std::vector<double>> starts;
  {
    Mat<Mpfr> A(m, m), rhs(m, 1), x;
    for (int e = 0; e < m; ++e) {
      const int k = static_cast<int>(
          std::lround(static_cast<double>(e) * (n - 1) / (m - 1)));
      Mpfr km(1L);
      for (int a = 0; a <= H; ++a) {
        A(e, a) = km;
        if (a >= 1)
          A(e, H + a) = -(f[k] * km);
        km = km * K[k];
      }
      rhs(e, 0) = f[k];
    }
    if (F.solve(x, A, rhs) == Truth::yes) {
      std::vector<Mpfr> Q{Mpfr(1L)};
      for (int a = 1; a <= H; ++a)
        Q.push_back(x(H + a, 0));
      if (F.is_zero(Q[H]) == Truth::no) {
        const Roots<Mpfr> roots = F.real_roots(Q);
        if (roots.ok == Truth::yes &&
            static_cast<int>(roots.roots.size()) == H) {
          std::vector<double> l;
          for (const Mpfr &rho : roots.roots) {
            const double r = -1 / rho.to_double();
            if (r > 0 && std::isfinite(std::log(r)))
              l.push_back(std::log(r));
          }
          if (static_cast<int>(l.size()) == H)
            starts.push_back(l);
        }
      }
    }
  }
  for (double shift : {0.0, 0.5, -0.5}) {
    std::vector<double> l(H);
    for (int h = 0; h < H; ++h)
      l[h] = H == 1 ? shift : -10 + 20.0 * (h + 0.5 + shift / 2) / H;
    starts.push_back(l);
  }
  GridFit best;
  bool have = false;
  for (const auto &l : starts) {
    try {
      GridFit g = fit_on_grid(F, K, f, l, p);
      if (!have || g.cost < best.cost) {
        best = std::move(g);
        have = true;
      }
    } catch (const Error &e) {
      if (e.kind() != ErrorKind::unable)
        throw;
    }
  }
  if (!have)
    throw_unable(
        "placed design: a pilot pair could not be fitted from any start");
  return best;
}

std::vector<Mpfr> ratios(const std::vector<Counts> &grid) {
  std::vector<Mpfr> t;
  for (const Counts &c : grid)
    t.push_back(Mpfr(Rational(c.k, static_cast<unsigned long>(c.m))));
  return t;
}

// Answers as MPFR numbers (a ball's midpoint; the field's own number
// otherwise).
template <class T> class Asker {
public:
  explicit Asker(Oracle<T> &o) : o_(o) {}
  Mpfr operator()(const Query &q) {
    const Ball b = o_.field().enclose(o_.query(q));
    Mpfr m;
    arf_get_mpfr(m.raw(), arb_midref(b.raw()), MPFR_RNDN);
    return m;
  }
  // the pair (a, b) on the grid, f(0) given
  std::vector<Mpfr> pair(const QVec &a, const QVec &b,
                         const std::vector<Counts> &grid, const Mpfr &f0) {
    std::vector<Mpfr> f{f0};
    for (size_t t = 1; t < grid.size(); ++t)
      f.push_back((*this)(Query{Run{a, grid[t].k}, Run{b, grid[t].m}}));
    return f;
  }

private:
  Oracle<T> &o_;
};

// The best permutation sigma of H items (H <= 8: at most 40320) for a cost
// cost(sigma) (smaller is better).
template <class Cost> std::vector<int> best_permutation(int H, Cost &&cost) {
  std::vector<int> s(H), best;
  std::iota(s.begin(), s.end(), 0);
  double bc = INFINITY;
  do {
    const double c = cost(s);
    if (c < bc) {
      bc = c;
      best = s;
    }
  } while (std::next_permutation(s.begin(), s.end()));
  if (best.empty())
    std::iota(s.begin(), s.end(), 0),
        best = s; // every cost NaN: any order (the checks decide)
  return best;
}

// The grid pilot: the scaled design's B and Delta (poles where they fall),
// every base pair (i, j) and the within links (delta_1 + delta_i, b_1), each
// on the grid and fitted from free starts. Heads are put in the order of
// pair (1, 1): at (i, j) by residues, which do not depend on b_j; at (i, 1)
// through its link, whose poles are products and residues sums. A rough
// estimate is all it needs to be: the placed run checks where every pole lands.
// Least squares for x in A x = y (rows of A), dropping the worst-fitting
// equations one by one while some residual exceeds ten times the median and
// more than d + 2 equations remain: a pilot pair with clustered poles or a pole
// outside the window gives a wild value, which must not spoil the others.
std::vector<double> trimmed_least_squares(const DMat &A,
                                          const std::vector<double> &y) {
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
          for (int c = 0; c < d; ++c)
            N[r][c] += A[i][r] * A[i][c];
        }
    x = rhs;
    if (!dsolve(N, x))
      return std::vector<double>(d, 0.0);
    if (kept <= d + 2)
      return x;
    std::vector<double> res, kres;
    int worst = -1;
    for (int i = 0; i < m; ++i) {
      double e = -y[i];
      for (int r = 0; r < d; ++r)
        e += A[i][r] * x[r];
      res.push_back(std::fabs(e));
      if (keep[i]) {
        kres.push_back(std::fabs(e));
        if (worst < 0 || std::fabs(e) > res[worst])
          worst = i;
      }
    }
    std::nth_element(kres.begin(), kres.begin() + kres.size() / 2, kres.end());
    if (res[worst] <= 10 * kres[kres.size() / 2] + 1e-12)
      return x;
    keep[worst] = 0;
  }
}

// The grid pilot: the scaled design's final tokens B, offsets (2d of them:
// the scaled design's and a second orthogonal draw), poles where they fall;
// every base pair (i, j) and the within links (delta_1 + delta_i, b_1), each on
// the grid and fitted from free starts. Heads are put in the order of pair
// (1, 1): at (i, j) by residues, which do not depend on b_j; at (i, 1) through
// its link, whose poles are products and residues sums. W_h b_j and v_h by
// trimmed least squares. A rough estimate is all it needs to be: the placed
// rounds check where every pole lands.
template <class T>
Estimate grid_pilot(Asker<T> &ask, const Field<Mpfr> &F, const Draws &dr,
                    const QMat &extra, const std::vector<Counts> &grid, int H,
                    long p, std::string &status) {
  const int d = dr.B.rows();
  const double window = std::log(static_cast<double>(grid.back().k)) + 1;
  const std::vector<Mpfr> K = ratios(grid);
  std::vector<QVec> offs;
  for (int i = 0; i < d; ++i)
    offs.push_back(dr.Delta.col(i));
  for (int i = 0; i < extra.cols(); ++i)
    offs.push_back(extra.col(i));
  const int m = static_cast<int>(offs.size());
  std::vector<std::vector<GridFit>> fit(m, std::vector<GridFit>(d)); // [i][j]
  for (int j = 0; j < d; ++j) {
    const QVec b = dr.B.col(j);
    const Mpfr f0 = ask(Query{Run{b, 1}});
    for (int i = 0; i < m; ++i) {
      QVec a(d);
      for (int r = 0; r < d; ++r)
        a[r] = b[r] + offs[i][r];
      fit[i][j] = fit_free(F, K, ask.pair(a, b, grid, f0), H, p);
    }
  }
  const QVec b1 = dr.B.col(0);
  const Mpfr f01 = ask(Query{Run{b1, 1}});
  // order[i][j][h]: the index in fit[i][j] of head h (the order of fit[0][0])
  std::vector<std::vector<std::vector<int>>> order(
      m, std::vector<std::vector<int>>(d));
  auto dbl = [](const std::vector<Mpfr> &x) {
    std::vector<double> y;
    for (const Mpfr &t : x)
      y.push_back(t.to_double());
    return y;
  };
  std::vector<int> id(H);
  std::iota(id.begin(), id.end(), 0);
  order[0][0] = id;
  for (int i = 1; i < m; ++i) {
    QVec a(d);
    for (int r = 0; r < d; ++r)
      a[r] = b1[r] + offs[0][r] + offs[i][r];
    const GridFit link = fit_free(F, K, ask.pair(a, b1, grid, f01), H, p);
    const auto l1 = dbl(fit[0][0].l), c1 = dbl(fit[0][0].c),
               li = dbl(fit[i][0].l), ci = dbl(fit[i][0].c), ll = dbl(link.l),
               cl = dbl(link.c);
    double cs = 1e-300;
    for (int h = 0; h < H; ++h)
      cs = std::max({cs, std::fabs(c1[h]), std::fabs(ci[h])});
    // sigma: head h of (1,1) is head sigma[h] of (i,1); each sum must meet a
    // distinct link head
    order[i][0] = best_permutation(H, [&](const std::vector<int> &sg) {
      std::vector<char> used(H, 0);
      double tot = 0;
      for (int h = 0; h < H; ++h) {
        double bd = INFINITY;
        int bq = -1;
        for (int q = 0; q < H; ++q) {
          if (used[q])
            continue;
          const double dd = std::fabs(l1[h] + li[sg[h]] - ll[q]) +
                            std::fabs(c1[h] + ci[sg[h]] - cl[q]) / cs;
          if (!(dd >= bd))
            bd = dd, bq = q;
        }
        if (bq < 0)
          return static_cast<double>(INFINITY);
        used[bq] = 1;
        tot += bd;
      }
      return tot;
    });
    if (order[i][0].empty())
      order[i][0] = id;
  }
  for (int i = 0; i < m; ++i) {
    const auto ci = dbl(fit[i][0].c);
    for (int j = 1; j < d; ++j) {
      const auto cj = dbl(fit[i][j].c);
      order[i][j] = best_permutation(
          H, [&](const std::vector<int> &sg) { // head h is head sg[h] of (i,j)
            double tot = 0;
            for (int h = 0; h < H; ++h)
              tot += std::fabs(ci[order[i][0][h]] - cj[sg[h]]);
            return tot;
          });
      if (order[i][j].empty())
        order[i][j] = id;
    }
  }
  // W_h b_j from the m equations delta_i^T (W_h b_j) = log r_h(i, j);
  // v_h from delta_i^T v_h = -median_j c_h(i, j); W_h = [W_h b_j] B^{-1}
  DMat A(m, std::vector<double>(d)), Bd(d, std::vector<double>(d));
  for (int i = 0; i < m; ++i)
    for (int r = 0; r < d; ++r)
      A[i][r] = offs[i][r].approx_double();
  for (int r = 0; r < d; ++r)
    for (int c = 0; c < d; ++c)
      Bd[r][c] = dr.B(r, c).approx_double();
  const DMat BInv = dinverse(Bd);
  if (BInv.empty())
    throw_internal(
        "placed design: the pilot's B is singular after the draw check");
  Estimate est;
  est.d = d;
  for (int h = 0; h < H; ++h) {
    DMat Wb(d, std::vector<double>(d, 0.0));
    std::vector<double> cmed(m);
    for (int j = 0; j < d; ++j) {
      std::vector<double> y(m);
      for (int i = 0; i < m; ++i) {
        // a pole outside the grid's window is seen only as "far": its log r
        // is clipped to the window's edge (and likely trimmed)
        double l = fit[i][j].l[order[i][j][h]].to_double();
        if (!std::isfinite(l))
          l = 0;
        y[i] = std::clamp(l, -window, window);
      }
      const std::vector<double> w = trimmed_least_squares(A, y);
      for (int r = 0; r < d; ++r)
        Wb[r][j] = w[r];
    }
    for (int i = 0; i < m; ++i) {
      std::vector<double> c;
      for (int j = 0; j < d; ++j) {
        const double x = fit[i][j].c[order[i][j][h]].to_double();
        c.push_back(std::isfinite(x) ? -x : 0);
      }
      std::nth_element(c.begin(), c.begin() + d / 2, c.end());
      cmed[i] = c[d / 2];
    }
    DMat W(d, std::vector<double>(d, 0.0));
    for (int r = 0; r < d; ++r)
      for (int c = 0; c < d; ++c)
        for (int t = 0; t < d; ++t)
          W[r][c] += Wb[r][t] * BInv[t][c];
    est.W.push_back(W);
    est.v.push_back(trimmed_least_squares(A, cmed));
  }
  status = "ok";
  return est;
}

// The paper pilot: the paper schedule, by the learner itself in MPFR on the
// answers' midpoints, with decisions judged ever more loosely (cheap, and
// enough at H <= 2 from float64 answers).
template <class T>
Estimate paper_pilot(Oracle<T> &oracle, const PlacedOptions &opt,
                     std::string &status) {
  const int d = oracle.dim();
  PilotAnswers<T> answers(oracle);
  Estimate est;
  status = "not run";
  LearnOptions lo;
  lo.H = opt.H;
  lo.schedule = Schedule::paper;
  lo.seed = opt.seed;
  lo.tokens = opt.tokens;
  const double a0 = -static_cast<double>(opt.answer_bits);
  for (double acc : {a0, a0 / 2, a0 / 4}) {
    if (acc > -8)
      break;
    PilotOracle<T> po(answers, acc);
    try {
      const LearnResult<Mpfr> res = learn<Mpfr>(po, lo);
      if (res.self_check == Truth::no ||
          static_cast<int>(res.heads.size()) != opt.H) {
        status = "the paper pilot's heads do not reproduce its answers";
        continue;
      }
      est.d = d;
      for (const auto &h : res.heads) {
        DMat W(d, std::vector<double>(d));
        std::vector<double> v(d);
        for (int r = 0; r < d; ++r) {
          v[r] = h.v[r].to_double();
          for (int c = 0; c < d; ++c)
            W[r][c] = h.W(r, c).to_double();
        }
        est.W.push_back(W);
        est.v.push_back(v);
      }
      status = "ok";
      return est;
    } catch (const Error &e) {
      if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input ||
          e.kind() == ErrorKind::internal)
        throw;
      status = std::string(kind_name(e.kind())) + ": " + e.what();
    }
  }
  return est;
}

} // namespace

template <class T>
PlacedResult learn_placed(Oracle<T> &oracle, const PlacedOptions &opt) {
  const int d = oracle.dim(), H = opt.H;
  if (H < 1 || H > d)
    throw Error(ErrorKind::usage,
                "--design placed needs 1 <= H <= d (the poles are placed "
                "through d-dimensional offsets)");
  PlacedResult out;
  const long before = oracle.queries();
  const Field<Mpfr> F;
  Rng rng(opt.seed ^ 0x91ace5eedULL);
  const Draws dr = draw_scaled(rng, d, H, opt.tokens);
  const int n_grid = opt.grid > 0 ? opt.grid : std::min(60, 10 * H + 10);
  const std::vector<Counts> grid = placed_grid(n_grid, opt.k_max);
  const std::vector<Mpfr> K = ratios(grid);
  Asker<T> answer(oracle);
  Estimate est;
  if (H <= 2) {
    est = paper_pilot(oracle, opt, out.pilot_status);
    out.pilot_kind = "paper";
  }
  if (static_cast<int>(est.W.size()) != H) {
    const QMat extra =
        orthogonal_on_grid(rng, d, norm_of(dr.Delta.col(0)), opt.tokens.den);
    est =
        grid_pilot(answer, F, dr, extra, placed_grid(opt.pilot_grid, opt.k_max),
                   H, opt.answer_bits, out.pilot_status);
    out.pilot_kind = "grid";
  }
  out.pilot_queries = oracle.queries() - before;
  if (static_cast<int>(est.W.size()) != H)
    throw_unable("placed design: the pilot gave no estimate of the heads (" +
                 out.pilot_status + ")");

  std::vector<double> ladder(H);
  for (int h = 0; h < H; ++h)
    ladder[h] = H == 1 ? (opt.ladder_top + opt.ladder_bottom) / 2
                       : opt.ladder_top +
                             (opt.ladder_bottom - opt.ladder_top) * h / (H - 1);
  const double gap =
      H == 1 ? INFINITY
             : std::fabs(opt.ladder_bottom - opt.ladder_top) / (H - 1);

  const long round_cost =
      d + static_cast<long>(d) * d * static_cast<long>(grid.size() - 1);
  for (int round = 1;; ++round) {
    out.rounds = round;
    out.heads.clear();
    out.worst_pair_log2_cond = out.log2_cond_offsets = 0;
    double max_dev = 0;
    std::string misplaced;
    std::vector<std::vector<Mpfr>> L(
        H, std::vector<Mpfr>(static_cast<size_t>(d) * d)),
        C = L; // [h][i*d + j]
    std::vector<std::vector<double>> eL(
        H, std::vector<double>(static_cast<size_t>(d) * d)),
        eC = eL;
    std::vector<DMat> Deltas(d);
    const long design_before = oracle.queries();
    double worst_resid = 0;
    std::vector<std::vector<QVec>> Dq(d); // the offsets as asked
    std::vector<GridFit> fits(static_cast<size_t>(d) * d); // [i*d + j]
    std::vector<std::vector<double>> l0s(static_cast<size_t>(d) * d);
    for (int j = 0; j < d; ++j) {
      const QVec bq = dr.B.col(j);
      const std::vector<double> b = to_doubles(bq);
      const Placement pl =
          place_offsets(est, b, ladder, opt.ladder_shift, rng, 60);
      const Mpfr f0 = answer(Query{Run{bq, 1}});
      for (int i = 0; i < d; ++i) {
        const QVec dq = on_grid(pl.Delta[i], opt.tokens.den);
        Deltas[j].push_back(to_doubles(dq));
        Dq[j].push_back(dq);
        QVec a(d);
        for (int r = 0; r < d; ++r)
          a[r] = bq[r] + dq[r];
        const std::vector<Mpfr> f = answer.pair(a, bq, grid, f0);
        // the placed log r on the rounded offset
        std::vector<double> l0(H);
        for (int h = 0; h < H; ++h) {
          double s = 0;
          for (int r = 0; r < d; ++r)
            for (int c = 0; c < d; ++c)
              s += Deltas[j][i][r] * est.W[h][r][c] * b[c];
          l0[h] = s;
        }
        GridFit g = fit_on_grid(F, K, f, l0, opt.answer_bits);
        if (g.max_resid >
            kResidualLimit) { // the placed start led astray: free starts
          GridFit g2 = fit_free(F, K, f, H, opt.answer_bits);
          if (g2.cost < g.cost)
            g = std::move(g2);
        }
        worst_resid = std::max(worst_resid, g.max_resid);
        out.worst_pair_log2_cond =
            std::max(out.worst_pair_log2_cond, g.log2_cond);
        fits[static_cast<size_t>(i) * d + j] = std::move(g);
        l0s[static_cast<size_t>(i) * d + j] = l0;
      }
    }
    out.design_queries += oracle.queries() - design_before;

    // labels, then the solve; when the residues disagree across final tokens
    // (a wrong label somewhere), relabel with the residues the solve's own v
    // predicts (no new queries), at most three times
    std::vector<std::vector<double>> vpred = est.v;
    for (int relabel = 0;; ++relabel) {
      max_dev = 0;
      misplaced.clear();
      out.heads.clear();
      for (int j = 0; j < d; ++j)
        for (int i = 0; i < d; ++i) {
          const GridFit &g = fits[static_cast<size_t>(i) * d + j];
          const std::vector<double> &l0 = l0s[static_cast<size_t>(i) * d + j];
          // labelling: the assignment of fitted heads to the estimate's that
          // best matches both the placed poles (in rungs) and the residues the
          // estimate predicts, -v_h^T delta; the self-check below tests it
          std::vector<double> c0(H, 0.0), fl(H), fc(H);
          double cs = 1e-300;
          for (int h = 0; h < H; ++h) {
            for (int r = 0; r < d; ++r)
              c0[h] -= vpred[h][r] * Deltas[j][i][r];
            cs = std::max(cs, std::fabs(c0[h]));
            fl[h] = g.l[h].to_double();
            fc[h] = g.c[h].to_double();
          }
          const std::vector<int> sg =
              best_permutation(H, [&](const std::vector<int> &s2) {
                double tot = 0;
                for (int h = 0; h < H; ++h)
                  tot += std::fabs(fl[s2[h]] - l0[h]) / gap +
                         std::fabs(fc[s2[h]] - c0[h]) / cs;
                return tot;
              });
          for (int h = 0; h < H; ++h) {
            const int q = sg[h];
            const double dev = std::fabs(fl[q] - l0[h]);
            max_dev = std::max(max_dev, dev);
            if (!(dev < gap / 2) && misplaced.empty())
              misplaced = "pair (i=" + std::to_string(i + 1) +
                          ", j=" + std::to_string(j + 1) + ")";
            L[h][static_cast<size_t>(i) * d + j] = g.l[q];
            C[h][static_cast<size_t>(i) * d + j] = g.c[q];
            eL[h][static_cast<size_t>(i) * d + j] = g.err_l[q];
            eC[h][static_cast<size_t>(i) * d + j] = g.err_c[q];
          }
        }
      // W_h b_j = Delta_j^{-T} L_h(:, j); W_h = [W_h b_j]_j B^{-1};
      // v_h by least squares on c_h(i, j) = -delta_ij^T v_h (all pairs).
      Mat<Mpfr> Binv, Bm(d, d);
      for (int r = 0; r < d; ++r)
        for (int c = 0; c < d; ++c)
          Bm(r, c) = F.from(dr.B(r, c));
      Mat<Mpfr> I(d, d);
      for (int r = 0; r < d; ++r)
        I(r, r) = Mpfr(1L);
      if (F.solve(Binv, Bm, I) != Truth::yes)
        throw_internal("placed design: B singular after the draw check");
      DMat BinvD(d, std::vector<double>(d));
      for (int r = 0; r < d; ++r)
        for (int c = 0; c < d; ++c)
          BinvD[r][c] = Binv(r, c).to_double();
      double est_rel = 0, check_ratio = 0;
      for (int j = 0; j < d; ++j)
        out.log2_cond_offsets =
            std::max(out.log2_cond_offsets, log2_cond(Deltas[j]));
      for (int h = 0; h < H; ++h) {
        Mat<Mpfr> Wb(d, d);
        DMat eWb(d, std::vector<double>(d, 0.0));
        for (int j = 0; j < d; ++j) {
          Mat<Mpfr> A(d, d), rhs(d, 1), y;
          for (int i = 0; i < d; ++i) {
            rhs(i, 0) = L[h][static_cast<size_t>(i) * d + j];
            for (int r = 0; r < d; ++r)
              A(i, r) = F.from(Dq[j][i][r]);
          }
          if (F.solve(y, A, rhs) != Truth::yes)
            throw_unable(
                "placed design: the offsets of a final token are singular");
          const DMat Ainv =
              dinverse(Deltas[j]); // rows of Delta_j as a matrix: its inverse
                                   // maps L to W_h b_j
          for (int r = 0; r < d; ++r) {
            Wb(r, j) = y(r, 0);
            for (int i = 0; i < d; ++i)
              eWb[r][j] +=
                  std::fabs(Ainv[r][i]) * eL[h][static_cast<size_t>(i) * d + j];
          }
        }
        LearnedHead<Mpfr> head{Mat<Mpfr>(d, d), std::vector<Mpfr>(d)};
        double wmax = 0, ewmax = 0;
        for (int r = 0; r < d; ++r)
          for (int c = 0; c < d; ++c) {
            Mpfr s(0L);
            double e = 0;
            for (int t = 0; t < d; ++t) {
              s += Wb(r, t) * Binv(t, c);
              e += eWb[r][t] * std::fabs(BinvD[t][c]);
            }
            head.W(r, c) = s;
            wmax += s.to_double() * s.to_double(); // Frobenius norms, squared
            ewmax += e * e;
          }
        // v_h: normal equations of the d^2 x d system, weighted by the
        // residues' errors
        Mat<Mpfr> N(d, d), rhs(d, 1), vv;
        DMat Nd(d, std::vector<double>(d, 0.0));
        for (int j = 0; j < d; ++j)
          for (int i = 0; i < d; ++i) {
            const double wt =
                1 / std::max(eC[h][static_cast<size_t>(i) * d + j], 1e-300);
            const Mpfr w2 = md(wt * wt);
            for (int r = 0; r < d; ++r) {
              const Mpfr wd = w2 * F.from(Dq[j][i][r]);
              rhs(r, 0) -= wd * C[h][static_cast<size_t>(i) * d + j];
              for (int c = 0; c < d; ++c) {
                N(r, c) += wd * F.from(Dq[j][i][c]);
                Nd[r][c] += wt * wt * Deltas[j][i][r] * Deltas[j][i][c];
              }
            }
          }
        if (F.solve(vv, N, rhs) != Truth::yes)
          throw_unable("placed design: the residues do not determine v");
        const DMat Ninv = dinverse(Nd);
        double vmax = 0, evmax = 0;
        std::vector<double> ev(d, 0.0);
        for (int r = 0; r < d; ++r) {
          head.v[r] = vv(r, 0);
          vmax += vv(r, 0).to_double() * vv(r, 0).to_double();
        }
        // worst-case first-order error of v: |N^{-1} D^T W^2| applied to the
        // residues' errors
        for (int j = 0; j < d; ++j)
          for (int i = 0; i < d; ++i) {
            const double e = eC[h][static_cast<size_t>(i) * d + j];
            const double wt = 1 / std::max(e, 1e-300);
            for (int r = 0; r < d; ++r) {
              double g = 0;
              for (int c = 0; c < d; ++c)
                g += Ninv[r][c] * Deltas[j][i][c];
              ev[r] += std::fabs(g) * wt * wt * e;
            }
          }
        for (int r = 0; r < d; ++r)
          evmax += ev[r] * ev[r];
        // the residues of one head agree across final tokens, to their own
        // errors
        for (int j = 0; j < d; ++j)
          for (int i = 0; i < d; ++i) {
            double pred = 0;
            for (int r = 0; r < d; ++r)
              pred -= Deltas[j][i][r] * head.v[r].to_double();
            const double e = eC[h][static_cast<size_t>(i) * d + j];
            double ep = 0;
            for (int r = 0; r < d; ++r)
              ep += std::fabs(Deltas[j][i][r]) * ev[r];
            check_ratio = std::max(
                check_ratio,
                std::fabs(pred -
                          C[h][static_cast<size_t>(i) * d + j].to_double()) /
                    (e + ep + 1e-300));
          }
        // the metric of max_rel_error: ||dW||_F / ||W||_F + ||dv|| / ||v||
        const double e_h = std::sqrt(ewmax / std::max(wmax, 1e-300)) +
                           std::sqrt(evmax / std::max(vmax, 1e-300));
        est_rel = std::isnan(e_h) || std::isnan(est_rel)
                      ? std::nan("")
                      : std::max(est_rel, e_h);
        out.heads.push_back(std::move(head));
      }
      // the weights carry the stated answer error, so these errors are absolute
      // no estimate (NaN: the judge says unable) unless every error is a finite
      // positive number
      out.estimate_log2 = est_rel > 0 && std::isfinite(est_rel)
                              ? std::log2(est_rel)
                              : std::nan("");
      out.self_check =
          worst_resid <= kResidualLimit && check_ratio <= kResidualLimit
              ? Truth::yes
              : Truth::no;
      char note[160];
      std::snprintf(
          note, sizeof note,
          "largest weighted pair residual %.3g stated errors, residues across "
          "final tokens agree to %.3g of their errors",
          worst_resid, check_ratio);
      out.self_check_note = note;
      if (out.self_check == Truth::yes || relabel == 3)
        break;
      for (int h = 0; h < H; ++h)
        for (int r = 0; r < d; ++r)
          vpred[h][r] = out.heads[h].v[r].to_double();
    }

    // another round on this round's heads, while poles land far from their
    // places and the budget allows: the estimate it places them by is better
    const bool affordable =
        opt.budget == 0 || oracle.queries() - before + round_cost <= opt.budget;
    bool finite = true;
    for (const auto &hd : out.heads)
      for (int r = 0; r < d; ++r) {
        finite = finite && std::isfinite(hd.v[r].to_double());
        for (int c = 0; c < d; ++c)
          finite = finite && std::isfinite(hd.W(r, c).to_double());
      }
    if (round < opt.max_rounds && affordable && finite && max_dev > gap / 4) {
      est = Estimate{};
      est.d = d;
      for (const auto &hd : out.heads) {
        DMat W(d, std::vector<double>(d));
        std::vector<double> v(d);
        for (int r = 0; r < d; ++r) {
          v[r] = hd.v[r].to_double();
          for (int c = 0; c < d; ++c)
            W[r][c] = hd.W(r, c).to_double();
        }
        est.W.push_back(W);
        est.v.push_back(v);
      }
      continue;
    }
    out.max_pole_shift = max_dev;
    out.misplaced = misplaced;
    break;
  }
  return out;
}

template PlacedResult learn_placed<Ball>(Oracle<Ball> &, const PlacedOptions &);
template PlacedResult learn_placed<Mpfr>(Oracle<Mpfr> &, const PlacedOptions &);
template PlacedResult learn_placed<double>(Oracle<double> &,
                                           const PlacedOptions &);

} // namespace mhaq
