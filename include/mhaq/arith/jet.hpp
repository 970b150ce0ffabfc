// Jets: numbers carrying a value and its gradient with respect to the
// oracle's answers (forward-mode derivatives, sparse). Running the learner's
// stages on Field<Jet<B>> gives the Jacobian J = d(parameters)/d(answers) from
// the same code that learns (claim 4, proofs/11): the only derivative rules
// written by hand are those of the field primitives below.
//
//  * arithmetic, exp and log: the usual rules;
//  * solve: X = A^{-1} B, dX = A^{-1} (dB - dA X);
//  * real_roots, common_roots: p(rho) = 0, d rho = -(sum_m dc_m rho^m) / p'(rho);
//  * refine / certify of a system model(x) = targets: certify lets the base
//    field certify the values (refine keeps them), and the implicit function theorem gives
//    dx = J(x)^{-1} d targets (J^+ in the least-squares sense when the base
//    field fits more equations than unknowns).
//
// Rigor: over Field<Ball> every value and every derivative is an enclosure
// (the rules are evaluated in balls at the enclosed point). Over the float
// fields, approx_. Decisions are the base field's, on the values.
//
// The derivative parts have type D, by default the values' own type. Jet<Mpfr,
// ErrDouble> keeps the values in MPFR (the decisions are the same) and the
// derivatives in double with a running error bound (proofs/33): the float
// judge's cheap estimate.
#pragma once
#include <algorithm>
#include <limits>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mhaq/arith/err_double.hpp"
#include "mhaq/arith/field.hpp"
#include "mhaq/arith/in_place.hpp"

namespace mhaq {

// A value as a derivative coefficient: itself when D is its own type, else
// rounded to double with its rounding bound.
template <class D, class B>
decltype(auto) deriv_cast(const B& x) {
  if constexpr (std::is_same_v<D, B>)
    return (x);
  else
    return D::rounded(x.to_double());
}

template <class B, class D = B>
class Jet {
 public:
  using Grad = std::vector<std::pair<int, D>>;  // sorted by index, no repeats
  using deriv_type = D;
  Jet() : v_(zero()) {}
  explicit Jet(B v) : v_(std::move(v)) {}
  Jet(B v, Grad d) : v_(std::move(v)), d_(std::move(d)) {}
  static Jet variable(B v, int index) { return Jet(std::move(v), Grad{{index, D(1L)}}); }

  const B& value() const { return v_; }
  const Grad& grad() const { return d_; }
  D derivative(int index) const;

  friend Jet operator+(const Jet& a, const Jet& b) { return add(a, b, false); }
  friend Jet operator-(const Jet& a, const Jet& b) { return add(a, b, true); }
  friend Jet operator*(const Jet& a, const Jet& b) { return mul(a, b); }
  friend Jet operator/(const Jet& a, const Jet& b) { return div(a, b); }
  friend Jet operator-(const Jet& a) { return neg(a); }
  Jet& operator+=(const Jet& o) { return *this = *this + o; }
  Jet& operator-=(const Jet& o) { return *this = *this - o; }
  Jet& operator*=(const Jet& o) { return *this = *this * o; }
  Jet& operator/=(const Jet& o) { return *this = *this / o; }

  // x.d * s (all entries scaled)
  static Grad scaled(const Grad& x, const D& s);

