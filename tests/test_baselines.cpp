// The prior-work baselines beside mhaq. Single-head and orthogonal
// baselines are exact where their assumptions hold (equality in Q, exactly
// d^2 + d, resp. sum k^2 + k, queries of length <= 2, counted on the queries
// actually sent); on general multi-head models they return wrong parameters
// and are flagged, while mhaq is exact on every non-degenerate draw.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include "mhaq/run/record_json.hpp"
#include "mhaq/baselines/prior_work.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/stages/1-oracle/recording_oracle.hpp"
#include "mhaq/evidence/baseline.hpp"
#include "test_util.hpp"

using namespace mhaq;
using nlohmann::json;

namespace {
RecoverOptions opts(Arith a, std::uint64_t seed, long bits = 256) {
  RecoverOptions o;
  o.arith = a;
  o.seed = seed;
  o.bits = bits;
  return o;
}
// The baseline straight through a recording oracle: the queries it really sent.
struct Sent {
  std::vector<LearnedHead<QTau>> heads;
  long queries = 0, longest = 0;
};
Sent run_exact(const Model& m, const BaselineOptions& bo) {
  OracleStack<QTau> oracle = OracleStack<QTau>::model(m, bo.tokens.den).recorded();
  const RecordingOracle<QTau>& rec = oracle.record();
  Sent s;
  s.heads = learn_baseline<Field<QTau>>(oracle.top(), bo).heads;
  s.queries = static_cast<long>(rec.queries.size());
  for (const auto& q : rec.queries.all()) s.longest = std::max(s.longest, query_length(q));
  return s;
}
}  // namespace

TEST_CASE("single-head baseline: exact on 20 single-head models, d in {2,3,4,6}, d^2 + d queries of length <= 2") {
  const int n = 20 * test::multiplier();
  test::Outcomes runs("single-head baseline, exact");
  for (int t = 0; t < n; ++t) {
    GenerateOptions g;
    const int ds[] = {2, 3, 4, 6};
    g.d = ds[t % 4];
    g.heads = 1;
    g.seed = 500 + t;
    const Model m = generate_model(g);
    INFO("seed " << g.seed << ", d " << g.d);
    BaselineOptions bo;
    bo.seed = t + 1;
    const Sent s = run_exact(m, bo);
    CHECK(exact_heads_match(s.heads, m.canonical()));
    CHECK(s.queries == static_cast<long>(g.d) * g.d + g.d);
    CHECK(s.longest <= 2);
    // the same through the tool: judged ok, the count reported
    const RecoverResult r = baseline_run(m, BaselineRun{}, opts(Arith::exact, t + 1));
    runs.count(status_name(r.judge.status));
    CHECK(r.judge.status == Status::ok);
    CHECK(r.truth.exact_match == true);
    CHECK(r.truth.wrong == false);
    CHECK(r.evidence.queries == g.d * g.d + g.d);
    CHECK(r.evidence.max_length.value() <= 2);
  }
  runs.require(n, {"ok"});
}

TEST_CASE("orthogonal baseline: exact on 20 orthogonal-subspace models with known bases, H in {2,3}") {
  const int n = 20 * test::multiplier();
  test::Outcomes runs("orthogonal baseline, known bases, exact");
  for (int t = 0; t < n; ++t) {
    GenerateOptions g;
    g.heads = 2 + t % 2;
    g.d = g.heads + 1 + (t / 2) % 2;
    g.seed = 700 + t;
    std::vector<QMat> bases;
    const Model m = generate_orthogonal_model(g, bases);
    INFO("seed " << g.seed << ", d " << g.d << ", H " << g.heads);
    REQUIRE(m.canonical().num_heads() == g.heads);
    BaselineOptions bo;
    bo.method = BaselineMethod::orthogonal;
    bo.bases = bases;
    bo.seed = t + 1;
    long expect = 0;
    for (const auto& P : bases) expect += static_cast<long>(P.cols()) * P.cols() + P.cols();
    const Sent s = run_exact(m, bo);
    CHECK(exact_heads_match(s.heads, m.canonical()));
    CHECK(s.queries == expect);
    CHECK(s.longest <= 2);
    const RecoverResult r = baseline_run(m, BaselineRun{BaselineMethod::orthogonal, bases, "known", Rational(1)}, opts(Arith::exact, t + 1));
    runs.count(status_name(r.judge.status));
    CHECK(r.judge.status == Status::ok);
    CHECK(r.evidence.queries == expect);
    CHECK(r.plan.query_bound == expect);
  }
  runs.require(n, {"ok"});
}

