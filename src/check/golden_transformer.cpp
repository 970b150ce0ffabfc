// The checker's own exact evaluator of a one-layer transformer on the queries
// of a transformer golden file, with its own readers, exact ReLU sign test and
// certified decimals (include/mhaq/check/golden_transformer.hpp). Nothing here
// comes from mhaq_lib (tests/check_separation.sh).
#include "mhaq/check/golden_transformer.hpp"

#include <arb_poly.h>
#include <flint/fmpz_poly.h>

#include <cmath>

#include "check_internal.hpp"
#include "strict_read.hpp"
#include "mhaq/check/limits.hpp"

namespace mhaq::check {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// ------------------------------------------------------------ reading
// The model as the checker evaluates it: per head W_h (row-major), per
// neuron u_j and U_{h,j}.
struct Transformer {
  int d = 0;
  std::vector<std::vector<Qn>> W;               // [h], d*d
  std::vector<Qn> u;                            // [j]
  std::vector<std::vector<std::vector<Qn>>> U;  // [j][h], d
};

Transformer read_transformer(const json& m, const std::string& path) {
  const size_t E = static_cast<size_t>(limits::max_entry_chars);
  if (need_str(m, path, "format") != "mhaq-transformer")
    bad(at(path, "format"), "must be \"mhaq-transformer\" (golden files hold the converted, plain transformer)");
  if (need_long(m, path, "version", 0, 1L << 30) != 1) bad(at(path, "version"), "must be 1");
  Transformer t;
  t.d = static_cast<int>(need_long(m, path, "d", 1, limits::max_d));
  const json& hs = need_array(m, path, "heads", static_cast<size_t>(limits::max_heads));
  const json& ns = need_array(m, path, "neurons", static_cast<size_t>(limits::max_neurons));
  if (hs.empty()) bad(at(path, "heads"), "empty");
  if (ns.empty()) bad(at(path, "neurons"), "empty");
  for (size_t h = 0; h < hs.size(); ++h) {
    const std::string hp = at(at(path, "heads"), h);
    const json& W = need_array(hs[h], hp, "W", static_cast<size_t>(t.d));
    if (static_cast<long>(W.size()) != t.d) bad(at(hp, "W"), "expected " + std::to_string(t.d) + " rows");
    std::vector<Qn> w;
    for (size_t r = 0; r < W.size(); ++r)
      for (auto& x : golden_io::read_qvec(W[r], at(at(hp, "W"), r), t.d, E)) w.push_back(std::move(x));
    t.W.push_back(std::move(w));
  }
  for (size_t j = 0; j < ns.size(); ++j) {
    const std::string np = at(at(path, "neurons"), j);
    t.u.push_back(golden_io::read_rational(need(ns[j], np, "u"), at(np, "u"), E));
    const json& U = need_array(ns[j], np, "U", hs.size());
    if (U.size() != hs.size()) bad(at(np, "U"), "expected one vector per head (" + std::to_string(hs.size()) + ")");
    std::vector<std::vector<Qn>> Uj;
    for (size_t h = 0; h < U.size(); ++h) Uj.push_back(golden_io::read_qvec(U[h], at(at(np, "U"), h), t.d, E));
    t.U.push_back(std::move(Uj));
  }
  return t;
}

Query read_query(const json& q, const std::string& path, int d) {
  const json& runs = need_array(q, path, "runs", static_cast<size_t>(limits::max_runs));
  if (runs.empty()) bad(at(path, "runs"), "empty");
  Query out;
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::string rp = at(at(path, "runs"), r);
    Run run;
    run.token = golden_io::read_qvec(need(runs[r], rp, "token"), at(rp, "token"), d, static_cast<size_t>(limits::max_entry_chars));
    run.count = need_long(runs[r], rp, "count", 1, 1L << 30);
    out.push_back(std::move(run));
  }
  return out;
}

