// The checker's own evaluation of a certified golden file's answers
// (include/mhaq/check/golden_certified.hpp): its own readers, its own Arb
// evaluator of f (eval_arb), its own rounding. Nothing here comes from
// mhaq_lib (tests/check_separation.sh).
#include "mhaq/check/golden_certified.hpp"

#include <fstream>

#include <cmath>

#include "check_internal.hpp"
#include "strict_read.hpp"
#include "mhaq/check/json_stream.hpp"
#include "mhaq/check/limits.hpp"

namespace mhaq::check {

namespace {

using json = nlohmann::json;

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

namespace {
// What every answer's check needs: the digits, the precision cap and the canonical heads.
struct CertModel {
  long D = 0, max_bits = 0;
  int d = 0;
  size_t heads = 0;  // as listed in the file
  std::vector<RatHead> canon;
  Qn beta;        // biases: the model's beta (docs/math/biases.md)
  long root = 1;  // every score times sqrt(root)
};

CertModel read_model(const json& doc) {
  CertModel cm;
  cm.D = need_long(doc, "", "digits", 1, limits::max_digits);
  cm.max_bits = need_long(doc, "", "max_bits", limits::min_bits, limits::max_bits);
  const json& m = need(doc, "", "model");
  const std::string mp = "model";
  if (!need(m, mp, "format").is_string() || need(m, mp, "format") != "mhaq-model") bad(at(mp, "format"), "must be \"mhaq-model\"");
  cm.d = static_cast<int>(need_long(m, mp, "d", 1, limits::max_d));
  const int d = cm.d;
  const json& hs = need_array(m, mp, "heads", static_cast<size_t>(limits::max_file_heads));
  if (hs.empty()) bad(at(mp, "heads"), "empty");
  std::vector<RatHead> heads;
  for (size_t h = 0; h < hs.size(); ++h) {
    const std::string hp = at(at(mp, "heads"), h);
    const json& W = need_array(hs[h], hp, "W", static_cast<size_t>(d));
    if (static_cast<long>(W.size()) != d) bad(at(hp, "W"), "expected " + std::to_string(d) + " rows");
    RatHead rh;
    for (size_t r = 0; r < W.size(); ++r)
      for (auto& x : golden_io::read_qvec(W[r], at(at(hp, "W"), r), d, static_cast<size_t>(limits::max_entry_chars))) rh.W.push_back(std::move(x));
    rh.v = golden_io::read_qvec(need(hs[h], hp, "v"), at(hp, "v"), d, static_cast<size_t>(limits::max_entry_chars));
    if (hs[h].contains("c")) rh.c = golden_io::read_qvec(hs[h]["c"], at(hp, "c"), d, static_cast<size_t>(limits::max_entry_chars));
    heads.push_back(std::move(rh));
  }
  cm.heads = hs.size();
  if (m.contains("beta")) cm.beta = golden_io::read_rational(m["beta"], at(mp, "beta"), static_cast<size_t>(limits::max_entry_chars));
  cm.root = read_scale_root(m, mp);
  cm.canon = canonical(heads);
  return cm;
}

// Work before any evaluation: (runs + d) d H per query, at most max_golden_eval_work.
void check_work(const CertModel& cm, const std::vector<size_t>& runs) {
  long work = 0;
  for (size_t r : runs) {
    work += (static_cast<long>(r) + cm.d) * cm.d * static_cast<long>(cm.heads);
    if (work > limits::max_golden_eval_work)
      bad("queries", "re-deriving the answers takes more than the limit of " + std::to_string(limits::max_golden_eval_work) + " steps ((runs + d) d H summed over the queries)");
  }
}

size_t runs_of(const json& q, size_t i) { return need_array(q, at("queries", i), "runs", static_cast<size_t>(limits::max_runs)).size(); }

// Answer i against the checker's own evaluation of query i.
void check_answer(const CertModel& cm, const json& query, const json& answer, size_t i, CertifiedGoldenAnswers& out) {
  const long D = cm.D, max_bits = cm.max_bits;
  const int d = cm.d;
  const std::vector<RatHead>& canon = cm.canon;
  const std::string qp = at("queries", i), ap = at("answers", i);
  const json& runs = need_array(query, qp, "runs", static_cast<size_t>(limits::max_runs));
  if (runs.empty()) bad(at(qp, "runs"), "empty");
  Query q;
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::string rp = at(at(qp, "runs"), r);
    Run run;
    run.token = golden_io::read_qvec(need(runs[r], rp, "token"), at(rp, "token"), d, static_cast<size_t>(limits::max_entry_chars));
    run.count = need_long(runs[r], rp, "count", 1, 1L << 30);
    q.push_back(std::move(run));
  }
  const json& ball = need(answer, ap, "ball");
  const Qn mid = golden_io::read_rational(need(ball, at(ap, "ball"), "mid"), at(at(ap, "ball"), "mid"), static_cast<size_t>(limits::max_number_chars));
  const Qn rad = golden_io::read_rational(need(ball, at(ap, "ball"), "rad"), at(at(ap, "ball"), "rad"), static_cast<size_t>(limits::max_number_chars));
  if (fmpq_sgn(rad.v) < 0) bad(at(at(ap, "ball"), "rad"), "negative radius");
  Qn exact;
  std::string dec;
  if (rational_f(exact.v, canon, cm.beta, d, q)) {  // no heads: f = beta
    dec = decimal_exact(exact.v, D);
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
      arb_set_fmpq(b.v, cm.beta.v, prec);
      eval_arb(f, to_balls(canon, prec), d, q, prec, &b, cm.root);
      if (dec.empty()) dec = decimal_ball(f.v, D, prec);
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
}  // namespace

CertifiedGoldenAnswers certified_golden_answers(const json& doc) {
  CertifiedGoldenAnswers out;
  const CertModel cm = read_model(doc);
  const json& qs = need_array(doc, "", "queries", static_cast<size_t>(limits::max_golden_queries));
  const json& as = need_array(doc, "", "answers", static_cast<size_t>(limits::max_golden_queries));
  if (as.size() != qs.size()) bad("answers", std::to_string(as.size()) + " answers for " + std::to_string(qs.size()) + " queries");
  std::vector<size_t> runs;
  for (size_t i = 0; i < qs.size(); ++i) runs.push_back(runs_of(qs[i], i));
  check_work(cm, runs);
  for (size_t i = 0; i < qs.size(); ++i) check_answer(cm, qs[i], as[i], i, out);
  return out;
}

CertifiedGoldenAnswers certified_golden_answers_file(const std::string& path) {
  // Pass 1: the model, the answers (small) and each query's run count; pass 2: the queries one at a time.
  json top = json::object();
  std::vector<size_t> runs;
  std::vector<std::string> as;  // each answer's text, parsed again when its query comes
  JsonStream first;
  first.streamed = {"queries", "answers"};
  first.member = [&](const std::string& key, json&& v) {
    if (key == "digits" || key == "max_bits" || key == "model") top[key] = std::move(v);
  };
  first.element = [&](const std::string& key, json&& e) {
    const size_t n = key == "answers" ? as.size() : runs.size();
    if (n >= static_cast<size_t>(limits::max_golden_queries)) bad(key, "more than the limit of " + std::to_string(limits::max_golden_queries));
    if (key == "answers") as.push_back(e.dump());
    else runs.push_back(runs_of(e, n));
  };
  {
    std::ifstream in = open_json_file(path);
    stream_json(in, first);
  }
  const CertModel cm = read_model(top);
  if (as.size() != runs.size()) bad("answers", std::to_string(as.size()) + " answers for " + std::to_string(runs.size()) + " queries");
  check_work(cm, runs);
  CertifiedGoldenAnswers out;
  size_t i = 0;
  JsonStream second;
  second.streamed = {"queries"};
  second.member = [](const std::string&, json&&) {};
  second.element = [&](const std::string&, json&& q) {
    check_answer(cm, q, json::parse(as[i]), i, out);
    ++i;
  };
  std::ifstream in = open_json_file(path);
  stream_json(in, second);
  return out;
}

}  // namespace mhaq::check
