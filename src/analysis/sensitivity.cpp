// First-order sensitivity of the recovered parameters (proofs/11): the
// learner's own stages run on jets.
#include "mhaq/analysis/sensitivity.hpp"

#include <arb.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "mhaq/base/error.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/stages/4-match/known_residues.hpp"
#include "mhaq/stages/4-match/match.hpp"
#include "mhaq/oracle/jet_oracle.hpp"

namespace mhaq {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

double mid_double(const Ball& x) { return arf_get_d(arb_midref(x.raw()), ARF_RND_NEAR); }
bool accurate(const Ball& x) { return arb_rel_accuracy_bits(x.raw()) >= 40 || arb_is_zero(x.raw()); }
Ball abs_ball(const Ball& x) {
  Ball r;
  arb_abs(r.raw(), x.raw());
  return r;
}
Ball norm2(const std::vector<Ball>& xs) {
  Ball s(0L);
  for (const auto& x : xs) s += x * x;
  arb_sqrt(s.raw(), s.raw(), working_precision());
  return s;
}

// The error bounds of the kappas computed from double derivatives
// (proofs/33): for each quantity, the largest over the rows of the bound of
// that row's error (a row sum of |J| moves by at most the sum of its entries'
// bounds; a root mean square by at most the root of the sum of squares).
struct DerivError {
  double kappa = 0, kappa_rel = 0, kappa_rms = 0, pair_cond = 0;
  bool finite = true;
};

// J and the kappas from the learner's heads on jets. order[h] is the learned
// head standing for row head h. False when `certified` and some row sum is
// not accurate to 40 bits (the caller raises the precision). With double
// derivatives, `err` receives their error bounds.
template <class B, class D>
bool compose(const Field<B>& base, const std::vector<LearnedHead<Jet<B, D>>>& heads, const std::vector<int>& order,
             const std::vector<Ball>& fabs, bool certified, Sensitivity& S, DerivError* err = nullptr, bool keep_J = true,
             const Jet<B, D>* beta = nullptr) {
  const int d = S.d, H = S.H;
  S.bias = beta != nullptr;
  const long cols = S.columns;
  // J itself (rows x answers, dense) only when asked for: the kappas need
  // the row sums alone
  if (keep_J)
    S.J.assign(static_cast<size_t>(S.rows()) * cols, 0.0);
  else
    S.J.clear();
  S.scale.assign(S.rows(), 0.0);
  S.answer_abs.assign(cols, 0.0);
  for (long j = 0; j < cols; ++j) S.answer_abs[j] = mid_double(fabs[j]);
  // |answers| rounded up a little for the error bounds (relative 2^-50)
  std::vector<double> answer_abs_d(cols);
  for (long j = 0; j < cols; ++j) answer_abs_d[j] = S.answer_abs[j] * (1 + 0x1p-50);
  S.kappa = S.kappa_rel = S.kappa_rms = 0;
  S.bits = S.derivative_bits = working_precision();
  // one parameter x in row `row`, measured against `scale`
  auto add_row = [&](const Jet<B, D>& x, int row, double scale) {
    // row sums of |J|, |J| |a| and (|J| |a|)^2: in balls, or in double
    // beside the derivatives' bounds (proofs/33: the sums' own rounding,
    // at most (n + 1) u of each sum, joins the bound)
    double m1 = 0, mrel = 0, m2 = 0, r1 = 0, rrel = 0, r2 = 0;
    if (!has_error_bound<D>) {
      Ball s1(0L), srel(0L), s2(0L);
      for (const auto& [col, dv] : x.grad()) {
        const Ball e = deriv_enclose(base, dv);
        const Ball ae = abs_ball(e);
        s1 += ae;
        const Ball y = ae * fabs[col];
        srel += y;
        s2 += y * y;
        if (keep_J) S.J[static_cast<size_t>(row) * cols + col] = mid_double(e);
      }
      if (certified && (!accurate(s1) || !accurate(srel) || !accurate(s2))) return false;
      m1 = mid_double(s1);
      mrel = mid_double(srel);
      m2 = mid_double(s2);
    } else {
      for (const auto& [col, dv] : x.grad()) {
        const double ad = answer_abs_d[col], mid = deriv_mid(base, dv), am = std::fabs(mid), rad = deriv_rad(dv);
        m1 += am;
        mrel += am * ad;
        m2 += (am * ad) * (am * ad);
        r1 += rad;
        rrel += rad * ad;
        r2 += (rad * ad) * (rad * ad);
        if (!deriv_finite(dv)) err->finite = false;
        if (keep_J) S.J[static_cast<size_t>(row) * cols + col] = mid;
      }
      const double n1 = static_cast<double>(x.grad().size() + 1) * ErrDouble::u;
      r1 += n1 * m1;
      rrel += n1 * mrel;
      r2 += n1 * m2;
    }
    S.scale[row] = scale;
    if (has_error_bound<D>) {
      err->kappa = std::max(err->kappa, r1 / scale);
      err->kappa_rel = std::max(err->kappa_rel, rrel / scale);
      err->kappa_rms = std::max(err->kappa_rms, std::sqrt(r2) / scale);
    }
    const double k1 = m1 / scale;
    if (k1 > S.kappa) {
      S.kappa = k1;
      S.kappa_row = row;
    }
    S.kappa_rel = std::max(S.kappa_rel, mrel / scale);
    S.kappa_rms = std::max(S.kappa_rms, std::sqrt(m2) / scale);
    return true;
  };
  for (int h = 0; h < H; ++h) {
    const LearnedHead<Jet<B, D>>& g = heads[order[h]];
    std::vector<Ball> w, v;
    for (int i = 0; i < d; ++i) {
      v.push_back(base.enclose(g.v[i].value()));
      for (int j = 0; j < d; ++j) w.push_back(base.enclose(g.W(i, j).value()));
    }
    for (const auto& x : g.c) w.push_back(base.enclose(x.value()));  // with biases, c is measured with W ([W c])
    const double sw = parameter_scale(w), sv = parameter_scale(v);
    for (int a = 0; a < d; ++a)
      for (int b = 0; b <= d; ++b)
        if (!add_row(b < d ? g.W(a, b) : g.v[a], b < d ? S.row_W(h, a, b) : S.row_v(h, a), b < d ? sw : sv)) return false;
    if (S.bias)
      for (int a = 0; a < d; ++a)
        if (!add_row(g.c[static_cast<size_t>(a)], S.row_c(h, a), sw)) return false;
  }
  if (beta) return add_row(*beta, S.row_beta(), parameter_scale({base.enclose(beta->value())}));
  return true;
}

// max over base pairs of the inf-norm of d(P, r, c)/d(samples): stage 3 run
// on jets of the pair's own samples (regenerated from its fit).
template <class B, class D>
double pair_condition(const Field<Jet<B, D>>& F, const Plan& plan, const std::vector<PairFit<Jet<B, D>>>& fits, const std::vector<PairSpec>& fallback,
                      DerivError* err = nullptr) {
  using JB = Jet<B, D>;
  const Field<B>& base = F.base;
  double worst = 0;
  for (int p = 0; p < plan.base_count(); ++p) {
    PairFit<B> v{fits[p].P.value(), {}, {}};
    for (const auto& x : fits[p].r) v.r.push_back(x.value());
    for (const auto& x : fits[p].c) v.c.push_back(x.value());
    std::vector<JB> f;
    // a fully sampled pair is interpolated; a compact pair is fitted with its
    // residues known (constants here: the pair's own values move only its
    // poles), from 2H values by the linear route when the fallback served it
    const PairSpec& ps = plan.pairs[p];
    bool extended = false;
    for (const PairSpec& e : fallback) extended = extended || (plan.schedule == Schedule::compact && e.kind == PairKind::across && e.i == ps.i && e.j == ps.j);
    const int K = extended ? 2 * v.heads() : ps.samples;
    for (int k = 0; k < K; ++k) f.push_back(JB::variable(fit_value(base, v, k), k));
    std::vector<JB> c;
    for (const auto& x : v.c) c.emplace_back(x);
    const bool full = ps.samples == plan.samples;
    const PairFit<JB> jf = full ? interpolate_pair(F, f, v.heads()) : extended ? fit_known_limit(F, f, c) : fit_known_residues(F, f, c);
    std::vector<const JB*> outs;
    if (full) outs.push_back(&jf.P);
    for (const auto& x : jf.r) outs.push_back(&x);
    if (full)
      for (const auto& x : jf.c) outs.push_back(&x);
    for (const JB* x : outs) {
      Ball s(0L);
      double r = 0;
      for (const auto& e : x->grad()) {
        s += abs_ball(deriv_enclose(base, e.second));
        r += deriv_rad(e.second);
        if (!deriv_finite(e.second)) err->finite = false;
      }
      worst = std::max(worst, mid_double(s));
      if (has_error_bound<D>) err->pair_cond = std::max(err->pair_cond, r);
    }
  }
  return worst;
}

template <class B>
std::vector<Ball> answer_abs(const Field<B>& base, const std::vector<B>& answers) {
  std::vector<Ball> out;
  for (const auto& a : answers) out.push_back(abs_ball(base.enclose(a)));
  return out;
}

// Scaled entrywise distance (a ball) between recovered head g and true head h.
template <class Get, class G>
Ball head_distance(const G& g, const HeadQ& h, int d, Get entry) {
  std::vector<Ball> w, v;
  for (int i = 0; i < d; ++i) {
    v.emplace_back(h.v[i]);
    for (int j = 0; j < d; ++j) w.emplace_back(h.W(i, j));
  }
  Ball sw = norm2(w), sv = norm2(v);
  if (arb_is_zero(sw.raw())) sw = Ball(1L);  // a zero norm counts as 1 (absolute error)
  if (arb_is_zero(sv.raw())) sv = Ball(1L);
  Ball worst(0L);
  for (int i = 0; i < d; ++i) {
    Ball e = abs_ball(entry(g.v[i]) - Ball(h.v[i]));
    e /= sv;
    arb_max(worst.raw(), worst.raw(), e.raw(), working_precision());
    for (int j = 0; j < d; ++j) {
      Ball f = abs_ball(entry(g.W(i, j)) - Ball(h.W(i, j)));
      f /= sw;
      arb_max(worst.raw(), worst.raw(), f.raw(), working_precision());
    }
  }
  return worst;
}

// log2 of an upper bound of a nonnegative ball's magnitude (rounded up); -inf for 0.
double log2_upper(const Ball& x) {
  mag_t m;
  mag_init(m);
  arb_get_mag(m, x.raw());
  double out = -kInfinity;
  if (!mag_is_zero(m)) {
    Ball l;
    arf_set_mag(arb_midref(l.raw()), m);
    arb_log_base_ui(l.raw(), l.raw(), 2, 64);
    arb_get_ubound_arf(arb_midref(l.raw()), l.raw(), 64);
    out = arf_get_d(arb_midref(l.raw()), ARF_RND_UP);
  }
  mag_clear(m);
  return out;
}
double log2_mid(const Ball& x) {
  if (arf_is_zero(arb_midref(x.raw()))) return -kInfinity;
  Ball l;
  arf_abs(arb_midref(l.raw()), arb_midref(x.raw()));
  arb_log_base_ui(l.raw(), l.raw(), 2, 64);
  return arf_get_d(arb_midref(l.raw()), ARF_RND_NEAR);
}

long metric_precision() { return std::max(working_precision(), 53L) + 64; }

}  // namespace

