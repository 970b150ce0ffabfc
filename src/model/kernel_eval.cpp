#include "mhaq/model/kernel_eval.hpp"

#include <optional>

#include "mhaq/base/error.hpp"
#include "mhaq/model/certified_eval.hpp"

namespace mhaq {

namespace {

// n Arb balls, owned.
class Balls {
 public:
  explicit Balls(slong n = 0) : v_(n > 0 ? _arb_vec_init(n) : nullptr), n_(n) {}
  ~Balls() {
    if (v_) _arb_vec_clear(v_, n_);
  }
  Balls(const Balls&) = delete;
  Balls& operator=(const Balls&) = delete;
  Balls(Balls&& o) noexcept : v_(o.v_), n_(o.n_) { o.v_ = nullptr, o.n_ = 0; }
  Balls& operator=(Balls&& o) noexcept {
    std::swap(v_, o.v_);
    std::swap(n_, o.n_);
    return *this;
  }
  arb_ptr at(slong i) { return v_ + i; }
  arb_srcptr at(slong i) const { return v_ + i; }
  slong size() const { return n_; }

 private:
  arb_ptr v_ = nullptr;
  slong n_ = 0;
};

struct Ball {
  arb_t v;
  Ball() { arb_init(v); }
  ~Ball() { arb_clear(v); }
  Ball(const Ball&) = delete;
  Ball& operator=(const Ball&) = delete;
};

Balls matrix_balls(const QMat& a, slong prec) {
  Balls out(static_cast<slong>(a.rows()) * a.cols());
  for (int r = 0; r < a.rows(); ++r)
    for (int c = 0; c < a.cols(); ++c) arb_set_fmpq(out.at(static_cast<slong>(r) * a.cols() + c), a(r, c).raw(), prec);
  return out;
}
Balls vector_balls(const QVec& v, slong prec) {
  Balls out(static_cast<slong>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) arb_set_fmpq(out.at(static_cast<slong>(i)), v[i].raw(), prec);
  return out;
}

// out[t * rows + r] = W_r . x_t + b_r for every token t of X (tokens x d).
Balls project(const Balls& W, const Balls& b, slong rows, const Balls& X, slong tokens, slong d, slong prec) {
  Balls out(tokens * rows);
  for (slong t = 0; t < tokens; ++t)
    for (slong r = 0; r < rows; ++r) arb_dot(out.at(t * rows + r), b.size() ? b.at(r) : nullptr, 0, W.at(r * d), 1, X.at(t * d), 1, d, prec);
  return out;
}

// Rotates every head block (d_k entries) of token t's vector by the angles of its position.
void rotate(Balls& Y, slong tokens, slong width, const KernelLayer& L, const Balls& cosines, const Balls& sines, slong prec) {
  const slong half = L.d_k / 2;
  Ball a, b;
  for (slong tk = 0; tk < tokens; ++tk)
    for (slong base = 0; base < width; base += L.d_k)
      for (slong j = 0; j < half; ++j) {
        arb_ptr xa = Y.at(tk * width + base + (L.rope_interleaved ? 2 * j : j));
        arb_ptr xb = Y.at(tk * width + base + (L.rope_interleaved ? 2 * j + 1 : j + half));
        arb_srcptr c = cosines.at(tk * half + j), s = sines.at(tk * half + j);
        arb_mul(a.v, xa, c, prec);
        arb_submul(a.v, xb, s, prec);
        arb_mul(b.v, xb, c, prec);
        arb_addmul(b.v, xa, s, prec);
        arb_swap(xa, a.v);
        arb_swap(xb, b.v);
      }
}

// The values of one pass at one precision, for the rows still asked.
struct Pass {
  std::vector<bool> defined;
  std::vector<Balls> out, heads, weights;  // per row
};

Pass evaluate(const KernelLayer& L, const KernelSequence& s, const std::vector<long>& rows, const std::vector<bool>& todo, const KernelEvalOptions& o,
              slong prec) {
  const slong d = L.d, N = static_cast<slong>(s.tokens.size()), H = L.heads, G = L.kv_heads, dk = L.d_k, dv = L.d_v;
  slong keys = N;  // the keys any asked row may attend
  if (o.causal) {
    keys = 0;
    for (size_t r = 0; r < rows.size(); ++r)
      if (todo[r]) keys = std::max<slong>(keys, rows[r] + 1);
  }
  Balls X(N * d);
  for (slong t = 0; t < N; ++t)
    for (slong i = 0; i < d; ++i) arb_set_fmpq(X.at(t * d + i), s.tokens[static_cast<size_t>(t)][static_cast<size_t>(i)].raw(), prec);
  Balls K = project(matrix_balls(L.Wk, prec), vector_balls(L.bk, prec), G * dk, X, keys, d, prec);
  Balls V = project(matrix_balls(L.Wv, prec), vector_balls(L.bv, prec), G * dv, X, keys, d, prec);
  const Balls Wq = matrix_balls(L.Wq, prec), bq = vector_balls(L.bq, prec), Wo = matrix_balls(L.Wo, prec), bo = vector_balls(L.bo, prec);
  Balls Q = project(Wq, bq, H * dk, X, N, d, prec);  // every token: the rows asked index it
  if (L.rope) {
    const slong half = dk / 2;
    Balls cosines(N * half), sines(N * half), inv(half);
    Ball lt, angle;
    arb_set_fmpq(lt.v, L.rope_theta.raw(), prec);
    arb_log(lt.v, lt.v, prec);
    for (slong j = 0; j < half; ++j) {  // theta^(-2j/d_k)
      arb_mul_si(inv.at(j), lt.v, -2 * j, prec);
      arb_div_si(inv.at(j), inv.at(j), dk, prec);
      arb_exp(inv.at(j), inv.at(j), prec);
    }
    for (slong t = 0; t < N; ++t)
      for (slong j = 0; j < half; ++j) {
        arb_mul_si(angle.v, inv.at(j), s.position(static_cast<size_t>(t)), prec);
        arb_sin_cos(sines.at(t * half + j), cosines.at(t * half + j), angle.v, prec);
      }
    rotate(Q, N, H * dk, L, cosines, sines, prec);
    rotate(K, keys, G * dk, L, cosines, sines, prec);
  }
  Ball scale, m, score, ref, den, inv_den;
  arb_set_si(m.v, L.scale.m);
  arb_sqrt(scale.v, m.v, prec);
  arb_mul_fmpz(scale.v, scale.v, fmpq_numref(L.scale.q.raw()), prec);
  arb_div_fmpz(scale.v, scale.v, fmpq_denref(L.scale.q.raw()), prec);
  Pass p;
  p.defined.assign(rows.size(), false);
  p.out.resize(rows.size());
  p.heads.resize(rows.size());
  p.weights.resize(rows.size());
  Balls S(keys), W(keys), Y(H * dv);
  for (size_t r = 0; r < rows.size(); ++r) {
    if (!todo[r]) continue;
    const size_t n = static_cast<size_t>(rows[r]);
    std::vector<slong> allowed;
    for (slong i = 0; i < keys; ++i)
      if (kernel_key_allowed(s, o.causal, n, static_cast<size_t>(i))) allowed.push_back(i);
    if (allowed.empty()) continue;
    p.defined[r] = true;
    if (o.attention_weights) p.weights[r] = Balls(H * N);
    for (slong h = 0; h < H; ++h) {
      const slong g = L.kv_head(static_cast<int>(h));
      slong best = allowed[0];
      for (slong i : allowed) {
        arb_dot(S.at(i), nullptr, 0, Q.at(static_cast<slong>(n) * H * dk + h * dk), 1, K.at(i * G * dk + g * dk), 1, dk, prec);
        arb_mul(S.at(i), S.at(i), scale.v, prec);
        if (!s.mask.empty()) {
          arb_set_fmpq(ref.v, s.mask[n][static_cast<size_t>(i)].value.raw(), prec);
          arb_add(S.at(i), S.at(i), ref.v, prec);
        }
        if (arf_cmp(arb_midref(S.at(i)), arb_midref(S.at(best))) > 0) best = i;
      }
      // weights e^(s_i - s_best) (the softmax is shift invariant), 0 for hidden keys
      arb_set(ref.v, S.at(best));
      _arb_vec_zero(W.at(0), keys);
      arb_zero(den.v);
      for (slong i : allowed) {
        arb_sub(W.at(i), S.at(i), ref.v, prec);
        arb_exp(W.at(i), W.at(i), prec);
        arb_add(den.v, den.v, W.at(i), prec);
      }
      arb_inv(inv_den.v, den.v, prec);
      for (slong c = 0; c < dv; ++c) {
        arb_dot(Y.at(h * dv + c), nullptr, 0, W.at(0), 1, V.at(g * dv + c), G * dv, keys, prec);
        arb_mul(Y.at(h * dv + c), Y.at(h * dv + c), inv_den.v, prec);
      }
      if (o.attention_weights)
        for (slong i : allowed) arb_mul(p.weights[r].at(h * N + i), W.at(i), inv_den.v, prec);
    }
    if (o.head_outputs) {
      p.heads[r] = Balls(H * dv);
      _arb_vec_set(p.heads[r].at(0), Y.at(0), H * dv);
    }
    p.out[r] = project(Wo, bo, L.d_out, Y, 1, H * dv, prec);
  }
  return p;
}

// Fixes e from the ball x at `prec` bits: the decimal, and one double at
// every point. The ball recorded has its midpoint rounded to 3.33 digits + 32
// bits and is widened by 2^-(3.33 digits + 24) of it, so that a checker
// working at the first precision encloses the value inside it; when the
// wider ball no longer decides, the ball itself is recorded.
bool one_double(const arb_t x, slong prec) {
  arf_t lo, hi;
  arf_init(lo);
  arf_init(hi);
  arb_get_lbound_arf(lo, x, prec + 64);
  arb_get_ubound_arf(hi, x, prec + 64);
  const bool same = arf_is_finite(lo) && arf_is_finite(hi) && arf_get_d(lo, ARF_RND_NEAR) == arf_get_d(hi, ARF_RND_NEAR);
  arf_clear(lo);
  arf_clear(hi);
  return same;
}

bool decide(const arb_t x, long digits, slong prec, KernelEntry& e) {
  if (!decimal_of_ball(x, digits, prec, e.decimal) || !one_double(x, prec)) return false;
  const slong keep = certified_start_bits(digits) - 32;
  Ball w;
  arb_set_round(w.v, x, keep);
  mag_t extra;
  mag_init(extra);
  arf_get_mag(extra, arb_midref(w.v));
  mag_mul_2exp_si(extra, extra, -(keep - 8));
  mag_add(arb_radref(w.v), arb_radref(w.v), extra);
  mag_clear(extra);
  std::string again;
  arb_srcptr rec = decimal_of_ball(w.v, digits, prec, again) && again == e.decimal && one_double(w.v, prec) ? w.v : x;
  e.mid = dyadic_text(arb_midref(rec));
  arf_t r;
  arf_init(r);
  arf_set_mag(r, arb_radref(rec));
  e.rad = dyadic_text(r);
  arf_clear(r);
  return true;
}

KernelEntry exact_entry(const Rational& v, long digits) { return KernelEntry{decimal_of_rational(v, digits), v.str(), "0"}; }

// The exact facts of one row that decide its rational entries.
struct ExactRow {
  std::vector<size_t> allowed;
  std::vector<char> uniform;          // per head: equal weights 1/|allowed|
  std::vector<std::vector<QVec>> v;   // per key-value head, per allowed key: V_g x_i + b (d_v)
};

QVec affine(const QMat& W, const QVec& b, int first, int count, const QVec& x) {
  QVec y(static_cast<size_t>(count));
  for (int r = 0; r < count; ++r) {
    for (size_t c = 0; c < x.size(); ++c) fmpq_addmul(y[static_cast<size_t>(r)].raw(), W(first + r, static_cast<int>(c)).raw(), x[c].raw());
    if (!b.empty()) y[static_cast<size_t>(r)] += b[static_cast<size_t>(first + r)];
  }
  return y;
}

ExactRow exact_row(const KernelLayer& L, const KernelSequence& s, bool causal, size_t n) {
  ExactRow e;
  for (size_t i = 0; i < s.tokens.size(); ++i)
    if (kernel_key_allowed(s, causal, n, i)) e.allowed.push_back(i);
  e.uniform.assign(static_cast<size_t>(L.heads), e.allowed.size() == 1);
  if (!L.rope && e.allowed.size() > 1)
    for (int h = 0; h < L.heads; ++h) {
      const QVec q = affine(L.Wq, L.bq, h * L.d_k, L.d_k, s.tokens[n]);
      // score = qs sqrt(m) (q . k_i) + M_ni: equal iff the pairs (q . k_i, M_ni) are, or the sums when sqrt(m) is rational
      std::vector<std::pair<Rational, Rational>> sc;
      for (size_t i : e.allowed) {
        const Rational qk = dot(q, affine(L.Wk, L.bk, L.kv_head(h) * L.d_k, L.d_k, s.tokens[i]));
        const Rational mask = s.mask.empty() ? Rational(0) : s.mask[n][i].value;
        if (L.scale.is_rational()) sc.emplace_back(L.scale.q * qk + mask, Rational(0));
        else sc.emplace_back(L.scale.q.is_zero() ? Rational(0) : qk, mask);
      }
      bool same = true;
      for (const auto& x : sc) same = same && x == sc[0];
      e.uniform[static_cast<size_t>(h)] = same;
    }
  e.v.resize(static_cast<size_t>(L.kv_heads));
  for (int g = 0; g < L.kv_heads; ++g)
    for (size_t i : e.allowed) e.v[static_cast<size_t>(g)].push_back(affine(L.Wv, L.bv, g * L.d_v, L.d_v, s.tokens[i]));
  return e;
}

// sum_a alpha_a c_a when it is rational: equal weights, or equal c_a.
std::optional<Rational> rational_mix(bool uniform, const std::vector<Rational>& c) {
  bool same = true;
  Rational sum;
  for (const auto& x : c) {
    same = same && x == c[0];
    sum += x;
  }
  if (same) return c[0];
  if (uniform) return sum / Rational(static_cast<long>(c.size()));
  return std::nullopt;
}

std::optional<Rational> exact_head_output(const KernelLayer& L, const ExactRow& e, int h, int c) {
  std::vector<Rational> vals;
  for (const auto& v : e.v[static_cast<size_t>(L.kv_head(h))]) vals.push_back(v[static_cast<size_t>(c)]);
  return rational_mix(e.uniform[static_cast<size_t>(h)], vals);
}

std::optional<Rational> exact_output(const KernelLayer& L, const ExactRow& e, int j) {
  Rational total = L.bo.empty() ? Rational(0) : L.bo[static_cast<size_t>(j)];
  for (int h = 0; h < L.heads; ++h) {
    std::vector<Rational> c;
    for (const auto& v : e.v[static_cast<size_t>(L.kv_head(h))]) {
      Rational x;
      for (int k = 0; k < L.d_v; ++k) fmpq_addmul(x.raw(), L.Wo(j, h * L.d_v + k).raw(), v[static_cast<size_t>(k)].raw());
      c.push_back(std::move(x));
    }
    const auto part = rational_mix(e.uniform[static_cast<size_t>(h)], c);
    if (!part) return std::nullopt;
    total += *part;
  }
  return total;
}

using Slots = std::vector<std::optional<KernelEntry>>;
}  // namespace

KernelSequenceResult certify_kernel_sequence(const KernelLayer& L, const KernelSequence& s, const std::vector<long>& rows, const KernelEvalOptions& o) {
  const size_t R = rows.size(), N = s.tokens.size();
  for (long r : rows)
    if (r < 0 || static_cast<size_t>(r) >= N) throw_internal("certify_kernel_sequence: row out of range");
  std::vector<Slots> out(R), heads(R), weights(R);
  std::vector<bool> todo(R, true), exact_done(R, false), defined(R, true);
  KernelSequenceResult res;
  long prec = certified_start_bits(o.digits);
  for (;;) {
    const Pass p = evaluate(L, s, rows, todo, o, prec);
    for (size_t r = 0; r < R; ++r) {
      if (!todo[r]) continue;
      if (!p.defined[r]) {  // no key to attend: the same at every precision
        defined[r] = false;
        todo[r] = false;
        continue;
      }
      out[r].resize(static_cast<size_t>(L.d_out));
      heads[r].resize(o.head_outputs ? static_cast<size_t>(L.heads * L.d_v) : 0);
      weights[r].resize(o.attention_weights ? static_cast<size_t>(L.heads) * N : 0);
      bool open = false;
      auto settle = [&](Slots& slots, const Balls& b) {
        for (size_t k = 0; k < slots.size(); ++k) {
          if (slots[k]) continue;
          KernelEntry e;
          if (decide(b.at(static_cast<slong>(k)), o.digits, prec, e)) {
            slots[k] = std::move(e);
            res.bits = std::max(res.bits, prec);
          } else {
            open = true;
          }
        }
      };
      if (o.attention_weights)  // hidden keys have weight exactly 0
        for (int h = 0; h < L.heads; ++h)
          for (size_t i = 0; i < N; ++i)
            if (!weights[r][h * N + i] && !kernel_key_allowed(s, o.causal, static_cast<size_t>(rows[r]), i)) {
              weights[r][h * N + i] = exact_entry(Rational(0), o.digits);
              ++res.rational_entries;
            }
      settle(out[r], p.out[r]);
      settle(heads[r], p.heads[r]);
      settle(weights[r], p.weights[r]);
      if (open && !exact_done[r]) {  // what a ball cannot fix may be rational
        exact_done[r] = true;
        open = false;
        const ExactRow e = exact_row(L, s, o.causal, static_cast<size_t>(rows[r]));
        auto fill = [&](Slots& slots, size_t k, const std::optional<Rational>& v) {
          if (slots[k]) return;
          if (v) {
            slots[k] = exact_entry(*v, o.digits);
            ++res.rational_entries;
          } else {
            open = true;
          }
        };
        for (int j = 0; j < L.d_out; ++j)
          if (!out[r][static_cast<size_t>(j)]) fill(out[r], static_cast<size_t>(j), exact_output(L, e, j));
        for (int h = 0; h < L.heads && o.head_outputs; ++h)
          for (int c = 0; c < L.d_v; ++c)
            if (!heads[r][static_cast<size_t>(h * L.d_v + c)]) fill(heads[r], static_cast<size_t>(h * L.d_v + c), exact_head_output(L, e, h, c));
        for (int h = 0; h < L.heads && o.attention_weights; ++h)
          for (size_t a = 0; a < e.allowed.size(); ++a) {
            const size_t k = h * N + e.allowed[a];
            if (!weights[r][k])
              fill(weights[r], k, e.uniform[static_cast<size_t>(h)] ? std::optional<Rational>(Rational(1) / Rational(static_cast<long>(e.allowed.size())))
                                                                     : std::nullopt);
          }
      }
      todo[r] = open;
    }
    bool any = false;
    for (bool t : todo) any = any || t;
    if (!any) break;
    if (prec >= o.max_bits) {
      size_t r = 0;
      while (!todo[r]) ++r;
      std::string which = "output";
      size_t k = 0;
      while (k < out[r].size() && out[r][k]) ++k;
      if (k == out[r].size()) {
        which = "a head output or attention weight";
        k = 0;
      }
      throw_unable("row " + std::to_string(rows[r]) + ": " + which + (which == "output" ? " entry " + std::to_string(k) : std::string()) + ": " +
                   std::to_string(o.digits) + " correctly rounded digits not decided within " + std::to_string(o.max_bits) +
                   " bits (the value may be zero or a decimal tie that no rule shows rational, such as heads that cancel; raise --max-bits or ask fewer digits)");
    }
    prec = std::min<long>(2 * prec, o.max_bits);
  }
  for (size_t r = 0; r < R; ++r) {
    KernelRow row;
    row.position = rows[r];
    row.defined = defined[r];
    if (row.defined) {
      for (auto& x : out[r]) row.out.push_back(std::move(*x));
      for (auto& x : heads[r]) row.heads.push_back(std::move(*x));
      for (auto& x : weights[r]) row.weights.push_back(std::move(*x));
    }
    res.rows.push_back(std::move(row));
  }
  return res;
}

}  // namespace mhaq
