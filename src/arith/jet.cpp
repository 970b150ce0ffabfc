// The out-of-line parts of the jets (mhaq/arith/jet.hpp): the arithmetic and
// the field operations that are not templates of their own, compiled once
// here for the jets the library uses instead of in every file that runs the
// stages on jets.
#include <algorithm>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "mhaq/arith/jet.hpp"

namespace mhaq {

template <class B, class D>
D Jet<B, D>::derivative(int index) const {
  auto it = std::lower_bound(d_.begin(), d_.end(), index, [](const auto& e, int i) { return e.first < i; });
  return it != d_.end() && it->first == index ? it->second : D(0L);
}

template <class B, class D>
Jet<B, D> Jet<B, D>::add(const Jet& a, const Jet& b, bool negate) {
  return Jet(negate ? a.v_ - b.v_ : a.v_ + b.v_, combine(a.d_, nullptr, b.d_, nullptr, negate));
}

template <class B, class D>
Jet<B, D> Jet<B, D>::mul(const Jet& a, const Jet& b) {
  if constexpr (std::is_same_v<B, D>) {
    return Jet(a.v_ * b.v_, combine(a.d_, &b.v_, b.d_, &a.v_, false));
  } else {
    const D cb = deriv_cast<D>(b.v_), ca = deriv_cast<D>(a.v_);
    return Jet(a.v_ * b.v_, combine(a.d_, &cb, b.d_, &ca, false));
  }
}

template <class B, class D>
Jet<B, D> Jet<B, D>::div(const Jet& a, const Jet& b) {
  B v = a.v_ / b.v_;
  const B inv = one() / b.v_;
  const B s = v * inv;  // d(a/b) = da / b - (a/b) db / b
  if constexpr (std::is_same_v<B, D>) {
    return Jet(std::move(v), combine(a.d_, &inv, b.d_, &s, true));
  } else {
    const D ci = deriv_cast<D>(inv), cs = deriv_cast<D>(s);
    return Jet(std::move(v), combine(a.d_, &ci, b.d_, &cs, true));
  }
}

template <class B, class D>
Jet<B, D> Jet<B, D>::neg(const Jet& a) {
  Grad d = a.d_;
  for (auto& e : d) e.second = -e.second;
  return Jet(-a.v_, std::move(d));
}

template <class B, class D>
auto Jet<B, D>::scaled(const Grad& x, const D& s) -> Grad {
  Grad out;
  out.reserve(x.size());
  for (const auto& e : x) out.emplace_back(e.first, e.second * s);
  return out;
}

template <class B, class D>
auto Jet<B, D>::combine(const Grad& x, const D* cx, const Grad& y, const D* cy, bool neg) -> Grad {
  Grad out;
  out.reserve(x.size() + y.size());
  size_t i = 0, j = 0;
  auto fx = [&](const D& v) { return cx ? v * *cx : v; };
  auto fy = [&](const D& v) { D t = cy ? v * *cy : v; return neg ? -t : t; };
  while (i < x.size() || j < y.size()) {
    if (j == y.size() || (i < x.size() && x[i].first < y[j].first)) {
      out.emplace_back(x[i].first, fx(x[i].second));
      ++i;
    } else if (i == x.size() || y[j].first < x[i].first) {
      out.emplace_back(y[j].first, fy(y[j].second));
      ++j;
    } else {
      out.emplace_back(x[i].first, fx(x[i].second) + fy(y[j].second));
      ++i;
      ++j;
    }
  }
  return out;
}

template <class B, class D>
auto Field<Jet<B, D>>::exp(const J& x) const -> J {
  B v = base.exp(x.value());
  Grad g = J::scaled(x.grad(), deriv_cast<D>(v));
  return J(std::move(v), std::move(g));
}

template <class B, class D>
auto Field<Jet<B, D>>::log(const J& x) const -> J {
  return J(base.log(x.value()), J::scaled(x.grad(), D(deriv_cast<D>(B(1L) / x.value()))));
}

template <class B, class D>
Truth Field<Jet<B, D>>::solve(Mat<J>& X, const Mat<J>& A, const Mat<J>& Bm) const {
  const int n = A.rows(), k = Bm.cols();
  Mat<B> a(n, n), b(n, k), x;
  std::vector<int> idx;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      a(i, j) = A(i, j).value();
      for (const auto& e : A(i, j).grad()) idx.push_back(e.first);
    }
    for (int j = 0; j < k; ++j) {
      b(i, j) = Bm(i, j).value();
      for (const auto& e : Bm(i, j).grad()) idx.push_back(e.first);
    }
  }
  const Truth t = base.solve(x, a, b);
  if (t != Truth::yes) return t;
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  const int m = static_cast<int>(idx.size());
  // one solve for every direction q: A Y_q = dB_q - dA_q X
  Mat<D> R(n, k * m, D(0L)), Y;
  for (int q = 0; q < m; ++q)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < k; ++j) {
        D s = Bm(i, j).derivative(idx[q]);
        for (int t2 = 0; t2 < n; ++t2) s = s - A(i, t2).derivative(idx[q]) * deriv_cast<D>(x(t2, j));
        R(i, q * k + j) = s;
      }
  if (m > 0 && !deriv_solve(Y, a, R)) return Truth::unknown;
  X = Mat<J>(n, k);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j) {
      typename J::Grad g;
      for (int q = 0; q < m; ++q) g.emplace_back(idx[q], Y(i, q * k + j));
      X(i, j) = J(x(i, j), std::move(g));
    }
  return Truth::yes;
}