 private:
  static B zero() { return B(0L); }
  static B one() { return B(1L); }
  static Jet add(const Jet& a, const Jet& b, bool negate);  // a + b, or a - b
  static Jet mul(const Jet& a, const Jet& b);
  static Jet div(const Jet& a, const Jet& b);
  static Jet neg(const Jet& a);
  // cx * x + (neg ? -1 : 1) * cy * y, with null meaning a factor of 1.
  static Grad combine(const Grad& x, const D* cx, const Grad& y, const D* cy, bool neg);
  B v_;
  Grad d_;
};

// The pair fits of a run being differentiated, by their samples: a replay of
// that run at its own precision meets the same samples again and takes the
// run's fit instead of computing it a second time. The fit (the approximate
// route of interpolate_pair: the linear route, then refine) is a function of
// the sample values, the head count and the working precision alone, so the
// replay's values are the run's, bit for bit (proofs/35). Lookups at another
// precision, or of samples that differ in any bit, find nothing.
template <class B>
class FitMemo {
 public:
  explicit FitMemo(long bits) : bits_(bits) {}
  long bits() const { return bits_; }
  void add(std::vector<B> f, int H, std::vector<B> x) {
    const size_t k = key(f, H);
    entries_.emplace(k, Entry{std::move(f), H, std::move(x)});
  }
  // the run's fit of these samples with H heads, or null
  const std::vector<B>* find(const std::vector<B>& f, int H) const {
    if (working_precision() != bits_) return nullptr;
    const auto [lo, hi] = entries_.equal_range(key(f, H));
    for (auto it = lo; it != hi; ++it) {
      const Entry& e = it->second;
      if (e.H != H || e.f.size() != f.size()) continue;
      bool same = true;
      for (size_t i = 0; i < f.size() && same; ++i) same = same_value(e.f[i], f[i]);
      if (same) return &e.x;
    }
    return nullptr;
  }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::vector<B> f;
    int H;
    std::vector<B> x;
  };
  static double approx(const Mpfr& x) { return x.to_double(); }
  static double approx(double x) { return x; }
  static double approx(const Ball& x) { return x.mid_double(); }
  static bool same_value(const Mpfr& a, const Mpfr& b) { return mpfr_equal_p(a.raw(), b.raw()) != 0; }
  static bool same_value(double a, double b) { return a == b; }
  static bool same_value(const Ball& a, const Ball& b) { return arb_equal(a.raw(), b.raw()) != 0; }
  static size_t key(const std::vector<B>& f, int H) {
    size_t h = std::hash<int>{}(H);
    for (const B& x : f) h = h * 1000003u ^ std::hash<double>{}(approx(x));
    return h;
  }
  long bits_;
  std::unordered_multimap<size_t, Entry> entries_;
};

template <class B, class D>
struct Field<Jet<B, D>> {
  using value_type = Jet<B, D>;
  using J = Jet<B, D>;
  static constexpr Arith tag = Field<B>::tag;
  static constexpr bool is_exact = false;  // jets carry derivatives; their values are the base field's
  static constexpr bool is_rigorous = Field<B>::is_rigorous;
  static constexpr bool least_squares = Field<B>::least_squares;
  Field<B> base;
  // the run's pair fits, when this field replays that run (FitMemo)
  const FitMemo<B>* memo = nullptr;

  Field() = default;
  explicit Field(Field<B> b, const FitMemo<B>* m = nullptr) : base(std::move(b)), memo(m) {}

  J from(const Rational& q) const { return J(base.from(q)); }
  J exp(const Rational& s) const { return J(base.exp(s)); }
  J exp(const J& x) const;
  J log(const J& x) const;
  J abs(const J& x) const { return base.is_positive(x.value()) == Truth::no ? -x : x; }
  Truth is_zero(const J& x) const { return base.is_zero(x.value()); }
  Truth is_positive(const J& x) const { return base.is_positive(x.value()); }
  Truth equal(const J& a, const J& b) const { return base.equal(a.value(), b.value()); }
  Truth equal(const J& a, const J& b, const J& s) const { return base.equal(a.value(), b.value(), s.value()); }
  // relu: the derivative is 1 where the value is certainly positive, 0 where
  // it certainly is not; undecided (a ball straddling 0) is unable.
  J relu(const J& x) const {
    const Truth t = base.is_positive(x.value());
    if (t == Truth::unknown) throw_unable("jets: the derivative of ReLU at an undecided sign");
    return t == Truth::yes ? x : J(base.from(Rational(0)));
  }
  Rational nearest(const J& x, long den) const { return base.nearest(x.value(), den); }
  Ball enclose(const J& x) const { return base.enclose(x.value()); }
  std::string str(const J& x) const { return base.str(x.value()); }

  Truth solve(Mat<J>& X, const Mat<J>& A, const Mat<J>& Bm) const;

  Truth solve_scaled(Mat<J>& X, J& lambda, const Mat<J>& A, const Mat<J>& Bm) const {
    lambda = from(Rational(1));
    return solve(X, A, Bm);
  }

  Roots<J> real_roots(const std::vector<J>& c) const;
  CommonRoots<J> common_roots(const std::vector<std::vector<J>>& S, const std::vector<J>& U, const std::vector<J>& V) const;

