// The placed design (docs/math/designs.md#placed, proofs/34): its grid of
// copy counts, the pair identity with the final token repeated that the grid
// relies on, recovery from float64 answers, and a soak: no run ends ok with
// the wrong head count or an error above its tolerance, from 53-bit and
// 24-bit answers (plain models, shared W, cancelling v, near-collisions).
// MHAQ_TEST_MULTIPLIER scales the soak's model count (4 per unit; 50 gives
// 200 models up to d = 8, H = 8).
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>

#include "mhaq/run/record_json.hpp"
#include "mhaq/analysis/placed_design.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/recover.hpp"
#include "test_util.hpp"

using namespace mhaq;

TEST_CASE(
    "placed grid: t = 0 first, ratios strictly increasing, no run longer "
    "than k_max") {
  for (const int n : {3, 10, 40, 60}) {
    const std::vector<Counts> g = placed_grid(n, 1L << 16);
    CHECK(g.front().k == 0);
    CHECK(g.front().m == 1);
    CHECK(static_cast<int>(g.size()) <= n + 1);
    CHECK(static_cast<int>(g.size()) >= n / 2);
    for (size_t t = 1; t < g.size(); ++t) {
      CHECK(g[t].k >= 1);
      CHECK(g[t].m >= 1);
      CHECK(g[t].k <= (1L << 16));
      CHECK(g[t].m <= (1L << 16));
      CHECK(g[t - 1].k * g[t].m < g[t].k * g[t - 1].m);
    }
    CHECK(g[1].k * (1L << 16) <= 2 * g[1].m);  // reaches down to about 1/k_max
    CHECK(g.back().k >= (1L << 15));           // and up to about k_max
  }
  CHECK_THROWS_AS(placed_grid(2, 1L << 16), Error);
}

TEST_CASE(
    "pair identity with the final token repeated: [a x k, b x m] answers "
    "f(k/m)") {
  PrecisionScope scope(256);
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = 3;
  g.heads = 3;
  g.seed = 5;
  const Model m = generate_model(g);
  const TokenSpec tok = default_tokens(Arith::mpfr);
  OracleStack<Mpfr> o_stack = OracleStack<Mpfr>::model(m, tok.den);
  Oracle<Mpfr>& o = o_stack.top();
  const Field<Mpfr>& F = o.field();
  const QVec b{Rational(1, 2), Rational(-1, 4), Rational(1, 16)}, a{Rational(3, 4), Rational(1, 8), Rational(-5, 8)};
  for (const auto& [k, mm] : std::vector<std::pair<long, long>>{{1, 1}, {1, 1000}, {7, 3}, {5000, 1}, {3, 65536}}) {
    Mpfr want = F.from(Rational(0));
    for (const auto& h : m.heads) {
      Rational sa(0), sb(0), va(0), vb(0);
      for (int i = 0; i < 3; ++i) {
        va += h.v[i] * a[i];
        vb += h.v[i] * b[i];
        for (int j = 0; j < 3; ++j) {
          sa += a[i] * h.W(i, j) * b[j];
          sb += b[i] * h.W(i, j) * b[j];
        }
      }
      const Mpfr r = F.exp(sa - sb), t = F.from(Rational(k, static_cast<unsigned long>(mm)));
      want += F.from(va) + F.from(vb - va) / (F.from(Rational(1)) + r * t);
    }
    const Mpfr got = o.query(Query{Run{a, k}, Run{b, mm}});
    CHECK(std::fabs((got - want).to_double()) <= 1e-60);
  }
}

namespace {
RecoverResult placed_run(const Model& m, long oracle_bits, std::uint64_t seed) {
  RecoverOptions o;
  o.arith = Arith::mpfr;
  o.bits = 256;
  o.oracle_bits = oracle_bits;
  o.seed = seed;
  o.design = Design::placed;
  return recover(m, o);
}
}  // namespace

