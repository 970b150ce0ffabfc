// The placed design in ball mode (docs/math/designs.md#placed, proofs/37):
// the pair system at arbitrary nodes keeps the paper schedule's numbers, the
// closed-form inverse Jacobian holds at ratios, and from 53-bit answers at
// d = 8, H = 4 the run ends ok with enclosures that contain the canonical
// truth with relative radius <= 2^-30; from 24-bit answers no run ends ok
// with an enclosure that misses the truth. The labelling search's sparse
// prune keeps the survivors of the search without it, and with links it
// labels d = 24, H = 4 in at most 1 + H + H^2 (d - 1) nodes.
#include <doctest/doctest.h>

#include <arb.h>

#include <cmath>
#include <string>

#include "mhaq/run/record_json.hpp"
#include "mhaq/analysis/placed_certify.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/stages/3-fit/pair_fit.hpp"
#include "test_util.hpp"

using namespace mhaq;

TEST_CASE("pair system: nodes 0..2H given explicitly are the paper schedule's system, number for number") {
  PrecisionScope scope(128);
  const Field<Mpfr> F;
  const int H = 2;
  std::vector<Mpfr> f, x{F.from(Rational(1, 3)), F.from(Rational(2)), F.from(Rational(1, 7)), F.from(Rational(-3, 5)), F.from(Rational(5, 4))};
  std::vector<Rational> nodes;
  for (int k = 0; k < 2 * H + 1; ++k) {
    f.push_back(F.from(Rational(k * k + 1, 9)));
    nodes.push_back(Rational(k));
  }
  const PairSystem<Mpfr> plain(f, H), given(f, H, nodes);
  Mat<Mpfr> Ya, Yb, Ja(5, 5), Jb(5, 5);
  REQUIRE(plain.inverse_jacobian(F, x, Ya));
  REQUIRE(given.inverse_jacobian(F, x, Yb));
  plain.jacobian(F, x, Ja);
  given.jacobian(F, x, Jb);
  for (int i = 0; i < 5; ++i) {
    CHECK(mpfr_equal_p(plain.model(F, x, i).raw(), given.model(F, x, i).raw()));
    for (int k = 0; k < 5; ++k) {
      CHECK(mpfr_equal_p(Ya(i, k).raw(), Yb(i, k).raw()));
      CHECK(mpfr_equal_p(Ja(i, k).raw(), Jb(i, k).raw()));
    }
  }
}

TEST_CASE("pair system at ratios: the closed-form inverse Jacobian inverts the Jacobian") {
  PrecisionScope scope(256);
  const Field<Mpfr> F;
  const int H = 3;
  const std::vector<Rational> t{Rational(0), Rational(1, 4096), Rational(1, 40), Rational(3, 7), Rational(2), Rational(90), Rational(5000)};
  std::vector<Mpfr> x{F.from(Rational(1, 5)), F.from(Rational(300)), F.from(Rational(1, 2)), F.from(Rational(1, 900)),
                      F.from(Rational(-3, 5)), F.from(Rational(5, 4)), F.from(Rational(2, 9))};
  const PairSystem<Mpfr> sys(std::vector<Mpfr>(t.size(), Mpfr(0L)), H, t);
  Mat<Mpfr> Y, J(7, 7);
  REQUIRE(sys.inverse_jacobian(F, x, Y));
  sys.jacobian(F, x, J);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j) {
      Mpfr s(0L);
      for (int k = 0; k < 7; ++k) s += Y(i, k) * J(k, j);
      CHECK(std::fabs(s.to_double() - (i == j ? 1.0 : 0.0)) <= 1e-60);
    }
}

namespace {

// The largest radius of a learned head's entries relative to the largest
// |entry| of the true head it contains (W and v apart), log2; +inf when no
// true head lies in it entry by entry.
double rel_radius_log2(const LearnedHead<Ball>& got, const Model& canon, std::vector<char>& used) {
  const int d = canon.d;
  for (int t = 0; t < canon.num_heads(); ++t) {
    if (used[t]) continue;
    const auto& h = canon.heads[t];
    bool in = true;
    double wmax = 0, vmax = 0, wr = 0, vr = 0;
    for (int i = 0; i < d; ++i) {
      in = in && arb_contains_fmpq(got.v[i].raw(), h.v[i].raw());
      vmax = std::max(vmax, std::fabs(h.v[i].approx_double()));
      vr = std::max(vr, mag_get_d(arb_radref(got.v[i].raw())));
      for (int j = 0; j < d; ++j) {
        in = in && arb_contains_fmpq(got.W(i, j).raw(), h.W(i, j).raw());
        wmax = std::max(wmax, std::fabs(h.W(i, j).approx_double()));
        wr = std::max(wr, mag_get_d(arb_radref(got.W(i, j).raw())));
      }
    }
    if (!in) continue;
    used[t] = 1;
    return std::log2(std::max(wr / wmax, vr / vmax));
  }
  return INFINITY;
}

RecoverResult ball_run(const Model& m, long oracle_bits, std::uint64_t seed) {
  RecoverOptions o;
  o.arith = Arith::ball;
  o.bits = 256;
  o.oracle_bits = oracle_bits;
  o.seed = seed;
  o.design = Design::placed;
  return recover(m, o);
}

Model model_of(int d, int H, std::uint64_t seed) {
  GenerateOptions g = default_generate(Arith::ball);
  g.d = d;
  g.heads = H;
  g.seed = seed;
  return generate_model(g);
}

}  // namespace