  // The approximation is the base field's own (values only): the derivatives
  // come from certify(), by the implicit function theorem, so carrying them
  // through the approximate route would be wasted work.
  // A route that names its head count (interpolate_pair's) is looked up in
  // the memo first.
  template <class Fn>
  std::optional<std::vector<J>> filtered(const std::vector<J>& f, Fn&& fn) const {
    const std::vector<B> fv = values(f);
    if constexpr (requires { fn.H; })
      if (memo)
        if (const std::vector<B>* x = memo->find(fv, fn.H)) {
          std::vector<J> out;
          for (const auto& v : *x) out.emplace_back(v);
          return out;
        }
    const std::optional<std::vector<B>> xv = base.filtered(fv, fn);
    if (!xv) return std::nullopt;
    std::vector<J> out;
    for (const auto& v : *xv) out.emplace_back(v);
    return out;
  }
  // Values only, from the base field's route: the derivatives come from the
  // caller's refine() (the implicit function theorem on its own equations).
  template <class Fn>
  std::optional<std::vector<J>> enclose_roots(const std::vector<J>& x, Fn&& fn) const {
    const std::optional<std::vector<B>> r = base.enclose_roots(values(x), fn);
    if (!r) return std::nullopt;
    std::vector<J> out;
    for (const auto& v : *r) out.emplace_back(v);
    return out;
  }
  // Derivatives only: the implicit function theorem at the current values
  // (the run being differentiated already refined them; refining again would
  // change the values by rounding only, at the cost of a Gauss-Newton solve).
  template <class Sys>
  void refine(const Sys& sys, std::vector<J>& x) const {
    x = implicit(sys, values(x));
  }
  template <class Sys>
  Truth certify(const Sys& sys, std::vector<J>& x) const {
    std::vector<B> xv = values(x);
    const Truth t = base.certify(value_system(sys), xv);
    if (t == Truth::yes) x = implicit(sys, xv);
    return t;
  }