TEST_CASE(
    "placed design: d = 4, H = 3 from 53-bit answers, ok by the bound "
    "certified from its last round, within the query budget") {
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = 4;
  g.heads = 3;
  g.seed = 11;
  const Model m = generate_model(g);
  const RecoverResult r = placed_run(m, 53, 3);
  INFO(record_json(r).dump().substr(0, 600));
  REQUIRE(r.judge.status == Status::ok);
  CHECK(r.design.kind == Design::placed);
  CHECK(r.evidence.heads_recovered == 3);
  CHECK(r.truth.max_rel_error.value() <= std::ldexp(1.0, -40));
  // the ok rests on the certified bound (the estimate is a figure), which
  // holds: it is at least the true error
  CHECK(r.judge.judge_route == "placed");
  REQUIRE(r.judge.certified_error.has_value());
  CHECK(*r.judge.certified_error <= r.judge.tolerance.value());
  CHECK(*r.judge.certified_error >= r.truth.max_rel_error.value());
  CHECK(r.evidence.queries.value() <= r.design.query_budget.value());
  CHECK(r.evidence.max_length.value() <= (1L << 16) + 1);
  CHECK(r.evidence.self_check == SelfCheck::yes);
}

TEST_CASE("placed design: d = 12, H = 2, one round: its queries are exactly the least count, the links' (d - 1) pairs included, and its report names the placed design") {
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = 12;
  g.heads = 2;
  g.seed = 1;
  const RecoverResult r = placed_run(generate_model(g), 53, 1);
  INFO(record_json(r).dump().substr(0, 600));
  REQUIRE(r.judge.status == Status::ok);
  REQUIRE(r.design.placed_rounds == 1);  // the paper pilot, one round and the links: nothing else asked
  REQUIRE(r.design.pilot_kind == std::string("paper"));
  PlacedOptions po;
  po.H = 2;
  po.tokens = default_tokens(Arith::mpfr);
  const long least = placed_least_queries(12, po);
  CHECK(r.evidence.queries.value() == least);
  // without the links the count is 11 pairs of the round's grid lower
  PlacedOptions no_links = po;
  no_links.links_from_d = 13;
  const long pairs = static_cast<long>(placed_grid(10 * po.H + 10, po.k_max).size()) - 1;
  CHECK(least - placed_least_queries(12, no_links) == 11 * pairs);
  // the report says what the placed design did, not the tuned design's pilot or a schedule
  const std::string text = recover_report(r);
  INFO(text);
  CHECK(text.find("design placed") != std::string::npos);
  CHECK(text.find("a paper pilot spent " + std::to_string(r.design.pilot_queries.value()) + " queries") != std::string::npos);
  CHECK(text.find("1 round(s)") != std::string::npos);
  CHECK(text.find("tuned") == std::string::npos);
  CHECK(text.find("lean schedule") == std::string::npos);
  CHECK(text.find("schedule paper") == std::string::npos);
  CHECK(text.find("bound 2H+1") == std::string::npos);
}