// ------------------------------------------------------------ Q(tau) values
// Encloses x(tau), tau = e^{1/L}, at `prec` bits.
void eval_at_tau(arb_t out, const Pq& x, long L, slong prec) {
  Ab tau, n, dn;
  arb_set_si(tau.v, 1);
  arb_div_si(tau.v, tau.v, L, prec);
  arb_exp(tau.v, tau.v, prec);
  arb_poly_t p;
  arb_poly_init(p);
  arb_poly_set_fmpz_poly(p, x.v->num, prec);
  arb_poly_evaluate(n.v, p, tau.v, prec);
  arb_poly_set_fmpz_poly(p, x.v->den, prec);
  arb_poly_evaluate(dn.v, p, tau.v, prec);
  arb_poly_clear(p);
  arb_div(out, n.v, dn.v, prec);
}

constexpr slong kPrecCap = 1L << 22;

// The exact sign of x in Q(tau): 0 iff its numerator is the zero polynomial;
// otherwise x(tau) is a nonzero real (tau is transcendental) and Arb at
// doubling precision certifies its sign. Returns 2 if the cap is reached.
int exact_sign(const Pq& x, long L) {
  if (fmpz_poly_is_zero(x.v->num)) return 0;
  Ab v;
  for (slong prec = 64; prec <= kPrecCap; prec *= 2) {
    eval_at_tau(v.v, x, L, prec);
    if (arb_is_positive(v.v)) return 1;
    if (arb_is_negative(v.v)) return -1;
  }
  return 2;
}

void mul_rational(Pq& x, const Qn& q) {
  fmpz_poly_scalar_mul_fmpz(x.v->num, x.v->num, fmpq_numref(q.v));
  fmpz_poly_scalar_mul_fmpz(x.v->den, x.v->den, fmpq_denref(q.v));
  fmpz_poly_q_canonicalise(x.v);
}

std::string zstr(const fmpz_t z) {
  char* s = fmpz_get_str(nullptr, 10, z);
  std::string out(s);
  flint_free(s);
  return out;
}
ojson poly_json(const fmpz_poly_t p) {
  ojson a = ojson::array();
  fmpz_t c;
  fmpz_init(c);
  for (slong i = 0; i < fmpz_poly_length(p); ++i) {
    fmpz_poly_get_coeff_fmpz(c, p, i);
    a.push_back(zstr(c));
  }
  fmpz_clear(c);
  return a;
}

// ------------------------------------------------------------ decimals
// "[-]d.ddd...e[+-]XX", D significant digits, mantissa M with exactly D digits.
std::string sci(bool neg, const fmpz_t M, long E, long D) {
  const std::string s = zstr(M);
  std::string out = neg ? "-" : "";
  out.push_back(s[0]);
  if (D > 1) {
    out.push_back('.');
    out.append(s, 1, std::string::npos);
  }
  out += E < 0 ? "e-" : "e+";
  const long a = E < 0 ? -E : E;
  if (a < 10) out.push_back('0');
  return out + std::to_string(a);
}
void pow10(fmpz_t out, long k) {
  fmpz_set_ui(out, 10);
  fmpz_pow_ui(out, out, static_cast<ulong>(k));
}