TEST_CASE("the baselines in the other arithmetics: balls contain the truth, floats within tolerance") {
  GenerateOptions g;
  g.d = 4;
  g.heads = 2;
  g.seed = 41;
  std::vector<QMat> bases;
  const Model m = generate_orthogonal_model(g, bases);
  const BaselineRun orth{BaselineMethod::orthogonal, bases, "known", Rational(1)};
  const RecoverResult rb = baseline_run(m, orth, opts(Arith::ball, 1, 256));
  CHECK(rb.judge.status == Status::ok);
  CHECK(rb.truth.contains_truth == true);
  for (Arith a : {Arith::mpfr, Arith::ieee}) {
    const RecoverResult r = baseline_run(m, orth, opts(a, 1, 256));
    INFO(record_json(r).dump());
    CHECK(r.judge.status == Status::ok);
    CHECK(r.truth.wrong == false);
    CHECK(r.study.kappa.value() > 0);
    // the ok rests on the bound of the baseline replayed in balls, which holds
    CHECK(r.judge.judge_route == "replay");
    REQUIRE(r.judge.certified_error.has_value());
    CHECK(*r.judge.certified_error <= r.judge.tolerance.value());
    CHECK(*r.judge.certified_error >= r.truth.max_rel_error.value());
  }
  // the prior work's scaling keeps every logit in [-1/2, 1/2] (|W_ij| <= 1 here)
  GenerateOptions g1 = g;
  g1.heads = 1;
  const Model m1 = generate_model(g1);
  const RecoverResult r1 = baseline_run(m1, BaselineRun{}, opts(Arith::mpfr, 3, 256));
  CHECK(r1.judge.status == Status::ok);
  REQUIRE(r1.judge.certified_error.has_value());
  CHECK(*r1.judge.certified_error >= r1.truth.max_rel_error.value());
  CHECK(r1.run.scale_log2_max == 16);
}

TEST_CASE("a general multi-head model: the baselines return wrong parameters and are flagged, mhaq is exact") {
  GenerateOptions g;
  g.d = 3;
  g.heads = 2;
  g.seed = 3;
  const Model m = generate_model(g);
  const CompareResult c = compare_methods(m, nullptr, opts(Arith::mpfr, 1, 256));
  INFO(compare_report(c));
  int seen = 0;
  for (const CompareRow& row : c.rows) {
    if (row.method.rfind("mhaq", 0) == 0) {
      CHECK(row.status == Status::ok);
      CHECK_FALSE(row.wrong);
    } else {
      ++seen;
      CHECK(row.status != Status::ok);
      if (row.method == "single-head") CHECK(row.wrong);
    }
  }
  CHECK(seen == 2);  // single-head and orthogonal-axis
  // exact mode: a logit is the log of no power of tau, so Q(tau) cannot hold
  // the baseline's parameters; it ends not ok, and returns nothing
  const RecoverResult re = baseline_run(m, BaselineRun{}, opts(Arith::exact, 1));
  CHECK(re.judge.status == Status::inconsistent);
  CHECK(re.truth.wrong == false);
  const RecoverResult rx = recover(m, opts(Arith::exact, 1));
  CHECK((rx.judge.status == Status::ok || rx.judge.status == Status::degenerate));
}