TEST_CASE("placed re-estimate: readouts from unlabelled residues by meet in the middle, every head among the candidates") {
  for (const std::pair<int, int>& shape : std::vector<std::pair<int, int>>{{8, 6}, {8, 8}, {5, 3}}) {
    const int d = shape.first, H = shape.second;
    Rng rng(77 + static_cast<std::uint64_t>(d * 10 + H));
    auto unit = [&] { return static_cast<double>(rng.uniform_int(-(1L << 20), 1L << 20)) / static_cast<double>(1L << 20); };
    std::vector<std::vector<double>> v(H, std::vector<double>(d));
    for (auto& x : v)
      for (double& e : x) e = unit();
    // 40 offsets, each showing every head's residue -delta^T v_h in a shuffled
    // order, moved by up to 1e-12 (the fits' error), tolerance 1e-10
    std::vector<std::vector<double>> delta(40, std::vector<double>(d)), c(40), tol(40, std::vector<double>(H, 1e-10));
    for (int p = 0; p < 40; ++p) {
      for (double& e : delta[p]) e = unit();
      for (int h = 0; h < H; ++h) {
        double s = 0;
        for (int r = 0; r < d; ++r) s -= delta[p][r] * v[h][r];
        c[p].push_back(s + 1e-12 * unit());
      }
      for (int h = H - 1; h > 0; --h) std::swap(c[p][h], c[p][static_cast<size_t>(rng.uniform_int(0, h))]);
    }
    CAPTURE(d);
    CAPTURE(H);
    Rng pick(5);
    const std::vector<std::vector<double>> cand = placed_residue_candidates(delta, c, tol, H, pick, 2, 1L << 16);
    CHECK(cand.size() <= static_cast<size_t>(4 * H));  // the true heads, twice, and few accidents
    for (int h = 0; h < H; ++h) {
      double best = INFINITY;
      for (const auto& x : cand) {
        double e = 0;
        for (int r = 0; r < d; ++r) e = std::max(e, std::fabs(x[r] - v[h][r]));
        best = std::min(best, e);
      }
      CAPTURE(h);
      CHECK(best <= 1e-8);
    }
    // a residue moved far off in every offset: no choice closes, no candidate
    std::vector<std::vector<double>> far = c;
    for (auto& x : far) x[0] += 0.5, x[H - 1] -= 0.25;
    Rng pick2(5);
    const std::vector<std::vector<double>> none = placed_residue_candidates(delta, far, tol, H, pick2, 2, 1L << 16);
    // the heads untouched by the move may still close; the moved ones cannot
    for (const auto& x : none) {
      double e = INFINITY;
      for (int h = 0; h < H; ++h) {
        double m = 0;
        for (int r = 0; r < d; ++r) m = std::max(m, std::fabs(x[r] - v[h][r]));
        e = std::min(e, m);
      }
      CHECK(e <= 1e-8);
    }
  }
  // too many choices per half: nothing tried
  std::vector<std::vector<double>> delta(20, std::vector<double>(16, 0.5)), c(20, std::vector<double>(8, 0.0)), tol(20, std::vector<double>(8, 1e-10));
  Rng rng(1);
  CHECK(placed_residue_candidates(delta, c, tol, 8, rng, 1, 1L << 16).empty());
}

TEST_CASE("placed design: refuses what it does not do, with a usage error") {
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = 2;
  g.heads = 3;
  const Model m = generate_model(g);
  CHECK_THROWS_AS(placed_run(m, 53, 1), Error);  // H > d
  RecoverOptions o;
  o.arith = Arith::ieee;  // MPFR or balls only
  o.design = Design::placed;
  g.heads = 1;
  CHECK_THROWS_AS(recover(generate_model(g), o), Error);
}

namespace {

// A soak model: the size class of its group of four (one model of each kind:
// plain, shared W, cancelling v, near-collision) and its canonical head
// count. Most groups are small (d = 3-4, H <= 4, a few seconds); every 20
// groups hold four at d = 5-6 (H = 3-5), three at d = 8 (H = 4-6) and one at
// d = 8 (H = 7-8, about 90 s a run), so that 50 groups (200 models) cost
// about an hour of one core and the default 4 models seconds.
struct SoakModel {
  Model m;
  int kind = 0, d = 0, heads_true = 0;
};

SoakModel soak_model(int t, Rng& rng) {
  const int group = t / 4, slot = group % 20;
  SoakModel s;
  s.kind = t % 4;
  int h_lo = 1, h_hi = 4;  // the canonical head count's range
  if (slot == 19) {
    s.d = 8, h_lo = 7, h_hi = 8;
  } else if (slot % 5 == 4) {
    s.d = 8, h_lo = 4, h_hi = 6;
  } else if (slot % 5 == 2) {
    s.d = 5 + static_cast<int>(rng.uniform_int(0, 1)), h_lo = 3, h_hi = 5;
  } else {
    s.d = 3 + static_cast<int>(rng.uniform_int(0, 1));
  }
  const int extra = s.kind == 1 ? 1 : s.kind == 2 ? 2 : 0;  // heads the canonical form merges or drops
  int hc = static_cast<int>(rng.uniform_int(h_lo, std::min(h_hi, s.d)));
  if (s.kind == 1 || s.kind == 3) hc = std::max(hc, 2);  // a pair to share W or to nearly collide
  hc = std::min(hc, 8 - extra);                          // at most 8 heads drawn
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = s.d;
  g.heads = hc + extra;
  g.share_w = s.kind == 1;
  g.cancel_v = s.kind == 2;
  g.seed = 9100 + t;
  s.m = generate_model(g);
  if (s.kind == 3) {  // head 2 is head 1 with one W entry moved by 2^-10
    s.m.heads[1].W = s.m.heads[0].W;
    s.m.heads[1].W(0, 0) = s.m.heads[1].W(0, 0) + Rational(1, 1024);
  }
  s.heads_true = s.m.canonical().num_heads();
  return s;
}

}  // namespace

