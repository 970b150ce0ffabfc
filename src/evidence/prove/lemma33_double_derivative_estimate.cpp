// The machine check of proofs/33-double-derivative-estimate.md (the registry: registry.cpp).
#include "prove_common.hpp"

#include <cmath>

#include "mhaq/arith/err_double.hpp"

namespace mhaq::proof {

namespace {

// The broken variant's number: a double whose error is taken to be u times
// its own magnitude ("the derivatives are doubles, so they are good to u"),
// with no propagation of its operands' errors.
struct NaiveDouble {
  double mid = 0, rad = 0;
  static NaiveDouble rounded(double m) { return {m, ErrDouble::u * std::fabs(m)}; }
  static NaiveDouble of(double m) { return {m, ErrDouble::u * std::fabs(m)}; }
  friend NaiveDouble operator+(const NaiveDouble& a, const NaiveDouble& b) { return of(a.mid + b.mid); }
  friend NaiveDouble operator-(const NaiveDouble& a, const NaiveDouble& b) { return of(a.mid - b.mid); }
  friend NaiveDouble operator*(const NaiveDouble& a, const NaiveDouble& b) { return of(a.mid * b.mid); }
};

double uniform(Rng& rng) { return static_cast<double>(rng.next() >> 11) * 0x1p-53; }

// |mid - exact| <= rad, compared in MPFR at the current precision.
bool within(double mid, double rad, const Mpfr& exact) {
  Mpfr m, r;
  mpfr_set_d(m.raw(), mid, MPFR_RNDN);
  mpfr_set_d(r.raw(), rad, MPFR_RNDN);
  Mpfr e = m - exact;
  mpfr_abs(e.raw(), e.raw(), MPFR_RNDN);
  return mpfr_lessequal_p(e.raw(), r.raw()) != 0;
}

// Random straight-line programs of +, -, * on a pool of numbers, each step
// carried both in N (a double with an error bound) and exactly (MPFR at 1024
// bits, exact for these short programs up to its own rounding far below
// the bounds): every value must be within its bound. A third of the inputs
// are values rounded to double (the jets' coefficients); the programs
// subtract near-equal numbers on purpose (the cancellation the bound exists
// for). Returns the number of steps checked; `what` the first failure.
template <class N>
long check_programs(Rng& rng, long programs, std::string& what) {
  PrecisionScope scope(1024);
  long steps = 0;
  for (long t = 0; t < programs; ++t) {
    std::vector<N> x;
    std::vector<Mpfr> e;
    for (int k = 0; k < 6; ++k) {
      Mpfr v;
      mpfr_set_d(v.raw(), (uniform(rng) - 0.5) * std::exp2(static_cast<double>(rng.next() % 20) - 10), MPFR_RNDN);
      if (k % 3 == 0) {  // a value of higher precision, rounded to double
        Mpfr tiny;
        mpfr_set_d(tiny.raw(), uniform(rng) * 0x1p-60, MPFR_RNDN);
        v = v + v * tiny;
      }
      x.push_back(N::rounded(mpfr_get_d(v.raw(), MPFR_RNDN)));
      e.push_back(v);
    }
    for (int s = 0; s < 40; ++s) {
      const size_t a = rng.next() % x.size(), b = rng.next() % x.size();
      const int op = static_cast<int>(rng.next() % 4);
      if (op == 0) {
        x.push_back(x[a] + x[b]);
        e.push_back(e[a] + e[b]);
      } else if (op == 1) {
        x.push_back(x[a] - x[b]);
        e.push_back(e[a] - e[b]);
      } else if (op == 2) {
        x.push_back(x[a] * x[b]);
        e.push_back(e[a] * e[b]);
      } else {  // near cancellation: x_a * c - x_a with c close to 1
        const double c = 1 + (uniform(rng) - 0.5) * 0x1p-40;
        const N cn = N::rounded(c);
        Mpfr ce;
        mpfr_set_d(ce.raw(), c, MPFR_RNDN);
        x.push_back(x[a] * cn - x[a]);
        e.push_back(e[a] * ce - e[a]);
      }
      ++steps;
      if (!within(x.back().mid, x.back().rad, e.back())) {
        what = "program " + std::to_string(t) + " step " + std::to_string(s) + ": " + std::to_string(x.back().mid) + " +- " +
               std::to_string(x.back().rad) + " misses the exact value " + e.back().str(20);
        return -1;
      }
    }
  }
  return steps;
}

// solve_err on random systems of growing condition (Vandermonde matrices on
// nodes drawn closer together, the pair fits' shape): the exact solution
// (MPFR at 1024 bits, of the inputs before their rounding to double) lies
// within the bounds whenever solve_err accepts; it must refuse a Hilbert
// matrix of order 14 (condition about 10^19).
long check_solves(Rng& rng, long systems, long& refused, std::string& what) {
  PrecisionScope scope(1024);
  long ok = 0;
  const Field<Mpfr> F;
  for (long t = 0; t < systems; ++t) {
    const int n = 3 + static_cast<int>(t % 7), k = 2;
    const double spread = std::exp2(-static_cast<double>(t % 12));
    Mat<ErrDouble> A(n, n), R(n, k), X;
    Mat<Mpfr> Ae(n, n), Re(n, k), Xe;
    for (int i = 0; i < n; ++i) {
      const double node = 1 + spread * (i + uniform(rng) * 0.5);
      for (int j = 0; j < n; ++j) {
        Mpfr v;
        mpfr_set_d(v.raw(), std::pow(node, j), MPFR_RNDN);
        Mpfr tiny;
        mpfr_set_d(tiny.raw(), (uniform(rng) - 0.5) * 0x1p-58, MPFR_RNDN);
        v = v + v * tiny;  // an input of higher precision than double
        A(i, j) = ErrDouble::rounded(mpfr_get_d(v.raw(), MPFR_RNDN));
        Ae(i, j) = v;
      }
      for (int j = 0; j < k; ++j) {
        const double r = uniform(rng) - 0.5;
        R(i, j) = ErrDouble(r, 0);
        mpfr_set_d(Re(i, j).raw(), r, MPFR_RNDN);
      }
    }
    if (!solve_err(X, A, R)) {
      ++refused;
      continue;
    }
    if (F.solve(Xe, Ae, Re) != Truth::yes) continue;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < k; ++j)
        if (!within(X(i, j).mid, X(i, j).rad, Xe(i, j))) {
          what = "system " + std::to_string(t) + " (n = " + std::to_string(n) + "): entry " + std::to_string(i) + " outside its bound";
          return -1;
        }
    ++ok;
  }
  const int n = 14;
  Mat<ErrDouble> H(n, n), R(n, 1, ErrDouble(1L)), X;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) H(i, j) = ErrDouble::rounded(1.0 / (i + j + 1));
  if (solve_err(X, H, R)) {
    what = "the Hilbert matrix of order 14 is accepted";
    return -1;
  }
  return ok;
}

}  // namespace

