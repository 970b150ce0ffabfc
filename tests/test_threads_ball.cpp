// Ball runs on several threads: the output bytes do not depend on the thread
// count, an oracle's batch answers equal its one-by-one answers, and the
// progress lines of a run go to standard error only (forced here with
// MHAQ_PROGRESS_AFTER=0, so no test depends on timing).
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <unistd.h>

#include "mhaq/run/record_json.hpp"
#include "mhaq/base/progress.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/stages/1-oracle/recording_oracle.hpp"
#include "mhaq/stages/learner.hpp"
#include "test_record.hpp"
#include "test_util.hpp"

using namespace mhaq;

namespace {

Model ball_model(int d, int H, std::uint64_t seed) {
  GenerateOptions g = default_generate(Arith::ball);
  g.d = d;
  g.heads = H;
  g.seed = seed;
  return generate_model(g);
}

std::string ball_json(const Model& m, int threads, long oracle_bits = 0) {
  RecoverOptions o;
  o.arith = Arith::ball;
  o.bits = 256;
  o.seed = 3;
  o.threads = threads;
  o.oracle_bits = oracle_bits;
  return record_json(recover(m, o)).dump();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("ball run: the JSON is byte-identical at 1, 2 and all threads, ok, and contains the truth") {
  const Model m = ball_model(6, 3, 2);
  const std::string one = ball_json(m, 1);
  const RecoverResult r = record_from_json(nlohmann::json::parse(one));
  CHECK(r.judge.status == Status::ok);
  CHECK(r.truth.contains_truth == true);
  CHECK(ball_json(m, 2) == one);
  CHECK(ball_json(m, 0) == one);
}

TEST_CASE("ball run from rounded answers (asked one at a time): byte-identical at 1 and 2 threads") {
  const Model m = ball_model(4, 2, 5);
  const std::string one = ball_json(m, 1, 200);
  CHECK(record_from_json(nlohmann::json::parse(one)).judge.status == Status::ok);
  CHECK(ball_json(m, 2, 200) == one);
}

TEST_CASE("an oracle's batch answers, counts and records equal its one-by-one answers") {
  PrecisionScope scope(256);
  const Model m = ball_model(5, 2, 7);
  LearnOptions lo;
  lo.H = 2;
  const std::vector<Query> qs = learner_plan(5, lo).queries();
  OracleStack<Ball> a = OracleStack<Ball>::model(m, 1).recorded(), b = OracleStack<Ball>::model(m, 1).recorded();
  Oracle<Ball>&ra = a.top(), &rb = b.top();
  CHECK(rb.any_order());
  std::vector<Ball> one;
  for (const Query& q : qs) one.push_back(ra.query(q));
  const std::vector<Ball> batch = rb.query_all(qs, 0, qs.size(), 2);
  REQUIRE(batch.size() == one.size());
  for (size_t i = 0; i < qs.size(); ++i) CHECK(batch[i].str() == one[i].str());
  const Oracle<Ball>&oa = ra, &ob = rb;
  CHECK(ob.queries() == oa.queries());
  CHECK(ob.max_length() == oa.max_length());
  CHECK(b.record().answers.size() == qs.size());
  CHECK(b.record().queries.size() == qs.size());
  // an oracle with a noise stream answers in the order asked
  OracleStack<Ball> noisy = OracleStack<Ball>::model(m, 1, OracleNoise{100, Rational(0), 1, NoisePattern::uniform, {}});
  CHECK_FALSE(noisy.top().any_order());
}

TEST_CASE("progress: a line per phase once past the threshold, none before it") {
  std::ostringstream now, later;
  Progress p(now, 0.0, 1e9), q(later, 1e9, 0.0);
  for (Progress* x : {&p, &q}) {
    x->plan(10, 3);
    x->phase("answering queries");
    x->answered(10);
    x->phase("fitting pairs");
    x->fitted(3);
  }
  CHECK(later.str().empty());
  const std::string s = now.str();
  CHECK(s.find("phase answering queries, queries answered 0 of 10, pairs fitted 0 of 3\n") != std::string::npos);
  CHECK(s.find("phase fitting pairs, queries answered 10 of 10, pairs fitted 0 of 3\n") != std::string::npos);
}

TEST_CASE("recover: progress lines on standard error only; standard output is the --quiet run's, one JSON object") {
  const std::string dir = "/tmp/mhaq_test_threads_ball_" + std::to_string(getpid());
  const std::string base = std::string(MHAQ_BINARY) + " recover --arith ball --bits 256 --d 4 --heads 2 --seed 2 --threads 2 --json";
  REQUIRE(test::run("MHAQ_PROGRESS_AFTER=0 " + base + " > " + dir + ".out 2> " + dir + ".err").code == 0);
  REQUIRE(test::run("MHAQ_PROGRESS_AFTER=0 " + base + " --quiet > " + dir + ".qout 2> " + dir + ".qerr").code == 0);
  const std::string out = slurp(dir + ".out"), err = slurp(dir + ".err");
  CHECK(out == slurp(dir + ".qout"));
  CHECK(slurp(dir + ".qerr").empty());
  CHECK(test::record_of(out).judge.status == Status::ok);
  CHECK(out.find("phase") == std::string::npos);
  CHECK(err.find("phase answering queries") != std::string::npos);
  CHECK(err.find("phase fitting pairs") != std::string::npos);
  CHECK(err.find("phase self-check, queries answered 125 of 125") != std::string::npos);
  for (const char* ext : {".out", ".err", ".qout", ".qerr"}) std::remove((dir + ext).c_str());
}
