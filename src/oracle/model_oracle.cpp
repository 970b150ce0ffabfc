#include "mhaq/arith/flint_wrappers.hpp"
#include "mhaq/oracle/model_oracle.hpp"

#include <flint/fmpz.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

#include "mhaq/arith/in_place.hpp"
#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/arith/value_bytes.hpp"
#include "mhaq/base/distribute.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/parallel.hpp"

namespace mhaq {

namespace {
// sqrt(root) in T, for a model whose scores carry that factor (Model::root);
// exact mode has no irrational numbers and refuses such a model.
Ball sqrt_of(long root, const Field<Ball>&) {
  Ball r(root);
  arb_sqrt(r.raw(), r.raw(), working_precision());
  return r;
}
Mpfr sqrt_of(long root, const Field<Mpfr>& F) {
  Mpfr r = F.from(Rational(root));
  mpfr_sqrt(r.raw(), r.raw(), MPFR_RNDN);
  return r;
}
double sqrt_of(long root, const Field<double>&) { return std::sqrt(static_cast<double>(root)); }
[[noreturn]] QTau sqrt_of(long root, const Field<QTau>&) { refuse_irrational_scale(root); }

// f(X) for one model, generic over the answer type: scores exactly in Q,
// then softmax weights e^{sqrt(root) (s_i - s_max)} in T.
template <class T>
T evaluate(const Model& m, const Query& q, const Field<T>& F) {
  const QVec& xN = q.back().token;
  T total = F.from(Rational(0));
  const std::optional<T> root = m.root == 1 ? std::nullopt : std::optional<T>(sqrt_of(m.root, F));
  for (const auto& h : m.heads) {
    QVec Wx = matvec(h.W, xN);
    if (!h.c.empty()) Wx = Wx + h.c;  // s_i = x_i^T (W x_N + c)
    std::vector<Rational> s;
    s.reserve(q.size());
    Rational smax;
    for (size_t i = 0; i < q.size(); ++i) {
      s.push_back(dot(q[i].token, Wx));
      if (i == 0 || s[i] > smax) smax = s[i];
    }
    T num = F.from(Rational(0)), den = F.from(Rational(0));
    for (size_t i = 0; i < q.size(); ++i) {
      const T w = (root ? F.exp(F.from(s[i] - smax) * *root) : F.exp(s[i] - smax)) * F.from(Rational(q[i].count));
      num = num + w * F.from(dot(h.v, q[i].token));
      den = den + w;
    }
    total = total + num / den;
  }
  if (!m.beta.is_zero()) total = total + F.from(m.beta);
  return total;
}

using i128 = __int128;

Rational rational_from(i128 num, i128 den) {
  Rational q;
  auto set = [](fmpz_t z, i128 v) {
    const bool neg = v < 0;
    const unsigned __int128 a = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
    fmpz_set_uiui(z, static_cast<ulong>(a >> 64), static_cast<ulong>(a));
    if (neg) fmpz_neg(z, z);
  };
  fmpz_t n, d;
  fmpz_init(n);
  fmpz_init(d);
  set(n, num);
  set(d, den);
  fmpq_set_fmpz_frac(q.raw(), n, d);
  fmpz_clear(n);
  fmpz_clear(d);
  return q;
}

// x * scale as a machine integer when both parts of x are small (FLINT keeps
// them inline) and the product cannot overflow: 1 when x * scale is an
// integer (in `out`), 0 when it is not, -1 when this cannot tell.
int small_scaled(const Rational& x, long scale, long& out) {
  const fmpz n = *fmpq_numref(x.raw()), dn = *fmpq_denref(x.raw());
  long t = 0;
  if (COEFF_IS_MPZ(n) || COEFF_IS_MPZ(dn) || __builtin_mul_overflow(static_cast<long>(n), scale, &t)) return -1;
  if (t % static_cast<long>(dn) != 0) return 0;
  out = t / static_cast<long>(dn);
  return 1;
}

bool to_long(const Rational& x, long scale, long& out) {
  // out = x * scale when that is an integer fitting comfortably in 62 bits
  long s = 0;
  const int small = small_scaled(x, scale, s);
  if (small == 0) return false;
  if (small == 1) {
    const unsigned long a = s < 0 ? 0UL - static_cast<unsigned long>(s) : static_cast<unsigned long>(s);
    if (a >> 62) return false;  // fmpz_bits(t) > 62
    out = s;
    return true;
  }
  fmpz_t t;
  fmpz_init(t);
  fmpz_mul_si(t, fmpq_numref(x.raw()), scale);
  const bool exact = fmpz_divisible(t, fmpq_denref(x.raw()));
  if (exact) fmpz_divexact(t, t, fmpq_denref(x.raw()));
  const bool fits = exact && fmpz_bits(t) <= 62;
  if (fits) out = fmpz_get_si(t);
  fmpz_clear(t);
  return fits;
}

}  // namespace

// Integer form of a model: W * mW and v * mv with machine-integer entries,
// so that scores and values of integer-scaled tokens are exact int128 sums
// (no rational gcds on the oracle's hot path).
struct IntModel {
  bool ok = false;
  std::uint64_t serial = 0;  // this model among every IntModel made (TokenTerms)
  long mW = 1, mv = 1;
  long maxW = 0, maxv = 0;
  std::vector<std::vector<long>> W, v;  // per head: d*d row-major, d
  std::vector<std::vector<long>> c;     // per head: c * mW (d entries; empty: zero)
  bool any_c = false;
  Rational beta;
  explicit IntModel(const Model& m) {
    static std::atomic<std::uint64_t> made{0};
    serial = ++made;
    // Real weights (denominators up to 2^1074) have no integer form here:
    // ok = false, and every answer takes the rational path.
    fmpz_t l;
    fmpz_init_set_ui(l, 1);
    for (const auto& h : m.heads) {
      for (int i = 0; i < m.d; ++i)
        for (int j = 0; j < m.d; ++j) fmpz_lcm(l, l, fmpq_denref(h.W(i, j).raw()));
      for (const auto& x : h.c) fmpz_lcm(l, l, fmpq_denref(x.raw()));
    }
    beta = m.beta;
    // scores with an irrational factor sqrt(root) take the rational path
    const bool wfits = m.root == 1 && fmpz_bits(l) <= 40;
    mW = wfits ? fmpz_get_si(l) : 1;
    fmpz_one(l);
    for (const auto& h : m.heads)
      for (const auto& x : h.v) fmpz_lcm(l, l, fmpq_denref(x.raw()));
    const bool vfits = fmpz_bits(l) <= 40;
    mv = vfits ? fmpz_get_si(l) : 1;
    fmpz_clear(l);
    ok = vfits && wfits;
    for (const auto& h : m.heads) {
      if (!ok) break;
      std::vector<long> w(static_cast<size_t>(m.d) * m.d), vv(m.d), cc(h.c.size());
      for (int i = 0; i < m.d && ok; ++i) {
        ok = ok && to_long(h.v[i], mv, vv[i]);
        for (int j = 0; j < m.d && ok; ++j) ok = ok && to_long(h.W(i, j), mW, w[static_cast<size_t>(i) * m.d + j]);
      }
      for (size_t i = 0; i < h.c.size() && ok; ++i) ok = ok && to_long(h.c[i], mW, cc[i]);
      for (long x : w) maxW = std::max(maxW, x < 0 ? -x : x);
      for (long x : cc) maxW = std::max(maxW, x < 0 ? -x : x);
      any_c = any_c || !cc.empty();
      c.push_back(std::move(cc));
      for (long x : vv) maxv = std::max(maxv, x < 0 ? -x : x);
      W.push_back(std::move(w));
      v.push_back(std::move(vv));
    }
  }
};

namespace {
// A query's per-head weights e^{s_r - s_max} (before the count) and values
// v_h^T x_r, which depend on its tokens and not on their counts: the queries
// of one pair differ only in a count, so the previous query's numbers are
// kept (per thread) and taken when the model, the working precision, the
// token grid and every token are the same. They are the numbers the same
// operations would form again (every field here rounds deterministically),
// so each answer is unchanged. Not for the exact field, whose exponentials
// depend on the field's own L.
template <class T>
struct TokenTerms {
  std::uint64_t model = 0;
  long bits = 0, qden = 0;
  std::vector<std::vector<long>> x;
  std::vector<std::vector<T>> e, v;  // [h][r]
};

// Same value as evaluate(), from integer-scaled tokens; returns false (and
// leaves `out` alone) when the int128 bounds could be exceeded.
template <class T>
bool evaluate_int(const IntModel& im, int d, const Query& q, long qden, const Field<T>& F, T& out) {
  if (!im.ok) return false;
  std::vector<std::vector<long>> x(q.size(), std::vector<long>(d));
  long maxx = 0;
  for (size_t r = 0; r < q.size(); ++r)
    for (int i = 0; i < d; ++i) {
      if (!to_long(q[r].token[i], qden, x[r][i])) return false;
      maxx = std::max(maxx, x[r][i] < 0 ? -x[r][i] : x[r][i]);
    }
  // |score| <= d^2 maxW maxx^2 and |value| <= d maxv maxx must stay below
  // 2^125; bounded with bit lengths (integers only, as everywhere in exact mode).
  auto bits = [](long v) { return v <= 0 ? 0 : 64 - __builtin_clzl(static_cast<unsigned long>(v)); };
  if (2 * bits(d) + bits(im.maxW) + 2 * bits(maxx) > 124 || bits(d) + bits(im.maxv) + bits(maxx) > 124) return false;
  // with c: |score| <= d maxx (d maxW maxx + maxW qden) <= 2 d^2 maxW max(maxx, qden)^2
  if (im.any_c && 1 + 2 * bits(d) + bits(im.maxW) + 2 * bits(std::max(maxx, qden)) > 124) return false;
  constexpr bool keep = !Field<T>::is_exact;
  thread_local TokenTerms<T> kept;
  const bool same = keep && kept.model == im.serial && kept.bits == working_precision() && kept.qden == qden && kept.x == x;
  if (!same) {
    const i128 sden = static_cast<i128>(im.mW) * qden * qden, vden = static_cast<i128>(im.mv) * qden;
    const std::vector<long>& xN = x.back();
    std::vector<i128> S(q.size());
    kept.e.assign(im.W.size(), {});
    kept.v.assign(im.W.size(), {});
    for (size_t h = 0; h < im.W.size(); ++h) {
      std::vector<i128> Wx(d, 0);
      for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) Wx[i] += static_cast<i128>(im.W[h][static_cast<size_t>(i) * d + j]) * xN[j];
      // c^T x in the scores' units 1/(mW qden^2): (c mW) qden (x qden)
      if (!im.c[h].empty())
        for (int i = 0; i < d; ++i) Wx[i] += static_cast<i128>(im.c[h][static_cast<size_t>(i)]) * qden;
      i128 Smax = 0;
      for (size_t r = 0; r < q.size(); ++r) {
        S[r] = 0;
        for (int i = 0; i < d; ++i) S[r] += static_cast<i128>(x[r][i]) * Wx[i];
        if (r == 0 || S[r] > Smax) Smax = S[r];
      }
      for (size_t r = 0; r < q.size(); ++r) {
        i128 vx = 0;
        for (int i = 0; i < d; ++i) vx += static_cast<i128>(im.v[h][i]) * x[r][i];
        kept.e[h].push_back(F.exp(rational_from(S[r] - Smax, sden)));
        kept.v[h].push_back(F.from(rational_from(vx, vden)));
      }
    }
    kept.model = keep ? im.serial : 0;
    kept.bits = working_precision();
    kept.qden = qden;
    kept.x = std::move(x);
  }
  // in place: the same values as total = total + num / den (every field's
  // a += b is a = a + b), without copying the exact answers' polynomials
  // (the counts in the field once per query, the products into scratch numbers)
  T total = F.from(Rational(0)), num = total, den = total, w = total, t = total;
  std::vector<T> count;
  count.reserve(q.size());
  for (const Run& run : q) count.push_back(F.from(Rational(run.count)));
  for (size_t h = 0; h < im.W.size(); ++h) {
    num = F.from(Rational(0));
    den = num;
    for (size_t r = 0; r < q.size(); ++r) {
      mul_into(w, kept.e[h][r], count[r]);
      mul_into(t, w, kept.v[h][r]);
      num += t;
      den += w;
    }
    num /= den;
    total += num;
  }
  if (!im.beta.is_zero()) total += F.from(im.beta);
  out = std::move(total);
  return true;
}
}  // namespace

