// The placed design's final columns refined by earlier rounds' pairs
// (docs/math/designs.md#placed, "Combined columns"): the weighted least
// squares over a column's equations and its first-order bound, and the
// labelling that lets an earlier pair join only when the last round's heads
// predict each of its poles and residues.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "mhaq/analysis/placed_design.hpp"
#include "mhaq/arith/all_fields.hpp"
#include "mhaq/base/random.hpp"

using namespace mhaq;

namespace {

Rational grid_rational(Rng& rng, long den) { return Rational(rng.uniform_int(-den, den), static_cast<unsigned long>(den)); }
double unit(Rng& rng) { return static_cast<double>(rng.uniform_int(-(1L << 20), 1L << 20)) / static_cast<double>(1L << 20); }

// d random offsets on the grid 1/64 and their equations delta^T x = l,
// each moved by err * (a draw in [-1, 1])
std::vector<PlacedColumnRow> noisy_rows(Rng& rng, const std::vector<Mpfr>& x, int count, double err) {
  const int d = static_cast<int>(x.size());
  std::vector<PlacedColumnRow> rows;
  for (int k = 0; k < count; ++k) {
    PlacedColumnRow row;
    Mpfr l(0L);
    for (int r = 0; r < d; ++r) {
      row.delta.push_back(grid_rational(rng, 64));
      l += Mpfr(row.delta.back()) * x[r];
    }
    Mpfr e;
    mpfr_set_d(e.raw(), err * unit(rng), MPFR_RNDN);
    row.l = l + e;
    row.err = err;
    rows.push_back(std::move(row));
  }
  return rows;
}

double max_error(const std::vector<Mpfr>& got, const std::vector<Mpfr>& want) {
  double e = 0;
  for (size_t r = 0; r < got.size(); ++r) e = std::max(e, std::fabs((got[r] - want[r]).to_double()));
  return e;
}

}  // namespace

TEST_CASE("placed combined columns: least squares over the earlier rounds' equations is within its first-order bound and beats the last round's alone") {
  const int d = 6;
  int better = 0;
  const int trials = 20;
  for (int t = 0; t < trials; ++t) {
    Rng rng(900 + static_cast<std::uint64_t>(t));
    std::vector<Mpfr> x;
    for (int r = 0; r < d; ++r) x.push_back(Mpfr(grid_rational(rng, 1L << 16)));
    // the last round's d equations, and three earlier rounds' d each, every one off by up to 1e-13
    const std::vector<PlacedColumnRow> last = noisy_rows(rng, x, d, 1e-13);
    std::vector<PlacedColumnRow> all = last;
    const std::vector<PlacedColumnRow> earlier = noisy_rows(rng, x, 3 * d, 1e-13);
    all.insert(all.end(), earlier.begin(), earlier.end());
    std::vector<Mpfr> x1, x4;
    std::vector<double> e1, e4;
    CAPTURE(t);
    REQUIRE(placed_column_lsq(last, d, x1, e1));
    REQUIRE(placed_column_lsq(all, d, x4, e4));
    // the problem is linear: every entry's error is within its first-order bound
    for (int r = 0; r < d; ++r) {
      CAPTURE(r);
      CHECK(std::fabs((x1[r] - x[r]).to_double()) <= e1[r] * (1 + 1e-6));
      CHECK(std::fabs((x4[r] - x[r]).to_double()) <= e4[r] * (1 + 1e-6));
    }
    better += max_error(x4, x) < max_error(x1, x);
  }
  // four times the equations at the same error: better in most trials (about
  // half the error), not in every one (the last round's noise may cancel)
  CHECK(better >= 16);
  // an accurate earlier pair outweighs a noisy last round
  Rng rng(77);
  std::vector<Mpfr> x;
  for (int r = 0; r < d; ++r) x.push_back(Mpfr(grid_rational(rng, 1L << 16)));
  std::vector<PlacedColumnRow> rows = noisy_rows(rng, x, d, 1e-10);
  std::vector<Mpfr> x1, x2;
  std::vector<double> e1, e2;
  REQUIRE(placed_column_lsq(rows, d, x1, e1));
  const std::vector<PlacedColumnRow> accurate = noisy_rows(rng, x, d, 1e-14);
  rows.insert(rows.end(), accurate.begin(), accurate.end());
  REQUIRE(placed_column_lsq(rows, d, x2, e2));
  CHECK(max_error(x2, x) * 100 <= max_error(x1, x));
  for (int r = 0; r < d; ++r) CHECK(e2[r] * 100 <= e1[r]);
  // too few equations, or an error that is no number: no column
  std::vector<Mpfr> y;
  std::vector<double> ey;
  CHECK_FALSE(placed_column_lsq(std::vector<PlacedColumnRow>(rows.begin(), rows.begin() + d - 1), d, y, ey));
  rows[0].err = INFINITY;
  CHECK_FALSE(placed_column_lsq(rows, d, y, ey));
}

