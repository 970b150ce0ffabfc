// The machine check of proofs/39-grid-witness.md (the registry: registry.cpp).
#include "mhaq/stages/grid_guard.hpp"
#include "prove_common.hpp"

namespace mhaq::proof {

namespace {

// The witness query of the guard: k copies of x, then n - k copies of y.
Query grid_query(const QVec& x, const QVec& y, long k, long n) {
  Query q;
  if (k > 0) q.push_back(Run{x, k});
  q.push_back(Run{y, n - k});
  return q;
}

// Heads of the difference model f - g: distinct W with a nonzero v difference.
int difference_heads(const Model& f, const Model& g) {
  std::vector<HeadQ> diff;
  auto add = [&](const HeadQ& h, bool minus) {
    for (HeadQ& e : diff)
      if (e.W == h.W) {
        e.v = minus ? e.v - h.v : e.v + h.v;
        return;
      }
    diff.push_back(HeadQ{h.W, minus ? QVec(h.v.size()) - h.v : h.v});
  };
  for (const HeadQ& h : f.heads) add(h, false);
  for (const HeadQ& h : g.heads) add(h, true);
  int K = 0;
  for (const HeadQ& e : diff) K += !(e.v == QVec(e.v.size()));
  return K;
}

// Every (x, y) in S^(2d), S = {-R..R}: the pairs where all n witness queries
// agree (broken: only k = 0 asked).
long agreeing_pairs(const Model& f, const Model& g, long R, long n, bool broken) {
  const int d = f.d;
  const long L = std::max(f.w_denominator(), g.w_denominator()) * std::min(f.w_denominator(), g.w_denominator());
  const long S = 2 * R + 1;
  long total = 1;
  for (int i = 0; i < 2 * d; ++i) total *= S;
  long agree = 0;
  for (long c = 0; c < total; ++c) {
    QVec x(static_cast<size_t>(d)), y(static_cast<size_t>(d));
    long r = c;
    for (int i = 0; i < d; ++i, r /= S) x[static_cast<size_t>(i)] = Rational(r % S - R);
    for (int i = 0; i < d; ++i, r /= S) y[static_cast<size_t>(i)] = Rational(r % S - R);
    bool all = true;
    for (long k = 0; k < (broken ? 1 : n) && all; ++k) {
      const Query q = grid_query(x, y, k, n);
      all = QTauAccess::equal(evaluate_exact(f, q, L), evaluate_exact(g, q, L));
    }
    agree += all;
  }
  return agree;
}

HeadQ head2(const char* w00, const char* w01, const char* w10, const char* w11, const char* v0, const char* v1) {
  HeadQ h{QMat(2, 2), QVec(2)};
  h.W(0, 0) = Rational::parse(w00);
  h.W(0, 1) = Rational::parse(w01);
  h.W(1, 0) = Rational::parse(w10);
  h.W(1, 1) = Rational::parse(w11);
  h.v[0] = Rational::parse(v0);
  h.v[1] = Rational::parse(v1);
  return h;
}

}  // namespace

// Pair witnesses from a grid (proofs/39): exhaustive counts of the (x, y)
// where two distinct models agree at all 2H+1 witness queries, against the
// Schwartz-Zippel bound (2K - 1) |S|^(2d-1); the fuzz campaign's findings
// (true and self-checked wrong heads); the guard's parameters. Broken: only
// k = 0 asked, where models with equal sum_h v_h agree everywhere.
void check_grid_witness(const ProveOptions& o, bool broken, LemmaCheck& out) {
  Rng rng(o.seed ^ 0x3939);
  long worst_num = 0, worst_den = 1;
  auto count = [&](const Model& f, const Model& g, long R, const std::string& what) {
    const int H = std::max(f.num_heads(), g.num_heads());
    const int K = difference_heads(f, g);
    require(K >= 1, what + ": the models are equal");
    const long S = 2 * R + 1;
    long cells = 1;
    for (int i = 0; i < 2 * f.d - 1; ++i) cells *= S;
    const long agree = agreeing_pairs(f, g, R, 2L * H + 1, broken);
    require(agree <= (2L * K - 1) * cells, what + ": " + std::to_string(agree) + " of " + std::to_string(cells * S) +
                                               " witness pairs agree at every k, above the bound (2K-1)|S|^(2d-1) = " + std::to_string((2L * K - 1) * cells));
    if (agree * worst_den > worst_num * cells * S) worst_num = agree, worst_den = cells * S;
    ++out.cases;
  };
  // the campaign's findings: the truth against the heads the run reported
  Model t1, w1, t3, w3;
  t1.d = w1.d = t3.d = w3.d = 2;
  t1.heads = {head2("-2", "-2", "-2", "1", "-8/3", "-8/3"), head2("-2", "-2", "-2", "-2", "-8/3", "-5/3")};
  w1.heads = {head2("-2", "-2", "-2", "-2", "-16/3", "-13/3")};
  t3.heads = {head2("1", "0", "0", "1", "-8/3", "-8/3"), head2("-2", "0", "2", "0", "-4/3", "-4/3"), head2("0", "0", "0", "0", "4/3", "4/3")};
  w3.heads = {head2("1", "0", "0", "1", "-8/3", "-8/3"), head2("-2", "0", "0", "0", "-4/3", "4/3"), head2("0", "0", "2", "0", "4/3", "-4/3")};
  count(t1.canonical(), w1.canonical(), 3, "lean finding (seed 62512)");
  count(t3.canonical(), w3.canonical(), 3, "derived-repairs finding (seed 62194)");
  // random pairs of distinct canonical models, d = 1, 2
  const long n = scaled(o, 8);
  for (long t = 0; t < n; ++t) {
    const int d = static_cast<int>(1 + t % 2);
    const Model f = random_model(rng, d, 2).canonical();
    if (f.num_heads() < 2) continue;
    Model g = f;
    const int kind = static_cast<int>((t / 2) % 3);
    if (kind == 0) g.heads[0].W(0, 0) += Rational(1);
    else if (kind == 1) std::swap(g.heads[0].v, g.heads[1].v);
    else {  // two heads merged into one with the summed v (the lean finding's shape)
      g.heads[0].v = g.heads[0].v + g.heads[1].v;
      g.heads.pop_back();
    }
    g = g.canonical();
    if (difference_heads(f, g) == 0) continue;
    count(f, g, d == 1 ? 4 : 2, "random pair " + std::to_string(t));
  }
  // the guard's parameters
  for (long R = 1; R <= 64; ++R)
    for (int H = 1; H <= 16; ++H) {
      LearnOptions lo;
      lo.H = H;
      lo.tokens = TokenSpec{R, 1};
      const GridGuard g = grid_guard(2, lo);
      if (!g.fires) continue;
      const Rational p = Rational(4L * H - 1) / Rational(2 * g.range + 1);
      Rational miss(1);
      for (int k = 0; k < g.pairs; ++k) miss *= p;
      require(p < Rational(1, 2UL) && miss <= Rational(1, 1024UL) && Rational(1, 1024UL) < miss / p && g.length == 2 * H + 1,
              "the guard's witnesses at R = " + std::to_string(R) + ", H = " + std::to_string(H) + " miss the 2^-10 target or ask more than needed");
    }
  out.detail = std::to_string(out.cases) + " model pairs (the campaign's two findings, random d = 1, 2 pairs): at most " + std::to_string(worst_num) + " of " +
               std::to_string(worst_den) + " witness pairs agree at every k, within (2K-1)/|S|; the guard's parameters for R = 1..64, H = 1..16";
}

}  // namespace mhaq::proof