template <class T>
ModelOracle<T>::ModelOracle(Model m, long token_den, OracleNoise noise, ExactSolver solver)
    : model_(std::move(m)), token_den_(token_den), noise_(std::move(noise)), solver_(solver), noise_rng_(noise_.seed) {
  model_.validate();
  if (noise_.pattern == NoisePattern::envelope && !arith_facts(Field<T>::tag).rigorous)
    throw Error(ErrorKind::usage, "the envelope noise pattern needs a ball learner (--arith ball)");
  if (noise_.bits < 0 || noise_.eps.sign() < 0) throw Error(ErrorKind::usage, "oracle bits and noise must be non-negative");
  if (token_den_ < 1) throw Error(ErrorKind::usage, "token denominator must be positive");
  int_model_ = std::make_shared<const IntModel>(model_);
  field_ = make_field();
}

// Floats state the accuracy of this oracle: its rounding and its noise, or
// the learner's own precision, whichever is coarser (FloatTolerance).
template <class T>
Field<T> oracle_field(long, long, const OracleNoise& noise, ExactSolver) {
  Field<T> f;
  double acc = -static_cast<double>(f.precision());
  if (noise.bits > 0) acc = std::max(acc, -static_cast<double>(noise.bits));
  if (!noise.eps.is_zero()) acc = std::max(acc, std::log2(std::fabs(noise.eps.approx_double())));
  f.tol.acc_log2 = acc;
  return f;
}
template <>
Field<QTau> oracle_field<QTau>(long w_den, long token_den, const OracleNoise&, ExactSolver solver) {
  const __int128 L = static_cast<__int128>(w_den) * token_den * token_den;
  if (L > (static_cast<__int128>(1) << 40)) throw_input("exact oracle: L = m q^2 too large; use smaller denominators");
  return Field<QTau>(static_cast<long>(L), solver);
}
template <>
Field<Ball> oracle_field<Ball>(long, long, const OracleNoise&, ExactSolver) {
  return Field<Ball>{};
}

