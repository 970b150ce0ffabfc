// Certificate writer (format: tests/golden/CERTIFICATE.md).
#include "mhaq/run/certificate.hpp"

#include <arb.h>

#include <algorithm>
#include <functional>
#include <numeric>

#include "mhaq/arith/flint_wrappers.hpp"
#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/stages/4-match/match.hpp"
#include "mhaq/stages/grid_guard.hpp"
#include "mhaq/run/arith_policy.hpp"
#include "mhaq/run/json_out.hpp"
#include "mhaq/oracle/model_oracle.hpp"

namespace mhaq {

namespace {

const char* kExactFormat =
    "answers: Q(tau) elements {num, den} (coefficients in tau, constant term first, canonical fmpz_poly_q form); "
    "P, residues c and head entries: rationals p/q; poles r = tau^n given by the integer n";
const char* kBallFormat =
    "every value is an Arb ball {mid, rad}: the exact dyadic rationals p/q (q a power of two) of its midpoint and radius";
const char* kFloatFormat =
    "every value is the exact dyadic rational p/q (q a power of two) of the binary floating-point number the learner held";

Rational rat_of(const QTau& x, const char* what) {
  Rational q;
  if (!QTauAccess::is_rational(x, q)) throw_internal(std::string("certificate: ") + what + " is not rational");
  return q;
}

// Values, poles and answers: exact runs as rationals, tau-powers and Q(tau)
// elements; the binary arithmetics as their exact dyadic values.
ojson value_json(const QTau& x) { return rat_of(x, "a recovered value").str(); }
template <class T>
ojson value_json(const T& x) {
  return binary_json(x);
}

ojson pole_json(const QTau& r, const QTau& c) {
  long n = 0;
  if (!QTauAccess::is_tau_power(r, n)) throw_internal("certificate: a pole is not a power of tau");
  return ojson{{"n", n}, {"c", value_json(c)}};
}
template <class T>
ojson pole_json(const T& r, const T& c) {
  return ojson{{"r", value_json(r)}, {"c", value_json(c)}};
}

ojson answer_json(const QTau& x) { return qtau_json(x); }
template <class T>
ojson answer_json(const T& x) {
  return binary_json(x);
}

// ---- tolerances (mpfr, double): rigorous bounds of the run's actual errors

// The binary value as a ball of radius 0 (exact).
Ball exact_ball(const Mpfr& x) {
  Ball b;
  arf_set_mpfr(arb_midref(b.raw()), x.raw());
  return b;
}
Ball exact_ball(double x) {
  Ball b;
  arb_set_d(b.raw(), x);
  return b;
}
template <class T>
Rational exact_rational(const T& x) {
  return binary_rational(x);
}

// m = max(m, upper bound of |x - y|)
void raise_to_dist(mag_t m, const Ball& x, const Ball& y) {
  Ball d = x - y;
  flint::Mag t;
  arb_get_mag(t.v, d.raw());
  mag_max(m, m, t.v);
}

// The head assignment with the least worst entry error (stages/4-match's
// bottleneck matching). Used only to choose which true head an approximate
// value is measured against: the checker re-decides everything rigorously.
std::vector<int> best_match(int n, const std::function<double(int, int)>& cost) {
  std::vector<std::vector<double>> c(n, std::vector<double>(n));
  for (int g = 0; g < n; ++g)
    for (int h = 0; h < n; ++h) c[g][h] = cost(g, h);
  return bottleneck_matching(c);
}
double log2_dist(const Ball& x, const Ball& y) {
  Ball d = x - y;
  flint::Mag t;
  arb_get_mag(t.v, d.raw());
  return mag_is_zero(t.v) ? -1e300 : mag_get_d_log2_approx(t.v);
}

// The smallest power of two >= 2 m (and >= 2^floor_exp), as an exact rational.
Rational pow2_above(const mag_t m, long floor_exp) {
  long e = floor_exp;
  if (!mag_is_zero(m)) {
    arf_t a;
    arf_init(a);
    arf_set_mag(a, m);
    e = std::max(e, static_cast<long>(arf_abs_bound_lt_2exp_si(a)) + 1);  // 2 m < 2^(e)
    arf_clear(a);
  }
  Rational q(1);
  if (e >= 0) fmpq_mul_2exp(q.raw(), q.raw(), static_cast<ulong>(e));
  else fmpq_div_2exp(q.raw(), q.raw(), static_cast<ulong>(-e));
  return q;
}

// A head's c entry, zero when it has none.
Rational c_entry(const HeadQ& h, int i) { return h.c.empty() ? Rational(0) : h.c[static_cast<size_t>(i)]; }

template <class T>
ojson tolerances_json(const Model& truth, const LearnOptions& lo, const RecordingOracle<T>& rec, const LearnResult<T>& res, long bits) {
  PrecisionScope scope(bits + 64);
  const Model canon = truth.canonical();
  const int d = truth.d;
  std::vector<Ball> X;
  for (size_t i = 0; i < rec.queries.size(); ++i) X.push_back(evaluate_ball(truth, rec.queries[i]));
  flint::Mag ans, pairs, heads;
  for (size_t i = 0; i < X.size(); ++i) raise_to_dist(ans.v, exact_ball(rec.answers[i]), X[i]);

  const int H = lo.H;
  const Ball one(1L);
  for (size_t p = 0; p < res.plan.pairs.size(); ++p) {
    const PairSpec& s = res.plan.pairs[p];
    const PairFit<T>& f = res.fits[p];
    QVec v(static_cast<size_t>(d));
    for (const auto& h : canon.heads) v = v + h.v;
    const QVec a = s.final_token + s.offset;
    for (int k = 0; k <= 2 * H; ++k) {
      Ball e = exact_ball(f.P);
      for (size_t h = 0; h < f.r.size(); ++h) e = e + exact_ball(f.c[h]) / (one + exact_ball(f.r[h]) * Ball(static_cast<long>(k)));
      raise_to_dist(pairs.v, e, k == 0 ? Ball(dot(v, s.final_token) + canon.beta) : X[res.plan.query_index(static_cast<long>(p), k)]);
    }
    raise_to_dist(pairs.v, exact_ball(f.P), Ball(dot(v, a) + canon.beta));
    // true poles and residues of the heads visible at this pair: log r = delta^T (W b + c)
    std::vector<Ball> rt, ct;
    for (const auto& h : canon.heads) {
      const Rational c = -dot(h.v, s.offset);
      if (c.is_zero()) continue;
      Ball r(dot(s.offset, h.c.empty() ? matvec(h.W, s.final_token) : matvec(h.W, s.final_token) + h.c));
      arb_exp(r.raw(), r.raw(), working_precision());
      rt.push_back(r);
      ct.push_back(Ball(c));
    }
    if (rt.size() != f.r.size()) continue;  // not a finished fit; the checker reports the count
    const auto m = best_match(static_cast<int>(rt.size()), [&](int g, int h) {
      return std::max(log2_dist(exact_ball(f.r[g]), rt[h]), log2_dist(exact_ball(f.c[g]), ct[h]));
    });
    for (size_t g = 0; g < m.size(); ++g) {
      raise_to_dist(pairs.v, exact_ball(f.r[g]), rt[m[g]]);
      raise_to_dist(pairs.v, exact_ball(f.c[g]), ct[m[g]]);
    }
  }

  Model hm;
  hm.d = d;
  for (const auto& h : res.heads) {
    HeadQ q{QMat(d, d), QVec(static_cast<size_t>(d)), QVec(h.c.size())};
    for (int i = 0; i < d; ++i) {
      q.v[i] = exact_rational(h.v[i]);
      for (int j = 0; j < d; ++j) q.W(i, j) = exact_rational(h.W(i, j));
    }
    for (size_t i = 0; i < h.c.size(); ++i) q.c[i] = exact_rational(h.c[i]);
    hm.heads.push_back(std::move(q));
  }
  if (res.beta) {
    hm.beta = exact_rational(*res.beta);
    raise_to_dist(heads.v, Ball(hm.beta), Ball(canon.beta));
  }
  for (size_t i = 0; i < X.size(); ++i) raise_to_dist(heads.v, evaluate_ball(hm, rec.queries[i]), X[i]);
  if (hm.heads.size() == canon.heads.size()) {
    const auto m = best_match(static_cast<int>(hm.heads.size()), [&](int g, int h) {
      double c = -1e300;
      for (int i = 0; i < d; ++i) {
        c = std::max(c, log2_dist(Ball(hm.heads[g].v[i]), Ball(canon.heads[h].v[i])));
        for (int j = 0; j < d; ++j) c = std::max(c, log2_dist(Ball(hm.heads[g].W(i, j)), Ball(canon.heads[h].W(i, j))));
        if (!hm.heads[g].c.empty()) c = std::max(c, log2_dist(Ball(hm.heads[g].c[i]), Ball(c_entry(canon.heads[h], i))));
      }
      return c;
    });
    for (size_t g = 0; g < m.size(); ++g)
      for (int i = 0; i < d; ++i) {
        raise_to_dist(heads.v, Ball(hm.heads[g].v[i]), Ball(canon.heads[m[g]].v[i]));
        for (int j = 0; j < d; ++j) raise_to_dist(heads.v, Ball(hm.heads[g].W(i, j)), Ball(canon.heads[m[g]].W(i, j)));
        if (!hm.heads[g].c.empty()) raise_to_dist(heads.v, Ball(hm.heads[g].c[i]), Ball(c_entry(canon.heads[m[g]], i)));
      }
  }
  const long floor_exp = -(bits + 40);
  return ojson{{"answers", pow2_above(ans.v, floor_exp).str()},
               {"pairs", pow2_above(pairs.v, floor_exp).str()},
               {"heads", pow2_above(heads.v, floor_exp).str()}};
}

}  // namespace

template <class T>
std::string certificate_text(const Model& truth, const RecoverOptions& o, const LearnOptions& lo, const RecordingOracle<T>& rec,
                             const LearnResult<T>& res) {
  constexpr Arith tag = ArithPolicy<T>::arith;
  const long bits = ArithPolicy<T>::reported_bits(o.bits);
  const int d = truth.d, H = lo.H;
  ojson doc{{"format", "mhaq-certificate"}, {"version", certificate_version}, {"mhaq_version", mhaq_version_string}, {"arith", arith_name(tag)}};
  if (!res.fallback_pairs.empty()) throw Error(ErrorKind::usage, "certificates do not cover the lean schedule's fallback links");
  ArithPolicy<T>::exact([&](const auto& F) { doc["L"] = QTauAccess::L(F); }, rec.field());
  ArithPolicy<T>::approximate([&](const auto&) { doc["bits"] = bits; }, rec.field());
  doc["value_format"] = ArithPolicy<T>::facts.exact ? kExactFormat : ArithPolicy<T>::facts.rigorous ? kBallFormat : kFloatFormat;
  doc["inputs"] = ojson{{"seed", o.seed},
                        {"learner_seed", lo.seed},
                        {"schedule", schedule_name(lo.schedule)},
                        {"heads_learner", H},
                        {"heads_is_bound", lo.heads_is_bound},
                        {"token_range", lo.tokens.range},
                        {"token_den", lo.tokens.den},
                        {"oracle_bits", o.oracle_bits},
                        {"noise_eps", o.noise_eps.str()},
                        {"noise_seed", o.noise_seed}};
  // The small-grid guard's witness queries follow the plan's in `queries`;
  // their grid and count are recorded only when there are any, so the
  // certificate of a run without them is unchanged.
  if (res.grid_witness_queries > 0) doc["inputs"]["witness_range"] = grid_guard(d, lo).range;
  // a run with biases (docs/math/biases.md) says so; without, the bytes are as before
  if (lo.bias) doc["inputs"]["bias"] = true;
  const bool paper = lo.schedule == Schedule::paper;
  const char* formula = lo.bias ? (paper ? "4Hd^2+4Hd-2H+1" : "1+2H(d^2+2d-1)") : (paper ? "4Hd^2-2H+1" : "1+2H(d^2+d-1)");
  doc["claims"] = ojson{{"queries", rec.queries.size()},
                        {"query_formula", formula},
                        {"query_formula_value", schedule_query_count(lo.schedule, d, H, lo.rank, lo.bias)},
                        {"max_length", rec.max_length()},
                        {"length_bound", 2 * H + 1},
                        {"heads_recovered", res.heads.size()}};
  if (res.grid_witness_queries > 0) doc["claims"]["grid_witness_queries"] = res.grid_witness_queries;
  ArithPolicy<T>::floats([&](const auto& R, const auto& S) { doc["tolerances"] = tolerances_json(truth, lo, R, S, bits); }, rec, res);
  doc["model"] = model_json(truth);
  doc["plan"] = plan_json(res.plan, res.redraws);
  ojson qs = ojson::array(), as = ojson::array();
  for (size_t i = 0; i < rec.queries.size(); ++i) {
    qs.push_back(query_json(i, rec.queries[i]));
    as.push_back(answer_json(rec.answers[i]));
  }
  doc["queries"] = qs;
  doc["answers"] = as;
  ojson pairs = ojson::array();
  for (size_t p = 0; p < res.plan.pairs.size(); ++p) {
    ojson pj = pair_spec_json(res.plan, p);
    const PairFit<T>& f = res.fits[p];
    pj["P"] = value_json(f.P);
    ojson poles = ojson::array();
    for (size_t h = 0; h < f.r.size(); ++h) poles.push_back(pole_json(f.r[h], f.c[h]));
    pj["poles"] = poles;
    pairs.push_back(pj);
  }
  doc["pairs"] = pairs;
  ojson heads = ojson::array();
  for (const auto& h : res.heads) {
    ojson W = ojson::array();
    for (int i = 0; i < d; ++i) {
      ojson row = ojson::array();
      for (int j = 0; j < d; ++j) row.push_back(value_json(h.W(i, j)));
      W.push_back(row);
    }
    ojson v = ojson::array();
    for (const auto& x : h.v) v.push_back(value_json(x));
    heads.push_back(ojson{{"W", W}, {"v", v}});
    if (!h.c.empty()) {
      ojson c = ojson::array();
      for (const auto& x : h.c) c.push_back(value_json(x));
      heads.back()["c"] = c;
    }
  }
  doc["heads"] = heads;
  if (res.beta) doc["beta"] = value_json(*res.beta);
  return dump_layout(doc);
}

#define MHAQ_INSTANTIATE(T)                                                                                           \
  template std::string certificate_text<T>(const Model&, const RecoverOptions&, const LearnOptions&, const RecordingOracle<T>&, \
                                           const LearnResult<T>&);
MHAQ_INSTANTIATE(QTau)
MHAQ_INSTANTIATE(Ball)
MHAQ_INSTANTIATE(Mpfr)
MHAQ_INSTANTIATE(double)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
