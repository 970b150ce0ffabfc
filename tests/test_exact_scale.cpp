// Exact mode at scale. The cost guard refuses, before any query,
// plans whose exact answers would exceed the degree budget; degenerate pairs
// are repaired without throwing the run away; repaired runs are exact and
// reported; the output does not depend on the thread count or the solver.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "mhaq/run/record_json.hpp"
#include "mhaq/model/model.hpp"
#include "mhaq/run/judge.hpp"
#include "mhaq/run/recover.hpp"
#include "test_record.hpp"
#include "test_util.hpp"

using namespace mhaq;
using nlohmann::json;

namespace {

// The issue's models: one W entry of 10^6 in d = 2, and two d = 1 heads whose
// W differ by 1/16384 (L = 16384).
const char* kBigEntry = R"({"format":"mhaq-model","version":1,"d":2,
  "heads":[{"W":[["1000000","0"],["0","1/2"]],"v":["1","-1"]}]})";
const char* kCloseHeads = R"({"format":"mhaq-model","version":1,"d":1,
  "heads":[{"W":[["1/2"]],"v":["1"]},{"W":[["8193/16384"]],"v":["-1/2"]}]})";

std::string write_file(const std::string& name, const std::string& text) {
  std::ofstream(name, std::ios::binary) << text;
  return name;
}

}  // namespace

TEST_CASE("cost guard: large models are refused before any query, with the budget status and a remedy") {
  // past the hard limit on the tau-degree: the library refuses them as the
  // program does (an input error naming the powers of tau), before any work
  for (const char* text : {kBigEntry, kCloseHeads}) {
    const Model m = model_from_json_text(text);
    RecoverOptions o;
    const std::pair<int, std::string> e = test::error_of([&] { recover(m, o); });
    INFO(e.second);
    CHECK(e.first == static_cast<int>(ErrorKind::input));
    CHECK(e.second.find("powers of tau") != std::string::npos);
    CHECK(e.second.find("--arith ball") != std::string::npos);
  }
  // within the hard limit but above the default budget: the over_budget status
  const Model m = model_from_json_text(R"({"format":"mhaq-model","version":1,"d":2,"heads":[{"W":[["2000","1"],["0","2000"]],"v":["3","1"]}]})");
  RecoverOptions o;
  const RecoverResult r = recover(m, o);
  INFO(record_json(r).dump());
  CHECK(r.judge.status == Status::over_budget);
  CHECK(r.exit_code() == 11);
  CHECK(r.evidence.queries == 0);  // refused before the oracle answered anything
  CHECK(r.plan.exact_cost->max_answer_degree > static_cast<double>(kDefaultMaxDegree));
  const std::string msg = r.judge.message;
  CHECK(msg.find("--token-range") != std::string::npos);
  CHECK(msg.find("--arith ball") != std::string::npos);
  CHECK(msg.find("--max-degree") != std::string::npos);
}

TEST_CASE("cost guard: the degree estimate bounds the answers' tau-degree and a larger budget lets the run go") {
  // W = 40 in d = 1 with tokens in [-5, 5]: degree up to about 40 * 5 * 10 = 2000 per answer.
  const Model m = model_from_json_text(R"({"format":"mhaq-model","version":1,"d":1,"heads":[{"W":[["40"]],"v":["3"]}]})");
  RecoverOptions o;
  o.max_degree = 100;
  const RecoverResult refused = recover(m, o);
  CHECK(refused.judge.status == Status::over_budget);
  o.max_degree = 1000000;
  const RecoverResult ok = recover(m, o);
  INFO(record_json(ok).dump());
  CHECK(ok.judge.status == Status::ok);
  CHECK(ok.truth.exact_match == true);
  CHECK(ok.plan.exact_cost->max_answer_degree > 100);
}

