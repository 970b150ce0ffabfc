// Stage 4, compact schedule: pairs fitted with their residues known from
// already matched heads (include/mhaq/stages/4-match/known_residues.hpp,
// proofs/19), written once for every field.
#include "mhaq/stages/4-match/known_residues.hpp"

#include "mhaq/arith/all_fields.hpp"
#include "mhaq/stages/4-match/match.hpp"

namespace mhaq {

namespace {

template <class F>
using Poly = std::vector<typename F::value_type>;

template <class F>
Poly<F> poly_mul(const F& fld, const Poly<F>& a, const Poly<F>& b) {
  Poly<F> r(a.size() + b.size() - 1, fld.from(Rational(0)));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < b.size(); ++j) r[i + j] = r[i + j] + a[i] * b[j];
  return r;
}
template <class F>
Poly<F> poly_sub(const F& fld, Poly<F> a, const Poly<F>& b) {
  while (a.size() < b.size()) a.push_back(fld.from(Rational(0)));
  for (size_t i = 0; i < b.size(); ++i) a[i] = a[i] - b[i];
  return a;
}

// k^e as a number of the field
template <class F>
typename F::value_type power(const F& fld, int k, int e) {
  Rational p(1);
  for (int i = 0; i < e; ++i) p *= Rational(k);
  return fld.from(p);
}

// The unique N/Q through k = 1..2H-1 (N(0) = n0, Q(0) = 1): the roots of Q
// and the residue at each, in the c-normalisation g = sum e/(1 + r k).
template <ArithField F>
void linear_interpolant(const F& fld, const std::vector<typename F::value_type>& g, int H, const typename F::value_type& n0,
                        std::vector<typename F::value_type>& rho, std::vector<typename F::value_type>& e) {
  using T = typename F::value_type;
  const int n = 2 * H - 1;
  Mat<T> A(n, n), rhs(n, 1), x;
  for (int row = 0; row < n; ++row) {
    const int k = row + 1;
    for (int a = 1; a < H; ++a) A(row, a - 1) = power(fld, k, a);
    for (int b = 1; b <= H; ++b) A(row, H - 1 + b - 1) = -(g[k] * power(fld, k, b));
    rhs(row, 0) = g[k] - n0;
  }
  require_truth(fld.solve(x, A, rhs), ErrorKind::degenerate,
                "the pair's linear system with known residues is singular (colliding poles at this draw)");
  std::vector<T> N{n0}, Q{fld.from(Rational(1))};
  for (int a = 1; a < H; ++a) N.push_back(x(a - 1, 0));
  for (int b = 1; b <= H; ++b) Q.push_back(x(H - 1 + b - 1, 0));
  require_truth(truth_not(fld.is_zero(Q[H])), ErrorKind::degenerate, "the pair's denominator has degree below H (colliding poles at this draw)");
  const Roots<T> roots = fld.real_roots(Q);
  require_truth(roots.ok, ErrorKind::inconsistent, "the pair's poles are not " + std::to_string(H) + " distinct real numbers: " + roots.why);
  const std::vector<T> dQ = poly_derivative(fld, Q);
  rho = roots.roots;
  e.clear();
  for (const T& z : rho) e.push_back(-(poly_eval(N, z) / (z * poly_eval(dQ, z))));
}

// The linear route: the interpolant's poles matched to the residues c.
// Returns rho[h], the root of Q that is head h's.
template <ArithField F>
std::vector<typename F::value_type> linear_route(const F& fld, const std::vector<typename F::value_type>& g, const std::vector<typename F::value_type>& c,
                                                 const typename F::value_type& n0) {
  using T = typename F::value_type;
  const int H = static_cast<int>(c.size());
  std::vector<T> roots, e;
  linear_interpolant(fld, g, H, n0, roots, e);
  T scale = fld.from(Rational(0));
  for (int h = 0; h < H; ++h) scale = scale + fld.abs(c[h]);
  const Assignment a = match_heads(H, [&](int h, int r) { return fld.equal(e[r], c[h], scale); });
  const std::vector<int> perm = unique_or_throw(a, "matching the pair's poles to its known residues");
  std::vector<T> rho;
  for (int h = 0; h < H; ++h) rho.push_back(roots[perm[h]]);
  return rho;
}

// The family route (s = 2H-2, H >= 3): see the header.
template <ArithField F>
std::vector<typename F::value_type> family_route(const F& fld, const std::vector<typename F::value_type>& g, const std::vector<typename F::value_type>& c,
                                                 const typename F::value_type& n0) {
  using T = typename F::value_type;
  const int H = static_cast<int>(c.size()), n = 2 * H - 2;
  // unknowns n_1..n_{H-1}, q_1..q_{H-1}; q_H = t moves to the right-hand side
  Mat<T> A(n, n), rhs(n, 2), x;
  for (int row = 0; row < n; ++row) {
    const int k = row + 1;
    for (int a = 1; a < H; ++a) A(row, a - 1) = power(fld, k, a);
    for (int b = 1; b < H; ++b) A(row, H - 1 + b - 1) = -(g[k] * power(fld, k, b));
    rhs(row, 0) = g[k] - n0;
    rhs(row, 1) = g[k] * power(fld, k, H);
  }
  // x = lambda (x_a, x_b): the family scaled by a common factor of the
  // field's choosing, which changes neither the roots of S_h nor t(rho)
  T lambda;
  require_truth(fld.solve_scaled(x, lambda, A, rhs), ErrorKind::degenerate,
                "the pair's one-parameter family is not parametrised by the leading coefficient of Q at this draw");
  const T zero = fld.from(Rational(0));
  Poly<F> Na{lambda * n0}, Nb{zero}, Qa{lambda}, Qb{zero};
  for (int a = 1; a < H; ++a) {
    Na.push_back(x(a - 1, 0));
    Nb.push_back(x(a - 1, 1));
  }
  for (int b = 1; b < H; ++b) {
    Qa.push_back(x(H - 1 + b - 1, 0));
    Qb.push_back(x(H - 1 + b - 1, 1));
  }
  Qa.push_back(zero);
  Qb.push_back(lambda);
  // A = Na Qb - Nb Qa and B = k W, W = Qa' Qb - Qb' Qa, where deg A <= 2H-1
  // and deg W <= 2H-2 (the leading terms of Qa' Qb and Qb' Qa are zero, as
  // Qa has degree H-1). A and B vanish at k = 0 (Qb(0) = Nb(0) = 0), so
  // S_h = (A + c_h B) / k has degree <= 2H-2: its coefficient of k^m is
  // A[m+1] + c_h W[m], m = 0..2H-2.
  const Poly<F> Apoly = poly_sub(fld, poly_mul(fld, Na, Qb), poly_mul(fld, Nb, Qa));
  const Poly<F> W = poly_sub(fld, poly_mul(fld, poly_derivative(fld, Qa), Qb), poly_mul(fld, poly_derivative(fld, Qb), Qa));
  std::vector<Poly<F>> S;
  for (int h = 0; h < H; ++h) {
    Poly<F> s;
    for (int m = 0; m <= 2 * H - 2; ++m) s.push_back(Apoly[m + 1] + c[h] * W[m]);
    S.push_back(std::move(s));
  }
  Poly<F> U;
  for (const T& q : Qa) U.push_back(-q);
  const CommonRoots<T> sel = fld.common_roots(S, U, Qb);
  if (sel.ok == Truth::unknown) throw_unable("choosing the pair's poles: " + sel.why);
  if (sel.ok == Truth::no) {
    using Fail = typename CommonRoots<T>::Fail;
    if (sel.fail == Fail::unrepresentable) throw_inconsistent("choosing the pair's poles: " + sel.why);
    throw_degenerate(std::string("choosing the pair's poles: ") +
                     (sel.fail == Fail::several    ? "several choices fit (" + sel.why + "): these values do not determine the poles at this draw"
                      : sel.fail == Fail::multiple ? sel.why + ", so its roots cannot be told apart (colliding poles at this draw)"
                                                   : sel.why + " (colliding poles at this draw)"));
  }
  return sel.roots;
}

}  // namespace