TEST_CASE("placed design in balls: d = 8, H = 4 from 53-bit answers, ok, every enclosure holds the truth, relative radius <= 2^-30") {
  {
    const Model m = model_of(8, 4, 1);
    const RecoverResult r = ball_run(m, 53, 1);
    INFO(record_json(r).dump().substr(0, 800));
    REQUIRE(r.judge.status == Status::ok);
    CHECK(r.run.arith == Arith::ball);
    CHECK(r.truth.contains_truth == true);
    CHECK(r.evidence.heads_recovered == 4);
    CHECK(r.evidence.queries.value() <= r.design.query_budget.value());
  }
  // the enclosures themselves, from the library: learn, then certify
  for (const std::uint64_t seed : {1, 2}) {
    PrecisionScope scope(256);
    const Model mm = model_of(8, 4, seed);
    const TokenSpec tok = default_tokens(Arith::ball);
    OracleStack<Ball> o_stack = OracleStack<Ball>::model(mm, tok.den, OracleNoise{53, Rational(0), 1, NoisePattern::uniform, {}});
    Oracle<Ball>& o = o_stack.top();
    PlacedOptions po;
    po.H = 4;
    po.seed = seed;
    po.tokens = tok;
    po.budget = 10 * paper_query_bound(8, 4);
    const PlacedResult res = learn_placed(o, po);
    const PlacedCertified cert = certify_placed(res, 4);
    const Model c = mm.canonical();
    REQUIRE(static_cast<int>(cert.heads.size()) == c.num_heads());
    std::vector<char> used(c.num_heads(), 0);
    for (const auto& hd : cert.heads) {
      const double rel = rel_radius_log2(hd, c, used);
      MESSAGE("seed " << seed << ": relative radius 2^" << rel);
      CHECK(rel <= -30);  // +inf when the head holds no true head
    }
    // the same answers stated to 2^-12 only (every radius widened): the
    // pairs or their labels cannot be certified, and certify_placed says so
    // (unable or inconsistent) rather than returning heads
    PlacedResult wide = res;
    for (PlacedPair& pp : wide.pairs)
      for (Ball& y : pp.f) {
        mag_t m;
        mag_init(m);
        arb_get_mag(m, y.raw());  // |y| (an upper bound)
        mag_mul_2exp_si(m, m, -12);
        mag_max(arb_radref(y.raw()), arb_radref(y.raw()), m);
        mag_clear(m);
      }
    try {
      const PlacedCertified w = certify_placed(wide, 4);
      std::vector<char> used2(c.num_heads(), 0);
      for (const auto& hd : w.heads) CHECK(std::isfinite(rel_radius_log2(hd, c, used2)));  // if it certifies, it holds the truth
      MESSAGE("seed " << seed << ", answers widened to 2^-12: certified, every head holding the truth");
    } catch (const Error& e) {
      CHECK((e.kind() == ErrorKind::unable || e.kind() == ErrorKind::inconsistent));
      MESSAGE("seed " << seed << ", answers widened to 2^-12: " << std::string(e.what()));
    }
  }
}

TEST_CASE("placed design in balls: from 24-bit answers no run ends ok with an enclosure that misses the truth") {
  test::Outcomes outcomes("24-bit answers, d = 8, H = 4");
  for (const std::uint64_t seed : {1, 2}) {
    const Model m = model_of(8, 4, seed);
    const RecoverResult r = ball_run(m, 24, seed);
    INFO(record_json(r).dump().substr(0, 600));
    CHECK(r.judge.status != Status::mismatch);
    if (r.judge.status == Status::ok) CHECK(r.truth.contains_truth == true);
    outcomes.count(status_name(r.judge.status));
  }
  outcomes.require(1, {"ok"});  // at least one enclosure to hold against the truth
}