TEST_CASE("cost guard through the CLI: exit 11 and the message, unless --max-degree raises the budget") {
  const std::string bin = MHAQ_BINARY;
  const std::string big = write_file("exact_scale_big.json", kBigEntry), close = write_file("exact_scale_close.json", kCloseHeads);
  // beyond the hard limit max_tau_exponent (docs/limits.md): refused as
  // input before any work, whatever the budget
  for (const std::string& f : {big, close}) {
    const auto res = test::run(bin + " recover --model " + f + " --max-degree 1048576 2>&1");
    INFO(res.out);
    CHECK(res.code == 3);
    CHECK(res.out.find("powers of tau") != std::string::npos);
  }
  // within the hard limit, above the default budget: over_budget, exit 11
  const std::string medium = write_file("exact_scale_medium.json", R"({"format":"mhaq-model","version":1,"d":2,"heads":[{"W":[["2000","1"],["0","2000"]],"v":["3","1"]}]})");
  const auto res11 = test::run(bin + " recover --model " + medium + " 2>&1");
  INFO(res11.out);
  CHECK(res11.code == 11);
  CHECK(res11.out.find("over_budget") != std::string::npos);
  CHECK(res11.out.find("--max-degree") != std::string::npos);
  // --max-degree itself has the hard limit
  CHECK(test::run(bin + " recover --model " + medium + " --max-degree 1048577 2>&1").code == 2);
  // a budget above the estimate: the guard lets the run start (it is then
  // stopped at once by a wrong flag value, so the test stays fast)
  const auto res = test::run(bin + " recover --model " + medium + " --max-degree 1000000 --exact-solver nonsense 2>&1");
  CHECK(res.code == 2);
  const auto s = test::run(bin + " recover --d 2 --heads 1 --seed 3 --exact-solver fflu --json");
  CHECK(s.code == 0);
  CHECK(test::record_of(s.out).run.exact_solver == ExactSolver::fflu);
}

TEST_CASE("repair: degenerate draws at a small token range end ok by equality, repaired and reported; without repair they are degenerate") {
  // Token range 2 makes colliding poles common (Schwartz-Zippel, proofs/09).
  const int n = 12 * test::multiplier();
  int repaired = 0, unrepaired_degenerate = 0;
  test::Outcomes runs("token range 2, d = 3, H = 2");
  for (int seed = 1; seed <= n; ++seed) {
    GenerateOptions g;
    g.d = 3;
    g.heads = 2;
    g.seed = static_cast<std::uint64_t>(seed);
    const Model m = generate_model(g);
    RecoverOptions o;
    o.seed = static_cast<std::uint64_t>(seed);
    o.tokens = TokenSpec{2, 1};
    const RecoverResult r = recover(m, o);
    INFO("seed " << seed << ": " << record_json(r).dump());
    CHECK(r.judge.status != Status::mismatch);
    if (r.judge.status == Status::degenerate) ++unrepaired_degenerate;
    runs.count(r.judge.status == Status::ok && r.evidence.repairs.value_or(0) > 0 ? "ok, repaired" : status_name(r.judge.status));
    if (r.judge.status != Status::ok) continue;
    CHECK(r.truth.exact_match == true);
    CHECK(r.evidence.self_check == SelfCheck::yes);
    CHECK(r.evidence.queries == paper_query_bound(3, m.canonical().num_heads()) + r.evidence.repair_queries.value() + r.evidence.grid_witness_queries.value_or(0L));
    if (r.evidence.repairs.value() == 0) continue;
    ++repaired;
    CHECK(static_cast<long>(r.evidence.repaired_pairs.value().size()) == r.evidence.repairs.value());
    // the same draw without repair is degenerate
    RecoverOptions no = o;
    no.repair = false;
    const RecoverResult d = recover(m, no);
    CHECK(d.judge.status == Status::degenerate);
    // threads and solvers change nothing but the time
    RecoverOptions t = o;
    t.threads = 2;
    t.exact_solver = ExactSolver::fflu;
    RecoverResult rt = recover(m, t);
    CHECK(rt.run.exact_solver == ExactSolver::fflu);
    rt.run.exact_solver = r.run.exact_solver;
    CHECK(record_json(rt).dump() == record_json(r).dump());
  }
  MESSAGE("repaired " << repaired << " of " << n << " draws; unrepaired degenerate " << unrepaired_degenerate);
  CHECK(repaired > 0);
  CHECK(unrepaired_degenerate * 4 < n);
  runs.require(n * 3 / 4, {"ok", "ok, repaired"});
}