template <ArithField F>
PairFit<typename F::value_type> fit_known_residues(const F& fld, const std::vector<typename F::value_type>& f,
                                                   const std::vector<typename F::value_type>& c) {
  using T = typename F::value_type;
  const int H = static_cast<int>(c.size()), s = static_cast<int>(f.size()) - 1;
  T n0 = fld.from(Rational(0));
  for (const T& x : c) n0 = n0 + x;
  const T P = f[0] - n0;
  if (H == 0) return PairFit<T>{f[0], {}, {}};
  if (s < 2 * H - 2 || (s == 2 * H - 2 && H < 3))
    throw_internal("fit_known_residues: " + std::to_string(s) + " values do not determine " + std::to_string(H) + " poles by either route");
  // The roots are chosen from g(0..s), the residues and n0 = g(0): in exact
  // mode first on enclosures (a rigorous filter, the roots read as -tau^n),
  // else, and in the other fields, in the field itself.
  std::vector<T> in;
  for (const T& v : f) in.push_back(v - P);
  in.insert(in.end(), c.begin(), c.end());
  auto route = [H, s](const auto& G, const auto& x) {
    using U = typename std::decay_t<decltype(G)>::value_type;
    const std::vector<U> g(x.begin(), x.begin() + s + 1), cc(x.begin() + s + 1, x.end());
    return std::optional<std::vector<U>>(s >= 2 * H - 1 ? linear_route(G, g, cc, g[0]) : family_route(G, g, cc, g[0]));
  };
  std::optional<std::vector<T>> rho = fld.enclose_roots(in, route);
  if (!rho) rho = route(fld, in);
  std::vector<T> x{P};
  for (const T& z : *rho) x.push_back(fld.from(Rational(-1)) / z);
  for (const T& z : c) x.push_back(z);
  for (int h = 0; h < H; ++h) {
    require_truth(fld.is_positive(x[1 + h]), ErrorKind::inconsistent, "a pole chosen for the known residues is not positive");
    for (int q = h + 1; q < H; ++q)
      if (fld.equal(x[1 + h], x[1 + q]) == Truth::yes) throw_degenerate("two poles collide at this draw");
  }
  // the pair's own equations k = 1..H: floats refine on them, jets take their
  // derivatives, balls tighten the (already rigorous) choice by a Krawczyk test
  // whose box contains it
  std::vector<T> targets(f.begin() + 1, f.begin() + 1 + H);
  targets.insert(targets.end(), c.begin(), c.end());
  targets.push_back(P);
  const KnownResidueSystem<T> sys(targets, H);
  fld.refine(sys, x);
  std::vector<T> y = x;
  if (fld.certify(sys, y) == Truth::yes) x = std::move(y);
  PairFit<T> fit{x[0], std::vector<T>(x.begin() + 1, x.begin() + 1 + H), std::vector<T>(x.begin() + 1 + H, x.end())};
  // every value, so that an exact fit is checked exactly whatever route chose it
  for (int k = 1; k <= s; ++k)
    if (fld.equal(fit_value(fld, fit, k), f[k]) == Truth::no)
      throw_inconsistent("value k = " + std::to_string(k) + " disagrees with the fit with the known residues");
  return fit;
}