// Correctly rounded (ties to even) decimal of a rational, exactly.
std::string decimal_rational(const fmpq_t x, long D) {
  if (fmpq_is_zero(x)) {
    std::string z("0");
    if (D > 1) {
      z.push_back('.');
      z.append(static_cast<size_t>(D - 1), '0');
    }
    return z.append("e+00");
  }
  fmpq_t a, y;
  fmpq_init(a);
  fmpq_init(y);
  fmpq_abs(a, x);
  fmpz_t lo, hi, p, q, r;
  fmpz_init(lo);
  fmpz_init(hi);
  fmpz_init(p);
  fmpz_init(q);
  fmpz_init(r);
  pow10(lo, D - 1);
  pow10(hi, D);
  // y = |x| 10^(D-1-E) in [10^(D-1), 10^D): start from the digit counts, step
  long E = static_cast<long>(fmpz_sizeinbase(fmpq_numref(a), 10)) - static_cast<long>(fmpz_sizeinbase(fmpq_denref(a), 10));
  for (;;) {
    const long k = D - 1 - E;
    pow10(p, k < 0 ? -k : k);
    if (k >= 0) fmpq_mul_fmpz(y, a, p);
    else fmpq_div_fmpz(y, a, p);
    if (fmpq_cmp_fmpz(y, hi) >= 0) { ++E; continue; }
    if (fmpq_cmp_fmpz(y, lo) < 0) { --E; continue; }
    break;
  }
  fmpz_fdiv_qr(q, r, fmpq_numref(y), fmpq_denref(y));
  fmpz_mul_2exp(r, r, 1);
  const int c = fmpz_cmp(r, fmpq_denref(y));
  if (c > 0 || (c == 0 && fmpz_is_odd(q))) fmpz_add_ui(q, q, 1);
  if (fmpz_equal(q, hi)) {
    fmpz_set(q, lo);
    ++E;
  }
  const std::string out = sci(fmpq_sgn(x) < 0, q, E, D);
  fmpq_clear(a);
  fmpq_clear(y);
  for (fmpz* z : {lo, hi, p, q, r}) fmpz_clear(z);
  return out;
}

// The same for a non-constant element of Q(tau) (transcendental: never a
// tie), certified with Arb at doubling precision; empty past the cap.
std::string decimal_qtau(const Pq& x, long L, long D) {
  if (fmpz_poly_length(x.v->num) <= 1 && fmpz_poly_length(x.v->den) == 1) {
    Qn q;
    if (!fmpz_poly_is_zero(x.v->num)) {
      fmpz_t n, d;
      fmpz_init(n);
      fmpz_init(d);
      fmpz_poly_get_coeff_fmpz(n, x.v->num, 0);
      fmpz_poly_get_coeff_fmpz(d, x.v->den, 0);
      fmpq_set_fmpz_frac(q.v, n, d);
      fmpz_clear(n);
      fmpz_clear(d);
    }
    return decimal_rational(q.v, D);
  }
  fmpz_t lo, hi, M;
  fmpz_init(lo);
  fmpz_init(hi);
  fmpz_init(M);
  pow10(lo, D - 1);
  pow10(hi, D);
  Ab v, a, y, p10, alo, ahi, half;
  arb_set_fmpz(alo.v, lo);
  arb_set_fmpz(ahi.v, hi);
  arb_set_d(half.v, 0.5);
  std::string out;
  for (slong prec = 4 * D + 64; prec <= kPrecCap && out.empty(); prec *= 2) {
    eval_at_tau(v.v, x, L, prec);
    if (!arb_is_finite(v.v) || arb_contains_zero(v.v)) continue;
    arb_abs(a.v, v.v);
    // the decimal exponent E with 10^E <= |x| < 10^(E+1): from a lower bound, then stepped
    long E = static_cast<long>(std::floor(static_cast<double>(arf_abs_bound_lt_2exp_si(arb_midref(a.v)) - 1) * 0.30102999566398120));
    for (int it = 0; it < 64; ++it) {
      const long k = D - 1 - E;
      arb_ui_pow_ui(p10.v, 10, static_cast<ulong>(k < 0 ? -k : k), prec);
      if (k >= 0) arb_mul(y.v, a.v, p10.v, prec);
      else arb_div(y.v, a.v, p10.v, prec);
      if (arb_ge(y.v, ahi.v)) { ++E; continue; }
      if (arb_lt(y.v, alo.v)) { --E; continue; }
      if (!(arb_ge(y.v, alo.v) && arb_lt(y.v, ahi.v))) break;  // not yet certain at this precision
      arb_add(y.v, y.v, half.v, prec);
      arb_floor(y.v, y.v, prec);
      if (!arb_get_unique_fmpz(M, y.v)) break;
      if (fmpz_equal(M, hi)) {
        fmpz_set(M, lo);
        ++E;
      }
      out = sci(arb_is_negative(v.v), M, E, D);
      break;
    }
  }
  fmpz_clear(lo);
  fmpz_clear(hi);
  fmpz_clear(M);
  return out;
}

}  // namespace

