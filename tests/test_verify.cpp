// The theorem checker (`mhaq verify`) and the Schwartz-Zippel bound.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "mhaq/run/recover.hpp"
#include "mhaq/evidence/verify.hpp"
#include "test_record.hpp"
#include "test_util.hpp"

using namespace mhaq;
using nlohmann::json;

namespace {
const ClaimRow* find_claim(const VerifyResult& v, const std::string& id) {
  for (const ClaimRow& c : v.claims)
    if (c.id == id) return &c;
  return nullptr;
}
}  // namespace

TEST_CASE("exact verify: every claim passes on small trials, H0 = H + 2 runs included") {
  VerifyOptions o;
  o.trials = 20 * test::multiplier();
  o.seed = 2024;
  o.max_d = 3;
  o.max_h = 2;
  const VerifyResult v = verify(o).value();
  INFO(verify_report(v));
  CHECK(v.ok);
  CHECK(verify_exit_code(v) == 0);
  REQUIRE(v.claims.size() == 4);
  for (const std::string id : {"1", "2", "3", "4"}) {
    const ClaimRow* c = find_claim(v, id);
    REQUIRE(c != nullptr);
    CHECK(c->trials == o.trials);
    CHECK(c->failures == 0);
    CHECK(c->unable == 0);
    CHECK(c->passes + c->repaired + c->degenerate == o.trials);
    test::Outcomes trials("verify claim " + id);
    for (const auto& [k, n] : {std::pair<const char*, long>{"passes", c->passes}, {"repaired", c->repaired}, {"degenerate", c->degenerate},
                               {"unable", c->unable}, {"failures", c->failures}})
      for (long i = 0; i < n; ++i) trials.count(k);
    trials.require(o.trials / 2 + 1, {"passes"});  // degenerate draws are the exception at R = 5
    CHECK(c->failing.empty());
  }
  CHECK(find_claim(v, "2")->worst_value == 0.0);
  CHECK(find_claim(v, "3")->worst_value == 0.0);  // paper queries have exactly 2H+1 tokens
  // Every trial ran the H0 variant with H0 = H + 2; the distribution covers d and H and both special model kinds.
  std::set<int> ds, hs;
  int shared = 0, cancel = 0;
  for (const TrialRow& t : v.trial_list) {
    CHECK(t.H0 == t.H + 2);
    ds.insert(t.d);
    hs.insert(t.H);
    shared += t.share_w;
    cancel += t.cancel_v;
  }
  CHECK(ds == std::set<int>{2, 3});
  CHECK(hs == std::set<int>{1, 2});
  CHECK(shared > 0);
  CHECK(cancel > 0);
  // Determinism: the same options give the same document.
  CHECK(verify_json(verify(o).value()).dump() == verify_json(v).dump());
  // Degenerate counts agree with the per-trial statuses.
  int deg = 0;
  for (const TrialRow& t : v.trial_list) deg += t.status == Status::degenerate;
  CHECK(v.schwartz_zippel.degenerate_known_h == deg);
  CHECK(find_claim(v, "1")->degenerate == deg);
}

TEST_CASE("a failing claim names its trial seed and a replay command that reproduces it") {
  // double arithmetic with an impossible tolerance: claim 1 must fail on every recovered trial.
  VerifyOptions o;
  o.trials = 3;
  o.seed = 9;
  o.arith = Arith::ieee;
  o.max_d = 2;
  o.max_h = 1;
  o.tolerance = 1e-300;
  o.unknown_h = false;
  const VerifyResult v = verify(o).value();
  CHECK_FALSE(v.ok);
  CHECK(verify_exit_code(v) == 6);
  const ClaimRow& c1 = *find_claim(v, "1");
  REQUIRE(c1.failures >= 1);
  REQUIRE(c1.failing.size() == static_cast<size_t>(c1.failures));
  const FailingTrial& f = c1.failing[0];
  const std::string cmd = f.command;
  CHECK(cmd.rfind("mhaq recover ", 0) == 0);
  CHECK(cmd.find("--seed " + std::to_string(f.seed)) != std::string::npos);
  CHECK(verify_report(v).find(cmd) != std::string::npos);
  // Replaying through the real program gives the same relative error as the trial.
  const auto r = test::run(std::string(MHAQ_BINARY) + cmd.substr(4) + " 2>/dev/null");
  const RecoverResult rec = test::record_of(r.out);
  REQUIRE(rec.judge.status == Status::ok);
  REQUIRE(rec.truth.max_rel_error.has_value());
  CHECK(*rec.truth.max_rel_error > 1e-300);
  CHECK(rec.run.seed == f.seed);
  CHECK(rec.run.d == f.d.value());
  CHECK(rec.truth.heads_true == f.H.value());
}

