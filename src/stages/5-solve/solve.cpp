// Stage 5: final solves and the learner's own evaluation of its heads.
#include "mhaq/stages/5-solve/solve.hpp"

#include <algorithm>

#include "mhaq/arith/all_fields.hpp"
#include "mhaq/arith/in_place.hpp"
#include "mhaq/arith/ratio_sum.hpp"
#include "mhaq/base/parallel.hpp"
#include "mhaq/stages/5-solve/low_rank.hpp"

namespace mhaq {

template <ArithField F>
std::vector<LearnedHead<typename F::value_type>> solve_heads(const F& fld, const Plan& plan,
                                                            const std::vector<PairFit<typename F::value_type>>& labelled, int H,
                                                            int threads, const QMat* delta_inverse, std::vector<int>* ranks) {
  using T = typename F::value_type;
  const int d = plan.d, n = plan.finals();
  // B^{-1}, or with biases A^{-1} for A = [B; 1 ... 1] ((d+1) x (d+1)):
  // L_h = Delta^T [W_h c_h] A, so [W_h c_h] = Delta^{-T} L_h A^{-1}
  QMat A = plan.B;
  if (plan.bias) {
    A = QMat(d + 1, d + 1);
    for (int i = 0; i <= d; ++i)
      for (int j = 0; j <= d; ++j) A(i, j) = i < d ? plan.B(i, j) : Rational(1);
  }
  QMat DeltaInvT, BInv;
  if (delta_inverse) DeltaInvT = delta_inverse->transpose();  // (Delta^{-1})^T = (Delta^T)^{-1}, exactly
  if ((!delta_inverse && !inverse(plan.Delta.transpose(), DeltaInvT)) || !inverse(A, BInv)) throw_internal("B or Delta singular after the draw check");
  const T zero = fld.from(Rational(0));
  // Delta^{-T} and B^{-1} in the field, converted once for every head
  Mat<T> DiT(d, d), Bi(n, n);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) DiT(i, j) = fld.from(DeltaInvT(i, j));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) Bi(i, j) = fld.from(BInv(i, j));
  std::vector<LearnedHead<T>> heads(static_cast<size_t>(H));
  std::vector<int> rank(static_cast<size_t>(H), d);
  parallel_for(0, static_cast<size_t>(H), threads, [&](size_t hs) {
    const int h = static_cast<int>(hs);
    Mat<T> L(d, n);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < n; ++j)
        if (plan.asked(i, j)) L(i, j) = fld.log(labelled[plan.base_index(i, j)].r[h]);
    if (plan.rank > 0) rank[hs] = complete_low_rank(fld, plan, L, h).rank;
    LearnedHead<T> head{Mat<T>(d, d), {}, {}};
    Mat<T> M(d, n);  // Delta^{-T} L_h
    std::vector<const T*> xs(static_cast<size_t>(std::max(d, n))), cs(xs.size());
    xs.resize(static_cast<size_t>(d));
    cs.resize(static_cast<size_t>(d));
    T t = zero;
    for (int i = 0; i < d; ++i) {
      T vi = zero;  // vi = vi - DiT(i, t) c_h(t), in place
      for (int k = 0; k < d; ++k) {
        mul_into(t, DiT(i, k), labelled[plan.base_index(k, 0)].c[h]);
        vi -= t;
      }
      head.v.push_back(vi);
      for (int j = 0; j < n; ++j) {
        for (int k = 0; k < d; ++k) {
          xs[static_cast<size_t>(k)] = &L(k, j);
          cs[static_cast<size_t>(k)] = &DiT(i, k);
        }
        M(i, j) = lin_comb(fld, xs, cs, true);
      }
    }
    xs.resize(static_cast<size_t>(n));
    cs.resize(static_cast<size_t>(n));
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < n; ++j) {
        for (int k = 0; k < n; ++k) {
          xs[static_cast<size_t>(k)] = &M(i, k);
          cs[static_cast<size_t>(k)] = &Bi(k, j);
        }
        T x = lin_comb(fld, xs, cs, false);
        if (j < d) head.W(i, j) = std::move(x);
        else head.c.push_back(std::move(x));
      }
    heads[hs] = std::move(head);
  });
  if (ranks) *ranks = plan.rank > 0 ? std::move(rank) : std::vector<int>{};
  return heads;
}

