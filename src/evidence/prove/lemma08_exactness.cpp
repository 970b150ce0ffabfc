// The machine check of proofs/08-exactness-of-Q-tau.md (the registry: registry.cpp).
#include "prove_common.hpp"

namespace mhaq::proof {

// Exactness of Q(tau): exact answers are the real numbers the Ball oracle encloses.
void eval_at(arb_t out, const QTau& q, const arb_t tau, slong prec) {
  flint::ArbPoly p;
  flint::Arb num, den;
  arb_poly_set_fmpz_poly(p.p, QTauAccess::raw(q)->num, prec);
  arb_poly_evaluate(num.v, p.p, tau, prec);
  arb_poly_set_fmpz_poly(p.p, QTauAccess::raw(q)->den, prec);
  arb_poly_evaluate(den.v, p.p, tau, prec);
  arb_div(out, num.v, den.v, prec);
}

void check_exactness(const ProveOptions& o, bool broken, LemmaCheck& out) {
  std::ostringstream det;
  Rng rng(o.seed ^ 0x808);
  // (a) exp and log: exp(n/L) = tau^n, log(tau^n) = n/L; log refuses anything else.
  long logs = 0;
  for (long L : {1L, 4L, 9L, 36L}) {
    const Field<QTau> F(L);
    for (long nn = -30; nn <= 30; nn += 3) {
      const Rational s(nn, static_cast<unsigned long>(L));
      require(QTauAccess::equal(F.exp(s), QTauAccess::tau_pow(nn)), "exp(n/L) != tau^n");
      require(QTauAccess::equal(F.log(QTauAccess::tau_pow(nn)), QTau(broken ? Rational(nn * L) : s)), "log(tau^n) != n/L");
      ++logs;
    }
    bool refused = false;
    try {
      (void)F.log(QTau(Rational(1)) + QTauAccess::tau_pow(1));
    } catch (const Error&) {
      refused = true;
    }
    require(refused, "exact log accepted 1 + tau");
    ++logs;
  }
  det << logs << " exact exp/log checks; ";
  // (b) evaluation at tau = e^{1/L} (a ring map, injective because tau is
  // transcendental) sends exact answers into the Ball oracle's enclosures,
  // and nonzero elements to certified-nonzero reals.
  const long n = scaled(o, 80);
  long evals = 0, nonzero = 0;
  const slong prec = 256;
  PrecisionScope scope(prec);
  for (long t = 0; t < n; ++t) {
    const int d = static_cast<int>(rng.uniform_int(1, 3)), H = static_cast<int>(rng.uniform_int(1, 3));
    const Model m = random_model(rng, d, H);
    const long L = m.w_denominator();
    OracleStack<Ball> ball = OracleStack<Ball>::model(m, 1);
    flint::Arb tau;
    arb_set_si(tau.v, 1);
    arb_div_si(tau.v, tau.v, broken ? L + 1 : L, prec);
    arb_exp(tau.v, tau.v, prec);
    std::vector<QTau> answers;
    for (int q = 0; q < 4; ++q) {
      Query qu;
      const int runs = static_cast<int>(rng.uniform_int(1, 3));
      for (int r = 0; r < runs; ++r) qu.push_back(Run{rand_vec(rng, d, 2), rng.uniform_int(1, 4)});
      const QTau ex = evaluate_exact(m, qu, L);
      const Ball b = ball.top().query(qu);
      flint::Arb v;
      eval_at(v.v, ex, tau.v, prec);
      require(arb_overlaps(v.v, b.raw()) != 0, "exact answer evaluated at e^{1/L} lies outside the Ball oracle's enclosure");
      answers.push_back(ex);
      ++evals;
    }
    // differences of answers: exact zero test agrees with the real number
    for (size_t i = 0; i < answers.size(); ++i)
      for (size_t j = i + 1; j < answers.size(); ++j) {
        const QTau diff = answers[i] - answers[j];
        flint::Arb v;
        eval_at(v.v, diff, tau.v, prec);
        if (QTauAccess::is_zero(diff)) {
          require(arb_contains_zero(v.v) != 0, "exact zero is not zero as a real number");
        } else {
          slong p = prec;
          while (arb_contains_zero(v.v) && p < 8192) {
            p *= 2;
            flint::Arb t2;
            arb_set_si(t2.v, 1);
            arb_div_si(t2.v, t2.v, broken ? L + 1 : L, p);
            arb_exp(t2.v, t2.v, p);
            eval_at(v.v, diff, t2.v, p);
          }
          require(!arb_contains_zero(v.v), "nonzero element of Q(tau) could not be certified nonzero as a real number");
          // the field's own three-valued sign test decides the same sign
          require((Field<QTau>(L).is_positive(diff) == Truth::yes) == (arb_is_positive(v.v) != 0),
                  "Field<QTau>::is_positive disagrees with the sign of the real number");
          ++nonzero;
        }
      }
  }
  out.cases = logs + evals + nonzero;
  det << evals << " exact answers inside the Ball oracle's enclosures at " << prec << " bits, " << nonzero
      << " nonzero differences certified nonzero as reals";
  out.detail = det.str();
}

}  // namespace mhaq::proof
