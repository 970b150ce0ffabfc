// The checker's own evaluator of f (it never calls the oracle or the learner):
// exact in Q(tau) for exact certificates, Arb balls otherwise.
#include <flint/fmpz_poly.h>

#include <algorithm>

#include "check_internal.hpp"
#include "mhaq/check/limits.hpp"

namespace mhaq::check {

std::string Qn::str() const {
  char* s = fmpq_get_str(nullptr, 10, v);
  std::string out(s);
  flint_free(s);
  return out;
}

namespace {
// Lexicographic order of (W, c), an empty c read as zeros.
int score_cmp(const RatHead& a, const RatHead& b) {
  for (size_t e = 0; e < a.W.size(); ++e) {
    const int c = fmpq_cmp(a.W[e].v, b.W[e].v);
    if (c != 0) return c;
  }
  const Qn zero;
  for (size_t i = 0; i < std::max(a.c.size(), b.c.size()); ++i) {
    const int c = fmpq_cmp((i < a.c.size() ? a.c[i] : zero).v, (i < b.c.size() ? b.c[i] : zero).v);
    if (c != 0) return c;
  }
  return 0;
}
}  // namespace

std::vector<RatHead> canonical(const std::vector<RatHead>& heads) {
  // Group equal (W, c) by sorting (a file may list up to 1024 heads): O(H log H)
  // comparisons; the stable sort keeps first occurrences first.
  const size_t n = heads.size();
  std::vector<size_t> order(n), first(n);
  for (size_t h = 0; h < n; ++h) order[h] = h;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score_cmp(heads[a], heads[b]) < 0; });
  for (size_t k = 0; k < n; ++k)
    first[order[k]] = k > 0 && score_cmp(heads[order[k - 1]], heads[order[k]]) == 0 ? first[order[k - 1]] : order[k];
  std::vector<RatHead> merged;
  std::vector<long> slot(n, -1);
  for (size_t h = 0; h < n; ++h) {
    if (slot[first[h]] < 0) {
      slot[first[h]] = static_cast<long>(merged.size());
      merged.push_back(heads[h]);
    } else {
      RatHead& g = merged[static_cast<size_t>(slot[first[h]])];
      for (size_t i = 0; i < g.v.size(); ++i) fmpq_add(g.v[i].v, g.v[i].v, heads[h].v[i].v);
    }
  }
  std::vector<RatHead> out;
  for (auto& g : merged) {
    bool zero = true;
    for (const auto& x : g.v) zero = zero && fmpq_is_zero(x.v);
    if (!zero) out.push_back(std::move(g));
  }
  return out;
}

std::vector<BallHead> to_balls(const std::vector<RatHead>& heads, slong prec) {
  std::vector<BallHead> out(heads.size());
  for (size_t h = 0; h < heads.size(); ++h) {
    for (const auto& x : heads[h].W) {
      out[h].W.emplace_back();
      arb_set_fmpq(out[h].W.back().v, x.v, prec);
    }
    for (const auto& x : heads[h].v) {
      out[h].v.emplace_back();
      arb_set_fmpq(out[h].v.back().v, x.v, prec);
    }
    for (const auto& x : heads[h].c) {
      out[h].c.emplace_back();
      arb_set_fmpq(out[h].c.back().v, x.v, prec);
    }
  }
  return out;
}

Pq pq_of(const Qn& q) {
  Pq p;
  fmpz_poly_set_fmpz(p.v->num, fmpq_numref(q.v));
  fmpz_poly_set_fmpz(p.v->den, fmpq_denref(q.v));
  return p;
}

namespace {
void dot(Qn& out, const std::vector<Qn>& a, const std::vector<Qn>& b) {
  fmpq_zero(out.v);
  for (size_t i = 0; i < a.size(); ++i) fmpq_addmul(out.v, a[i].v, b[i].v);
}
}  // namespace