namespace {

// x^T y over the nonzero entries of the rational token x (the loop
// s = s + x_i * y_i, each product and sum rounded as written, in place)
template <ArithField F>
typename F::value_type dot_token(const F& fld, const QVec& x, const std::vector<typename F::value_type>& y) {
  using T = typename F::value_type;
  T s = fld.from(Rational(0)), xi = s, t = s;
  for (size_t i = 0; i < x.size(); ++i)
    if (!x[i].is_zero()) {
      xi = fld.from(x[i]);
      add_product(s, xi, y[i], t);
    }
  return s;
}
// the same with the token's entries already in the field (xf[i] = fld.from(x[i])):
// the same operations on the same numbers
template <ArithField F>
typename F::value_type dot_token(const F& fld, const QVec& x, const std::vector<typename F::value_type>& xf,
                                 const std::vector<typename F::value_type>& y) {
  using T = typename F::value_type;
  T s = fld.from(Rational(0)), t = s;
  for (size_t i = 0; i < x.size(); ++i)
    if (!x[i].is_zero()) add_product(s, xf[i], y[i], t);
  return s;
}

// a token's entries in the field, zeros included
template <ArithField F>
std::vector<typename F::value_type> token_in_field(const F& fld, const QVec& x) {
  std::vector<typename F::value_type> xf;
  xf.reserve(x.size());
  for (const Rational& e : x) xf.push_back(e.is_zero() ? fld.from(Rational(0)) : fld.from(e));
  return xf;
}

// W_h x_N + c_h and x_N^T (W_h x_N + c_h) for one head (xNf: x_N's entries in the field)
template <ArithField F>
void final_terms(const F& fld, const LearnedHead<typename F::value_type>& h, const QVec& xN, const std::vector<typename F::value_type>& xNf,
                 std::vector<typename F::value_type>& Wx, typename F::value_type& sN) {
  const int d = static_cast<int>(xN.size());
  Wx.assign(d, fld.from(Rational(0)));
  typename F::value_type t = Wx.empty() ? fld.from(Rational(0)) : Wx[0];
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j)
      if (!xN[j].is_zero()) add_product(Wx[i], h.W(i, j), xNf[j], t);
  for (size_t i = 0; i < h.c.size(); ++i) Wx[i] += h.c[i];  // W x_N + c
  sN = dot_token(fld, xN, xNf, Wx);
}

// the head's term num / den of the query, from its final-token terms
template <ArithField F>
typename F::value_type head_term(const F& fld, const LearnedHead<typename F::value_type>& h, const Query& q,
                                 const std::vector<typename F::value_type>& Wx, const typename F::value_type& sN) {
  using T = typename F::value_type;
  const T zero = fld.from(Rational(0));
  T num = zero, den = zero;
  for (const auto& run : q) {
    const T w = fld.exp(dot_token(fld, run.token, Wx) - sN) * fld.from(Rational(run.count));
    num = num + w * dot_token(fld, run.token, h.v);
    den = den + w;
  }
  return num / den;
}

}  // namespace

template <ArithField F>
typename F::value_type evaluate_heads(const F& fld, const std::vector<LearnedHead<typename F::value_type>>& heads, const Query& q,
                                      const typename F::value_type* beta) {
  using T = typename F::value_type;
  T total = fld.from(Rational(0));
  std::vector<T> Wx;
  T sN = total;
  const std::vector<T> xNf = token_in_field(fld, q.back().token);
  for (const auto& h : heads) {
    final_terms(fld, h, q.back().token, xNf, Wx, sN);
    total = total + head_term(fld, h, q, Wx, sN);
  }
  if (beta) total = total + *beta;
  return total;
}