// a W (or v) that is zero to the working precision counts as 1, so its
// entries are measured by their absolute error (as max_rel_error does)
double parameter_scale(const std::vector<Ball>& entries) {
  const Ball s = norm2(entries);
  const bool zero = !arb_is_positive(s.raw()) || mid_double(s) < std::exp2(-static_cast<double>(working_precision()) / 2);
  return zero ? 1.0 : mid_double(s);
}

std::vector<signed char> Sensitivity::worst_signs() const {
  std::vector<signed char> s(columns);
  for (long j = 0; j < columns; ++j) s[j] = J[static_cast<size_t>(kappa_row) * columns + j] < 0 ? -1 : 1;
  return s;
}

Sensitivity sensitivity_from_model(const Model& canon, const LearnOptions& lo, long token_den, int constant_answer) {
  LearnOptions l = lo;
  l.H = canon.num_heads();
  l.heads_is_bound = false;
  l.self_check = false;
  for (long prec = 128; prec <= (1L << 16); prec *= 2) {
    PrecisionScope scope(prec);
    try {
      // recorded: the jets' columns are the answers in the order asked, which
      // include every query beyond the plan's (fallback pairs, repairs, the
      // grid guard's witnesses)
      OracleStack<Ball> inner = OracleStack<Ball>::model(canon, token_den).recorded();
      JetOracle<Ball> oracle(inner.top(), constant_answer);
      const LearnResult<Jet<Ball>> res = learn<Jet<Ball>>(oracle, l);
      // rows in canon's order: each true head's learned head, by the bottleneck assignment
      const int H = canon.num_heads();
      std::vector<std::vector<double>> cost(H, std::vector<double>(H));
      for (int h = 0; h < H; ++h)
        for (int g = 0; g < H; ++g)
          cost[h][g] = log2_mid(head_distance(res.heads[g], canon.heads[h], canon.d, [](const Jet<Ball>& x) { return x.value(); }));
      const std::vector<int> order = bottleneck_matching(cost);
      if (order.empty()) throw_internal("sensitivity: no assignment of learned to true heads");
      std::vector<Ball> fabs;
      for (const Ball& y : inner.record().answers) fabs.push_back(abs_ball(y));
      Sensitivity S;
      S.d = canon.d;
      S.H = H;
      S.columns = static_cast<long>(fabs.size());
      if (!compose(Field<Ball>{}, res.heads, order, fabs, true, S, nullptr, true, res.beta ? &*res.beta : nullptr)) continue;
      S.pair_cond = pair_condition(oracle.field(), res.plan, res.fits, res.fallback_pairs);
      return S;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unable) throw;
    }
  }
  throw_unable("sensitivity: row sums not certified below 2^16 bits");
}