TEST_CASE("negative control: an orthogonal model with wrong (axis-aligned) bases is not recovered") {
  // with known bases the same model is exact; a wrong basis must be caught by
  // the comparison, so the orthogonal test above can fail
  int wrong = 0, mixed = 0;
  test::Outcomes runs("axis-aligned guess on orthogonal models");
  for (int t = 0; t < 10; ++t) {
    GenerateOptions g;
    g.heads = 2;
    g.d = 4;
    g.seed = 900 + t;
    std::vector<QMat> bases;
    const Model m = generate_orthogonal_model(g, bases);
    const std::vector<QMat> axis = axis_bases(m.d, 2);
    // the axis guess spans the same subspaces (up to the order of heads) when
    // every known basis vector lives in one block of coordinates, the two
    // heads in different blocks
    int block[2] = {-1, -1};
    bool same = true;
    for (int h = 0; h < 2; ++h)
      for (int c = 0; c < bases[h].cols(); ++c)
        for (int r = 0; r < m.d; ++r)
          if (!bases[h](r, c).is_zero()) {
            const int b = r < 2 ? 0 : 1;
            if (block[h] >= 0 && block[h] != b) same = false;
            block[h] = b;
          }
    if (same && block[0] != block[1]) {
      runs.count("same subspaces (skipped)");
      continue;
    }
    ++mixed;
    const RecoverResult r = baseline_run(m, BaselineRun{BaselineMethod::orthogonal, axis, "axis-aligned guess", Rational(1)}, opts(Arith::mpfr, 1));
    wrong += r.truth.wrong.value() || r.judge.status != Status::ok;
    CHECK(r.judge.status != Status::ok);
    runs.count(r.truth.wrong.value() ? "wrong parameters flagged" : status_name(r.judge.status));
  }
  CHECK(wrong == mixed);
  runs.require(5, {"wrong parameters flagged", "mismatch", "unable", "degenerate", "inconsistent"});
}

TEST_CASE("the contrast on 50 general 2- and 3-head models: baselines off by > 0.1 in >= 90%, mhaq exact on every non-degenerate draw") {
  StudyOptions s;
  s.trials = 50;
  s.seed = 1;
  s.arith = Arith::exact;
  s.baseline_arith = Arith::mpfr;
  s.families = {"general"};
  const StudyResult j = compare_study(s);
  REQUIRE(j.families.size() == 1);
  const StudyFamily& f = j.families[0];
  INFO(study_report(j));
  for (const StudyMethod& m : f.methods) {
    INFO(m.method);
    const int runs = m.runs;
    CHECK(runs == 50);
    if (m.method.rfind("mhaq", 0) == 0) {
      CHECK(m.ok + m.degenerate == runs);
      CHECK(m.wrong == 0);
      test::Outcomes o(m.method + " on 50 general models");
      for (int i = 0; i < m.ok; ++i) o.count("ok");
      for (int i = 0; i < m.degenerate; ++i) o.count("degenerate");
      o.require(40, {"ok"});
    } else {
      // not one correct answer; at least 90% either return parameters off by
      // more than 0.1 relative or fail (a sigmoid inverse out of range)
      CHECK(m.ok == 0);
      CHECK(m.off_0_1 + m.failed >= 0.9 * runs);
      CHECK(m.off_0_1 == m.wrong);
      if (m.method == "single-head") CHECK(m.off_0_1 >= 0.9 * runs);
    }
  }
  // every run's own rows say the same: no mhaq row wrong, no baseline row ok
  for (const StudyTrial& t : f.runs)
    for (const CompareRow& row : t.rows) {
      INFO(t.model_seed << " " << row.method);
      if (row.method.rfind("mhaq", 0) == 0) CHECK_FALSE(row.wrong);
    }
}

TEST_CASE("bases: model-file field round trip, and malformed bases rejected") {
  GenerateOptions g;
  g.d = 3;
  g.heads = 2;
  g.seed = 5;
  std::vector<QMat> bases, back;
  const Model m = generate_orthogonal_model(g, bases);
  const std::string text = model_with_bases_to_json_text(m, bases);
  const Model m2 = model_from_json_text(text);
  CHECK(m2.heads.size() == m.heads.size());
  REQUIRE(bases_from_json_text(text, 3, back));
  REQUIRE(back.size() == bases.size());
  for (size_t h = 0; h < back.size(); ++h) CHECK(back[h] == bases[h]);
  CHECK_FALSE(bases_from_json_text(model_to_json_text(m), 3, back));
  CHECK_THROWS_AS(bases_from_json_text(R"({"bases": [[["1","1","0"]], [["1","0","0"]]]})", 3, back), Error);  // not orthogonal
  CHECK_THROWS_AS(bases_from_json_text(R"({"bases": [[["1","0"]]]})", 3, back), Error);                       // wrong length
}