void check_query_grid(const Query& q, int d, long token_den) {
  for (const auto& r : q) {
    if (static_cast<int>(r.token.size()) != d)
      throw_input("query token has dimension " + std::to_string(r.token.size()) + ", model has " + std::to_string(d));
    for (const auto& x : r.token) {
      long unused = 0;
      const int small = small_scaled(x, token_den, unused);
      if (small == 1) continue;
      if (small == 0) throw_input("query entry " + x.str() + " is not in (1/" + std::to_string(token_den) + ")Z");
      fmpz_t t;
      fmpz_init(t);
      fmpz_mul_si(t, fmpq_numref(x.raw()), token_den);
      const bool ok = fmpz_divisible(t, fmpq_denref(x.raw()));
      fmpz_clear(t);
      if (!ok) throw_input("query entry " + x.str() + " is not in (1/" + std::to_string(token_den) + ")Z");
    }
  }
}

// Only the exact field depends on the W denominators (L = m token_den^2).
template <class T>
Field<T> ModelOracle<T>::make_field() const {
  return oracle_field<T>(1, token_den_, noise_, solver_);
}
template <>
Field<QTau> ModelOracle<QTau>::make_field() const {
  if (model_.root != 1) refuse_irrational_scale(model_.root);
  return oracle_field<QTau>(model_.w_denominator(), token_den_, noise_, solver_);
}

