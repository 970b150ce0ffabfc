// The placed design's pilot at the model's scale (docs/math/designs.md#placed):
// models whose W are much smaller than a drawn model's, of rank d/H as
// torch's default initialisation makes them (every pole near log r = 0 at
// the design's offsets), or much larger (poles beyond the window), end ok
// and right from 53-bit answers once the pilot scales the offsets of each
// final token; and none of them ends ok and wrong. Decided blind: the truth
// is compared after the run. MHAQ_TEST_MULTIPLIER scales the seeds.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "mhaq/run/recover.hpp"
#include "mhaq/run/record_json.hpp"
#include "test_util.hpp"

using namespace mhaq;

namespace {

// d = 6, H = 3: W = A B^T of rank 2 (= d/H) with entries about 1/32 of a
// drawn model's (w_den 2^21 for 2^16), or full rank and 8 times larger.
Model scaled_model(bool small, std::uint64_t seed) {
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = 6;
  g.heads = 3;
  g.seed = seed;
  if (small) {
    g.rank = 2;
    g.w_den = 1L << 21;
  } else {
    g.w_den = 1L << 13;
  }
  return generate_model(g);
}

RecoverResult placed_run(const Model& m) {
  RecoverOptions o;
  o.arith = Arith::mpfr;
  o.bits = 256;
  o.oracle_bits = 53;
  o.seed = 1;
  o.design = Design::placed;
  return recover(m, o);
}

// An ok run is right: its certified bound (which decided it) holds the true error.
void check_ok_is_right(const RecoverResult& r) {
  REQUIRE(r.judge.certified_error.has_value());
  REQUIRE(finite_number(r.truth.max_rel_error).has_value());
  CHECK(r.evidence.heads_recovered.value() == 3);
  CHECK(*r.judge.certified_error <= r.judge.tolerance.value());
  CHECK(*r.judge.certified_error >= r.truth.max_rel_error.value());
  CHECK(r.truth.max_rel_error.value() <= r.judge.tolerance.value());
}

}  // namespace

TEST_CASE(
    "placed design: a model with small W of rank d/H (poles crowded near "
    "log r = 0) ends ok and right, its pilot's offsets scaled up") {
  // seed 3 ended unable (poles 10.9 from their places) before the pilot
  // chose its scale
  const RecoverResult r = placed_run(scaled_model(true, 3));
  INFO(record_json(r).dump().substr(0, 800));
  REQUIRE(r.judge.status == Status::ok);
  check_ok_is_right(r);
  CHECK(r.truth.max_rel_error.value() <= std::ldexp(1.0, -45));
  CHECK(r.evidence.queries.value() <= r.design.query_budget.value());
  // the pilot says it scaled: every final token's offsets by 2^k, k >= 1
  const std::string pilot = r.design.pilot_status.value_or("");
  CHECK(pilot.find("scaled by 2^(") != std::string::npos);
  CHECK(pilot.find("2^(0") == std::string::npos);
  CHECK(pilot.find(",0") == std::string::npos);
  CHECK(pilot.find('-') == std::string::npos);
}

TEST_CASE(
    "placed design: a model with large W (poles beyond the window) ends ok "
    "and right, its pilot's offsets scaled down") {
  // seed 1 ended unable (no pair fit held together) before the pilot chose its scale
  const RecoverResult r = placed_run(scaled_model(false, 1));
  INFO(record_json(r).dump().substr(0, 800));
  REQUIRE(r.judge.status == Status::ok);
  check_ok_is_right(r);
  CHECK(r.design.pilot_status.value_or("").find("scaled by 2^(-") != std::string::npos);
}

TEST_CASE("soak: models of small or large W never end ok and wrong in the placed design") {
  const int seeds = 2 * test::multiplier();
  test::Outcomes runs("placed scale soak");
  for (int s = 0; s < seeds; ++s)
    for (const bool small : {true, false}) {
      const std::uint64_t seed = 100 + static_cast<std::uint64_t>(s);
      const RecoverResult r = placed_run(scaled_model(small, seed));
      const std::string st = status_name(r.judge.status);
      INFO((small ? "small" : "large") << " W, seed " << seed << ": " << record_json(r).dump().substr(0, 600));
      CHECK(st != "inconsistent");  // the answers come from a 3-head model
      runs.count(st);
      if (st == "ok") check_ok_is_right(r);
    }
  runs.require(seeds, {"ok"});  // not vacuous: at least half end ok
}