namespace {

template <class T, class D>
bool heads_agree(const Field<T>& field, const std::vector<LearnedHead<Jet<T, D>>>& got, const std::vector<LearnedHead<T>>& reference, long bits);

// Whether every value of `got` equals the reference's entry exactly (the same
// number, not within a tolerance).
bool same_number(const Mpfr& a, const Mpfr& b) { return mpfr_equal_p(a.raw(), b.raw()) != 0; }
bool same_number(double a, double b) { return a == b; }
bool same_number(const Ball& a, const Ball& b) { return arb_equal(a.raw(), b.raw()) != 0; }
template <class T, class D>
bool heads_identical(const std::vector<LearnedHead<Jet<T, D>>>& got, const std::vector<LearnedHead<T>>& reference) {
  if (got.size() != reference.size()) return false;
  for (size_t h = 0; h < got.size(); ++h) {
    const size_t d = reference[h].v.size();
    if (got[h].v.size() != d || got[h].c.size() != reference[h].c.size()) return false;
    for (size_t i = 0; i < reference[h].c.size(); ++i)
      if (!same_number(got[h].c[i].value(), reference[h].c[i])) return false;
    for (size_t i = 0; i < d; ++i) {
      if (!same_number(got[h].v[i].value(), reference[h].v[i])) return false;
      for (size_t j = 0; j < d; ++j)
        if (!same_number(got[h].W(static_cast<int>(i), static_cast<int>(j)).value(), reference[h].W(static_cast<int>(i), static_cast<int>(j)))) return false;
    }
  }
  return true;
}

// Whether the kappas from double derivatives are within 2^-kEstimateDerivBits
// of the same formulas on exact derivatives at the replay's values
// (proofs/33): every bound finite and each at most that fraction of its
// quantity.
bool derivs_trusted(const Sensitivity& S, const DerivError& e, bool with_pair_cond) {
  const double f = std::exp2(-static_cast<double>(kEstimateDerivBits));
  return e.finite && e.kappa <= f * S.kappa && e.kappa_rel <= f * S.kappa_rel && e.kappa_rms <= f * S.kappa_rms &&
         (!with_pair_cond || e.pair_cond <= f * S.pair_cond);
}

enum class Replay { ok, disagrees, untrusted };

// The learner replayed on jets over the answers at the current working
// precision; `disagrees` when `reference` is given and the replay's heads do
// not agree with it to kEstimateAgreeBits (estimate_agrees); `untrusted` when
// the derivatives are doubles whose error bounds are too wide (derivs_trusted).
// With `memo` (the run's own pair fits, proofs/35) the replay must give the
// reference heads bit for bit instead.
template <class T, class D = T>
Replay replay_sensitivity(const Field<T>& field, int d, const LearnOptions& l, const std::vector<Query>& queries, const std::vector<T>& answers,
                          const std::vector<LearnedHead<T>>* reference, Sensitivity& S, bool with_pair_cond, const FitMemo<T>* memo = nullptr,
                          bool keep_J = true) {
  ReplayOracle<T> replay(d, field, queries, answers);
  JetOracle<T, D> oracle(replay, -1, memo);
  const LearnResult<Jet<T, D>> res = learn<Jet<T, D>>(oracle, l);
  if (reference && !(memo ? heads_identical(res.heads, *reference) : heads_agree(field, res.heads, *reference, kEstimateAgreeBits)))
    return Replay::disagrees;
  S.d = d;
  S.H = res.heads_found;
  S.columns = static_cast<long>(answers.size());
  std::vector<int> order(S.H);
  for (int h = 0; h < S.H; ++h) order[h] = h;
  DerivError err;
  compose(field, res.heads, order, answer_abs(field, answers), false, S, &err, keep_J, res.beta ? &*res.beta : nullptr);
  S.pair_cond = with_pair_cond ? pair_condition(oracle.field(), res.plan, res.fits, res.fallback_pairs, &err) : 0.0;
  S.derivative_bits = S.bits;
  if (has_error_bound<D>) {
    S.derivative_bits = 53;
    auto rel = [](double e, double q) { return e == 0 ? 0.0 : e / q; };
    S.kappa_err_rel = std::max({rel(err.kappa, S.kappa), rel(err.kappa_rel, S.kappa_rel), rel(err.kappa_rms, S.kappa_rms), rel(err.pair_cond, S.pair_cond)});
    if (!derivs_trusted(S, err, with_pair_cond)) return Replay::untrusted;
  }
  return Replay::ok;
}

template <class T, class D>
bool heads_agree(const Field<T>& field, const std::vector<LearnedHead<Jet<T, D>>>& got, const std::vector<LearnedHead<T>>& reference, long bits) {
  if (got.size() != reference.size()) return false;
  // log2 |x| of the midpoint (-inf for 0), exact enough for a 2^-bits test
  auto lg = [&field](const T& x) { return log2_mid(field.enclose(x)); };
  for (size_t h = 0; h < got.size(); ++h) {
    const int d = static_cast<int>(reference[h].v.size());
    if (static_cast<int>(got[h].v.size()) != d || got[h].c.size() != reference[h].c.size()) return false;
    // a head's scale: its largest |entry| in W and c (in v), or 1 when that is zero
    double sw = -kInfinity, sv = -kInfinity;
    for (int i = 0; i < d; ++i) {
      sv = std::max(sv, lg(reference[h].v[i]));
      for (int j = 0; j < d; ++j) sw = std::max(sw, lg(reference[h].W(i, j)));
    }
    for (const T& x : reference[h].c) sw = std::max(sw, lg(x));
    if (std::isinf(sw)) sw = 0;
    if (std::isinf(sv)) sv = 0;
    for (size_t i = 0; i < reference[h].c.size(); ++i)
      if (!(lg(got[h].c[i].value() - reference[h].c[i]) <= sw - static_cast<double>(bits))) return false;
    for (int i = 0; i < d; ++i) {
      if (!(lg(got[h].v[i].value() - reference[h].v[i]) <= sv - static_cast<double>(bits))) return false;
      for (int j = 0; j < d; ++j)
        if (!(lg(got[h].W(i, j).value() - reference[h].W(i, j)) <= sw - static_cast<double>(bits))) return false;
    }
  }
  return true;
}

}  // namespace