namespace {
// The learner's precision: the working precision, 53 for IEEE doubles.
long learner_bits(const Field<double>&) { return 53; }
template <class F>
long learner_bits(const F&) {
  return working_precision();
}

// The answer in the learner's arithmetic from the rounded, noisy midpoint
// `out` of the enclosure `exact` of the true value. A ball is that midpoint
// with a radius covering the exact value: max(|out - exact|, eps); the
// envelope covers every value within eps of the (rounded) answer as well:
// |out - exact| + eps. Floats are the midpoint, rounded to nearest.
void round_answer(Ball out, const Ball& exact, const OracleNoise& noise, Ball& answer, flint::Mag& none) {
  mag_zero(none.v);  // the ball holds its own error
  const Ball err = out - exact;
  arb_get_mid_arb(out.raw(), out.raw());
  flint::Mag e, epsm;
  arb_get_mag(e.v, err.raw());
  const Ball eb(noise.eps);
  arb_get_mag(epsm.v, eb.raw());
  if (noise.pattern == NoisePattern::envelope) mag_add(e.v, e.v, epsm.v);
  else mag_max(e.v, e.v, epsm.v);
  arb_add_error_mag(out.raw(), e.v);
  answer = out;
}
// A float answer's error: out holds midpoint(exact) + the noise drawn, so
// |answer - f| <= |answer - out| + |noise| + rad(exact), the noise bounded
// by its stated eps (not by the value drawn).
void float_error(const Ball& answer, const Ball& out, const Ball& exact, const OracleNoise& noise, flint::Mag& err) {
  Ball d = answer - out;
  arb_get_mag(err.v, d.raw());
  mag_add(err.v, err.v, arb_radref(exact.raw()));
  if (!noise.eps.is_zero()) {
    const Ball eb(noise.eps);
    flint::Mag e;
    arb_get_mag(e.v, eb.raw());
    mag_add(err.v, err.v, e.v);
  }
}
void round_answer(const Ball& out, const Ball& exact, const OracleNoise& noise, Mpfr& answer, flint::Mag& err) {
  arf_get_mpfr(answer.raw(), arb_midref(out.raw()), MPFR_RNDN);
  Ball a;
  arf_set_mpfr(arb_midref(a.raw()), answer.raw());
  float_error(a, out, exact, noise, err);
}
void round_answer(const Ball& out, const Ball& exact, const OracleNoise& noise, double& answer, flint::Mag& err) {
  answer = arf_get_d(arb_midref(out.raw()), ARF_RND_NEAR);
  Ball a;
  arf_set_d(arb_midref(a.raw()), answer);
  float_error(a, out, exact, noise, err);
}
}  // namespace

