// The machine check of proofs/06-canonical-form.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// Canonical form.
void check_canonical(const ProveOptions& o, bool broken, LemmaCheck& out) {
  std::ostringstream det;
  Rng rng(o.seed ^ 0x606);
  // A "canonical form" in the broken variant keeps the first value vector of
  // each W group instead of summing.
  auto canon = [&](const Model& m) {
    if (!broken) return m.canonical();
    Model c;
    c.d = m.d;
    for (const auto& h : m.heads) {
      bool seen = false;
      for (const auto& g : c.heads) seen = seen || g.W == h.W;
      if (!seen) c.heads.push_back(h);
    }
    return c;
  };
  const long n = scaled(o, 100);
  long evals = 0;
  for (long t = 0; t < n; ++t) {
    const int d = static_cast<int>(rng.uniform_int(1, 3));
    const int kind = static_cast<int>(t % 3);  // 0 share, 1 cancel, 2 both
    const int heads = kind == 2 ? 4 + static_cast<int>(rng.uniform_int(0, 1)) : 2 + static_cast<int>(rng.uniform_int(0, 2));
    const Model m = random_model(rng, d, heads, kind != 1, kind != 0);
    const Model c = canon(m);
    // canonical: distinct W, no zero v
    for (size_t h = 0; h < c.heads.size(); ++h) {
      bool zero = true;
      for (const auto& x : c.heads[h].v) zero = zero && x.is_zero();
      require(!zero, "canonical form keeps a zero value vector");
      for (size_t g = h + 1; g < c.heads.size(); ++g) require(!(c.heads[h].W == c.heads[g].W), "canonical form keeps a repeated W");
    }
    const long L = m.w_denominator();
    for (int q = 0; q < 5; ++q) {
      Query qu;
      const int runs = static_cast<int>(rng.uniform_int(1, 4));
      for (int r = 0; r < runs; ++r) qu.push_back(Run{rand_vec(rng, d, 2), rng.uniform_int(1, 3)});
      require(QTauAccess::equal(evaluate_exact(m, qu, L), evaluate_exact(c, qu, L)), "f changes under canonicalisation");
      ++evals;
    }
    ++out.cases;
  }
  det << n << " models with shared W / cancelling v, " << evals << " exact evaluations f(model) == f(canonical); ";
  // "Only if", as far as recovery reaches: the exact learner sees only f and
  // returns the canonical form, so equal f forces equal canonical forms; and
  // a model with a different canonical form is told apart by the plan's queries.
  const long nr = scaled(o, 8);
  long recov = 0, distinguished = 0, degenerate = 0;
  for (long t = 0; t < nr; ++t) {
    const int d = static_cast<int>(rng.uniform_int(2, 3));
    const Model m = random_model(rng, d, 3, true, false);  // heads 0,1 share W
    const Model c = canon(m);
    LearnResult<QTau> lr;
    if (!learn_exact(m, c.num_heads(), Schedule::paper, rng.next(), lr)) { ++degenerate; continue; }
    require(exact_heads_match(lr.heads, c), "learner output is not the canonical form of the model");
    ++recov;
    // perturb one W entry of the canonical form: some plan query must differ
    Model m2 = c;
    m2.heads[0].W(0, 0) += Rational(1, 4);
    const long L = std::lcm(m.w_denominator(), m2.w_denominator());
    bool differs = false;
    for (const auto& q : lr.plan.queries())
      if (!QTauAccess::equal(evaluate_exact(c, q, L), evaluate_exact(m2, q, L))) { differs = true; break; }
    require(differs, "models with different canonical forms agree on every plan query");
    ++distinguished;
  }
  out.cases += recov + distinguished;
  det << recov << " exact recoveries returning the canonical form, " << distinguished << " perturbed models distinguished (" << degenerate
      << " degenerate draws reported)";
  out.detail = det.str();
}

}  // namespace mhaq::proof
