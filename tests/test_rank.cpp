// The rank schedule (docs/math/low-rank.md, proofs/41): heads of rank at most
// --rank R from 1 + 2H(2dR - R^2 + 2d - R - 1) queries. The count by equality
// in exact mode, balls that contain the truth, detected ranks below the bound,
// a head above the bound refused (never returned), and the options.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "mhaq/base/random.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/run/recover_limits.hpp"
#include "mhaq/stages/5-solve/low_rank.hpp"
#include "test_util.hpp"

using namespace mhaq;

namespace {

Model rank_model(int d, int H, int r, std::uint64_t seed, Arith a = Arith::exact) {
  GenerateOptions g = default_generate(a);
  g.d = d;
  g.heads = H;
  g.rank = r;
  g.seed = seed;
  return generate_model(g);
}

RecoverResult run_rank(const Model& m, int R, Arith a, std::uint64_t seed, long bits = 256) {
  RecoverOptions o;
  o.arith = a;
  o.bits = bits;
  o.seed = seed;
  o.schedule = Schedule::rank;
  o.rank = R;
  return recover_run(m, o);
}

std::string why(const RecoverResult& r) { return std::string(status_name(r.judge.status)) + ": " + r.judge.message; }

}  // namespace

TEST_CASE("the count and the floor at the issue's shapes") {
  CHECK(rank_query_count(8, 2, 2) == 165);
  CHECK(rank_query_count(12, 3, 4) == 595);
  CHECK(rank_query_count(16, 4, 4) == 1113);
  CHECK(rank_query_count(32, 4, 8) == 4025);
  CHECK(rank_query_count(64, 8, 8) == 17265);
  CHECK(rank_query_count(64, 8, 8) * 10 <= paper_query_bound(64, 8) * 3);  // at most 0.3 x 131057
  CHECK(rank_parameter_floor(64, 8, 8) == 8192);
  CHECK(rank_parameter_floor(16, 4, 4) == 512);
  // R = d - 1 asks every pair lean asks; every smaller bound fewer
  for (long d = 2; d <= 16; ++d) {
    CHECK(rank_pair_count(d, d - 1) == d * d + d - 1);
    for (long R = 1; R < d - 1; ++R) CHECK(rank_pair_count(d, R) < d * d + d - 1);
  }
}

TEST_CASE("exact: the count holds by equality, the heads equal the truth, the ranks are found") {
  struct Shape {
    int d, H, r;
  };
  for (const Shape s : {Shape{8, 2, 2}, Shape{12, 3, 4}}) {
    int ok = 0, degenerate = 0;
    for (std::uint64_t seed = 1; seed <= static_cast<std::uint64_t>(2 * test::multiplier()); ++seed) {
      const Model m = rank_model(s.d, s.H, s.r, seed);
      const RecoverResult r = run_rank(m, s.r, Arith::exact, seed);
      INFO("d=" << s.d << " H=" << s.H << " r=" << s.r << " seed " << seed << ": " << why(r));
      REQUIRE((r.judge.status == Status::ok || r.judge.status == Status::degenerate));
      if (r.judge.status == Status::degenerate) {
        ++degenerate;
        continue;
      }
      ++ok;
      CHECK(r.truth.exact_match == true);
      // the plan's queries, by equality; the small grid's witnesses, which an
      // exact rank run asks at the default grid (only a bound is known), apart
      CHECK(r.evidence.grid_witness_queries.value_or(0) > 0);
      CHECK(r.evidence.queries.value_or(0) - r.evidence.grid_witness_queries.value_or(0) == rank_query_count(s.d, s.H, s.r));
      CHECK(r.plan.schedule_count == rank_query_count(s.d, s.H, s.r));
      CHECK(r.evidence.max_length == 2 * s.H + 1);
      CHECK(r.plan.parameter_floor == rank_parameter_floor(s.d, s.H, s.r));
      REQUIRE(r.evidence.ranks);
      CHECK(*r.evidence.ranks == std::vector<int>(static_cast<size_t>(s.H), s.r));
    }
    INFO("d=" << s.d << ": ok " << ok << ", degenerate " << degenerate);
    CHECK(ok >= 1);
  }
}