template <>
QTau ModelOracle<QTau>::answer(const Query& q) {
  check_query_grid(q, model_.d, token_den_);
  QTau out;
  if (!evaluate_int(*int_model_, model_.d, q, token_den_, field_, out)) out = evaluate(model_, q, field_);
  if (!noise_.active()) return out;
  // An approximate answer is still an element of Q(tau): the p-bit rounding
  // is a dyadic rational, and the noise is rational. An exact learner must
  // then report that no exact model fits (it never guesses parameters).
  if (noise_.bits > 0) {
    PrecisionScope scope(noise_.bits + 64);
    Ball exact;
    if (!evaluate_int(*int_model_, model_.d, q, token_den_, Field<Ball>{}, exact)) exact = evaluate(model_, q, Field<Ball>{});
    arb_set_round(exact.raw(), exact.raw(), noise_.bits);
    fmpq_t r;
    fmpq_init(r);
    arf_get_fmpq(r, arb_midref(exact.raw()));
    Rational rq;
    fmpq_set(rq.raw(), r);
    fmpq_clear(r);
    out = QTau(rq);
  }
  const long index = answered_++;
  if (noise_.pattern == NoisePattern::signs && index >= static_cast<long>(noise_.signs.size()))
    throw_internal("noise sign pattern shorter than the query list");
  const Rational u = noise_.pattern == NoisePattern::signs ? Rational(static_cast<long>(noise_.signs[index]))
                                                           : Rational(noise_rng_.uniform_int(-(1L << 52), 1L << 52), 1UL << 52);
  return out + QTau(u * noise_.eps);
}

template <>
QTau ModelOracle<QTau>::answer_with_error(const Query& q, flint::Mag& err) {
  mag_zero(err.v);
  return answer(q);
}

template <class T>
T ModelOracle<T>::answer(const Query& q) {
  return answer_with_error(q, slot(reserve_slots(1)));
}

template <class T>
T ModelOracle<T>::answer_with_error(const Query& q, flint::Mag& err) {
  check_query_grid(q, model_.d, token_den_);
  if (!noise_.active() && Field<T>::is_rigorous) {
    // balls: the enclosure itself
    mag_zero(err.v);
    T out;
    if (evaluate_int(*int_model_, model_.d, q, token_den_, field_, out)) return out;
    return evaluate(model_, q, field_);
  }
  // Enclose the exact value well beyond every precision in play, round the
  // midpoint to the oracle's bits, add the noise exactly.
  const long learner = learner_bits(field_);
  const long wp = std::max(noise_.bits, learner) + 64;
  Ball exact, out;
  {
    PrecisionScope scope(wp);
    if (!evaluate_int(*int_model_, model_.d, q, token_den_, Field<Ball>{}, exact)) exact = evaluate(model_, q, Field<Ball>{});
  }
  arb_set_arf(out.raw(), arb_midref(exact.raw()));
  if (noise_.bits > 0) arb_set_round(out.raw(), out.raw(), noise_.bits);
  const long index = answered_++;
  if (noise_.pattern != NoisePattern::envelope && !noise_.eps.is_zero()) {
    Ball u;
    if (noise_.pattern == NoisePattern::uniform) {
      u = Ball(Rational(noise_rng_.uniform_int(-(1L << 52), 1L << 52), 1UL << 52));
    } else {
      if (index >= static_cast<long>(noise_.signs.size())) throw_internal("noise sign pattern shorter than the query list");
      u = Ball(static_cast<long>(noise_.signs[index]));
    }
    arb_mul_fmpz(u.raw(), u.raw(), fmpq_numref(noise_.eps.raw()), wp);
    arb_div_fmpz(u.raw(), u.raw(), fmpq_denref(noise_.eps.raw()), wp);
    arb_add(out.raw(), out.raw(), u.raw(), wp);
  }
  T a;
  round_answer(out, exact, noise_, a, err);
  return a;
}