template <class T>
bool estimate_agrees(const Field<T>& field, const std::vector<LearnedHead<Jet<T>>>& got, const std::vector<LearnedHead<T>>& reference, long bits) {
  return heads_agree(field, got, reference, bits);
}

template <class T>
Sensitivity sensitivity_from_answers(const Field<T>& field, int d, const LearnOptions& lo, const std::vector<Query>& queries,
                                     const std::vector<T>& answers, const std::vector<LearnedHead<T>>* reference, long run_bits, long low_bits,
                                     bool double_derivs, bool with_pair_cond, const FitMemo<T>* memo) {
  using Cheap = typename CheapDeriv<T>::type;  // the double derivatives' type over MPFR
  LearnOptions l = lo;
  l.self_check = false;
  l.keep_fit_samples = false;
  Sensitivity S;
  // the float judge's estimate (with a reference) needs the kappas only
  const bool keep_J = reference == nullptr;
  const FitMemo<T>* const no_memo = nullptr;
  // proofs/35: with the run's own pair fits, the replay at the run's
  // precision computes no fit again; taken when its heads are the run's
  // heads bit for bit (then it is the run's computation, with derivatives).
  if (reference && memo && memo->bits() == run_bits && working_precision() == run_bits) {
    try {
      Replay r = Replay::untrusted;
      if (double_derivs && has_error_bound<Cheap>) r = replay_sensitivity<T, Cheap>(field, d, l, queries, answers, reference, S, with_pair_cond, memo, keep_J);
      if (r == Replay::untrusted) r = replay_sensitivity(field, d, l, queries, answers, reference, S, with_pair_cond, memo, keep_J);
      if (r == Replay::ok) return S;
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::internal || e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input) throw;
    }
  }
  // proofs/32: the replay at low precision, accepted when its heads agree
  // with the run's to kEstimateAgreeBits; otherwise twice the precision, up
  // to the run's own (below, which needs no agreement: it is the run). A
  // run whose precision is at most low_bits (double) goes straight there.
  // proofs/33: over MPFR the replay first carries its derivatives in double
  // with error bounds; when the bounds are too wide for the kappas, the same
  // precision again with MPFR derivatives.
  if (reference)
    for (long pe = std::max(low_bits, 2 * kEstimateAgreeBits); pe < run_bits; pe *= 2) {
      PrecisionScope scope(pe);
      const T zero = field.from(Rational(0));
      std::vector<T> low;  // the answers rounded to pe bits
      low.reserve(answers.size());
      for (const T& a : answers) low.push_back(a + zero);
      try {
        Replay r = Replay::untrusted;
        if (double_derivs && has_error_bound<Cheap>) r = replay_sensitivity<T, Cheap>(field, d, l, queries, low, reference, S, with_pair_cond, no_memo, keep_J);
        if (r == Replay::untrusted) r = replay_sensitivity(field, d, l, queries, low, reference, S, with_pair_cond, no_memo, keep_J);
        if (r == Replay::ok) return S;
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::internal || e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input) throw;
      }
    }
  // at the run's own precision: the run's computation, no agreement needed;
  // double derivatives first as above
  if (reference && double_derivs && has_error_bound<Cheap> && replay_sensitivity<T, Cheap>(field, d, l, queries, answers, nullptr, S, with_pair_cond, no_memo, keep_J) == Replay::ok)
    return S;
  replay_sensitivity<T>(field, d, l, queries, answers, nullptr, S, with_pair_cond, no_memo, keep_J);
  return S;
}