TEST_CASE("balls: heads of rank R contain the truth") {
  struct Shape {
    int d, H, r;
  };
  for (const Shape s : {Shape{16, 4, 4}, Shape{32, 4, 8}}) {
    const Model m = rank_model(s.d, s.H, s.r, 1, Arith::ball);
    const RecoverResult r = run_rank(m, s.r, Arith::ball, 1);
    INFO("d=" << s.d << " H=" << s.H << " r=" << s.r << ": " << why(r));
    REQUIRE(r.judge.status == Status::ok);
    CHECK(r.truth.contains_truth == true);
    // the plan's queries; where the plan's own bound is not small (here) a rank run asks the guard's witnesses too
    CHECK(r.evidence.queries.value_or(0) - r.evidence.grid_witness_queries.value_or(0) == rank_query_count(s.d, s.H, s.r));
    CHECK(r.evidence.grid_witness_queries.value_or(0) <= 2 * (2 * s.H + 1));
    REQUIRE(r.evidence.ranks);
    CHECK(*r.evidence.ranks == std::vector<int>(static_cast<size_t>(s.H), s.r));
  }
}

TEST_CASE("only a bound: ranks below it are detected, head by head") {
  // heads of rank 1 and 3 in one model, learned with the bound 4 (d = 6)
  Model m = rank_model(6, 1, 1, 3);
  m.heads.push_back(rank_model(6, 1, 3, 4).heads[0]);
  const RecoverResult r = run_rank(m, 4, Arith::exact, 1);
  INFO(why(r));
  REQUIRE(r.judge.status == Status::ok);
  CHECK(r.truth.exact_match == true);
  REQUIRE(r.evidence.ranks);
  std::vector<int> got = *r.evidence.ranks;
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<int>{1, 3});
  // only a bound: the exact default grid asks the small grid's witnesses
  CHECK(r.evidence.grid_witness_queries.value_or(0) > 0);
  CHECK(r.evidence.queries == rank_query_count(6, 2, 4) + r.evidence.grid_witness_queries.value_or(0));

  // mpfr finds the rank at its thresholds, but its ok comes from a replay in
  // balls, which cannot certify a rank below the bound either: unable, with
  // the remedy; stated as the bound, the same rank is ok
  const Model mf = rank_model(8, 2, 2, 5, Arith::mpfr);
  const RecoverResult f = run_rank(mf, 4, Arith::mpfr, 5);
  INFO(why(f));
  CHECK(f.judge.status == Status::unable);
  CHECK(f.judge.message.find("state --rank 2") != std::string::npos);
  const RecoverResult f2 = run_rank(mf, 2, Arith::mpfr, 5);
  INFO(why(f2));
  REQUIRE(f2.judge.status == Status::ok);
  REQUIRE(f2.evidence.ranks);
  CHECK(*f2.evidence.ranks == std::vector<int>{2, 2});

  // balls never certify a rank below the bound
  const Model mb = rank_model(8, 2, 2, 5, Arith::ball);
  const RecoverResult b = run_rank(mb, 4, Arith::ball, 5);
  CHECK(b.judge.status == Status::unable);
  CHECK(b.judge.message.find("cannot be certified") != std::string::npos);
  CHECK_FALSE(b.evidence.heads);
}

TEST_CASE("a head above the bound is refused, never returned") {
  for (const Arith a : {Arith::exact, Arith::ball, Arith::mpfr}) {
    // full-rank heads (d = 6) against --rank 2, and rank-4 heads against --rank 3
    // named values, not a structured binding: INFO's lambda captures them (clang 14)
    for (const std::pair<int, int>& bound : {std::pair{0, 2}, std::pair{4, 3}}) {
      const int r = bound.first, R = bound.second;
      int refused = 0;
      for (std::uint64_t seed = 1; seed <= static_cast<std::uint64_t>(2 * test::multiplier()); ++seed) {
        const Model m = rank_model(6, 2, r, seed, a);
        const RecoverResult res = run_rank(m, R, a, seed);
        INFO(arith_name(a) << " rank " << (r ? r : 6) << " bound " << R << " seed " << seed << ": " << why(res));
        CHECK(res.judge.status != Status::ok);
        CHECK_FALSE(res.evidence.heads);
        if (res.judge.status == Status::inconsistent) {
          ++refused;
          CHECK(res.judge.message.find(rank_bound_marker()) != std::string::npos);
          CHECK(res.judge.remedy.value_or("").find("raise --rank") != std::string::npos);
        }
      }
      CHECK(refused >= 1);
    }
  }
}

TEST_CASE("options: the bound's range, and what the rank schedule does not take") {
  const Model m = rank_model(4, 1, 2, 1);
  RecoverOptions o;
  o.schedule = Schedule::rank;
  for (int bad : {0, 4, 5}) {
    o.rank = bad;
    CHECK(test::error_of([&] { check_recover_limits(m, o); }).first == static_cast<int>(ErrorKind::usage));
  }
  o.rank = 2;
  o.schedule = Schedule::lean;
  CHECK(test::error_of([&] { check_recover_limits(m, o); }).first == static_cast<int>(ErrorKind::usage));
  o.schedule = Schedule::rank;
  CHECK(test::error_of([&] { check_recover_limits(m, o); }).first == 0);
  std::string cert;
  o.certificate = &cert;
  CHECK(test::error_of([&] { recover_run(m, o); }).first == static_cast<int>(ErrorKind::usage));
  GenerateOptions g;
  g.d = 3;
  g.rank = 4;
  CHECK(test::error_of([&] { generate_model(g); }).first == static_cast<int>(ErrorKind::usage));
}