TEST_CASE("placed combined columns: rows weighted by their typical errors, bounded by their stated ones") {
  // every row states 1e-10; the last round's rows are off by up to 1e-16
  // (a float64 kernel far better than its statement), the earlier rounds'
  // by up to 1e-11, and their typical errors say so
  const int d = 6, trials = 20;
  int typ_near_last = 0, stated_worse = 0;
  for (int t = 0; t < trials; ++t) {
    Rng rng(4100 + static_cast<std::uint64_t>(t));
    std::vector<Mpfr> x;
    for (int r = 0; r < d; ++r) x.push_back(Mpfr(grid_rational(rng, 1L << 16)));
    std::vector<PlacedColumnRow> last = noisy_rows(rng, x, d, 1e-16), earlier = noisy_rows(rng, x, 3 * d, 1e-11);
    for (PlacedColumnRow& row : last) row.typ = 1e-16, row.err = 1e-10;
    for (PlacedColumnRow& row : earlier) row.typ = 1e-11, row.err = 1e-10;
    std::vector<PlacedColumnRow> all = last;
    all.insert(all.end(), earlier.begin(), earlier.end());
    std::vector<PlacedColumnRow> stated = all;
    for (PlacedColumnRow& row : stated) row.typ = 0;  // weights from the stated errors alone
    std::vector<Mpfr> x1, xt, xs;
    std::vector<double> e1, et, es;
    CAPTURE(t);
    REQUIRE(placed_column_lsq(last, d, x1, e1));
    REQUIRE(placed_column_lsq(all, d, xt, et));
    REQUIRE(placed_column_lsq(stated, d, xs, es));
    // the bound is the stated errors' whatever the weights: it holds for both
    for (int r = 0; r < d; ++r) {
      CAPTURE(r);
      CHECK(std::fabs((xt[r] - x[r]).to_double()) <= et[r] * (1 + 1e-6));
      CHECK(std::fabs((xs[r] - x[r]).to_double()) <= es[r] * (1 + 1e-6));
    }
    typ_near_last += max_error(xt, x) <= 2 * max_error(x1, x);
    stated_worse += max_error(xs, x) > 100 * max_error(x1, x);
  }
  // by typical errors the noisy rows barely move the column; by the stated
  // errors alone they pull it far from the last round's (the failure this
  // weighting mends)
  CHECK(typ_near_last >= 18);
  CHECK(stated_worse >= 16);
  // a typical error that is 0, not finite or NaN leaves the stated one as the weight
  Rng rng(8);
  std::vector<Mpfr> x;
  for (int r = 0; r < d; ++r) x.push_back(Mpfr(grid_rational(rng, 1L << 16)));
  std::vector<PlacedColumnRow> rows = noisy_rows(rng, x, 2 * d, 1e-12);
  std::vector<Mpfr> y0, y1;
  std::vector<double> f0, f1;
  REQUIRE(placed_column_lsq(rows, d, y0, f0));
  for (size_t k = 0; k < rows.size(); ++k) rows[k].typ = k % 3 == 0 ? std::nan("") : k % 3 == 1 ? INFINITY : -1.0;
  REQUIRE(placed_column_lsq(rows, d, y1, f1));
  for (int r = 0; r < d; ++r) {
    CHECK(mpfr_equal_p(y0[r].raw(), y1[r].raw()) != 0);
    CHECK(f0[r] == f1[r]);
  }
}