TEST_CASE(
    "soak: the placed design never ends ok with the wrong head count or "
    "an error above its tolerance") {
  const int models = 4 * test::multiplier();
  Rng rng(20261205);
  std::map<std::string, int> tally;
  int largest = 0;
  test::Outcomes runs("placed soak");
  for (int t = 0; t < models; ++t) {
    const SoakModel s = soak_model(t, rng);
    if (s.heads_true == 0) {
      runs.count("no canonical head (skipped)");
      continue;
    }
    largest = std::max(largest, s.heads_true);
    for (const long bits : {53L, 24L}) {
      RecoverResult r;
      try {
        r = placed_run(s.m, bits, 200 + t);
      } catch (const Error& e) {
        FAIL("model " << t << ": " << e.what());
      }
      const std::string st = std::string(status_name(r.judge.status));
      ++tally[std::to_string(bits) + " bits, H = " + std::to_string(s.heads_true) + ": " + st];
      INFO("model " << t << " (kind " << s.kind << ", d=" << s.d << ", " << s.heads_true << " canonical heads), " << bits
                    << " bits: " << record_json(r).dump().substr(0, 500));
      CHECK(r.exit_code() == status_exit_code(parse_status(st)));
      // every answer comes from a model with this many heads: a float run
      // cannot prove them inconsistent, and must not say so
      CHECK(st != "inconsistent");
      runs.count(st);
      if (st != "ok") continue;
      CHECK(r.evidence.heads_recovered.value() == s.heads_true);
      REQUIRE(finite_number(r.truth.max_rel_error).has_value());
      CHECK(r.truth.max_rel_error.value() <= r.judge.tolerance.value());
      // decided blind: ok only on the bound certified from the answers, and that bound holds
      REQUIRE(r.judge.certified_error.has_value());
      CHECK(*r.judge.certified_error <= r.judge.tolerance.value());
      CHECK(*r.judge.certified_error >= r.truth.max_rel_error.value());
    }
  }
  std::string s;
  for (const auto& [k, v] : tally) s += "  " + k + ": " + std::to_string(v) + "\n";
  MESSAGE(models << " models (canonical H up to " << largest << ") x 2 answer precisions; statuses:\n" << s);
  runs.require(models / 2, {"ok"});  // the check above is not vacuous (4 of 8 at MHAQ_TEST_MULTIPLIER=1)
}

