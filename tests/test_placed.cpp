// The placed design (docs/math/designs.md#placed, proofs/34): its grid of
// copy counts, the pair identity with the final token repeated that the grid
// relies on, recovery from float64 answers, and a soak: no run ends ok with
// the wrong head count or an error above its tolerance, from 53-bit and
// 24-bit answers (plain models, shared W, cancelling v, near-collisions).
// MHAQ_TEST_MULTIPLIER scales the soak's model count.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>

#include "mhaq/analysis/placed_design.hpp"
#include "mhaq/base/random.hpp"
#include "mhaq/model/model_oracle.hpp"
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
  ModelOracle<Mpfr> o(m, tok.den);
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
nlohmann::json placed_run(const Model& m, long oracle_bits, std::uint64_t seed) {
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
    "placed design: d = 4, H = 3 from 53-bit answers, ok by its own "
    "estimate, within the query budget") {
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = 4;
  g.heads = 3;
  g.seed = 11;
  const Model m = generate_model(g);
  const nlohmann::json r = placed_run(m, 53, 3);
  INFO(r.dump().substr(0, 600));
  REQUIRE(r["status"] == "ok");
  CHECK(r["design"] == "placed");
  CHECK(r["heads_recovered"] == 3);
  CHECK(r["max_rel_error"].get<double>() <= std::ldexp(1.0, -40));
  CHECK(r["error_estimate"].get<double>() <= r["tolerance"].get<double>());
  CHECK(r["queries"].get<long>() <= r["query_budget"].get<long>());
  CHECK(r["max_length"].get<long>() <= (1L << 16) + 1);
  CHECK(r["self_check"] == "yes");
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

TEST_CASE(
    "soak: the placed design never ends ok with the wrong head count or "
    "an error above its tolerance") {
  const int models = 4 * test::multiplier();
  Rng rng(20261205);
  std::map<std::string, int> tally;
  int ok_runs = 0;
  for (int t = 0; t < models; ++t) {
    GenerateOptions g = default_generate(Arith::mpfr);
    g.d = 3 + static_cast<int>(rng.uniform_int(0, 1));
    const int kind = static_cast<int>(t % 4);  // plain, shared W, cancelling v, near-collision
    g.heads = std::min(g.d, 1 + static_cast<int>(rng.uniform_int(0, 1)) + (kind == 1 || kind == 3 ? 1 : 0) + (kind == 2 ? 2 : 0));
    g.share_w = kind == 1 && g.heads >= 2;
    g.cancel_v = kind == 2 && g.heads >= 2;
    g.seed = 9100 + t;
    Model m = generate_model(g);
    if (kind == 3 && g.heads >= 2) {  // head 2 is head 1 with one W entry moved by 2^-10
      m.heads[1].W = m.heads[0].W;
      m.heads[1].W(0, 0) = m.heads[1].W(0, 0) + Rational(1, 1024);
    }
    const int heads_true = m.canonical().num_heads();
    if (heads_true == 0) continue;
    for (const long bits : {53L, 24L}) {
      nlohmann::json r;
      try {
        r = placed_run(m, bits, 200 + t);
      } catch (const Error& e) {
        FAIL("model " << t << ": " << e.what());
      }
      const std::string st = r["status"].get<std::string>();
      ++tally[std::to_string(bits) + " " + st];
      INFO("model " << t << " (kind " << kind << ", d=" << g.d << ", " << heads_true << " canonical heads), " << bits << " bits: " << r.dump().substr(0, 500));
      CHECK(recover_exit_code(r) == status_exit_code(parse_status(st)));
      if (st != "ok") continue;
      ++ok_runs;
      CHECK(r["heads_recovered"].get<int>() == heads_true);
      REQUIRE(r["max_rel_error"].is_number());
      CHECK(r["max_rel_error"].get<double>() <= r["tolerance"].get<double>());
    }
  }
  std::string s;
  for (const auto& [k, v] : tally) s += "  " + k + ": " + std::to_string(v) + "\n";
  MESSAGE(models << " models x 2 answer precisions; statuses:\n" << s);
  CHECK(ok_runs >= 1);  // the check above is not vacuous
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
  ModelOracle<Mpfr> o(m, tok.den, OracleNoise{53, Rational(0), 1, NoisePattern::uniform, {}});
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