template <class T>
FitMemo<T> fit_memo(const LearnResult<T>& run) {
  FitMemo<T> m(working_precision());
  for (size_t p = 0; p < run.fit_samples.size() && p < run.fits.size(); ++p) {
    if (run.fit_samples[p].empty()) continue;
    const PairFit<T>& fit = run.fits[p];
    std::vector<T> x{fit.P};
    x.insert(x.end(), fit.r.begin(), fit.r.end());
    x.insert(x.end(), fit.c.begin(), fit.c.end());
    m.add(run.fit_samples[p], fit.heads(), std::move(x));
  }
  return m;
}

template <class T>
Sensitivity sensitivity_of_jet_heads(const Field<T>& field, int d, const std::vector<LearnedHead<Jet<T>>>& heads, const std::vector<T>& answers) {
  Sensitivity S;
  S.d = d;
  S.H = static_cast<int>(heads.size());
  S.columns = static_cast<long>(answers.size());
  std::vector<int> order(S.H);
  for (int h = 0; h < S.H; ++h) order[h] = h;
  compose(field, heads, order, answer_abs(field, answers), false, S);
  return S;
}

template <class T>
double pair_error_log2(const Field<T>& F, const Plan& plan, const std::vector<T>& answers, int H, double acc_log2) {
  const int d = plan.d;
  if (static_cast<long>(answers.size()) < plan.query_count()) return kInfinity;
  const Field<Jet<T>> FJ(F);
  auto samples = [&](int p, const T& f0) {
    std::vector<T> f{f0};
    for (int k = 1; k < plan.pairs[p].samples; ++k) f.push_back(answers[plan.query_index(p, k)]);
    return f;
  };
  try {
    Chaining<T> chain{answers[0], {}, {}, plan.B.col(0), {}, {}, {}, {}};
    if (!inverse(plan.Delta, chain.DeltaInv)) return kInfinity;
    std::vector<PairFit<T>> first;  // the pairs (i, 1)
    for (int i = 0; i < d; ++i) {
      first.push_back(interpolate_pair(F, samples(plan.base_index(i, 0), answers[0]), H));
      chain.vdelta.push_back(first.back().P - answers[0]);
    }
    // every pair of the plan that is fitted (links decide the labelling; the
    // compact schedule's one-value links are predicted, not fitted), relative
    // error of each output
    double worst = 0;
    for (size_t p = 0; p < plan.pairs.size(); ++p) {
      const PairSpec& ps = plan.pairs[p];
      const bool full = ps.samples == plan.samples;
      if (!full && ps.kind != PairKind::base) continue;
      const std::vector<T> f = samples(static_cast<int>(p), chain.f0(F, ps.final_token));
      std::vector<Jet<T>> fj, cj;
      for (size_t k = 0; k < f.size(); ++k) fj.push_back(Jet<T>::variable(f[k], static_cast<int>(k)));
      for (const auto& x : first[ps.i].c) cj.emplace_back(x);
      const PairFit<Jet<T>> jf = full ? interpolate_pair(FJ, fj, H) : fit_known_residues(FJ, fj, cj);
      std::vector<const Jet<T>*> outs{&jf.P};
      for (const auto& x : jf.r) outs.push_back(&x);
      for (const auto& x : jf.c) outs.push_back(&x);
      // poles relative to themselves, P and residues relative to the pair's residue scale
      Ball cscale(0L);
      for (const auto& x : jf.c) cscale += abs_ball(F.enclose(x.value()));
      for (size_t o = 0; o < outs.size(); ++o) {
        const Jet<T>* x = outs[o];
        Ball s(0L);
        for (size_t k = 0; k < x->grad().size(); ++k) s += abs_ball(F.enclose(x->grad()[k].second)) * abs_ball(F.enclose(f[x->grad()[k].first]));
        const bool pole = o >= 1 && o <= jf.r.size();
        const Ball mag = pole ? abs_ball(F.enclose(x->value())) : cscale;
        if (arb_is_positive(mag.raw())) s /= mag;
        worst = std::max(worst, mid_double(s));
      }
    }
    return worst > 0 ? std::log2(worst) + acc_log2 : -kInfinity;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::internal || e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input) throw;
    return kInfinity;
  }
}