 private:
  using Grad = typename J::Grad;
  // Y = A^{-1} R for the derivative parts: the base field's solve, or the
  // double solve with its error bound (false: singular or not trusted).
  bool deriv_solve(Mat<D>& Y, const Mat<B>& A, const Mat<D>& R) const;
  // dx_i = sum_t Jinv(i, t) dT_t over the union of the targets' gradient
  // indices, every index in every output (an index no target carries
  // gets 0). Each sum runs over t in order and skips only the targets
  // without that index (whose term is an exact zero), so the values are
  // those of the dense product J^{-1} R; it costs n sum_t |grad T_t|
  // operations instead of n^2 times the number of indices, which matters
  // when the targets carry long gradients (a pair's f(0), chained from
  // the base pairs).
  template <class Sys>
  std::vector<J> implicit_closed(const Sys& sys, const std::vector<B>& xv, const Mat<B>& Jinv) const {
    const int n = sys.unknowns();
    std::vector<int> idx;
    for (int t = 0; t < n; ++t)
      for (const auto& e : sys.target(t).grad()) idx.push_back(e.first);
    std::sort(idx.begin(), idx.end());
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    const size_t m = idx.size();
    // each target's gradient entries as positions in idx
    std::vector<std::vector<size_t>> pos(n);
    for (int t = 0; t < n; ++t) {
      const auto& g = sys.target(t).grad();
      pos[t].reserve(g.size());
      for (const auto& e : g) pos[t].push_back(static_cast<size_t>(std::lower_bound(idx.begin(), idx.end(), e.first) - idx.begin()));
    }
    std::vector<J> out;
    out.reserve(n);
    std::vector<D> acc(m);
    for (int i = 0; i < n; ++i) {
      std::fill(acc.begin(), acc.end(), D(0L));
      for (int t = 0; t < n; ++t) {
        const auto& g = sys.target(t).grad();
        if (g.empty()) continue;
        const auto& z = deriv_cast<D>(Jinv(i, t));
        for (size_t k = 0; k < g.size(); ++k) acc[pos[t][k]] = acc[pos[t][k]] + z * g[k].second;
      }
      typename J::Grad gr;
      gr.reserve(m);
      for (size_t q = 0; q < m; ++q) gr.emplace_back(idx[q], std::move(acc[q]));
      out.emplace_back(xv[i], std::move(gr));
    }
    return out;
  }
  static std::vector<B> values(const std::vector<J>& x) {
    std::vector<B> v;
    for (const auto& e : x) v.push_back(e.value());
    return v;
  }
  template <class Sys>
  static auto value_system(const Sys& sys) {
    return sys.map_targets([](const J& t) { return t.value(); });
  }
  // x(targets) by the implicit function theorem at the refined values xv.
  template <class Sys>
  std::vector<J> implicit(const Sys& sys, const std::vector<B>& xv) const {
    const auto vs = value_system(sys);
    const int n = sys.unknowns();
    const int K = least_squares ? sys.equations() : n;
    // A system that knows its inverse Jacobian in closed form (the pair fits,
    // proofs/30) gives dx = J^{-1} dT by a product, formed sparsely below.
    {
      Mat<B> Jinv;
      bool closed = false;
      if constexpr (requires { vs.inverse_jacobian(base, xv, Jinv); }) closed = K == n && vs.inverse_jacobian(base, xv, Jinv);
      if (closed) return implicit_closed(sys, xv, Jinv);
    }
    Mat<B> Jk(sys.equations(), n);
    vs.jacobian(base, xv, Jk);
    std::vector<int> idx;
    for (int k = 0; k < K; ++k)
      for (const auto& e : sys.target(k).grad()) idx.push_back(e.first);
    std::sort(idx.begin(), idx.end());
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    const int m = static_cast<int>(idx.size());
    Mat<B> A(n, n);
    Mat<D> R(n, m, D(0L)), Y;
    // square: J Y = dT; least squares: (J^T J) Y = J^T dT
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (K == n) {
          A(i, j) = Jk(i, j);
        } else {
          B s(0L);
          for (int k = 0; k < K; ++k) s = s + Jk(k, i) * Jk(k, j);
          A(i, j) = s;
        }
      }
      for (int q = 0; q < m; ++q) {
        if (K == n) {
          R(i, q) = sys.target(i).derivative(idx[q]);
        } else {
          D s(0L);
          for (int k = 0; k < K; ++k) s = s + deriv_cast<D>(Jk(k, i)) * sys.target(k).derivative(idx[q]);
          R(i, q) = s;
        }
      }
    }
    std::vector<J> out;
    if (m > 0 && !deriv_solve(Y, A, R)) throw_unable("jets: the system's Jacobian is not invertible at this precision");
    for (int i = 0; i < n; ++i) {
      typename J::Grad g;
      for (int q = 0; q < m; ++q) g.emplace_back(idx[q], Y(i, q));
      out.emplace_back(xv[i], std::move(g));
    }
    return out;
  }
};

// 0 + x_0 c_0 + x_1 c_1 + ... (c_left: c_t x_t), the loop s = s + x_t * c_t
// of the field (the final solves' products with Delta^{-T} and B^{-1}).
template <class F>
typename F::value_type lin_comb(const F& fld, const std::vector<const typename F::value_type*>& x,
                                const std::vector<const typename F::value_type*>& c, bool c_left) {
  typename F::value_type s = fld.from(Rational(0)), p = s;
  for (size_t t = 0; t < x.size(); ++t) {
    if (c_left) mul_into(p, *c[t], *x[t]);
    else mul_into(p, *x[t], *c[t]);
    s += p;  // the loop's operations, in place
  }
  return s;
}
// Over jets with constant c_t, the gradient is summed in one dense array over
// the answers instead of a merge per term: each index's sum takes the same
// terms in the same order (an index a term lacks is skipped, as the merge
// skips it), so every value and derivative is the loop's.
template <class B, class D>
Jet<B, D> lin_comb(const Field<Jet<B, D>>& fld, const std::vector<const Jet<B, D>*>& x, const std::vector<const Jet<B, D>*>& c, bool c_left) {
  using J = Jet<B, D>;
  J s = fld.from(Rational(0));
  bool constants = true;
  for (const J* ct : c) constants = constants && ct->grad().empty();
  if (!constants) {
    for (size_t t = 0; t < x.size(); ++t) s = s + (c_left ? *c[t] * *x[t] : *x[t] * *c[t]);
    return s;
  }
  B v = s.value();
  int hi = -1;
  for (const J* xt : x)
    if (!xt->grad().empty()) hi = std::max(hi, xt->grad().back().first);
  // the dense arrays are kept per thread between calls (the final solves make
  // H d^2 of them over all the answers); `has` is cleared again on the way out
  thread_local std::vector<D> acc;
  thread_local std::vector<char> has;
  if (acc.size() < static_cast<size_t>(hi + 1)) {
    acc.resize(static_cast<size_t>(hi + 1));
    has.resize(static_cast<size_t>(hi + 1), 0);
  }
  size_t used = 0;
  try {
    for (size_t t = 0; t < x.size(); ++t) {
      v = v + (c_left ? c[t]->value() * x[t]->value() : x[t]->value() * c[t]->value());
      const auto& cd = deriv_cast<D>(c[t]->value());
      for (const auto& [q, g] : x[t]->grad()) {
        if (has[q]) {
          acc[q] = acc[q] + g * cd;
        } else {
          acc[q] = g * cd;
          has[q] = 1;
          ++used;
        }
      }
    }
  } catch (...) {
    // the next call on this thread must start from clear flags
    std::fill(has.begin(), has.end(), 0);
    throw;
  }
  typename J::Grad gr;
  gr.reserve(used);
  for (int q = 0; q <= hi; ++q)
    if (has[q]) {
      gr.emplace_back(q, std::move(acc[q]));
      has[q] = 0;
    }
  return J(std::move(v), std::move(gr));
}

