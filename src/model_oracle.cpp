#include "mhaq/model_oracle.hpp"

#include <flint/fmpz.h>

#include "mhaq/error.hpp"

namespace mhaq {

namespace {
// f(X) for one model, generic over the answer type: scores exactly in Q,
// then softmax weights e^{s_i - s_max} in T.
template <class T>
T evaluate(const Model& m, const Query& q, const Field<T>& F) {
  const QVec& xN = q.back().token;
  T total = F.from(Rational(0));
  for (const auto& h : m.heads) {
    const QVec Wx = matvec(h.W, xN);
    std::vector<Rational> s;
    s.reserve(q.size());
    Rational smax;
    for (size_t i = 0; i < q.size(); ++i) {
      s.push_back(dot(q[i].token, Wx));
      if (i == 0 || s[i] > smax) smax = s[i];
    }
    T num = F.from(Rational(0)), den = F.from(Rational(0));
    for (size_t i = 0; i < q.size(); ++i) {
      const T w = F.exp(s[i] - smax) * F.from(Rational(q[i].count));
      num = num + w * F.from(dot(h.v, q[i].token));
      den = den + w;
    }
    total = total + num / den;
  }
  return total;
}

}  // namespace

template <class T>
ModelOracle<T>::ModelOracle(Model m, long token_den, OracleNoise noise)
    : model_(std::move(m)), token_den_(token_den), noise_(std::move(noise)), noise_rng_(noise_.seed) {
  model_.validate();
  if (noise_.active() && Field<T>::is_exact) throw Error(ErrorKind::usage, "an approximate oracle needs --arith ball, mpfr or double");
  if (noise_.bits < 0 || noise_.eps.sign() < 0) throw Error(ErrorKind::usage, "oracle bits and noise must be non-negative");
  if (token_den_ < 1) throw Error(ErrorKind::usage, "token denominator must be positive");
  if constexpr (Field<T>::is_exact) {
    const __int128 L = static_cast<__int128>(model_.w_denominator()) * token_den_ * token_den_;
    if (L > (static_cast<__int128>(1) << 40)) throw_input("exact oracle: L = m q^2 too large; use smaller denominators");
    field_.L = static_cast<long>(L);
  }
}

template <class T>
T ModelOracle<T>::answer(const Query& q) {
  for (const auto& r : q) {
    if (static_cast<int>(r.token.size()) != model_.d)
      throw_input("query token has dimension " + std::to_string(r.token.size()) + ", model has " + std::to_string(model_.d));
    for (const auto& x : r.token) {
      Rational scaled = x * Rational(token_den_);
      if (!scaled.is_integer()) throw_input("query entry " + x.str() + " is not in (1/" + std::to_string(token_den_) + ")Z");
    }
  }
  if constexpr (Field<T>::is_exact) {
    return evaluate(model_, q, field_);
  } else {
    if (!noise_.active()) return evaluate(model_, q, field_);
    // Enclose the exact value well beyond every precision in play, round the
    // midpoint to the oracle's bits, add the noise exactly.
    const long learner = Field<T>::tag == Arith::ieee ? 53 : working_precision();
    const long wp = std::max(noise_.bits, learner) + 64;
    Ball exact, out;
    {
      PrecisionScope scope(wp);
      exact = evaluate(model_, q, Field<Ball>{});
    }
    arb_set_arf(out.raw(), arb_midref(exact.raw()));
    if (noise_.bits > 0) arb_set_round(out.raw(), out.raw(), noise_.bits);
    Ball u(Rational(noise_rng_.uniform_int(-(1L << 52), 1L << 52), 1UL << 52));
    arb_mul_fmpz(u.raw(), u.raw(), fmpq_numref(noise_.eps.raw()), wp);
    arb_div_fmpz(u.raw(), u.raw(), fmpq_denref(noise_.eps.raw()), wp);
    arb_add(out.raw(), out.raw(), u.raw(), wp);
    if constexpr (std::is_same_v<T, Ball>) {
      // exact value within |rounding| + eps of the noisy midpoint
      Ball err = out - exact;
      arb_get_mid_arb(out.raw(), out.raw());
      mag_t e;
      mag_init(e);
      arb_get_mag(e, err.raw());
      mag_t epsm;
      mag_init(epsm);
      Ball eb(noise_.eps);
      arb_get_mag(epsm, eb.raw());
      mag_max(e, e, epsm);
      arb_add_error_mag(out.raw(), e);
      mag_clear(e);
      mag_clear(epsm);
      return out;
    } else if constexpr (std::is_same_v<T, Mpfr>) {
      Mpfr x;
      arf_get_mpfr(x.raw(), arb_midref(out.raw()), MPFR_RNDN);
      return x;
    } else {
      return arf_get_d(arb_midref(out.raw()), ARF_RND_NEAR);
    }
  }
}

QTau evaluate_exact(const Model& m, const Query& q, long L) {
  Field<QTau> F;
  F.L = L;
  return evaluate(m, q, F);
}

template class ModelOracle<QTau>;
template class ModelOracle<Ball>;
template class ModelOracle<Mpfr>;
template class ModelOracle<double>;

}  // namespace mhaq