// The running bounds hold on random programs with cancellation and on
// random solves, and the estimate from double derivatives, when accepted,
// equals the replay with MPFR derivatives at the same precision within its
// stated bound, on MPFR runs at 256 bits (small models, and the paper design
// at d = 8, whose kappa is large). Broken: the naive bound u |value| with no
// propagation, which must miss on the programs.
void check_double_derivative_estimate(const ProveOptions& o, bool broken, LemmaCheck& out) {
  Rng rng(o.seed ^ 0x33);
  std::string what;
  if (broken) {
    const long steps = check_programs<NaiveDouble>(rng, 200 * o.multiplier, what);
    require(steps >= 0, "naive bound: " + what);
    out.detail = std::to_string(steps) + " steps within the naive bound";
    return;
  }
  const long steps = check_programs<ErrDouble>(rng, 200 * o.multiplier, what);
  require(steps >= 0, what);
  long refused = 0;
  const long solves = check_solves(rng, 60 * o.multiplier, refused, what);
  require(solves >= 0, what);
  require(solves >= 20, "too few solves accepted: " + std::to_string(solves));
  const long p = 256;
  long runs = 0, accepted = 0;
  double worst_seen = 0;
  const long models = 5 * o.multiplier;
  for (long t = 0; t <= models; ++t) {
    GenerateOptions g = default_generate(Arith::mpfr);
    const bool big = t == models;  // the paper design at d = 8: kappa large
    g.d = big ? 8 : 3 + static_cast<int>(t % 4);
    g.heads = big ? 3 : 1 + static_cast<int>(t % 3);
    PrecisionScope scope(p);
    RecordedMpfrRun run;
    if (!record_mpfr_run(g, rng, run)) continue;
    const LearnOptions& lo = run.lo;
    const LearnResult<Mpfr>& res = run.res;
    const Field<Mpfr> F;
    const std::string at = "model " + std::to_string(t) + " (d = " + std::to_string(g.d) + ", H = " + std::to_string(g.heads) + ")";
    const Sensitivity dd = sensitivity_from_answers(F, g.d, lo, run.queries, run.answers, &res.heads, p, kEstimateBits, true);
    const Sensitivity mm = sensitivity_from_answers(F, g.d, lo, run.queries, run.answers, &res.heads, p, kEstimateBits, false);
    ++runs;
    ++out.cases;
    if (dd.derivative_bits != 53) continue;  // refused: it is the MPFR replay itself
    ++accepted;
    require(dd.bits == mm.bits, at + ": the two replays ran at different precisions");
    require(dd.kappa_err_rel <= std::exp2(-static_cast<double>(kEstimateDerivBits)), at + ": accepted with a bound beyond 2^-8");
    // the MPFR replay's own derivatives are good to far below the bound
    const double allow = 2 * dd.kappa_err_rel + 0x1p-40;
    auto gap = [](double a, double b) { return std::fabs(a - b) / std::fabs(b); };
    const double g1 = gap(dd.kappa, mm.kappa), g2 = gap(dd.kappa_rel, mm.kappa_rel), g3 = gap(dd.kappa_rms, mm.kappa_rms),
                 g4 = gap(dd.pair_cond, mm.pair_cond);
    worst_seen = std::max({worst_seen, g1, g2, g3, g4});
    require(g1 <= allow && g2 <= allow && g3 <= allow && g4 <= allow,
            at + ": kappa " + std::to_string(dd.kappa) + " from doubles vs " + std::to_string(mm.kappa) + " (bound " + std::to_string(dd.kappa_err_rel) + ")");
  }
  require(runs >= models / 2, "too few models ran: " + std::to_string(runs));
  require(accepted >= 1, "no estimate from double derivatives was accepted");
  out.detail = std::to_string(steps) + " program steps, " + std::to_string(solves) + " solves (" + std::to_string(refused) + " refused), " +
               std::to_string(accepted) + "/" + std::to_string(runs) + " runs accepted, largest relative gap 2^" +
               std::to_string(static_cast<int>(std::floor(std::log2(std::max(worst_seen, 0x1p-200)))));
}

}  // namespace mhaq::proof
