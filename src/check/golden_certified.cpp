// The checker's own evaluation of a certified golden file's answers
// (include/mhaq/check/golden_certified.hpp): its own readers, its own Arb
// evaluator of f (eval_arb), its own rounding. Nothing here comes from
// mhaq_lib (tests/check_separation.sh).
#include "mhaq/check/golden_certified.hpp"

#include <cmath>

#include "check_internal.hpp"
#include "golden_read.hpp"
#include "mhaq/check/limits.hpp"

namespace mhaq::check {

namespace {

using json = nlohmann::json;

void pow10(fmpz_t out, long k) {
  fmpz_set_ui(out, 10);
  fmpz_pow_ui(out, out, static_cast<ulong>(k));
}
std::string sci(bool neg, const fmpz_t M, long E, long D) {
  char* c = fmpz_get_str(nullptr, 10, M);
  std::string s(c);
  flint_free(c);
  std::string out;
  if (neg) out.push_back('-');
  out.push_back(s[0]);
  if (D > 1) {
    out.push_back('.');
    out.append(s, 1, std::string::npos);
  }
  const long aE = std::labs(E);
  out.push_back('e');
  out.push_back(E < 0 ? '-' : '+');
  if (aE < 10) out.push_back('0');
  out.append(std::to_string(aE));
  return out;
}

// Exact: ties to even.
std::string decimal_of(const fmpq_t x, long D) {
  if (fmpq_is_zero(x)) {
    std::string z("0");
    if (D > 1) {
      z.push_back('.');
      z.append(static_cast<size_t>(D - 1), '0');
    }
    z.append("e+00");
    return z;
  }
  fmpq_t a, y;
  fmpq_init(a);
  fmpq_init(y);
  fmpq_abs(a, x);
  fmpz_t lo, hi, p, q, r;
  fmpz_init(lo), fmpz_init(hi), fmpz_init(p), fmpz_init(q), fmpz_init(r);
  pow10(lo, D - 1);
  pow10(hi, D);
  long E = static_cast<long>(fmpz_sizeinbase(fmpq_numref(a), 10)) - static_cast<long>(fmpz_sizeinbase(fmpq_denref(a), 10)) - 2;
  for (;;) {  // the smallest E with |x| < 10^(E+1): stepped up from below
    const long k = D - 1 - E;
    pow10(p, std::labs(k));
    if (k >= 0) fmpq_mul_fmpz(y, a, p);
    else fmpq_div_fmpz(y, a, p);
    if (fmpq_cmp_fmpz(y, hi) >= 0) { ++E; continue; }
    break;
  }
  while (fmpq_cmp_fmpz(y, lo) < 0) {  // cannot happen after stepping up from below; kept for safety of the loop bound
    --E;
    const long k = D - 1 - E;
    pow10(p, std::labs(k));
    if (k >= 0) fmpq_mul_fmpz(y, a, p);
    else fmpq_div_fmpz(y, a, p);
  }
  fmpz_fdiv_qr(q, r, fmpq_numref(y), fmpq_denref(y));
  fmpz_mul_2exp(r, r, 1);
  const int c = fmpz_cmp(r, fmpq_denref(y));
  if (c > 0 || (c == 0 && fmpz_is_odd(q))) fmpz_add_ui(q, q, 1);
  if (fmpz_equal(q, hi)) { fmpz_set(q, lo); ++E; }
  const std::string out = sci(fmpq_sgn(x) < 0, q, E, D);
  fmpz_clear(lo), fmpz_clear(hi), fmpz_clear(p), fmpz_clear(q), fmpz_clear(r);
  fmpq_clear(a);
  fmpq_clear(y);
  return out;
}

// From a ball: the decimal every point rounds to, or "" when they differ.
std::string decimal_of(const arb_t v, long D, slong prec) {
  if (!arb_is_finite(v) || arb_contains_zero(v)) return "";
  Ab a, y, p10, half;
  fmpz_t lo, hi, M;
  fmpz_init(lo), fmpz_init(hi), fmpz_init(M);
  pow10(lo, D - 1);
  pow10(hi, D);
  arb_abs(a.v, v);
  // 10^E <= |x| < 10^(E+1) from the midpoint's binary exponent, then certified
  long E = static_cast<long>(std::floor(static_cast<double>(arf_abs_bound_lt_2exp_si(arb_midref(a.v)) - 1) * 0.3010299956639812));
  std::string out;
  for (int it = 0; it < 64; ++it) {
    const long k = D - 1 - E;
    arb_ui_pow_ui(p10.v, 10, static_cast<ulong>(std::labs(k)), prec);
    if (k >= 0) arb_mul(y.v, a.v, p10.v, prec);
    else arb_div(y.v, a.v, p10.v, prec);
    Ab blo, bhi;
    arb_set_fmpz(blo.v, lo);
    arb_set_fmpz(bhi.v, hi);
    if (arb_ge(y.v, bhi.v)) { ++E; continue; }
    if (arb_lt(y.v, blo.v)) { --E; continue; }
    if (!(arb_ge(y.v, blo.v) && arb_lt(y.v, bhi.v))) break;
    arb_set_d(half.v, 0.5);
    arb_add(y.v, y.v, half.v, prec);
    arb_floor(y.v, y.v, prec);
    if (!arb_get_unique_fmpz(M, y.v)) break;
    if (fmpz_equal(M, hi)) { fmpz_set(M, lo); ++E; }
    out = sci(arb_is_negative(v), M, E, D);
    break;
  }
  fmpz_clear(lo), fmpz_clear(hi), fmpz_clear(M);
  return out;
}

// f is rational when every head has equal scores or equal values v^T x_r; then out = f (beta included).
bool rational_f(fmpq_t out, const std::vector<RatHead>& heads, const Qn& beta, int d, const Query& q) {
  fmpq_set(out, beta.v);
  const auto& xN = q.back().token;
  for (const auto& h : heads) {
    std::vector<Qn> s(q.size()), c(q.size());
    for (size_t r = 0; r < q.size(); ++r) {
      for (int i = 0; i < d; ++i) {
        Qn wx;  // (W x_N + c)_i
        for (int j = 0; j < d; ++j) fmpq_addmul(wx.v, h.W[static_cast<size_t>(i) * d + j].v, xN[static_cast<size_t>(j)].v);
        if (!h.c.empty()) fmpq_add(wx.v, wx.v, h.c[static_cast<size_t>(i)].v);
        fmpq_addmul(s[r].v, q[r].token[static_cast<size_t>(i)].v, wx.v);
        fmpq_addmul(c[r].v, h.v[static_cast<size_t>(i)].v, q[r].token[static_cast<size_t>(i)].v);
      }
    }
    bool same_s = true, same_c = true;
    for (size_t r = 1; r < q.size(); ++r) {
      same_s = same_s && s[r] == s[0];
      same_c = same_c && c[r] == c[0];
    }
    if (same_c) {
      fmpq_add(out, out, c[0].v);
    } else if (same_s) {
      Qn num, len;
      for (size_t r = 0; r < q.size(); ++r) {
        Qn k(q[r].count);
        fmpq_addmul(num.v, k.v, c[r].v);
        fmpq_add(len.v, len.v, k.v);
      }
      fmpq_div(num.v, num.v, len.v);
      fmpq_add(out, out, num.v);
    } else {
      return false;
    }
  }
  return true;
}

// The model's "scale": absent (1) or "sqrt(m)" with m a squarefree integer
// of at most 18 digits: every score is multiplied by sqrt(m).
long read_scale_root(const json& m, const std::string& mp) {
  if (!m.contains("scale")) return 1;
  const json& s = m["scale"];
  const std::string t = s.is_string() ? s.get<std::string>() : "";
  const bool shape = t.size() > 6 && t.size() <= 24 && t.compare(0, 5, "sqrt(") == 0 && t.back() == ')' &&
                     t.find_first_not_of("0123456789", 5) == t.size() - 1 && t[5] != '0';
  if (!shape) bad(at(mp, "scale"), "expected \"sqrt(m)\" with m a positive integer (the scores' irrational factor)");
  const long root = std::stol(t.substr(5, t.size() - 6));
  if (root < 2) bad(at(mp, "scale"), "sqrt(" + std::to_string(root) + ") is rational: a model file writes a rational scale into W and c");
  for (long p = 2; p * p <= root && p <= 1000000; ++p)  // squarefree (checked up to 10^12; larger factors leave m as written)
    if (root % (p * p) == 0) bad(at(mp, "scale"), "sqrt(" + std::to_string(root) + ") has the square factor " + std::to_string(p * p));
  return root;
}

}  // namespace

CertifiedGoldenAnswers certified_golden_answers(const json& doc) {
  CertifiedGoldenAnswers out;
  const long D = need_long(doc, "", "digits", 1, limits::max_digits);
  const long max_bits = need_long(doc, "", "max_bits", limits::min_bits, limits::max_bits);
  const json& m = need(doc, "", "model");
  const std::string mp = "model";
  if (!need(m, mp, "format").is_string() || need(m, mp, "format") != "mhaq-model") bad(at(mp, "format"), "must be \"mhaq-model\"");
  const int d = static_cast<int>(need_long(m, mp, "d", 1, limits::max_d));
  const json& hs = need_array(m, mp, "heads", static_cast<size_t>(limits::max_file_heads));
  if (hs.empty()) bad(at(mp, "heads"), "empty");
  std::vector<RatHead> heads;
  for (size_t h = 0; h < hs.size(); ++h) {
    const std::string hp = at(at(mp, "heads"), h);
    const json& W = need_array(hs[h], hp, "W", static_cast<size_t>(d));
    if (static_cast<long>(W.size()) != d) bad(at(hp, "W"), "expected " + std::to_string(d) + " rows");
    RatHead rh;
    for (size_t r = 0; r < W.size(); ++r)
      for (auto& x : read_qvec(W[r], at(at(hp, "W"), r), d, static_cast<size_t>(limits::max_entry_chars))) rh.W.push_back(std::move(x));
    rh.v = read_qvec(need(hs[h], hp, "v"), at(hp, "v"), d, static_cast<size_t>(limits::max_entry_chars));
    if (hs[h].contains("c")) rh.c = read_qvec(hs[h]["c"], at(hp, "c"), d, static_cast<size_t>(limits::max_entry_chars));
    heads.push_back(std::move(rh));
  }
  Qn beta;  // biases: the model's beta (docs/math/biases.md)
  if (m.contains("beta")) beta = read_rational(m["beta"], at(mp, "beta"), static_cast<size_t>(limits::max_entry_chars));
  const long root = read_scale_root(m, mp);
  const std::vector<RatHead> canon = canonical(heads);
  const json& qs = need_array(doc, "", "queries", static_cast<size_t>(limits::max_golden_queries));
  const json& as = need_array(doc, "", "answers", static_cast<size_t>(limits::max_golden_queries));
  if (as.size() != qs.size()) bad("answers", std::to_string(as.size()) + " answers for " + std::to_string(qs.size()) + " queries");
  // Work before any evaluation: (runs + d) d H per query, at most max_golden_eval_work.
  long work = 0;
  for (size_t i = 0; i < qs.size(); ++i) {
    const json& runs = need_array(qs[i], at("queries", i), "runs", static_cast<size_t>(limits::max_runs));
    work += (static_cast<long>(runs.size()) + d) * d * static_cast<long>(hs.size());
    if (work > limits::max_golden_eval_work)
      bad("queries", "re-deriving the answers takes more than the limit of " + std::to_string(limits::max_golden_eval_work) + " steps ((runs + d) d H summed over the queries)");
  }
  for (size_t i = 0; i < qs.size(); ++i) {
    const std::string qp = at("queries", i), ap = at("answers", i);
    const json& runs = need_array(qs[i], qp, "runs", static_cast<size_t>(limits::max_runs));
    if (runs.empty()) bad(at(qp, "runs"), "empty");
    Query q;
    for (size_t r = 0; r < runs.size(); ++r) {
      const std::string rp = at(at(qp, "runs"), r);
      Run run;
      run.token = read_qvec(need(runs[r], rp, "token"), at(rp, "token"), d, static_cast<size_t>(limits::max_entry_chars));
      run.count = need_long(runs[r], rp, "count", 1, 1L << 30);
      q.push_back(std::move(run));
    }
    const json& ball = need(as[i], ap, "ball");
    const Qn mid = read_rational(need(ball, at(ap, "ball"), "mid"), at(at(ap, "ball"), "mid"), static_cast<size_t>(limits::max_number_chars));
    const Qn rad = read_rational(need(ball, at(ap, "ball"), "rad"), at(at(ap, "ball"), "rad"), static_cast<size_t>(limits::max_number_chars));
    if (fmpq_sgn(rad.v) < 0) bad(at(at(ap, "ball"), "rad"), "negative radius");
    Qn exact;
    std::string dec;
    if (rational_f(exact.v, canon, beta, d, q)) {  // no heads: f = beta
      dec = decimal_of(exact.v, D);
      // the recorded ball contains the exact value: |mid - f| <= rad
      Qn diff;
      fmpq_sub(diff.v, mid.v, exact.v);
      fmpq_abs(diff.v, diff.v);
      if (fmpq_cmp(diff.v, rad.v) > 0) out.failures.push_back({at(ap, "ball"), "does not contain the exact value " + exact.str().substr(0, 80)});
      else ++out.checks;
    } else {
      bool contained = false;
      Qn lo, hi;
      fmpq_sub(lo.v, mid.v, rad.v);
      fmpq_add(hi.v, mid.v, rad.v);
      for (slong prec = static_cast<slong>(3.33 * static_cast<double>(D)) + 64;; prec = std::min<slong>(2 * prec, max_bits)) {
        Ab f, fb, r, b;
        arb_set_fmpq(b.v, beta.v, prec);
        eval_arb(f, to_balls(canon, prec), d, q, prec, &b, root);
        if (dec.empty()) dec = decimal_of(f.v, D, prec);
        if (!contained) {  // every point of f lies in [mid - rad, mid + rad] (both ends rounded outwards as balls)
          arb_set_fmpq(fb.v, hi.v, prec);
          arb_set_fmpq(r.v, lo.v, prec);
          contained = arb_le(f.v, fb.v) && arb_ge(f.v, r.v);
        }
        if ((!dec.empty() && contained) || prec >= max_bits) break;
      }
      if (dec.empty()) out.failures.push_back({at(ap, "decimal"), "not decided within max_bits = " + std::to_string(max_bits) + " by the checker's evaluator"});
      if (!contained) out.failures.push_back({at(ap, "ball"), "not shown to contain f within max_bits = " + std::to_string(max_bits)});
      else ++out.checks;
    }
    out.decimals.push_back(dec);
    ++out.checks;
  }
  return out;
}

}  // namespace mhaq::check