TEST_CASE("placed combined columns: an earlier pair joins only when the last round's heads predict each of its poles and residues") {
  const int d = 4, H = 3;
  Rng rng(5);
  std::vector<std::vector<double>> col(H, std::vector<double>(d)), v(H, std::vector<double>(d)), other(H, std::vector<double>(d));
  for (int h = 0; h < H; ++h)
    for (int r = 0; r < d; ++r) col[h][r] = unit(rng), v[h][r] = unit(rng), other[h][r] = unit(rng);
  const std::vector<std::vector<double>> ecol(H, std::vector<double>(d, 1e-14)), ev(H, std::vector<double>(d, 1e-14));
  std::vector<double> delta(d);
  for (double& x : delta) x = 2 * unit(rng);
  // the pair's fit: head h's pole in place perm[h], off by a tenth of its error
  const std::vector<int> perm{2, 0, 1};
  auto pair_of = [&](const std::vector<std::vector<double>>& cols) {
    std::vector<double> l(H), c(H);
    for (int h = 0; h < H; ++h) {
      double pl = 0, pc = 0;
      for (int r = 0; r < d; ++r) pl += delta[r] * cols[h][r], pc -= delta[r] * v[h][r];
      l[perm[h]] = pl + 1e-14;
      c[perm[h]] = pc - 1e-14;
    }
    return std::pair<std::vector<double>, std::vector<double>>{l, c};
  };
  const std::vector<double> el(H, 1e-13), ec(H, 1e-13);
  auto [l, c] = pair_of(col);
  CHECK(placed_match_pair(delta, l, el, c, ec, 1.5, col, ecol, v, ev) == perm);
  // a pair that misses its answers does not join
  CHECK(placed_match_pair(delta, l, el, c, ec, 9.0, col, ecol, v, ev).empty());
  // a pair of another final token (its poles another column's): every label would be wrong
  auto [lo, co] = pair_of(other);
  CHECK(placed_match_pair(delta, lo, el, co, ec, 1.5, col, ecol, v, ev).empty());
  // one pole 100 of its errors away from its prediction
  std::vector<double> l2 = l;
  l2[perm[1]] += 1e-11;
  CHECK(placed_match_pair(delta, l2, el, c, ec, 1.5, col, ecol, v, ev).empty());
  // one residue far off, its pole in place
  std::vector<double> c2 = c;
  c2[perm[2]] += 1e-11;
  CHECK(placed_match_pair(delta, l, el, c2, ec, 1.5, col, ecol, v, ev).empty());
  // two poles that both meet head 0's prediction: the labels there are a guess
  std::vector<double> l3 = l, c3 = c;
  l3[perm[1]] = l[perm[0]];
  c3[perm[1]] = c[perm[0]];
  CHECK(placed_match_pair(delta, l3, el, c3, ec, 1.5, col, ecol, v, ev).empty());
  // errors so wide that two heads' predictions meet one pole
  const std::vector<double> wide(H, 10.0);
  CHECK(placed_match_pair(delta, l, wide, c, wide, 1.5, col, ecol, v, ev).empty());
  // a fit whose error is no number (its Jacobian singular) says nothing about its poles
  std::vector<double> el4 = el;
  el4[perm[2]] = INFINITY;
  CHECK(placed_match_pair(delta, l, el4, c, ec, 1.5, col, ecol, v, ev).empty());
}