bool eval_exact(Pq& out, const std::vector<RatHead>& heads, int d, const Query& q, long L, std::string& why, const Qn* beta) {
  // Bounds the work on crafted files: the answer's denominator, a product over
  // heads, has degree at most the sum of the heads' exponent spans; recover
  // refuses runs whose a-priori bound exceeds the same limit (so honest
  // certificates stay within it).
  const long cap = limits::max_tau_exponent;
  long total = 0;
  fmpz_poly_q_zero(out.v);
  const std::vector<Qn>& xN = q.back().token;
  Qn t;
  fmpz_t e, m, c;
  fmpz_init(e);
  fmpz_init(m);
  fmpz_init(c);
  fmpz_poly_t num, den;
  fmpz_poly_init(num);
  fmpz_poly_init(den);
  Pq head;
  bool ok = true;
  for (const auto& h : heads) {
    std::vector<Qn> Wx(static_cast<size_t>(d));
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) fmpq_addmul(Wx[i].v, h.W[static_cast<size_t>(i) * d + j].v, xN[j].v);
    for (size_t i = 0; i < h.c.size(); ++i) fmpq_add(Wx[i].v, Wx[i].v, h.c[i].v);  // W x_N + c
    // The softmax depends on score differences only: n_r = L (s_r - s_N)
    // must be an integer; the weights are tau^(n_r - min n).
    Qn sN;
    dot(sN, xN, Wx);
    std::vector<Qn> n(q.size()), vx(q.size());
    for (size_t r = 0; r < q.size() && ok; ++r) {
      dot(t, q[r].token, Wx);
      fmpq_sub(t.v, t.v, sN.v);
      fmpq_mul_si(n[r].v, t.v, L);
      if (!fmpz_is_one(fmpq_denref(n[r].v))) {
        std::string ts = t.str();
        if (ts.size() > 80) ts = ts.substr(0, 80) + "...";
        why = "score difference " + ts + " is not a multiple of 1/L (L = " + std::to_string(L) + ")";
        ok = false;
      }
      dot(vx[r], h.v, q[r].token);
    }
    if (!ok) break;
    fmpz_set(m, fmpq_numref(n[0].v));
    for (const auto& x : n) fmpz_set(m, fmpz_cmp(fmpq_numref(x.v), m) < 0 ? fmpq_numref(x.v) : m);
    fmpz_one(c);  // common denominator of the values v^T x_r
    for (const auto& x : vx) fmpz_lcm(c, c, fmpq_denref(x.v));
    fmpz_poly_zero(num);
    fmpz_poly_zero(den);
    long span = 0;
    for (size_t r = 0; r < q.size() && ok; ++r) {
      fmpz_sub(e, fmpq_numref(n[r].v), m);
      if (fmpz_cmp_si(e, cap - total) > 0) {  // before any coefficient is allocated
        why = "the powers of tau of the heads sum to a degree above 2^20";
        ok = false;
        break;
      }
      const slong k = fmpz_get_si(e);
      span = std::max<long>(span, k);
      // den += count x^k; num += count (v^T x_r) c x^k
      fmpz_t a;
      fmpz_init(a);
      fmpz_poly_get_coeff_fmpz(a, den, k);
      fmpz_add_si(a, a, q[r].count);
      fmpz_poly_set_coeff_fmpz(den, k, a);
      fmpz_poly_get_coeff_fmpz(a, num, k);
      fmpz_t w;
      fmpz_init(w);
      fmpz_divexact(w, c, fmpq_denref(vx[r].v));
      fmpz_mul(w, w, fmpq_numref(vx[r].v));
      fmpz_mul_si(w, w, q[r].count);
      fmpz_add(a, a, w);
      fmpz_poly_set_coeff_fmpz(num, k, a);
      fmpz_clear(w);
      fmpz_clear(a);
    }
    if (!ok) break;
    total += span;
    if (total > cap) {
      why = "the powers of tau of the heads sum to a degree above 2^20";
      ok = false;
      break;
    }
    fmpz_poly_scalar_mul_fmpz(den, den, c);
    fmpz_poly_set(head.v->num, num);
    fmpz_poly_set(head.v->den, den);
    fmpz_poly_q_canonicalise(head.v);
    fmpz_poly_q_add(out.v, out.v, head.v);
  }
  fmpz_poly_clear(num);
  fmpz_poly_clear(den);
  fmpz_clear(e);
  fmpz_clear(m);
  fmpz_clear(c);
  if (ok && beta && !fmpq_is_zero(beta->v)) {
    const Pq b = pq_of(*beta);
    fmpz_poly_q_add(out.v, out.v, b.v);
  }
  return ok;
}

void eval_arb(Ab& out, const std::vector<BallHead>& heads, int d, const Query& q, slong prec, const Ab* beta, long root) {
  arb_zero(out.v);
  Ab sq;  // sqrt(root)
  arb_set_si(sq.v, root);
  arb_sqrt(sq.v, sq.v, prec);
  std::vector<std::vector<Ab>> x(q.size(), std::vector<Ab>(static_cast<size_t>(d)));
  for (size_t r = 0; r < q.size(); ++r)
    for (int i = 0; i < d; ++i) arb_set_fmpq(x[r][i].v, q[r].token[i].v, prec);
  const std::vector<Ab>& xN = x.back();
  Ab t, s, sN, w, num, den, vx;
  for (const auto& h : heads) {
    std::vector<Ab> Wx(static_cast<size_t>(d));
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) arb_addmul(Wx[i].v, h.W[static_cast<size_t>(i) * d + j].v, xN[j].v, prec);
    for (size_t i = 0; i < h.c.size(); ++i) arb_add(Wx[i].v, Wx[i].v, h.c[i].v, prec);  // W x_N + c
    // weights e^(s_r - s_N): the softmax is invariant under a common shift
    arb_zero(sN.v);
    for (int i = 0; i < d; ++i) arb_addmul(sN.v, xN[i].v, Wx[i].v, prec);
    arb_zero(num.v);
    arb_zero(den.v);
    for (size_t r = 0; r < q.size(); ++r) {
      arb_zero(s.v);
      arb_zero(vx.v);
      for (int i = 0; i < d; ++i) {
        arb_addmul(s.v, x[r][i].v, Wx[i].v, prec);
        arb_addmul(vx.v, h.v[i].v, x[r][i].v, prec);
      }
      arb_sub(s.v, s.v, sN.v, prec);
      if (root != 1) arb_mul(s.v, s.v, sq.v, prec);
      arb_exp(w.v, s.v, prec);
      arb_mul_si(w.v, w.v, q[r].count, prec);
      arb_add(den.v, den.v, w.v, prec);
      arb_addmul(num.v, w.v, vx.v, prec);
    }
    arb_div(t.v, num.v, den.v, prec);
    arb_add(out.v, out.v, t.v, prec);
  }
  if (beta) arb_add(out.v, out.v, beta->v, prec);
}

}  // namespace mhaq::check
