// The machine checks of proofs/: every lemma passes, and every lemma's
// deliberately wrong variant fails (so no check is vacuous).
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "mhaq/base/error.hpp"
#include "mhaq/evidence/prove.hpp"
#include "test_util.hpp"

namespace {
long multiplier() {
  const char* s = std::getenv("MHAQ_TEST_MULTIPLIER");
  if (!s || !*s) return 1;
  const long m = std::strtol(s, nullptr, 10);
  return m >= 1 ? m : 1;
}
}  // namespace

TEST_CASE("every lemma check passes") {
  mhaq::ProveOptions o;
  o.multiplier = multiplier();
  const auto res = mhaq::run_proof_checks(o);
  REQUIRE(res.size() == 34);
  mhaq::test::Outcomes lemmas("lemma checks (each prints its randomized cases)");
  for (const auto& r : res) {
    INFO(r.id << ": " << r.detail);
    CHECK(r.pass);
    CHECK(r.cases > 0);
    std::printf("  %s: %ld cases\n", r.id.c_str(), static_cast<long>(r.cases));
    lemmas.count(r.pass && r.cases > 0 ? "pass" : "fail");
  }
  lemmas.require(34, {"pass"});
}

TEST_CASE("every lemma's broken variant fails") {
  for (const auto& id : mhaq::proof_lemma_ids()) {
    mhaq::ProveOptions o;
    o.multiplier = multiplier();
    o.break_lemma = id.substr(0, 2);
    const auto r = mhaq::run_proof_check(id, o);
    INFO(id << ": " << r.detail);
    CHECK_FALSE(r.pass);
    // breaking one lemma leaves the others intact
    const std::string other = id.substr(0, 2) == "05" ? "04" : "05";
    CHECK(mhaq::run_proof_check(other, o).pass);
  }
}

TEST_CASE("unknown lemma ids are usage errors") {
  mhaq::ProveOptions o;
  CHECK_THROWS_AS(mhaq::run_proof_check("99-nope", o), mhaq::Error);
  o.break_lemma = "99";
  CHECK_THROWS_AS(mhaq::run_proof_checks(o), mhaq::Error);
}