template <class B, class D>
auto Field<Jet<B, D>>::real_roots(const std::vector<J>& c) const -> Roots<J> {
  std::vector<B> cv;
  for (const auto& x : c) cv.push_back(x.value());
  Roots<B> r = base.real_roots(cv);
  Roots<J> out;
  out.ok = r.ok;
  out.why = r.why;
  if (r.ok != Truth::yes) return out;
  const std::vector<B> dc = poly_derivative(base, cv);
  for (const B& rho : r.roots) {
    const J p = poly_eval(c, J(rho));  // value ~ 0, gradient sum_m dc_m rho^m
    const B inv = -(B(1L) / poly_eval(dc, rho));
    out.roots.push_back(J(rho, J::scaled(p.grad(), D(deriv_cast<D>(inv)))));
  }
  return out;
}

template <class B, class D>
auto Field<Jet<B, D>>::common_roots(const std::vector<std::vector<J>>& S, const std::vector<J>& U, const std::vector<J>& V) const -> CommonRoots<J> {
  auto vals = [](const std::vector<J>& c) {
    std::vector<B> v;
    for (const auto& x : c) v.push_back(x.value());
    return v;
  };
  std::vector<std::vector<B>> Sv;
  for (const auto& p : S) Sv.push_back(vals(p));
  CommonRoots<B> r = base.common_roots(Sv, vals(U), vals(V));
  CommonRoots<J> out;
  out.ok = r.ok;
  out.why = r.why;
  out.fail = static_cast<typename CommonRoots<J>::Fail>(r.fail);
  if (r.ok != Truth::yes) return out;
  // each root is a simple root of its own polynomial: the common value
  // selected it, the polynomial alone fixes it nearby
  for (size_t h = 0; h < S.size(); ++h) {
    const B& rho = r.roots[h];
    const J p = poly_eval(S[h], J(rho));
    const B inv = -(B(1L) / poly_eval(poly_derivative(base, Sv[h]), rho));
    out.roots.push_back(J(rho, J::scaled(p.grad(), D(deriv_cast<D>(inv)))));
  }
  return out;
}

template <class B, class D>
bool Field<Jet<B, D>>::deriv_solve(Mat<D>& Y, const Mat<B>& A, const Mat<D>& R) const {
  if constexpr (std::is_same_v<B, D>) {
    return base.solve(Y, A, R) == Truth::yes;
  } else {
    Mat<D> a(A.rows(), A.cols());
    for (int i = 0; i < A.rows(); ++i)
      for (int j = 0; j < A.cols(); ++j) a(i, j) = deriv_cast<D>(A(i, j));
    // a solve the double bound cannot trust still leaves the values (and
    // so the learner's decisions) alone: its derivatives carry no bound,
    // and the estimate built on them is refused (proofs/33)
    if (!solve_err(Y, a, R)) Y = Mat<D>(R.rows(), R.cols(), D(0.0, std::numeric_limits<double>::infinity()));
    return true;
  }
}

// The jets the library runs its stages on (arith/all_fields.hpp).
template class Jet<Ball>;
template class Jet<Mpfr>;
template class Jet<double>;
template class Jet<Mpfr, ErrDouble>;
template struct Field<Jet<Ball>>;
template struct Field<Jet<Mpfr>>;
template struct Field<Jet<double>>;
template struct Field<Jet<Mpfr, ErrDouble>>;

}  // namespace mhaq