TEST_CASE(
    "placed design: from a coarse pilot, a round whose labels fail is followed "
    "by one placed by a new estimate from the pooled pair fits, and the run "
    "ends ok and right") {
  // d = 4, H = 4, a pilot of only 10 ratios per pair: its estimate places the
  // first round's poles badly; the second round, placed by the estimate from
  // every pair fitted so far, holds together
  PrecisionScope scope(256);
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = 4;
  g.heads = 4;
  g.seed = 41;
  const Model m = generate_model(g);
  const TokenSpec tok = default_tokens(Arith::mpfr);
  OracleStack<Mpfr> o_stack = OracleStack<Mpfr>::model(m, tok.den, OracleNoise{53, Rational(0), 1, NoisePattern::uniform, {}});
  Oracle<Mpfr>& o = o_stack.top();
  PlacedOptions po;
  po.H = 4;
  po.seed = 1;
  po.tokens = tok;
  po.pilot_grid = 10;
  po.budget = 10 * paper_query_bound(4, 4);
  const PlacedResult r = learn_placed(o, po);
  INFO("rounds " << r.rounds << ", estimate 2^" << r.estimate_log2 << ", " << r.self_check_note);
  CHECK(r.reestimates >= 1);  // the path under test was taken
  REQUIRE(r.self_check == Truth::yes);
  CHECK(r.estimate_log2 <= -40);
  CHECK(o.queries() <= po.budget);
  // against the truth: each learned head is one true head to 2^-40 relative
  const Model c = m.canonical();
  REQUIRE(static_cast<int>(r.heads.size()) == c.num_heads());
  std::vector<char> used(c.num_heads(), 0);
  for (const auto& hd : r.heads) {
    int best = -1;
    double best_err = INFINITY;
    for (int t = 0; t < c.num_heads(); ++t) {
      double e2 = 0, n2 = 0;
      for (int i = 0; i < 4; ++i) {
        const double dv = hd.v[i].to_double() - c.heads[t].v[i].approx_double();
        e2 += dv * dv;
        n2 += c.heads[t].v[i].approx_double() * c.heads[t].v[i].approx_double();
        for (int j = 0; j < 4; ++j) {
          const double w = c.heads[t].W(i, j).approx_double(), dw = hd.W(i, j).to_double() - w;
          e2 += dw * dw;
          n2 += w * w;
        }
      }
      const double rel = std::sqrt(e2 / n2);
      if (rel < best_err) best_err = rel, best = t;
    }
    REQUIRE(best >= 0);
    CHECK(!used[best]);
    used[best] = 1;
    CHECK(best_err <= std::ldexp(1.0, -40));
  }
}

TEST_CASE(
    "placed design: the stated absolute error weighs every answer (answers "
    "with absolute noise fit to it, the estimate covers the error); stated "
    "as relative only, the same answers fail the self-check") {
  // d = 4, H = 3; answers with uniform absolute noise of 2^-30 on top of
  // 53-bit rounding
  PrecisionScope scope(256);
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = 4;
  g.heads = 3;
  g.seed = 11;
  const Model m = generate_model(g);
  const TokenSpec tok = default_tokens(Arith::mpfr);
  PlacedOptions po;
  po.H = 3;
  po.seed = 3;
  po.tokens = tok;
  po.budget = 10 * paper_query_bound(4, 3);
  po.answer_bits = 53;
  const Rational eps(1, 1UL << 30);
  auto run = [&](double abs) {
    OracleStack<Mpfr> o_stack = OracleStack<Mpfr>::model(m, tok.den, OracleNoise{53, eps, 7, NoisePattern::uniform, {}});
    Oracle<Mpfr>& o = o_stack.top();
    PlacedOptions p = po;
    p.answer_abs = abs;
    return learn_placed(o, p);
  };
  // stated: 2^-53 |y| + 2^-30 (the noise's bound)
  const PlacedResult r = run(std::ldexp(1.0, -30));
  INFO("estimate 2^" << r.estimate_log2 << ", " << r.self_check_note);
  REQUIRE(r.self_check == Truth::yes);
  REQUIRE(std::isfinite(r.estimate_log2));
  CHECK(r.estimate_log2 > -40);  // the estimate reflects the absolute part, not 53 bits
  CHECK(max_rel_error_log2(r.heads, m.canonical()) <= r.estimate_log2);
  // stated: 2^-53 |y| only, a false statement for these answers: the fits
  // leave residuals of many stated errors
  try {
    const PlacedResult f = run(0);
    INFO("relative only: " << f.self_check_note);
    CHECK(f.self_check == Truth::no);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::unable);  // or no estimate at all
  }
}