template <ArithField F>
HeadEvaluator<F>::HeadEvaluator(const F& fld, const std::vector<LearnedHead<T>>& heads, const QueryLog& queries, int threads, const T* beta)
    : fld_(fld), heads_(heads), beta_(beta) {
  const size_t H = heads_.size();
  std::vector<const QVec*> tokens;
  auto intern = [&](const QVec& x) {
    const auto [it, fresh] = ids_.try_emplace(x, static_cast<int>(tokens.size()));
    if (fresh) tokens.push_back(&it->first);
    return it->second;
  };
  // The queries of one pair repeat their tokens with other counts: a token
  // equal to the previous query's token at the same place takes its id
  // without hashing it again.
  Query prev;
  size_t prev_at = 0;
  long max_count = 0;
  for (size_t i = 0; i < queries.size(); ++i) {
    Query q = queries[i];
    at_.push_back(flat_x_.size());
    if (q.empty()) continue;
    const bool same_shape = prev.size() == q.size();
    const int f = same_shape && prev.back().token == q.back().token ? flat_x_[prev_at + q.size() - 1] : intern(q.back().token);
    sN_.try_emplace(f);
    for (size_t r = 0; r < q.size(); ++r) {
      const int x = r + 1 == q.size() ? f : same_shape && prev[r].token == q[r].token ? flat_x_[prev_at + r] : intern(q[r].token);
      flat_x_.push_back(x);
      flat_sx_.push_back(&sx_.try_emplace({x, f}).first->second);
      max_count = std::max(max_count, q[r].count);
    }
    prev = std::move(q);
    prev_at = at_.back();
  }
  at_.push_back(flat_x_.size());
  for (long c = 0; c <= max_count; ++c) counts_.push_back(fld_.from(Rational(c)));
  // every token's entries in the field, converted once
  std::vector<std::vector<T>> xf(tokens.size());
  parallel_for(0, tokens.size(), threads, [&](size_t t) { xf[t] = token_in_field(fld_, *tokens[t]); });
  // per final token: W_h x_N (kept only while its pairs are formed) and s_N
  std::vector<int> finals;
  for (const auto& e : sN_) finals.push_back(e.first);
  std::vector<std::vector<std::vector<T>>> Wx(finals.size(), std::vector<std::vector<T>>(H));
  parallel_for(0, finals.size(), threads, [&](size_t k) {
    std::vector<T> sN(H, fld_.from(Rational(0)));
    for (size_t h = 0; h < H; ++h) final_terms(fld_, heads_[h], *tokens[finals[k]], xf[finals[k]], Wx[k][h], sN[h]);
    sN_.find(finals[k])->second = std::move(sN);
  });
  std::map<int, size_t> final_slot;
  for (size_t k = 0; k < finals.size(); ++k) final_slot[finals[k]] = k;
  vx_.assign(tokens.size(), {});
  parallel_for(0, tokens.size(), threads, [&](size_t t) {
    for (size_t h = 0; h < H; ++h) vx_[t].push_back(dot_token(fld_, *tokens[t], xf[t], heads_[h].v));
  });
  std::vector<std::pair<const std::pair<int, int>*, std::vector<T>*>> pairs;
  for (auto& [key, val] : sx_) pairs.emplace_back(&key, &val);
  parallel_for(0, pairs.size(), threads, [&](size_t p) {
    const auto [x, f] = *pairs[p].first;
    const std::vector<std::vector<T>>& w = Wx[final_slot.at(f)];
    const std::vector<T>& sN = sN_.find(f)->second;
    // the weight's exponential, the same for every count of this token
    for (size_t h = 0; h < H; ++h) pairs[p].second->push_back(fld_.exp(dot_token(fld_, *tokens[x], xf[x], w[h]) - sN[h]));
  });
}

template <ArithField F>
int HeadEvaluator<F>::id(const QVec& x) const {
  const auto it = ids_.find(x);
  return it == ids_.end() ? -1 : it->second;
}

