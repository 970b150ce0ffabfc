// The placed design's pilot at the model's scale (docs/math/designs.md#placed):
// models whose W are much smaller than a drawn model's, of rank d/H as
// torch's default initialisation makes them (every pole near log r = 0 at
// the design's offsets), or much larger (poles beyond the window), end ok
// and right from 53-bit answers once the pilot scales the offsets of each
// final token; and none of them ends ok and wrong. Decided blind: the truth
// is compared after the run. MHAQ_TEST_MULTIPLIER scales the seeds. Within
// an oracle's max_entry, the scaled offsets keep every token within it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "mhaq/analysis/placed_design.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
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

namespace {

// The learner's oracle, watching the largest token entry asked.
class EntryWatch : public Oracle<Mpfr> {
 public:
  explicit EntryWatch(Oracle<Mpfr>& in) : in_(in) {}
  Rational largest{0};
  int dim() const override { return in_.dim(); }
  const Field<Mpfr>& field() const override { return in_.field(); }

 private:
  Mpfr answer(const Query& q) override {
    for (const Run& r : q) largest = std::max(largest, max_abs(r.token));
    return in_.query(q);
  }
  Oracle<Mpfr>& in_;
};

// learn_placed on the model's 53-bit answers, within max_entry when given:
// the largest entry asked into *largest; false when it ended unable.
bool placed_within(const Model& m, std::optional<Rational> max_entry, Rational& largest) {
  PrecisionScope scope(256);
  const TokenSpec tok = default_tokens(Arith::mpfr);
  OracleStack<Mpfr> stack = OracleStack<Mpfr>::model(m, tok.den, OracleNoise{53, Rational(0), 1, NoisePattern::uniform, {}});
  EntryWatch watch(stack.top());
  PlacedOptions po;
  po.H = 3;
  po.seed = 1;
  po.tokens = tok;
  po.errors = stack.errors();
  po.max_entry = std::move(max_entry);
  bool done = true;
  try {
    const PlacedResult res = learn_placed(watch, po);
    CHECK(res.heads.size() == 3);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::unable);  // the design could not, never a defect
    done = false;
  }
  largest = watch.largest;
  return done;
}

}  // namespace

TEST_CASE("placed design within an oracle's max_entry: the offsets of a small-W model, scaled up by its pilot, keep every token within it") {
  // unlimited, its tokens reach some size L; limited to L / 4 (still more
  // than twice its final tokens), no token passes the limit
  const Model m = scaled_model(true, 3);
  Rational free_largest, limited_largest;
  REQUIRE(placed_within(m, std::nullopt, free_largest));
  const Rational limit = free_largest / Rational(4);
  INFO("unlimited: largest entry " << free_largest.approx_double());
  REQUIRE(Rational(4) < limit);  // the final tokens are about 1.4: room for the offsets
  (void)placed_within(m, limit, limited_largest);
  CHECK(limited_largest <= limit);
  CHECK(limit / Rational(4) < limited_largest);  // the offsets used the room given, scaled down only as far as needed
}