TEST_CASE("Schwartz-Zippel bound: event counts and degrees of proofs/09") {
  // d=2, H=1: residue events only, v^T delta_1, v^T delta_2, v^T (delta_1 + delta_2).
  SchwartzZippel z = schwartz_zippel(2, 1, 17);
  CHECK(z.residue_events == 3);
  CHECK(z.collision_events == 0);
  CHECK(z.link_events == 0);
  CHECK(z.degree_sum == 3);
  // d=3, H=2: 2*5 residue events; 17 pairs x 1 collision; no spurious link (needs a third head).
  z = schwartz_zippel(3, 2, 11);
  CHECK(z.residue_events == 10);
  CHECK(z.collision_events == 17);
  CHECK(z.link_events == 0);
  CHECK(z.degree_sum == 10 + 2 * 17);
  // d=4, H=3: 3*7 + 2*(31*3) + 2*(15*3*2*1).
  z = schwartz_zippel(4, 3, 11);
  CHECK(z.degree_sum == 21 + 186 + 180);
  // Conditioning on nonsingular B, Delta: (1 - sum_k S^-k)^2.
  z = schwartz_zippel(2, 1, 17);
  const double ns = (1 - 1.0 / 17 - 1.0 / 289) * (1 - 1.0 / 17 - 1.0 / 289);
  CHECK(z.nonsingular_lower == doctest::Approx(ns));
  CHECK(z.bound == doctest::Approx(3.0 / 17 / ns));
  CHECK(schwartz_zippel_bound(4, 3, 3) == 1.0);  // clipped
  CHECK(schwartz_zippel_bound(2, 1, 1001) < schwartz_zippel_bound(2, 1, 17));
}

TEST_CASE("observed degenerate rate never exceeds the Schwartz-Zippel bound, R in {1, 2, 4, 8}") {
  VerifyOptions o;
  o.trials = 40 * test::multiplier();
  o.seed = 77;
  o.max_d = 3;
  o.max_h = 2;
  const RateStudy r = rate_study(o, {1, 2, 4, 8}).value();
  INFO(rate_report(r));
  CHECK(r.ok);
  CHECK(r.wrong_answers == 0);
  CHECK(r.all_within_bound);
  REQUIRE(r.rates.size() == 4);
  long prev_S = 0;
  for (const RateRow& row : r.rates) {
    CHECK(row.trials == o.trials);
    test::Outcomes trials("rate study, token range " + std::to_string(row.token_range));
    for (long i = 0; i < row.trials; ++i) trials.count(i < row.degenerate ? "degenerate" : "not degenerate (checked)");
    trials.require(row.token_range >= 4 ? o.trials / 2 : o.trials / 4, {"not degenerate (checked)"});
    CHECK(row.S == 2 * row.token_range + 1);
    CHECK(row.S > prev_S);
    prev_S = row.S;
    CHECK(row.observed_rate <= row.mean_bound);
    for (const RateCell& c : row.cells) CHECK(c.observed_rate <= c.bound);
  }
  // At R = 8 the bound is informative on this distribution, so the comparison has teeth.
  CHECK(r.rates[3].mean_bound < 0.75);
  // Degenerate draws occur at R = 1 and become rarer by R = 8.
  CHECK(r.rates[0].degenerate > r.rates[3].degenerate);
  CHECK(rate_exit_code(r) == 0);
}

TEST_CASE("verify --json prints exactly one object of the documented shape, byte-identical on rerun") {
  const std::string cmd = std::string(MHAQ_BINARY) + " verify --trials 4 --seed 5 --max-d 2 --max-h 2 --json";
  const auto a = test::run(cmd);
  const auto b = test::run(cmd);
  CHECK(a.code == 0);
  CHECK(a.out == b.out);
  REQUIRE(!a.out.empty());
  CHECK(a.out.find('\n') == a.out.size() - 1);  // one line, one object
  const json v = json::parse(a.out);
  REQUIRE(v.is_object());
  REQUIRE(v["claims"].is_array());
  CHECK(v["claims"].size() == 4);
  for (const auto& c : v["claims"]) {
    for (const char* k : {"claim", "trials", "passes", "failures", "degenerate", "worst"}) CHECK_MESSAGE(c.contains(k), k);
    CHECK(c["claim"].is_string());
    CHECK(c["trials"] == 4);
  }
  CHECK(v["distribution"].is_string());
  REQUIRE(v["schwartz_zippel"].is_object());
  for (const char* k : {"S", "token_range", "observed_rate", "mean_bound", "degenerate_known_h"}) CHECK_MESSAGE(v["schwartz_zippel"].contains(k), k);
  CHECK(v["schwartz_zippel"]["S"] == 11);

  const auto rr = test::run(std::string(MHAQ_BINARY) + " verify --rates --ranges 1,8 --trials 3 --seed 5 --max-d 2 --max-h 1 --json");
  CHECK(rr.code == 0);
  const json r = json::parse(rr.out);
  REQUIRE(r["rates"].size() == 2);
  CHECK(r["rates"][0]["token_range"] == 1);
  CHECK(r["rates"][1]["token_range"] == 8);
  for (const auto& row : r["rates"])
    for (const char* k : {"S", "trials", "degenerate", "observed_rate", "mean_bound", "cells"}) CHECK_MESSAGE(row.contains(k), k);

  // Usage errors are reported as one JSON object too.
  const auto bad = test::run(std::string(MHAQ_BINARY) + " verify --trials 2 --seed 1 --max-d 1 --min-d 3 --json 2>/dev/null");
  CHECK(bad.code == 2);
  CHECK(json::parse(bad.out)["error"] == "usage");
}