template <ArithField F>
PairFit<typename F::value_type> fit_known_limit(const F& fld, const std::vector<typename F::value_type>& f,
                                                const std::vector<typename F::value_type>& c) {
  using T = typename F::value_type;
  const int H = static_cast<int>(c.size());
  if (static_cast<int>(f.size()) < 2 * H) throw_internal("fit_known_limit: need 2H values");
  T n0 = fld.from(Rational(0));
  for (const T& x : c) n0 = n0 + x;
  const T P = f[0] - n0;
  std::vector<T> g;
  for (const T& v : f) g.push_back(v - P);
  std::vector<T> rho, e;
  linear_interpolant(fld, g, H, n0, rho, e);
  PairFit<T> fit{P, {}, e};
  for (const T& z : rho) fit.r.push_back(fld.from(Rational(-1)) / z);
  for (const T& r : fit.r) require_truth(fld.is_positive(r), ErrorKind::inconsistent, "a pole of the pair is not positive");
  for (int k = 2 * H; k < static_cast<int>(f.size()); ++k)
    if (fld.equal(fit_value(fld, fit, k), f[k]) == Truth::no)
      throw_inconsistent("value k = " + std::to_string(k) + " disagrees with the fit of the others with the known limit");
  return fit;
}

#define MHAQ_INSTANTIATE(F) \
  template PairFit<F::value_type> fit_known_residues<F>(const F&, const std::vector<F::value_type>&, const std::vector<F::value_type>&); \
  template PairFit<F::value_type> fit_known_limit<F>(const F&, const std::vector<F::value_type>&, const std::vector<F::value_type>&);
MHAQ_FOR_EACH_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
