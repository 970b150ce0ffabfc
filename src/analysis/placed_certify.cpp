// Ball mode of the placed design (analysis/placed_certify.hpp, proofs/37):
// the last round's pairs certified by Krawczyk's test on 2H+1 of their
// samples, the heads labelled by the linear relation of residues, and the
// bilinear solves in balls.
#include "mhaq/analysis/placed_certify.hpp"

#include <arb.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "mhaq/arith/all_fields.hpp"
#include "mhaq/base/precision.hpp"
#include "mhaq/stages/3-fit/pair_fit.hpp"
#include "mhaq/stages/4-match/match.hpp"
#include "placed_internal.hpp"

namespace mhaq {

using placed_detail::finals_matrix;

namespace {

// The first-order relative error bound on the poles and residues of the
// square system at the samples s: max_i sum_k |Y_ik| err_k / |x_i|, Y the
// closed-form inverse Jacobian (proofs/30 at these nodes); +inf when it
// cannot be formed.
double subset_score(const std::vector<Rational>& t, const std::vector<double>& err, const std::vector<int>& s, const std::vector<Mpfr>& x, int H) {
  const Field<Mpfr> F;
  std::vector<Rational> nodes;
  for (int k : s) nodes.push_back(t[k]);
  const PairSystem<Mpfr> sys(std::vector<Mpfr>(s.size(), Mpfr(0L)), H, nodes);
  Mat<Mpfr> Y;
  if (!sys.inverse_jacobian(F, x, Y)) return INFINITY;
  double worst = 0;
  for (int i = 1; i < 2 * H + 1; ++i) {
    double e = 0;
    for (size_t k = 0; k < s.size(); ++k) e += std::fabs(Y(i, static_cast<int>(k)).to_double()) * err[s[k]];
    const double rel = e / std::fabs(x[i].to_double());
    if (!(rel <= worst)) worst = rel;  // NaN too
  }
  return std::isfinite(worst) ? worst : INFINITY;
}

std::string pair_name(const PlacedPair& pp) { return "pair (i=" + std::to_string(pp.i + 1) + ", j=" + std::to_string(pp.j + 1) + ")"; }

// One pair certified: the enclosure of (P, r, c) on its best subset of samples.
PairFit<Ball> certify_pair(const PlacedPair& pp, const std::vector<Rational>& t, int H, double& worst_rel) {
  const int n = static_cast<int>(t.size());
  const Field<Mpfr> FM;
  std::vector<double> err(n);
  std::vector<Mpfr> fm(n), r;
  for (int k = 0; k < n; ++k) {
    arf_get_mpfr(fm[k].raw(), arb_midref(pp.f[k].raw()), MPFR_RNDN);
    err[k] = std::max(mag_get_d(arb_radref(pp.f[k].raw())), std::ldexp(std::fabs(fm[k].to_double()), -static_cast<int>(working_precision())));
  }
  for (int h = 0; h < H; ++h) r.push_back(FM.exp(pp.l[h]));
  const std::vector<int> s = placed_subset(t, err, pp.P, r, pp.c);
  std::vector<Rational> nodes;
  std::vector<Ball> fb;
  std::vector<Mpfr> fs;
  for (int k : s) {
    nodes.push_back(t[k]);
    fb.push_back(pp.f[k]);
    fs.push_back(fm[k]);
  }
  // the approximation: Newton on the square system from the weighted fit
  std::vector<Mpfr> x{pp.P};
  x.insert(x.end(), r.begin(), r.end());
  x.insert(x.end(), pp.c.begin(), pp.c.end());
  FM.refine(PairSystem<Mpfr>(fs, H, nodes), x);
  std::vector<Ball> xb(x.size());
  for (size_t i = 0; i < x.size(); ++i) arf_set_mpfr(arb_midref(xb[i].raw()), x[i].raw());
  const Field<Ball> FB;
  if (FB.certify(PairSystem<Ball>(fb, H, nodes), xb) != Truth::yes)
    throw_unable("placed design, ball mode: " + pair_name(pp) +
                 " could not be certified (Krawczyk's test fails on its 2H+1 samples at these answers' accuracy); "
                 "give more accurate answers (a tighter stated error); more --bits helps only when the working precision is near the answers'");
  PairFit<Ball> out{xb[0], {}, {}};
  for (int h = 0; h < H; ++h) {
    out.r.push_back(xb[1 + h]);
    out.c.push_back(xb[1 + H + h]);
  }
  for (size_t i = 1; i < xb.size(); ++i) worst_rel = std::max(worst_rel, -static_cast<double>(arb_rel_accuracy_bits(xb[i].raw())));
  return out;
}

// lambda = Delta^{-1} delta as balls: the residues of the offset delta are
// lambda^T (the residues of Delta's columns), head by head.
std::vector<Ball> lambda_of(const QMat& Dinv, const QVec& delta) {
  std::vector<Ball> out;
  for (const Rational& x : matvec(Dinv, delta)) out.push_back(Ball(x));
  return out;
}

bool meets_any(const Ball& x, const std::vector<Ball>& c) {
  for (const Ball& y : c)
    if (arb_overlaps(x.raw(), y.raw())) return true;
  return false;
}

// The heads at the first final token (placed_label_search, then the count
// and the one-residue-per-head checks). The true heads' choices always
// survive (proofs/37); if exactly H survive, they are those.
std::vector<std::vector<int>> first_token_heads(const std::vector<PairFit<Ball>>& first, const std::vector<std::vector<Ball>>& lam,
                                                const std::vector<const PairFit<Ball>*>& checks, int H) {
  const int d = static_cast<int>(first.size());
  const PlacedLabelSearch search = placed_label_search(first, lam, checks, H, true, 1L << 26);
  if (search.stopped)
    throw_unable("placed design, ball mode: the labelling at the first final token passed 2^26 steps without links (the budget had no room for "
                 "them, or they could not be certified); give the run a larger budget or more accurate answers");
  const std::vector<std::vector<int>>& found = search.found;
  if (static_cast<int>(found.size()) < H)
    throw Error(ErrorKind::inconsistent, "placed design, ball mode: the certified residues of the first final token fit fewer than H heads");
  if (static_cast<int>(found.size()) > H)
    throw_unable("placed design, ball mode: the certified residues do not tell the heads apart at the first final token; give more accurate answers");
  for (int i = 0; i < d; ++i) {
    std::vector<char> used(H, 0);
    for (const auto& f : found) used[f[i]] = 1;
    if (std::count(used.begin(), used.end(), 1) != H) throw_unable("placed design, ball mode: two heads share a residue at the first final token");
  }
  return found;
}

// The offsets of final token j as the columns of a matrix, and its inverse in Q.
QMat offsets_inverse(const std::vector<PlacedPair>& pairs, int d, int j) {
  QMat D(d, d), inv;
  for (int i = 0; i < d; ++i)
    for (int r = 0; r < d; ++r) D(r, i) = pairs[static_cast<size_t>(j) * d + i].delta[r];
  if (!inverse(D, inv)) throw_internal("placed design: the offsets of a final token are singular");
  return inv;
}

// x = Dinv^T y (x_r = sum_i Dinv(i, r) y_i) in balls.
std::vector<Ball> apply_transposed(const QMat& Dinv, const std::vector<Ball>& y) {
  const int d = Dinv.rows();
  std::vector<Ball> x(d, Ball(0L));
  for (int r = 0; r < d; ++r)
    for (int i = 0; i < d; ++i)
      if (!Dinv(i, r).is_zero()) x[r] += Ball(Dinv(i, r)) * y[i];
  return x;
}

// The largest radius over the largest |midpoint| of the balls, log2.
double rel_radius_log2(const std::vector<Ball>& x) {
  double rad = 0, mid = 0;
  for (const Ball& b : x) {
    rad = std::max(rad, mag_get_d(arb_radref(b.raw())));
    mid = std::max(mid, std::fabs(arf_get_d(arb_midref(b.raw()), ARF_RND_NEAR)));
  }
  return std::log2(rad / mid);
}

}  // namespace

PlacedLabelSearch placed_label_search(const std::vector<PairFit<Ball>>& first, const std::vector<std::vector<Ball>>& lam,
                                      const std::vector<const PairFit<Ball>*>& checks, int H, bool sparse, long node_limit) {
  const int d = static_cast<int>(first.size()), nq = static_cast<int>(checks.size());
  const int K = std::min(nq, 4);  // checks that prune the search by hulls; the rest test its leaves
  const long prec = working_precision();
  // hull[q][i]: a ball holding lambda_qi c for every residue c of pair i; suffix sums of them
  std::vector<std::vector<Ball>> suffix(K, std::vector<Ball>(d + 1, Ball(0L)));
  for (int q = 0; q < K; ++q)
    for (int i = d - 1; i >= 0; --i) {
      Ball hull = lam[q][i] * first[i].c[0];
      for (int g = 1; g < H; ++g) {
        const Ball y = lam[q][i] * first[i].c[g];
        arb_union(hull.raw(), hull.raw(), y.raw(), prec);
      }
      suffix[q][i] = suffix[q][i + 1] + hull;
    }
  // complete[i]: the checks q >= K whose lambda_q is exactly zero from index i
  // on, so that their prediction is known once pick[0..i-1] are (sparse only;
  // the leaf tests the rest). A check is tested once, at its first complete depth.
  std::vector<std::vector<int>> complete(d + 1);
  for (int q = K; q < nq; ++q) {
    int last = d;
    if (sparse)
      while (last > 0 && arb_is_zero(lam[q][last - 1].raw())) --last;
    complete[last].push_back(q);
  }
  PlacedLabelSearch out;
  std::vector<int> pick(d);
  std::vector<std::vector<Ball>> part(d + 1, std::vector<Ball>(K, Ball(0L)));
  const size_t cap = static_cast<size_t>(H) * 4;
  // the prediction of check q from pick[0..i-1], summed in index order as at
  // the leaf (the terms beyond are exact zeros), so a test here fails exactly
  // when the leaf's would
  auto meets = [&](int q, int i) {
    Ball s(0L);
    for (int a = 0; a < i; ++a) s += lam[q][a] * first[a].c[pick[a]];
    return meets_any(s, checks[q]->c);
  };
  std::function<void(int)> walk = [&](int i) {
    if (out.found.size() > cap || out.stopped) return;
    if (++out.nodes > node_limit) {
      out.stopped = true;
      return;
    }
    for (int q = 0; q < K; ++q)
      if (!meets_any(part[i][q] + suffix[q][i], checks[q]->c)) return;
    for (int q : complete[i])
      if (!meets(q, i)) return;
    if (i == d) {
      out.found.push_back(pick);
      return;
    }
    for (int g = 0; g < H; ++g) {
      pick[i] = g;
      for (int q = 0; q < K; ++q) part[i + 1][q] = part[i][q] + lam[q][i] * first[i].c[g];
      walk(i + 1);
    }
  };
  walk(0);
  return out;
}

std::vector<int> placed_subset(const std::vector<Rational>& t, const std::vector<double>& err, const Mpfr& P, const std::vector<Mpfr>& r,
                               const std::vector<Mpfr>& c) {
  const int H = static_cast<int>(r.size()), m = 2 * H + 1, n = static_cast<int>(t.size());
  if (n < m) throw_unable("placed design, ball mode: a pair has fewer than 2H+1 samples");
  const PrecisionScope scope(96);  // a choice only: scores to a few digits
  std::vector<Mpfr> x{P};
  x.insert(x.end(), r.begin(), r.end());
  x.insert(x.end(), c.begin(), c.end());
  std::vector<int> best;
  double bs = INFINITY;
  auto consider = [&](const std::vector<int>& s) {
    const double v = subset_score(t, err, s, x, H);
    if (best.empty() || v < bs) {
      bs = v;
      best = s;
      return true;
    }
    return false;
  };
  const int A = std::min(12, (n - m) / 2);
  for (int a = 0; a <= A; a += 2)
    for (int b = n - 1; b >= n - 1 - A; b -= 2) {
      std::vector<int> s;
      for (int e = 0; e < m; ++e) s.push_back(a + static_cast<int>(std::lround(static_cast<double>(b - a) * e / (m - 1))));
      if (std::adjacent_find(s.begin(), s.end(), [](int u, int w) { return u >= w; }) == s.end()) consider(s);
    }
  // single moves of one sample by one place, while one lowers the bound
  for (int pass = 0; pass < 12 && !best.empty(); ++pass) {
    bool moved = false;
    for (int e = 0; e < m && !moved; ++e)
      for (int step : {-1, 1}) {
        std::vector<int> s = best;
        s[e] += step;
        if (s[e] < 0 || s[e] >= n || (e > 0 && s[e] <= s[e - 1]) || (e + 1 < m && s[e] >= s[e + 1])) continue;
        if (consider(s)) {
          moved = true;
          break;
        }
      }
    if (!moved) break;
  }
  if (best.empty()) throw_unable("placed design, ball mode: no subset of a pair's samples is well posed");
  return best;
}

PlacedCertified certify_placed(const PlacedResult& res, int H) {
  const int d = res.B.rows(), n = res.B.cols();  // n = d + 1 final tokens with biases
  if (static_cast<int>(res.pairs.size()) != d * n || d < 1) throw_internal("placed design: the last round's pairs are missing");
  std::vector<Rational> t;
  for (const Counts& g : res.grid) t.push_back(Rational(g.k, static_cast<unsigned long>(g.m)));
  PlacedCertified out;
  std::vector<PairFit<Ball>> fits;  // [j*d + i] (offset i of final token j), as res.pairs
  for (const PlacedPair& pp : res.pairs) fits.push_back(certify_pair(pp, t, H, out.worst_pair_log2_rel));
  // every final token's offsets inverted once, in Q (labels, v_h and W_h use them)
  std::vector<QMat> Dinv;
  for (int j = 0; j < n; ++j) Dinv.push_back(offsets_inverse(res.pairs, d, j));
  const QMat& D0 = Dinv[0];
  // labels at the first final token, checked against every other pair
  std::vector<std::vector<Ball>> lam;
  std::vector<const PairFit<Ball>*> checks;
  for (size_t p = d; p < res.pairs.size(); ++p) {
    lam.push_back(lambda_of(D0, res.pairs[p].delta));
    checks.push_back(&fits[p]);
  }
  // the links last: their lambda_q = u e_1 + w e_i is exact and sparse, so
  // the search tests link i as soon as pick_i is made (proofs/37 (4)). They
  // only prune: a link that cannot be certified is left out (the search is
  // then slower, its survivors the same), and they do not count in the
  // widest certified pair.
  std::vector<PairFit<Ball>> link_fits;
  for (const PlacedPair& pp : res.links) {
    double unused = 0;
    try {
      link_fits.push_back(certify_pair(pp, t, H, unused));
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unable) throw;
      continue;
    }
    lam.push_back(lambda_of(D0, pp.delta));
  }
  for (const PairFit<Ball>& lf : link_fits) checks.push_back(&lf);
  const std::vector<PairFit<Ball>> first(fits.begin(), fits.begin() + d);
  const std::vector<std::vector<int>> heads = first_token_heads(first, lam, checks, H);
  // v_h from the first final token; then every token's labels, and its v_h intersected
  std::vector<std::vector<Ball>> v(H), L(H, std::vector<Ball>(static_cast<size_t>(d) * n));
  std::vector<std::vector<Ball>> C(H, std::vector<Ball>(static_cast<size_t>(d) * n));
  for (int h = 0; h < H; ++h) {
    std::vector<Ball> c0;
    for (int i = 0; i < d; ++i) c0.push_back(-first[i].c[heads[h][i]]);
    v[h] = apply_transposed(D0, c0);
  }
  const Field<Ball> FB;
  for (int j = 0; j < n; ++j) {
    const QMat& Dj = Dinv[j];
    for (int i = 0; i < d; ++i) {
      const size_t p = static_cast<size_t>(j) * d + i;
      std::vector<int> perm(H);
      if (j == 0) {
        for (int h = 0; h < H; ++h) perm[h] = heads[h][i];
      } else {
        std::vector<Ball> pred(H, Ball(0L));
        for (int h = 0; h < H; ++h)
          for (int r = 0; r < d; ++r) pred[h] -= Ball(res.pairs[p].delta[r]) * v[h][r];
        perm = unique_or_throw(match_heads(H, [&](int h, int g) { return arb_overlaps(pred[h].raw(), fits[p].c[g].raw()) ? Truth::unknown : Truth::no; }),
                               "placed design, ball mode: " + pair_name(res.pairs[p]));
      }
      for (int h = 0; h < H; ++h) {
        L[h][p] = FB.log(fits[p].r[perm[h]]);
        C[h][p] = fits[p].c[perm[h]];
      }
    }
    for (int h = 0; h < H; ++h) {
      std::vector<Ball> cj;
      for (int i = 0; i < d; ++i) cj.push_back(-C[h][static_cast<size_t>(j) * d + i]);
      const std::vector<Ball> vj = apply_transposed(Dj, cj);
      for (int r = 0; r < d; ++r)
        if (!arb_intersection(v[h][r].raw(), v[h][r].raw(), vj[r].raw(), working_precision()))
          throw Error(ErrorKind::inconsistent, "placed design, ball mode: the residues of head " + std::to_string(h + 1) + " disagree across final tokens");
    }
  }
  // W_h b_j (+ c_h) = Delta_j^{-T} log r_h(., j); W_h = [W_h b_j] B^{-1}, or
  // with biases [W_h c_h] = [W_h b_j + c_h] A^{-1}, A = [B; 1 ... 1]
  QMat Binv;
  if (!inverse(finals_matrix(res.B), Binv)) throw_internal("placed design: B singular after the draw check");
  for (int h = 0; h < H; ++h) {
    Mat<Ball> X(d, n), W(d, d);
    std::vector<Ball> c;
    for (int j = 0; j < n; ++j) {
      const std::vector<Ball> lj(L[h].begin() + static_cast<long>(j) * d, L[h].begin() + static_cast<long>(j + 1) * d);
      const std::vector<Ball> x = apply_transposed(Dinv[j], lj);
      for (int r = 0; r < d; ++r) X(r, j) = x[r];
    }
    std::vector<Ball> entries;
    for (int r = 0; r < d; ++r)
      for (int col = 0; col < n; ++col) {
        Ball s(0L);
        for (int k = 0; k < n; ++k)
          if (!Binv(k, col).is_zero()) s += X(r, k) * Ball(Binv(k, col));
        if (col < d) W(r, col) = s;
        else c.push_back(s);
        entries.push_back(s);
      }
    out.max_rel_radius_log2 = std::max(out.max_rel_radius_log2, std::max(rel_radius_log2(entries), rel_radius_log2(v[h])));
    out.heads.push_back(LearnedHead<Ball>{std::move(W), std::move(v[h]), std::move(c)});
  }
  // beta = f([b_1]) - v^T b_1: the first pair's f(0) is the answer to [b_1],
  // a ball that holds the true value whenever the stated errors do
  if (n > d) {
    Ball beta = res.pairs[0].f[0];
    for (const auto& hd : out.heads)
      for (int r = 0; r < d; ++r)
        if (!res.B(r, 0).is_zero()) beta -= hd.v[r] * Ball(res.B(r, 0));
    out.beta = beta;
  }
  return out;
}

}  // namespace mhaq