int qtau_sign(const Pq& x, long L) { return exact_sign(x, L); }

TransformerGoldenAnswers transformer_golden_answers(const json& doc) {
  if (!doc.is_object()) bad("", "not an object");
  const long D = need_long(doc, "", "digits", 1, limits::max_digits);
  const long den = need_long(need(doc, "", "inputs"), "inputs", "token_den", 1, limits::max_token_den);
  const Transformer t = read_transformer(need(doc, "", "model"), "model");
  const json& qs = need_array(doc, "", "queries", static_cast<size_t>(limits::max_golden_queries));
  std::vector<Query> queries;
  for (size_t i = 0; i < qs.size(); ++i) queries.push_back(read_query(qs[i], at("queries", i), t.d));

  TransformerGoldenAnswers out;
  // L = (lcm of the W denominators) den^2, bounded before any evaluation
  fmpz_t Lz;
  fmpz_init_set_ui(Lz, 1);
  for (const auto& W : t.W)
    for (const auto& x : W) fmpz_lcm(Lz, Lz, fmpq_denref(x.v));
  fmpz_mul_si(Lz, Lz, den);
  fmpz_mul_si(Lz, Lz, den);
  const bool L_ok = fmpz_cmp_si(Lz, limits::max_L) <= 0;
  out.L = L_ok ? fmpz_get_si(Lz) : 0;
  fmpz_clear(Lz);
  if (!L_ok) bad("model", "L = (lcm of the W denominators) * inputs.token_den^2 exceeds the limit of " + std::to_string(limits::max_L));

  // neuron j's pre-activation is multi-head attention with heads (W_h, U_{h,j})
  std::vector<std::vector<RatHead>> pre(t.u.size());
  for (size_t j = 0; j < t.u.size(); ++j)
    for (size_t h = 0; h < t.W.size(); ++h) pre[j].push_back(RatHead{t.W[h], t.U[j][h]});
  for (size_t i = 0; i < queries.size(); ++i) {
    const std::string ap = at("answers", i);
    Pq T, g;
    bool ok = true;
    for (size_t j = 0; j < pre.size() && ok; ++j) {
      std::string why;
      if (!eval_exact(g, pre[j], t.d, queries[i], out.L, why)) {
        out.failures.push_back({ap, "cannot re-derive the answer: " + why});
        ok = false;
        break;
      }
      const int s = exact_sign(g, out.L);
      if (s == 2) {
        out.failures.push_back({ap, "the sign of neuron " + std::to_string(j) + "'s pre-activation is not certified within 2^22 bits"});
        ok = false;
        break;
      }
      if (s <= 0) continue;  // ReLU
      mul_rational(g, t.u[j]);
      fmpz_poly_q_add(T.v, T.v, g.v);
    }
    if (!ok) {
      out.answers.push_back(nullptr);
      continue;
    }
    fmpz_poly_q_canonicalise(T.v);
    const std::string dec = decimal_qtau(T, out.L, D);
    if (dec.empty()) {
      out.failures.push_back({at(ap, "decimal"), "the decimal is not certified within 2^22 bits"});
      out.answers.push_back(nullptr);
      continue;
    }
    out.answers.push_back(ojson{{"index", i}, {"exact", ojson{{"num", poly_json(T.v->num)}, {"den", poly_json(T.v->den)}}}, {"decimal", dec}});
  }
  return out;
}

}  // namespace mhaq::check
