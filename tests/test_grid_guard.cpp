// The small-grid guard (proofs/39-grid-witness.md): the fuzz campaign's runs at
// --token-range 1 whose heads reproduced every planned answer and differed
// from the truth now end degenerate, decided from the oracle's answers alone.
#include <doctest/doctest.h>

#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/stages/grid_guard.hpp"
#include "mhaq/stages/learner.hpp"
#include "test_util.hpp"

using namespace mhaq;
using nlohmann::json;

namespace {

struct Finding {
  const char* model;
  Schedule schedule;
  int H;       // the learner's H, or its bound H0
  bool bound;  // only H0 known
  std::uint64_t seed;
};

// The three shapes of tests/fuzz/README.md: lean with a bound (one head for
// two), paper with a bound and a fresh offset (one head for three), paper
// with H known and repairs derived from links (three wrong heads).
const Finding kFindings[] = {
    {R"({"format":"mhaq-model","version":1,"d":2,"heads":[{"W":[["-2","-2"],["-2","1"]],"v":["-8/3","-8/3"]},)"
     R"({"W":[["-2","-2"],["-2","-2"]],"v":["-8/3","-5/3"]}]})",
     Schedule::lean, 3, true, 62512},
    {R"({"format":"mhaq-model","version":1,"d":2,"heads":[{"W":[["0","-2"],["2","-1"]],"v":["4/3","7/3"]},)"
     R"({"W":[["-1","-2"],["-2","-1"]],"v":["-4/3","-7/3"]},{"W":[["-1","-2"],["-2","0"]],"v":["4/3","7/3"]}]})",
     Schedule::paper, 4, true, 26733},
    {R"({"format":"mhaq-model","version":1,"d":2,"heads":[{"W":[["1","0"],["0","1"]],"v":["-8/3","-8/3"]},)"
     R"({"W":[["-2","0"],["2","0"]],"v":["-4/3","-4/3"]},{"W":[["0","0"],["0","0"]],"v":["4/3","4/3"]}]})",
     Schedule::paper, 3, false, 62194},
};

}  // namespace

TEST_CASE("small token grid: the campaign's self-checked wrong runs end degenerate, from the answers alone") {
  for (const Finding& f : kFindings) {
    CAPTURE(f.seed);
    const Model m = model_from_json_text(f.model);
    // blind: the learner sees only the oracle; the truth is not passed anywhere
    OracleStack<QTau> oracle_stack = OracleStack<QTau>::model(m, 1);
    Oracle<QTau>& oracle = oracle_stack.top();
    LearnOptions lo;
    lo.H = f.H;
    lo.heads_is_bound = f.bound;
    lo.schedule = f.schedule;
    lo.seed = learner_seed(f.seed);
    lo.tokens = TokenSpec{1, 1};
    CHECK(grid_guard(2, lo).fires);
    try {
      (void)learn(oracle, lo);
      FAIL("a run on {-1, 0, 1} reported heads for a model its plan cannot tell apart");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::degenerate);
      CHECK(std::string(e.what()).find(grid_guard_marker()) != std::string::npos);
      CHECK(std::string(e.what()).find("--token-range") != std::string::npos);
    }
    // the same through recover: status and the guard's query count
    RecoverOptions o;
    o.seed = f.seed;
    o.schedule = f.schedule;
    o.tokens = TokenSpec{1, 1};
    if (f.bound) o.max_heads = f.H;
    const RecoverResult r = recover(m, o);
    CHECK(r.judge.status == Status::degenerate);
    CHECK(r.evidence.grid_witness_queries.value() == grid_guard(2, lo).queries());
  }
}

TEST_CASE("the grid guard: quiet at the default float range, and its witnesses reach 2^-10") {
  LearnOptions lo;
  lo.tokens = TokenSpec{1L << 20, 1L << 20};
  for (int d = 1; d <= 4; ++d)
    for (int H = 1; H <= 3; ++H) {
      lo.H = H;
      CHECK_FALSE(grid_guard(d, lo).fires);
    }
  for (long R = 1; R <= 64; ++R)
    for (int H = 1; H <= 8; ++H) {
      lo.tokens = TokenSpec{R, 1};
      lo.H = H;
      const GridGuard g = grid_guard(2, lo);
      if (!g.fires) continue;
      const long S = 2 * g.range + 1;
      CHECK(S >= 2 * (4L * H - 1));
      CHECK(g.length == 2 * H + 1);
      // ((4H - 1)/S)^pairs <= 2^-10, and one pair fewer is not enough
      Rational miss(1), p = Rational(4L * H - 1) / Rational(S);
      for (int k = 0; k < g.pairs; ++k) miss *= p;
      CHECK(miss <= Rational(1, 1024UL));
      CHECK(Rational(1, 1024UL) < miss / p);
    }
}

TEST_CASE("the grid guard after a repair: only where the repair's own witnesses miss 2^-10") {
  // A repaired run with H known asks three witnesses of its own (proofs/21),
  // each missing a wrong model with probability about 1/(2R+1): enough for
  // 2^-10 from R = 5 on, so the guard's pair witnesses are asked only below.
  LearnOptions lo;
  lo.H = 3;
  for (long R : {1L, 2L, 3L, 4L, 5L, 6L, 1L << 20}) {
    lo.tokens = TokenSpec{R, 1};
    const GridGuard g = grid_guard(2, lo);
    CHECK(g.after_repair == (R <= 4));
    // beside a repair, a run whose pairs all show fewer than H heads confirms
    // that count as a run told only H0 = H would, witnesses included
    lo.repair = true;
    CHECK(grid_guard_possible(g, lo) == (R <= 4 || g.fires));
    lo.repair = false;
    CHECK(grid_guard_possible(g, lo) == g.fires);
  }
  // A chosen design: neither estimate covers it.
  lo.tokens = TokenSpec{1L << 20, 1};
  lo.draws = Draws{};
  CHECK(grid_guard(2, lo).after_repair);
  CHECK(grid_guard(2, lo).fires);
}