template <class T>
double param_error_log2(const std::vector<LearnedHead<T>>& got, const Model& canon) {
  if (got.size() != canon.heads.size()) return kInfinity;
  PrecisionScope scope(metric_precision());
  const size_t H = got.size();
  const Field<T> F{};
  auto mid = [&F](const T& x) {
    Ball b = F.enclose(x);
    arb_get_mid_arb(b.raw(), b.raw());
    return b;
  };
  std::vector<std::vector<double>> cost(H, std::vector<double>(H));
  for (size_t h = 0; h < H; ++h)
    for (size_t g = 0; g < H; ++g) cost[h][g] = log2_mid(head_distance(got[g], canon.heads[h], canon.d, mid));
  double best = kInfinity;
  bottleneck_matching(cost, &best);
  return best;
}

bool certified_param_error_log2(const std::vector<LearnedHead<Ball>>& got, const Model& canon, double& bound) {
  if (got.size() != canon.heads.size()) return false;
  PrecisionScope scope(metric_precision());
  const int d = canon.d;
  const size_t H = got.size();
  std::vector<std::vector<double>> cost(H, std::vector<double>(H, kInfinity));
  for (size_t h = 0; h < H; ++h)
    for (size_t g = 0; g < H; ++g) {
      bool in = true;
      for (int i = 0; i < d && in; ++i) {
        in = got[g].v[i].contains(canon.heads[h].v[i]);
        for (int j = 0; j < d && in; ++j) in = got[g].W(i, j).contains(canon.heads[h].W(i, j));
      }
      // sup over the balls of |x - theta| / s: the ball x - theta bounds it
      if (in) cost[h][g] = log2_upper(head_distance(got[g], canon.heads[h], d, [](const Ball& x) { return x; }));
    }
  double b = kInfinity;
  if (bottleneck_matching(cost, &b).empty() && H > 0) return false;
  bound = b;
  return true;
}

