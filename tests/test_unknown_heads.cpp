// Claim 3 (only H0 >= H known) and a learner told too few heads.
#include <doctest/doctest.h>

#include "mhaq/run/record_json.hpp"
#include "mhaq/run/recover.hpp"
#include "test_util.hpp"

using namespace mhaq;
using nlohmann::json;

TEST_CASE("unknown H: --max-heads H0 = H+2 recovers exactly with 4 H0 d^2 - 2 H0 + 1 queries") {
  int ok = 0, degenerate = 0;
  for (int t = 0; t < 6 * test::multiplier(); ++t) {
    GenerateOptions g;
    g.d = 2 + t % 2;
    g.heads = 1 + (t / 2) % 2;
    g.seed = 300 + t;
    if (t % 3 == 2) { g.heads += 1; g.share_w = true; }
    const Model m = generate_model(g);
    const int H = static_cast<int>(m.canonical().heads.size()), H0 = H + 2, d = g.d;
    RecoverOptions o;
    o.max_heads = H0;
    o.seed = 40 + t;
    const RecoverResult r = recover(m, o);
    INFO(record_json(r).dump().substr(0, 300));
    CHECK(r.evidence.queries == 4 * H0 * d * d - 2 * H0 + 1 + r.evidence.grid_witness_queries.value_or(0L));  // a small grid's witnesses (proofs/39)
    CHECK(r.evidence.max_length == 2 * H0 + 1);
    CHECK(r.judge.status != Status::unable);
    if (r.judge.status == Status::degenerate) { ++degenerate; continue; }
    REQUIRE(r.judge.status == Status::ok);
    CHECK(r.evidence.heads_found == H);
    CHECK(r.truth.exact_match == true);
    CHECK(r.evidence.self_check == SelfCheck::yes);
    ++ok;
  }
  MESSAGE("H0 = H+2 trials: " << ok << " exact, " << degenerate << " degenerate draws reported");
  CHECK(ok >= 4 * test::multiplier());
}

TEST_CASE("unknown H in floating point prints its decision tolerance; balls report unable rather than guess") {
  GenerateOptions g = default_generate(Arith::mpfr);
  g.d = 3;
  g.heads = 2;
  g.seed = 8;
  const Model m = generate_model(g);
  RecoverOptions o;
  o.arith = Arith::mpfr;
  o.max_heads = 4;
  const RecoverResult r = recover(m, o);
  REQUIRE(r.judge.status == Status::ok);
  CHECK(r.evidence.heads_found == 2);
  CHECK(r.truth.max_rel_error.value() < 1e-40);
  CHECK(r.judge.decision_tolerance.value().find("equal within 2^-128 relative, different beyond 2^-32") != std::string::npos);
  o.arith = Arith::ball;
  const RecoverResult b = recover(m, o);
  CHECK(b.judge.status == Status::unable);
  CHECK_FALSE(b.truth.contains_truth.has_value());
}

TEST_CASE("a learner told fewer heads than the true canonical count never returns a model") {
  int caught = 0;
  const int trials = 8 * test::multiplier();
  for (int t = 0; t < trials; ++t) {
    GenerateOptions g;
    g.d = 2 + t % 2;
    g.heads = 2 + t % 2;
    g.seed = 900 + t;
    const Model m = generate_model(g);
    RecoverOptions o;
    o.heads = static_cast<int>(m.canonical().heads.size()) - 1;
    o.seed = t;
    const RecoverResult r = recover(m, o);
    INFO(record_json(r).dump().substr(0, 300));
    CHECK(r.judge.status != Status::ok);
    CHECK(r.exit_code() != 0);
    if (r.judge.status == Status::inconsistent) ++caught;
  }
  MESSAGE(caught << " of " << trials << " reported as inconsistent (others as degenerate draws)");
}

TEST_CASE("unknown H: a pair where every head is invisible shows type (0,0): degenerate without repairs, a fresh offset with them") {
  // Found by `mhaq verify --trials 200 --seed 1` (trial 72): the one canonical
  // head has a zero residue at pair (1,1), so f is constant there.
  GenerateOptions g;
  g.d = 4;
  g.heads = 3;
  g.seed = 227795645051ULL;
  g.cancel_v = true;
  RecoverOptions o;
  o.seed = g.seed;
  o.max_heads = 3;
  o.repair = false;
  const RecoverResult r = recover(generate_model(g), o);
  INFO(record_json(r).dump().substr(0, 300));
  CHECK(r.judge.status == Status::degenerate);
  CHECK(r.judge.message.find("shows 0 heads") != std::string::npos);
  CHECK(r.evidence.queries == paper_query_bound(4, 3));
  o.repair = true;  // the default: delta_1 drawn afresh, its queries asked again
  const RecoverResult f = recover(generate_model(g), o);
  INFO(record_json(f).dump().substr(0, 600));
  CHECK(f.judge.status == Status::ok);
  CHECK(f.truth.exact_match == true);
  CHECK(f.evidence.queries == paper_query_bound(4, 3) + f.evidence.repair_queries.value() + f.evidence.grid_witness_queries.value_or(0L));
  REQUIRE(f.evidence.repaired_pairs.value_or(std::vector<RepairRecord>{}).size() >= 1);
  CHECK(f.evidence.repaired_pairs->at(0).route.find("drawn afresh") != std::string::npos);
}