TEST_CASE("exact soak: random shapes, ranks and bounds; never ok and wrong, most runs decided") {
  // d in 3..6, H in 1..3, the heads' rank r in 1..d, the bound R in 1..d-1:
  // r <= R must end ok (or degenerate), r > R never ok
  Rng rng(20260438);
  const int n = 24 * test::multiplier();
  test::Outcomes within("rank within the bound"), above("rank above the bound");
  for (int t = 0; t < n; ++t) {
    const int d = static_cast<int>(rng.uniform_int(3, 6)), H = static_cast<int>(rng.uniform_int(1, 3));
    const int R = static_cast<int>(rng.uniform_int(1, d - 1)), r = static_cast<int>(rng.uniform_int(1, d));
    const std::uint64_t seed = static_cast<std::uint64_t>(rng.uniform_int(1, 1L << 30));
    const Model m = rank_model(d, H, r, seed);
    const RecoverResult res = run_rank(m, R, Arith::exact, seed);
    INFO("d=" << d << " H=" << H << " r=" << r << " R=" << R << " seed " << seed << ": " << why(res));
    CHECK(res.judge.status != Status::mismatch);
    if (r > R) {
      above.count(status_name(res.judge.status));
      CHECK(res.judge.status != Status::ok);
      continue;
    }
    within.count(status_name(res.judge.status));
    CHECK((res.judge.status == Status::ok || res.judge.status == Status::degenerate));
    if (res.judge.status == Status::degenerate) continue;
    CHECK(res.truth.exact_match == true);
    REQUIRE(res.evidence.ranks);
    for (const int k : *res.evidence.ranks) CHECK(k == r);
    CHECK(res.evidence.queries.value_or(0) - res.evidence.grid_witness_queries.value_or(0) - res.evidence.fallback_queries.value_or(0) == rank_query_count(d, H, R));
  }
  // at least 3 in 4 decided: ok within the bound, refused as inconsistent above it
  within.require((within.total() * 3 + 3) / 4, {"ok"});
  above.require((above.total() * 3 + 3) / 4, {"inconsistent"});
}

TEST_CASE("the program: --rank at its limit and one past it, the report, and what it refuses") {
  const std::string bin = MHAQ_BINARY;
  auto run = [&](const std::string& args) { return test::run(bin + " " + args + " 2>&1"); };
  // d = 4: the bound R takes 1..3
  auto r = run("recover --d 4 --heads 1 --rank 3 --seed 1");
  CHECK(r.code == 0);
  CHECK(r.out.find("ranks            3 (detected, head by head; bound --rank 3)") != std::string::npos);
  CHECK(r.out.find("rank 1+2H(2dR-R^2+2d-R-1) = " + std::to_string(rank_query_count(4, 1, 3))) != std::string::npos);
  CHECK(r.out.find("floor            H(2dR-R^2+d) = " + std::to_string(rank_parameter_floor(4, 1, 3))) != std::string::npos);
  r = run("recover --d 4 --heads 1 --rank 4 --seed 1");
  CHECK(r.code == 2);
  CHECK(r.out.find("--rank must be in [1, 3], got 4") != std::string::npos);
  CHECK(run("generate --d 4 --heads 1 --rank 4 --seed 1").code == 0);
  CHECK(run("generate --d 4 --heads 1 --rank 5 --seed 1").code == 2);
  CHECK(run("recover --d 4 --heads 1 --rank 2 --schedule lean --seed 1").code == 2);
  CHECK(run("recover --d 4 --heads 1 --schedule rank --seed 1").code == 2);
  CHECK(run("recover --d 4 --heads 1 --rank 2 --seed 1 --certificate c.json").code == 2);
  CHECK(run("recover --d 2 --heads 1 --ffn 2 --rank 1 --seed 1").code == 2);
  // --json: the bound, the floor and the ranks
  r = test::run(bin + " recover --d 5 --heads 2 --rank 2 --seed 3 --json");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["rank_bound"] == 2);
  CHECK(j["parameter_floor"] == rank_parameter_floor(5, 2, 2));
  CHECK(j["ranks"] == nlohmann::json::array({2, 2}));
  CHECK(j["schedule"] == "rank");
}