// Decisions read values only. A stage that forms numbers only to decide on
// them (the labelling's products and scales) can form them in the decision
// view instead: the field itself for plain numbers; for jets, the values with
// exactly the jets' own value operations (abs as the jets take it), so every
// decision is the one the jets would take, without carrying gradients.
template <class F>
const F& decision_view(const F& f) {
  return f;
}
template <class T>
const T& decision_value(const T& x) {
  return x;
}
template <class B>
struct JetDecisions {
  using value_type = B;
  const Field<B>& base;
  B from(const Rational& q) const { return base.from(q); }
  B abs(const B& x) const { return base.is_positive(x) == Truth::no ? -x : x; }
  Truth equal(const B& a, const B& b) const { return base.equal(a, b); }
  Truth equal(const B& a, const B& b, const B& s) const { return base.equal(a, b, s); }
};
template <class B, class D>
JetDecisions<B> decision_view(const Field<Jet<B, D>>& f) {
  return JetDecisions<B>{f.base};
}
template <class B, class D>
const B& decision_value(const Jet<B, D>& x) {
  return x.value();
}

static_assert(ArithField<Field<Jet<Ball>>>);
static_assert(ArithField<Field<Jet<Mpfr>>>);
static_assert(ArithField<Field<Jet<double>>>);
// the float judge's cheap jets (values in MPFR, derivatives in double)
using JetMpfrD = Jet<Mpfr, ErrDouble>;
static_assert(ArithField<Field<JetMpfrD>>);

// The derivative type of the float judge's cheap jets over B (proofs/33):
// ErrDouble over MPFR; B itself otherwise (no cheap jets: the jets are the
// ordinary ones).
template <class B>
struct CheapDeriv {
  using type = B;
};
template <>
struct CheapDeriv<Mpfr> {
  using type = ErrDouble;
};
// Whether derivative parts of type D carry their own error bound.
template <class D>
inline constexpr bool has_error_bound = false;
template <>
inline constexpr bool has_error_bound<ErrDouble> = true;

// A derivative part as a ball (a bounded double: its midpoint; the bound is
// the caller's to account for), its midpoint as a double, its error bound (0
// for parts of the values' own type) and whether that bound is finite.
template <class B>
Ball deriv_enclose(const Field<B>& f, const B& x) {
  return f.enclose(x);
}
template <class B>
Ball deriv_enclose(const Field<B>&, const ErrDouble& x) {
  Ball r;
  arb_set_d(r.raw(), x.mid);
  return r;
}
template <class B, class D>
double deriv_mid(const Field<B>& f, const D& x) {
  return arf_get_d(arb_midref(deriv_enclose(f, x).raw()), ARF_RND_NEAR);
}
template <class B>
double deriv_mid(const Field<B>&, const ErrDouble& x) {
  return x.mid;
}
template <class D>
double deriv_rad(const D&) {
  return 0;
}
inline double deriv_rad(const ErrDouble& x) { return x.rad; }
template <class D>
bool deriv_finite(const D&) {
  return true;
}
inline bool deriv_finite(const ErrDouble& x) { return x.finite(); }

}  // namespace mhaq