template <>
bool ModelOracle<QTau>::any_order() const {
  return false;
}

template <class T>
bool ModelOracle<T>::any_order() const {
  return !noise_.active();
}

template <class T>
std::vector<T> ModelOracle<T>::answer_all(const std::vector<Query>& qs, std::size_t begin, std::size_t end, int threads) {
  std::vector<T> out(end - begin);
  const long first = reserve_slots(static_cast<long>(end - begin));
  auto one = [&](std::size_t i) { out[i - begin] = answer_with_error(qs[i], slot(first + static_cast<long>(i - begin))); };
  if (!run_across_ranks() || !ValueBytes<T>::available) {
    parallel_for(begin, end, threads, one);
    return out;
  }
  // A run across ranks: each rank answers its share of the batch, in pieces
  // of 256 queries, and every rank reads every answer and its error bound.
  gather_across_ranks(
      end - begin, 256, threads,
      [&](std::size_t j, std::string& b) {
        one(begin + j);
        ValueBytes<T>::write(b, out[j]);
        write_value(b, slot(first + static_cast<long>(j)));
      },
      [&](std::size_t j, ByteReader& in) {
        ValueBytes<T>::read(in, out[j]);
        read_value(in, slot(first + static_cast<long>(j)));
      });
  return out;
}

template <class T>
std::string ModelOracle<T>::error_assumption() const {
  std::string s = "the model's own answers: each the midpoint of an Arb enclosure of f(X)";
  if (noise_.bits > 0) s += ", rounded to " + std::to_string(noise_.bits) + " bits";
  s += ", rounded to the learner's precision (each answer's rounding bound computed)";
  if (!noise_.eps.is_zero()) s += ", plus noise of at most " + noise_.eps.str();
  return s;
}

const flint::Mag& KeptAnswerErrors::answer_error(long index) const {
  if (index < 0 || index >= static_cast<long>(errors_.size())) throw_internal("answer error: no answer " + std::to_string(index));
  return errors_[static_cast<size_t>(index)];
}

const char* noise_pattern_name(NoisePattern p) {
  return p == NoisePattern::uniform ? "uniform" : p == NoisePattern::signs ? "worst" : "envelope";
}
NoisePattern parse_noise_pattern(const std::string& s) {
  if (s == "uniform") return NoisePattern::uniform;
  if (s == "worst" || s == "signs") return NoisePattern::signs;
  if (s == "envelope") return NoisePattern::envelope;
  throw Error(ErrorKind::usage, "unknown noise pattern \"" + s + "\" (expected uniform, worst or envelope)");
}

QTau evaluate_exact(const Model& m, const Query& q, long L) {
  if (m.root != 1) refuse_irrational_scale(m.root);
  const Field<QTau> F(L);
  fmpz_t l;
  fmpz_init_set_ui(l, 1);
  for (const auto& r : q)
    for (const auto& x : r.token) fmpz_lcm(l, l, fmpq_denref(x.raw()));
  const bool small = fmpz_bits(l) <= 40;
  const long qden = small ? fmpz_get_si(l) : 1;
  fmpz_clear(l);
  QTau out;
  if (small && evaluate_int(IntModel(m), m.d, q, qden, F, out)) return out;
  return evaluate(m, q, F);
}

Rational answer_score_spread(const Model& m, const Query& q) {
  const QVec& xN = q.back().token;
  Rational total;
  for (const auto& h : m.heads) {
    QVec Wx = matvec(h.W, xN);
    if (!h.c.empty()) Wx = Wx + h.c;
    Rational lo, hi;
    for (size_t i = 0; i < q.size(); ++i) {
      const Rational s = dot(q[i].token, Wx);
      if (i == 0 || s < lo) lo = s;
      if (i == 0 || s > hi) hi = s;
    }
    total += hi - lo;
  }
  return total;
}

Ball evaluate_ball(const Model& m, const Query& q) { return evaluate(m, q, Field<Ball>{}); }

template Field<Mpfr> oracle_field<Mpfr>(long, long, const OracleNoise&, ExactSolver);
template Field<double> oracle_field<double>(long, long, const OracleNoise&, ExactSolver);
template class ModelOracle<QTau>;
template class ModelOracle<Ball>;
template class ModelOracle<Mpfr>;
template class ModelOracle<double>;

}  // namespace mhaq