namespace {

// Exact residues at random offsets: v_h and offsets with entries in
// [-999, 999] / 64, the H residues -delta^T v_h of every pair shuffled per pair
// and widened by 2^-60 (the labelling search sees balls, as after Krawczyk).
struct LabelDraw {
  std::vector<PairFit<Ball>> first, checks;
  std::vector<std::vector<Ball>> lam;
  std::vector<std::vector<int>> truth;  // truth[h][i]: head h's residue at the first token's pair i
};

QVec random_offset(Rng& rng, int d) {
  QVec x(d);
  for (int r = 0; r < d; ++r) x[r] = Rational(rng.uniform_int(-999, 999), 64);
  return x;
}

PairFit<Ball> residues_at(const QVec& delta, const std::vector<QVec>& v, Rng& rng, std::vector<int>* order) {
  const int H = static_cast<int>(v.size());
  std::vector<int> perm(H);
  for (int h = 0; h < H; ++h) perm[h] = h;
  for (int h = H - 1; h > 0; --h) std::swap(perm[h], perm[rng.uniform_int(0, h)]);
  PairFit<Ball> p{Ball(0L), {}, std::vector<Ball>(H, Ball(0L))};
  for (int h = 0; h < H; ++h) {
    Rational c(0);
    for (size_t r = 0; r < delta.size(); ++r) c -= delta[r] * v[h][r];
    Ball b(c);
    arb_add_error_2exp_si(b.raw(), -60);
    p.c[perm[h]] = b;
  }
  if (order) *order = perm;
  return p;
}

// d offsets Delta (invertible), `dense` check offsets at random and, with
// `links`, the d - 1 links delta_1 / 2 + delta_i / 2 (lambda = (e_1 + e_i) / 2).
LabelDraw draw_labels(std::uint64_t seed, int d, int H, int dense, bool links) {
  Rng rng(seed);
  std::vector<QVec> v, D;
  for (int h = 0; h < H; ++h) v.push_back(random_offset(rng, d));
  QMat M(d, d), Minv;
  do {
    D.clear();
    for (int i = 0; i < d; ++i) D.push_back(random_offset(rng, d));
    for (int i = 0; i < d; ++i)
      for (int r = 0; r < d; ++r) M(r, i) = D[i][r];
  } while (!inverse(M, Minv));
  LabelDraw out;
  out.truth.assign(H, std::vector<int>(d));
  for (int i = 0; i < d; ++i) {
    std::vector<int> perm;
    out.first.push_back(residues_at(D[i], v, rng, &perm));
    for (int h = 0; h < H; ++h) out.truth[h][i] = perm[h];
  }
  std::vector<QVec> q;
  for (int k = 0; k < dense; ++k) q.push_back(random_offset(rng, d));
  if (links)
    for (int i = 1; i < d; ++i) {
      QVec x(d);
      for (int r = 0; r < d; ++r) x[r] = Rational(1, 2) * D[0][r] + Rational(1, 2) * D[i][r];
      q.push_back(x);
    }
  for (const QVec& x : q) {
    out.checks.push_back(residues_at(x, v, rng, nullptr));
    std::vector<Ball> l;
    for (const Rational& y : matvec(Minv, x)) l.push_back(Ball(y));
    out.lam.push_back(l);
  }
  std::sort(out.truth.begin(), out.truth.end());
  return out;
}

PlacedLabelSearch search(const LabelDraw& ld, int H, bool sparse, long node_limit = 1L << 26) {
  std::vector<const PairFit<Ball>*> checks;
  for (const auto& c : ld.checks) checks.push_back(&c);
  return placed_label_search(ld.first, ld.lam, checks, H, sparse, node_limit);
}

}  // namespace

TEST_CASE("placed labels: the sparse prune keeps the old search's survivors, and links label d = 7 in about H^2 d nodes") {
  PrecisionScope scope(128);
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const int d = 7, H = 3;
    CAPTURE(seed);
    // dense checks only (every lambda full): both searches alike, the true heads found
    const LabelDraw dense = draw_labels(seed, d, H, d, false);
    const PlacedLabelSearch a = search(dense, H, false), b = search(dense, H, true);
    CHECK(a.found == b.found);
    CHECK(a.found == dense.truth);
    // with links: the same survivors as the search without the sparse prune,
    // in at most 1 + H + H^2 (d - 1) nodes (a wrong pick_1 or pick_i dies at its link)
    const LabelDraw linked = draw_labels(seed, d, H, d, true);
    const PlacedLabelSearch c = search(linked, H, false), e = search(linked, H, true);
    CHECK(c.found == e.found);
    CHECK(e.found == linked.truth);
    CHECK(e.nodes <= 1 + H + H * H * (d - 1));
    CHECK(c.nodes > 4 * e.nodes);
    CHECK(!c.stopped);
    CHECK(!e.stopped);
    // the limit stops a search that would pass it
    const PlacedLabelSearch f = search(linked, H, false, c.nodes - 1);
    CHECK(f.stopped);
  }
  // d = 24, H = 4 with links: H^d choices (2^48), labelled in at most 1 + H + H^2 (d - 1) nodes
  const int d = 24, H = 4;
  const LabelDraw big = draw_labels(7, d, H, 8, true);
  const PlacedLabelSearch s = search(big, H, true);
  CHECK(s.found.size() == big.truth.size());
  CHECK(s.found == big.truth);
  CHECK(s.nodes <= 1 + H + H * H * (d - 1));
}
