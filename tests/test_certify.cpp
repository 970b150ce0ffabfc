// Machine check for proofs/10-krawczyk-certification.md: the certified pair
// enclosures contain the true poles, residues and limit, computed
// independently from the model at four times the precision.
#include <doctest/doctest.h>

#include "mhaq/stages/learner.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/recover.hpp"
#include "test_util.hpp"

using namespace mhaq;

namespace {
struct TruePair {
  Ball P;
  std::vector<Ball> r, c;
};
// r_h = exp((a-b)^T W_h b), c_h = v_h^T (b - a), P = v^T a (proofs/01), at `bits`.
TruePair true_pair(const Model& m, const QVec& a, const QVec& b, long bits) {
  PrecisionScope s(bits);
  TruePair t;
  Rational P;
  for (const auto& h : m.heads) {
    const Rational score = dot(a - b, matvec(h.W, b));
    t.r.push_back(Field<Ball>{}.exp(score));
    t.c.push_back(Ball(dot(h.v, b - a)));
    P += dot(h.v, a);
  }
  t.P = Ball(P);
  return t;
}
}  // namespace

TEST_CASE("Krawczyk-certified pair fits contain the independently computed truth") {
  const int n = 10 * test::multiplier();
  test::Outcomes runs("Krawczyk-certified pair fits");
  for (int t = 0; t < n; ++t) {
    GenerateOptions g = default_generate(Arith::ball);
    g.d = 3;
    g.heads = 1 + t % 4;
    g.seed = 400 + t;
    const Model m = generate_model(g);
    Rng rng(t + 1);
    const Draws dr = draw_tokens(rng, 3, default_tokens(Arith::ball));
    const QVec b = dr.B.col(0), a = b + dr.Delta.col(0);
    const long bits = 128 + 64 * (t % 3);
    PrecisionScope scope(bits);
    OracleStack<Ball> oracle_stack = OracleStack<Ball>::model(m, default_tokens(Arith::ball).den);
    Oracle<Ball>& oracle = oracle_stack.top();
    std::vector<Ball> f;
    for (long k = 0; k <= 2 * g.heads; ++k) f.push_back(k == 0 ? oracle.query({Run{b, 1}}) : oracle.query({Run{a, k}, Run{b, 1}}));
    const PairFit<Ball> fit = interpolate_pair(Field<Ball>{}, f, g.heads);
    const TruePair tp = true_pair(m, a, b, 4 * bits);
    INFO("trial " << t << " H=" << g.heads << " bits=" << bits);
    CHECK(arb_contains(fit.P.raw(), tp.P.raw()));
    int found = 0;
    for (size_t h = 0; h < tp.r.size(); ++h)
      for (size_t g2 = 0; g2 < fit.r.size(); ++g2)
        found += arb_contains(fit.r[g2].raw(), tp.r[h].raw()) && arb_contains(fit.c[g2].raw(), tp.c[h].raw());
    CHECK(found == g.heads);
    runs.count(found == g.heads && arb_contains(fit.P.raw(), tp.P.raw()) ? "contains the truth" : "misses the truth");
  }
  runs.require(n, {"contains the truth"});
}

TEST_CASE("the containment check can fail: certifying perturbed samples misses the truth") {
  GenerateOptions g = default_generate(Arith::ball);
  g.d = 3;
  g.heads = 2;
  g.seed = 9;
  const Model m = generate_model(g);
  Rng rng(3);
  const Draws dr = draw_tokens(rng, 3, default_tokens(Arith::ball));
  const QVec b = dr.B.col(0), a = b + dr.Delta.col(0);
  PrecisionScope scope(256);
  OracleStack<Ball> oracle_stack = OracleStack<Ball>::model(m, default_tokens(Arith::ball).den);
  Oracle<Ball>& oracle = oracle_stack.top();
  std::vector<Ball> f;
  for (long k = 0; k <= 4; ++k) f.push_back(k == 0 ? oracle.query({Run{b, 1}}) : oracle.query({Run{a, k}, Run{b, 1}}));
  f[3] += Ball(Rational(1, 1000000));  // a wrong sample with a tight radius
  const PairFit<Ball> fit = interpolate_pair(Field<Ball>{}, f, 2);
  const TruePair tp = true_pair(m, a, b, 1024);
  int found = 0;
  for (size_t h = 0; h < 2; ++h)
    for (size_t g2 = 0; g2 < fit.r.size(); ++g2) found += arb_contains(fit.r[g2].raw(), tp.r[h].raw());
  CHECK(found < 2);
}
