// Stage 3: pair fits, written once for every field.
#include "mhaq/stages/3-fit/pair_fit.hpp"

#include <iterator>
#include <utility>

#include "mhaq/arith/all_fields.hpp"

namespace mhaq {

template <class T>
template <class G>
void PairSystem<T>::linear_part(const G& F, std::vector<typename G::value_type>& x) const {
  using U = typename G::value_type;
  const int K = equations(), m = H_ + 1;
  const U one = F.from(Rational(1));
  Mat<U> A(K, m), b(K, 1), y;
  for (int k = 0; k < K; ++k) {
    const U kk = F.from(node(k));
    A(k, 0) = one;
    for (int h = 0; h < H_; ++h) A(k, 1 + h) = one / (one + x[1 + h] * kk);
    b(k, 0) = f_[k];
  }
  if (detail::solve_least_squares(F, y, A, b) != Truth::yes) return;
  x[0] = y(0, 0);
  for (int h = 0; h < H_; ++h) x[1 + H_ + h] = y(1 + h, 0);
}

namespace {

template <class T>
std::vector<T> pack(const PairFit<T>& p) {
  std::vector<T> x{p.P};
  x.insert(x.end(), p.r.begin(), p.r.end());
  x.insert(x.end(), p.c.begin(), p.c.end());
  return x;
}
template <class T>
PairFit<T> unpack(const std::vector<T>& x, int H) {
  return PairFit<T>{x[0], std::vector<T>(x.begin() + 1, x.begin() + 1 + H), std::vector<T>(x.begin() + 1 + H, x.end())};
}
// the same, taking the numbers instead of copying them
template <class T>
PairFit<T> unpack(std::vector<T>&& x, int H) {
  return PairFit<T>{std::move(x[0]), std::vector<T>(std::make_move_iterator(x.begin() + 1), std::make_move_iterator(x.begin() + 1 + H)),
                    std::vector<T>(std::make_move_iterator(x.begin() + 1 + H), std::make_move_iterator(x.end()))};
}

// The linear route (proofs/02): N(k) = f(k) Q(k) on k = 0..2H with Q(0) = 1,
// i.e. N(k) - f(k)(Q(k) - 1) = f(k) in the unknowns n_0..n_H, q_1..q_H; then
// r_h = -1/rho_h over the roots rho_h of Q, c_h = r_h N(rho_h)/Q'(rho_h) and
// P = n_H / q_H.
template <ArithField F>
PairFit<typename F::value_type> interpolate_linear(const F& fld, const std::vector<typename F::value_type>& f, int H) {
  using T = typename F::value_type;
  const int n = 2 * H + 1;
  if (static_cast<int>(f.size()) < n) throw_internal("pair fit: need 2H+1 values");
  Mat<T> A(n, n), rhs(n, 1), x;
  for (int k = 0; k < n; ++k) {
    Rational km(1);
    for (int m = 0; m <= H; ++m) {
      A(k, m) = fld.from(km);
      if (m >= 1) A(k, H + m) = -(f[k] * fld.from(km));
      km *= Rational(k);
    }
    rhs(k, 0) = f[k];
  }
  require_truth(fld.solve(x, A, rhs), ErrorKind::degenerate,
                "the type-(" + std::to_string(H) + "," + std::to_string(H) + ") pair system is singular (colliding poles or a zero residue)");
  std::vector<T> N, Q{fld.from(Rational(1))};
  for (int m = 0; m <= H; ++m) N.push_back(x(m, 0));
  for (int m = 1; m <= H; ++m) Q.push_back(x(H + m, 0));
  require_truth(truth_not(fld.is_zero(Q[H])), ErrorKind::inconsistent, "the pair's denominator has degree below H");
  const Roots<T> roots = fld.real_roots(Q);
  require_truth(roots.ok, ErrorKind::inconsistent, "the pair's poles are not " + std::to_string(H) + " distinct positive reals: " + roots.why);
  const std::vector<T> dQ = poly_derivative(fld, Q);
  PairFit<T> out{N[H] / Q[H], {}, {}};
  for (const T& rho : roots.roots) {
    const T r = fld.from(Rational(-1)) / rho;
    out.r.push_back(r);
    out.c.push_back(r * poly_eval(N, rho) / poly_eval(dQ, rho));
  }
  return out;
}

// The approximate fit of interpolate_pair: the linear route, refined on the
// pair's own equations. A type with its head count in view, so that a field
// replaying a run can look the fit up (FitMemo, arith/jet.hpp).
struct Approximate {
  int H;
  template <class G>
  std::optional<std::vector<typename G::value_type>> operator()(const G& g, const std::vector<typename G::value_type>& f) const {
    auto x = pack(interpolate_linear(g, f, H));
    g.refine(PairSystem(f, H), x);
    return std::optional(x);
  }
};

}  // namespace

template <ArithField F>
typename F::value_type fit_value(const F& fld, const PairFit<typename F::value_type>& fit, long k) {
  const auto kk = fld.from(Rational(k)), one = fld.from(Rational(1));
  auto v = fit.P;
  for (size_t h = 0; h < fit.r.size(); ++h) v = v + fit.c[h] / (one + fit.r[h] * kk);
  return v;
}

template <ArithField F>
PairFit<typename F::value_type> interpolate_pair(const F& fld, const std::vector<typename F::value_type>& f, int H) {
  using T = typename F::value_type;
  const size_t n = 2 * static_cast<size_t>(H) + 1;
  const PairSystem<T> sys(f, H);
  // Filter, then certify: an approximate fit (in the field itself, or in
  // MPFR from the midpoints for balls), refined on the pair's own equations;
  // certify() accepts it as is (exact, floats) or proves it (balls, Krawczyk).
  // When a ball fit cannot be certified the plain ball route below still is.
  std::optional<std::vector<T>> x = fld.filtered(f, Approximate{H});
  const PairFit<T> fit = x && fld.certify(sys, *x) == Truth::yes ? unpack(std::move(*x), H) : interpolate_linear(fld, f, H);
  for (size_t k = n; k < f.size(); ++k)
    if (fld.equal(fit_value(fld, fit, static_cast<long>(k)), f[k]) == Truth::no)
      throw_inconsistent("value k = " + std::to_string(k) + " disagrees with the type-(" + std::to_string(H) + "," + std::to_string(H) +
                         ") fit of the others");
  return fit;
}

template <ArithField F>
PairFit<typename F::value_type> interpolate_pair_minimal(const F& fld, const std::vector<typename F::value_type>& f, int H0) {
  using T = typename F::value_type;
  for (int m = 0; m <= H0; ++m) {
    PairFit<T> fit{f[0], {}, {}};
    try {
      if (m > 0) fit = interpolate_pair(fld, std::vector<T>(f.begin(), f.begin() + 2 * m + 1), m);
    } catch (const Error& e) {
      // A singular or inconsistent type-(m,m) fit means m is too small; so
      // does an undecidable one below H0: the burden of proof sits on the
      // agreement test.
      if (e.kind() == ErrorKind::degenerate || e.kind() == ErrorKind::inconsistent) continue;
      if (e.kind() == ErrorKind::unable && m < H0) continue;
      throw;
    }
    Truth agree = Truth::yes;
    for (int k = 2 * m + 1; k < static_cast<int>(f.size()) && agree != Truth::no; ++k)
      agree = truth_and(agree, fld.equal(fit_value(fld, fit, k), f[k]));
    if (agree == Truth::no) continue;
    if (agree == Truth::unknown)
      throw_unable("cannot decide whether a type-(" + std::to_string(m) + "," + std::to_string(m) + ") function fits all " +
                   std::to_string(f.size()) + " values at this precision (balls never certify an exact agreement)");
    if (m > 0 && f.size() > 2 * static_cast<size_t>(m) + 1) {  // least squares over every value (floats)
      std::vector<T> x = pack(fit);
      fld.refine(PairSystem<T>(f, m), x);
      fit = unpack(std::move(x), m);
    }
    return fit;
  }
  throw_inconsistent("no type-(m,m) function with m <= " + std::to_string(H0) + " fits the " + std::to_string(f.size()) + " values");
}

#define MHAQ_INSTANTIATE(F)                                                                                          \
  template PairFit<F::value_type> interpolate_pair<F>(const F&, const std::vector<F::value_type>&, int);             \
  template PairFit<F::value_type> interpolate_pair_minimal<F>(const F&, const std::vector<F::value_type>&, int);     \
  template F::value_type fit_value<F>(const F&, const PairFit<F::value_type>&, long);
MHAQ_FOR_EACH_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