MeanValueBound certified_mean_value_bound(const Model& canon, const LearnOptions& lo, long token_den, const OracleNoise& noise) {
  MeanValueBound out;
  LearnOptions l = lo;
  l.self_check = false;
  OracleNoise env = noise;
  env.pattern = NoisePattern::envelope;
  const int d = canon.d, H = canon.num_heads();
  try {
    OracleStack<Ball> inner = OracleStack<Ball>::model(canon, token_den, env).recorded();
    const RecordingOracle<Ball>& rec = inner.record();
    JetOracle<Ball> oracle(inner.top());
    const LearnResult<Jet<Ball>> res = learn<Jet<Ball>>(oracle, l);
    if (static_cast<int>(res.heads.size()) != H) {
      out.why = "the run found " + std::to_string(res.heads.size()) + " heads, the truth has " + std::to_string(H);
      return out;
    }
    PrecisionScope scope(metric_precision());
    // u_j: the perturbation bound of answer j, the envelope's radius
    std::vector<Ball> u;
    for (const Ball& a : rec.answers) {
      Ball r;
      arf_set_mag(arb_midref(r.raw()), arb_radref(a.raw()));
      u.push_back(r);
    }
    // rows: learned head g against true head h, when g's value balls contain h
    std::vector<std::vector<double>> cost(H, std::vector<double>(H, kInfinity));
    for (int h = 0; h < H; ++h)
      for (int g = 0; g < H; ++g) {
        const LearnedHead<Jet<Ball>>& x = res.heads[g];
        const HeadQ& t = canon.heads[h];
        bool in = true;
        for (int i = 0; i < d && in; ++i) {
          in = x.v[i].value().contains(t.v[i]);
          for (int j = 0; j < d && in; ++j) in = x.W(i, j).value().contains(t.W(i, j));
        }
        if (!in) continue;
        std::vector<Ball> w, v;
        for (int i = 0; i < d; ++i) {
          v.emplace_back(t.v[i]);
          for (int j = 0; j < d; ++j) w.emplace_back(t.W(i, j));
        }
        Ball sw = norm2(w), sv = norm2(v);
        if (arb_is_zero(sw.raw())) sw = Ball(1L);
        if (arb_is_zero(sv.raw())) sv = Ball(1L);
        Ball worst(0L);
        for (int a = 0; a < d; ++a)
          for (int b = 0; b <= d; ++b) {
            const Jet<Ball>& e = b < d ? x.W(a, b) : x.v[a];
            Ball s(0L);
            for (const auto& [col, dv] : e.grad()) {
              Ball m;  // sup |J_kj| over the box, times u_j
              arb_get_abs_ubound_arf(arb_midref(m.raw()), dv.raw(), metric_precision());
              s += m * u[col];
            }
            s /= b < d ? sw : sv;
            arb_max(worst.raw(), worst.raw(), s.raw(), metric_precision());
          }
        cost[h][g] = log2_upper(worst);
      }
    double b = kInfinity;
    if (bottleneck_matching(cost, &b).empty() || !std::isfinite(b)) {
      out.why = "no assignment of the run's heads contains the truth";
      return out;
    }
    out.ok = true;
    out.log2_bound = b;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::unable && e.kind() != ErrorKind::degenerate && e.kind() != ErrorKind::inconsistent) throw;
    out.why = std::string(kind_name(e.kind())) + ": " + e.what();
  }
  return out;
}

