// The sharded map behind sweep and verify (base/distribute.hpp), in
// one process (the MPI runs are compared byte for byte by tests/mpi_check.sh),
// and verify split into a per-trial function and a tally.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "mhaq/arith/numbers.hpp"
#include "mhaq/base/distribute.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/evidence/verify.hpp"
#include "test_util.hpp"

using namespace mhaq;
using nlohmann::json;

TEST_CASE("distributed_map: one rank, results in index order whatever the thread count; on_result once per item") {
  CHECK(shard().rank == 0);
  CHECK(shard().size == 1);
  const size_t n = 37 * static_cast<size_t>(test::multiplier());
  auto fn = [](size_t i) { return std::to_string(i * i) + "/" + std::to_string(working_precision()); };
  PrecisionScope scope(333);  // workers inherit the caller's working precision
  for (int threads : {1, 2, 5, 64}) {
    std::multiset<size_t> seen;
    const auto out = distributed_map(n, threads, fn, [&](size_t i, const std::string& r) {
      CHECK(r == fn(i));
      seen.insert(i);
    });
    REQUIRE(out.size() == n);
    for (size_t i = 0; i < n; ++i) CHECK(out[i] == std::to_string(i * i) + "/333");
    CHECK(seen.size() == n);
    CHECK(std::set<size_t>(seen.begin(), seen.end()).size() == n);
  }
  CHECK(distributed_map(0, 3, fn).empty());
}

TEST_CASE("distributed_map: the lowest failing index's error is rethrown with its kind, after every item ran") {
  for (int threads : {1, 3}) {
    std::vector<int> ran(20, 0);
    try {
      distributed_map(20, threads, [&](size_t i) -> std::string {
        ran[i] = 1;
        if (i == 7) throw Error(ErrorKind::unable, "item 7");
        if (i == 13) throw std::runtime_error("item 13");
        return "x";
      });
      FAIL("no exception");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::unable);
      CHECK(std::string(e.what()) == "item 7");
    }
    for (int r : ran) CHECK(r == 1);
  }
  // a foreign exception becomes an internal error
  try {
    distributed_map(3, 2, [](size_t i) -> std::string {
      if (i == 2) throw std::runtime_error("boom");
      return "";
    });
    FAIL("no exception");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::internal);
  }
  // a failing on_result (e.g. a journal that cannot be written) is not called again, and its error is rethrown
  int calls = 0;
  CHECK_THROWS_AS(distributed_map(5, 1, [](size_t) { return std::string("r"); },
                                  [&](size_t, const std::string&) {
                                    ++calls;
                                    throw_input("disk full");
                                  }),
                  Error);
  CHECK(calls == 1);
}

TEST_CASE("root_computes: the result, or the error with its kind") {
  CHECK(root_computes([] { return std::string("todo"); }) == "todo");
  try {
    root_computes([]() -> std::string { throw Error(ErrorKind::usage, "exists"); });
    FAIL("no exception");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
  }
}

TEST_CASE("verify = tally of per-trial records; bytes independent of --threads") {
  VerifyOptions o;
  o.trials = 8 * test::multiplier();
  o.seed = 11;
  o.max_d = 3;
  o.max_h = 2;
  std::vector<VerifyTrial> recs;
  test::Outcomes trials("verify trials, H known");
  for (int i = 0; i < o.trials; ++i) {
    const VerifyTrial r = verify_trial(o, i);
    REQUIRE(r.known);
    trials.count(status_name(r.known->judge.status));
    CHECK(r.spec.index == i);
    CHECK(r.h0);
    CHECK_FALSE(r.known->evidence.heads);  // trials carry facts, not heads
    // the message between threads and ranks: the tally reads the same after it
    const VerifyTrial back = verify_trial_from_json(nlohmann::json::parse(verify_trial_json(r).dump()));
    CHECK(verify_trial_json(back) == verify_trial_json(r));
    recs.push_back(back);
  }
  trials.require(o.trials / 2, {"ok"});  // the doctored trial below needs an ok one
  const std::string v1 = verify_json(verify(o).value()).dump();
  CHECK(verify_json(verify_tally(o, recs)).dump() == v1);
  o.threads = 3;
  CHECK(verify_json(verify(o).value()).dump() == v1);
  o.threads = -1;
  CHECK_THROWS_AS(verify(o), Error);
  // a tally over a doctored trial changes the verdict: the tally, not the trial, judges
  o.threads = 1;
  for (auto& r : recs)
    if (r.known->judge.status == Status::ok) {
      r.known->truth.exact_match = false;
      break;
    }
  const VerifyResult bad = verify_tally(o, recs);
  CHECK_FALSE(bad.ok);
  CHECK(verify_exit_code(bad) == 6);
}