template <ArithField F>
bool HeadEvaluator<F>::kept(const Query& q, std::vector<int>& xs, std::vector<const std::vector<T>*>& sx) const {
  if (q.empty()) return false;
  const int f = id(q.back().token);
  if (f < 0 || sN_.find(f) == sN_.end()) return false;
  for (const Run& run : q) {
    const int x = id(run.token);
    const auto it = x < 0 ? sx_.end() : sx_.find({x, f});
    if (it == sx_.end()) return false;
    xs.push_back(x);
    sx.push_back(&it->second);
  }
  return true;
}

// the same operations as head_term, from the kept numbers (in place)
template <ArithField F>
void HeadEvaluator<F>::head_parts(const Query& q, size_t h, const int* xs, const std::vector<T>* const* sx, T& num, T& den) const {
  num = den = fld_.from(Rational(0));
  T w = num, t = num;
  for (size_t r = 0; r < q.size(); ++r) {
    const long c = q[r].count;
    if (c >= 0 && c < static_cast<long>(counts_.size())) mul_into(w, (*sx[r])[h], counts_[static_cast<size_t>(c)]);
    else w = (*sx[r])[h] * fld_.from(Rational(c));
    add_product(num, w, vx_[static_cast<size_t>(xs[r])][h], t);
    den += w;
  }
}

template <ArithField F>
typename F::value_type HeadEvaluator<F>::operator()(const Query& q) const {
  std::vector<int> xs;
  std::vector<const std::vector<T>*> sx;
  if (!kept(q, xs, sx)) return evaluate_heads(fld_, heads_, q, beta_);
  // the same operations as evaluate_heads
  T total = fld_.from(Rational(0)), num, den;
  for (size_t h = 0; h < heads_.size(); ++h) {
    head_parts(q, h, xs.data(), sx.data(), num, den);
    total = total + num / den;
  }
  if (beta_) total = total + *beta_;
  return total;
}

template <ArithField F>
Truth HeadEvaluator<F>::matches(const Query& q, const T& answer) const {
  std::vector<int> xs;
  std::vector<const std::vector<T>*> sx;
  if (!kept(q, xs, sx)) return fld_.equal(evaluate_heads(fld_, heads_, q, beta_), answer);
  return decide(q, xs.data(), sx.data(), answer);
}

template <ArithField F>
Truth HeadEvaluator<F>::matches_at(size_t i, const Query& q, const T& answer) const {
  if (i + 1 >= at_.size() || q.empty() || at_[i + 1] - at_[i] != q.size()) return matches(q, answer);
  return decide(q, flat_x_.data() + at_[i], flat_sx_.data() + at_[i], answer);
}

template <ArithField F>
Truth HeadEvaluator<F>::decide(const Query& q, const int* xs, const std::vector<T>* const* sx, const T& answer) const {
  std::vector<T> num(heads_.size()), den(heads_.size());
  for (size_t h = 0; h < heads_.size(); ++h) head_parts(q, h, xs, sx, num[h], den[h]);
  if (beta_) {  // beta / 1, the last term
    num.push_back(*beta_);
    den.push_back(fld_.from(Rational(1)));
  }
  return equal_ratio_sum(fld_, num, den, answer);
}

#define MHAQ_INSTANTIATE(F)                                                                                                    \
  template std::vector<LearnedHead<F::value_type>> solve_heads<F>(const F&, const Plan&, const std::vector<PairFit<F::value_type>>&, \
                                                                   int, int, const QMat*, std::vector<int>*);                               \
  template F::value_type evaluate_heads<F>(const F&, const std::vector<LearnedHead<F::value_type>>&, const Query&, const F::value_type*); \
  template class HeadEvaluator<F>;
MHAQ_FOR_EACH_FIELD(MHAQ_INSTANTIATE)
#undef MHAQ_INSTANTIATE

}  // namespace mhaq