double certified_relative_radius_log2(const std::vector<LearnedHead<Ball>>& got) {
  PrecisionScope scope(metric_precision());
  double worst = -kInfinity;
  for (const auto& g : got) {
    const int d = static_cast<int>(g.v.size());
    std::vector<Ball> w, v;
    for (int i = 0; i < d; ++i) {
      v.push_back(g.v[i]);
      for (int j = 0; j < d; ++j) w.push_back(g.W(i, j));
    }
    const Ball sw = norm2(w), sv = norm2(v);
    if (!arb_is_positive(sw.raw()) || !arb_is_positive(sv.raw())) return kInfinity;
    auto rel = [](const Ball& x, const Ball& s) {  // rad / lower(scale), rounded up
      Ball r;
      arf_set_mag(arb_midref(r.raw()), arb_radref(x.raw()));
      Ball lo;
      arb_get_lbound_arf(arb_midref(lo.raw()), s.raw(), working_precision());
      arb_div(r.raw(), r.raw(), lo.raw(), working_precision());
      return log2_upper(r);
    };
    for (int i = 0; i < d; ++i) {
      worst = std::max(worst, rel(g.v[i], sv));
      for (int j = 0; j < d; ++j) worst = std::max(worst, rel(g.W(i, j), sw));
    }
  }
  return worst;
}

#define MHAQ_INSTANTIATE(T)                                                                                                            \
  template Sensitivity sensitivity_from_answers<T>(const Field<T>&, int, const LearnOptions&, const std::vector<Query>&, const std::vector<T>&, \
                                                   const std::vector<LearnedHead<T>>*, long, long, bool, bool, const FitMemo<T>*);                            \
  template FitMemo<T> fit_memo<T>(const LearnResult<T>&);                                                                                   \

MHAQ_INSTANTIATE(Mpfr)
MHAQ_INSTANTIATE(double)
MHAQ_INSTANTIATE(Ball)
#undef MHAQ_INSTANTIATE
#define MHAQ_INSTANTIATE(T) \
  template Sensitivity sensitivity_of_jet_heads<T>(const Field<T>&, int, const std::vector<LearnedHead<Jet<T>>>&, const std::vector<T>&);
MHAQ_INSTANTIATE(Mpfr)
MHAQ_INSTANTIATE(double)
MHAQ_INSTANTIATE(Ball)
#undef MHAQ_INSTANTIATE
template bool estimate_agrees<Mpfr>(const Field<Mpfr>&, const std::vector<LearnedHead<Jet<Mpfr>>>&, const std::vector<LearnedHead<Mpfr>>&, long);
template bool estimate_agrees<double>(const Field<double>&, const std::vector<LearnedHead<Jet<double>>>&, const std::vector<LearnedHead<double>>&, long);
template double pair_error_log2<Mpfr>(const Field<Mpfr>&, const Plan&, const std::vector<Mpfr>&, int, double);
template double pair_error_log2<double>(const Field<double>&, const Plan&, const std::vector<double>&, int, double);
template double param_error_log2<Mpfr>(const std::vector<LearnedHead<Mpfr>>&, const Model&);
template double param_error_log2<double>(const std::vector<LearnedHead<double>>&, const Model&);
template double param_error_log2<Ball>(const std::vector<LearnedHead<Ball>>&, const Model&);

}  // namespace mhaq
