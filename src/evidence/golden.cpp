// Golden test vectors: export (from a real exact learner run) and an
// independent re-derivation of every field. Schema: tests/golden/SCHEMA.md.
#include "mhaq/evidence/golden.hpp"
#include "golden_internal.hpp"

#include <arb.h>
#include <arb_poly.h>
#include <flint/fmpq.h>
#include <flint/fmpz.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "mhaq/arith/qtau_access.hpp"
#include "mhaq/base/error.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/base/text.hpp"
#include "mhaq/run/arith_policy.hpp"
#include "mhaq/run/json_out.hpp"
#include "mhaq/run/recover_limits.hpp"
#include "mhaq/stages/grid_guard.hpp"
#include "mhaq/stages/learner.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "mhaq/analysis/design_search.hpp"
#include "mhaq/check/golden_transformer.hpp"
#include "mhaq/stages/transformer_learner.hpp"
#include "mhaq/evidence/golden_certified.hpp"
#include "mhaq/model/certified_eval.hpp"

namespace mhaq {

using namespace golden_internal;

namespace golden_internal {

void check_digits(long D) {
  if (D < 1 || D > 100000) throw_input("golden: digits must be in [1, 100000], got " + std::to_string(D));
}

}  // namespace golden_internal

// ------------------------------------------------------------ decimals
std::string golden_decimal(const Rational& x, long D) {
  check_digits(D);
  return decimal_of_rational(x, D);
}

namespace golden_internal {
// Encloses num(tau)/den(tau), tau = e^{1/L}, at `prec` bits.
void qtau_arb(arb_t out, const QTau& x, long L, long prec) {
  flint::Arb tau, n, dn;
  arb_poly_t pn, pd;
  arb_poly_init(pn);
  arb_poly_init(pd);
  arb_set_si(tau.v, 1);
  arb_div_si(tau.v, tau.v, L, prec);
  arb_exp(tau.v, tau.v, prec);
  arb_poly_set_fmpz_poly(pn, QTauAccess::raw(x)->num, prec);
  arb_poly_set_fmpz_poly(pd, QTauAccess::raw(x)->den, prec);
  arb_poly_evaluate(n.v, pn, tau.v, prec);
  arb_poly_evaluate(dn.v, pd, tau.v, prec);
  arb_div(out, n.v, dn.v, prec);
  arb_poly_clear(pn);
  arb_poly_clear(pd);
}
}  // namespace golden_internal

std::string golden_decimal(const QTau& x, long L, long D) {
  check_digits(D);
  if (L < 1) throw_input("golden: L must be positive");
  Rational q;
  if (QTauAccess::is_rational(x, q)) return golden_decimal(q, D);
  // A non-constant element of Q(tau) is transcendental (tau is), so it is never
  // a decimal tie nor a power of ten, and the loop below terminates.
  const long deg = QTauAccess::degree(x);
  const long cap = 1L << 22;
  flint::Arb v;
  std::string result;
  for (long prec = static_cast<long>(3.33 * D) + 64 + 2 * static_cast<long>(std::log2(static_cast<double>(deg) + 2)); prec <= cap; prec *= 2) {
    qtau_arb(v.v, x, L, prec);
    if (decimal_of_ball(v.v, D, prec, result)) break;
  }
  if (result.empty()) throw_internal("golden decimal: rounding not certified within " + std::to_string(cap) + " bits");
  return result;
}

namespace golden_internal {

// ------------------------------------------------------------ JSON building
std::string rat_of(const QTau& x, const std::string& what) {
  Rational q;
  if (!QTauAccess::is_rational(x, q)) throw_internal("golden: " + what + " is not rational");
  return q.str();
}

ojson answer_json(size_t index, const QTau& x, long L, long digits) {
  return ojson{{"index", index}, {"exact", qtau_json(x)}, {"decimal", golden_decimal(x, L, digits)}};
}

// Poles sorted by exponent (a pair's poles are distinct), residues alongside.
ojson poles_json(const std::vector<long>& n, const std::vector<std::string>& c, long L) {
  std::vector<size_t> idx(n.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return n[a] < n[b]; });
  ojson out = ojson::array();
  for (size_t i : idx)
    out.push_back(ojson{{"n", n[i]}, {"log_r", (Rational(n[i]) / Rational(L)).str()}, {"c", c[i]}});
  return out;
}

ojson heads_json(const std::vector<LearnedHead<QTau>>& hs) {
  ojson out = ojson::array();
  for (size_t h = 0; h < hs.size(); ++h) {
    ojson W = ojson::array();
    for (int i = 0; i < hs[h].W.rows(); ++i) {
      ojson row = ojson::array();
      for (int j = 0; j < hs[h].W.cols(); ++j) row.push_back(rat_of(hs[h].W(i, j), "recovered W entry"));
      W.push_back(row);
    }
    ojson v = ojson::array();
    for (const auto& x : hs[h].v) v.push_back(rat_of(x, "recovered v entry"));
    out.push_back(ojson{{"W", W}, {"v", v}});
    if (!hs[h].c.empty()) {
      ojson c = ojson::array();
      for (const auto& x : hs[h].c) c.push_back(rat_of(x, "recovered c entry"));
      out.back()["c"] = c;
    }
  }
  return out;
}

const char* kDecimalFormat =
    "scientific [-]d.ddd...e[+-]XX with exactly `digits` significant digits, correctly rounded to nearest "
    "(ties to even; ties occur only for rational values), every digit certified with Arb; zero is 0.000...e+00";

// The grid of a golden file's design: quarters, the final tokens' entries
// about [-1, 1]. The paper's exact grid (integers in [-5, 5]) puts the
// log-poles of a scaled or tuned design far outside the window k = 0..2H
// sees; quarters keep L = 16 m small.
TokenSpec golden_design_grid() { return TokenSpec{4, 4}; }

// A design's draws for a golden file (GoldenInputs::design), on
// golden_design_grid(); pilot_queries receives a tuned pilot's query count.
std::optional<Draws> golden_design(const GoldenInputs& in, const LearnOptions& lo, long& pilot_queries) {
  pilot_queries = 0;
  if (in.design == Design::paper) return std::nullopt;
  const TokenSpec grid = golden_design_grid();
  if (in.design == Design::scaled) {
    Rng rng(lo.seed);
    return draw_scaled(rng, in.model.d, lo.H, grid);
  }
  const long bits = arith_facts(in.arith).exact ? 256 : in.bits;
  PrecisionScope scope(bits);
  OracleStack<Mpfr> oracle = OracleStack<Mpfr>::model(in.model, grid.den);  // the black box, asked again by the pilot
  TunedOptions t;
  t.H = lo.H;
  t.heads_is_bound = lo.heads_is_bound;
  t.seed = lo.seed;
  t.tokens = grid;
  t.pilot_bits = bits;
  const TunedDesign td = choose_tuned_design<Mpfr>(oracle.top(), t);
  pilot_queries = td.pilot_queries;
  return td.draws;
}

TokenSpec golden_query_grid(int d, const LearnOptions& lo) {
  const GridGuard g = grid_guard(d, lo);
  return grid_guard_certain(g, lo) && g.range > lo.tokens.range ? TokenSpec{g.range, lo.tokens.den} : lo.tokens;
}

// The token range a file must state so that its queries lie on the grid
// check: the design's largest entry (times den), at least the default.
long file_token_range(const LearnOptions& lo) {
  long r = lo.tokens.range;
  if (lo.draws)
    for (const QMat* M : {&lo.draws->B, &lo.draws->Delta})
      for (int i = 0; i < M->rows(); ++i)
        for (int j = 0; j < M->cols(); ++j) {
          Rational a = M->operator()(i, j) * Rational(lo.tokens.den);
          if (a.sign() < 0) a = -a;
          r = std::max(r, a.floor().to_long() + (a.is_integer() ? 0 : 1));
        }
  return r;
}

ojson inputs_json(const GoldenInputs& in, int H, bool bound, const TokenSpec& tok, long pilot_queries) {
  ojson j{{"model_source", in.model_source}};
  if (in.model_source == "generated") {
    const GenerateOptions& g = in.generate;
    j["generate"] = ojson{{"d", g.d},           {"heads", g.heads},     {"seed", g.seed},        {"w_range", g.w_range},
                          {"w_den", g.w_den},   {"v_range", g.v_range}, {"v_den", g.v_den},      {"share_w", g.share_w},
                          {"cancel_v", g.cancel_v}};
    if (g.bias) j["generate"]["bias"] = true;
  }
  j["seed"] = in.seed;
  j["learner_seed"] = learner_seed(in.seed);
  j["heads_learner"] = H;
  if (bound) j["heads_is_bound"] = true;  // only H0 >= H known (absent: H known)
  j["schedule"] = "paper";
  if (in.design != Design::paper) {
    j["design"] = design_name(in.design);
    if (in.design == Design::tuned) j["pilot_queries"] = pilot_queries;
  }
  j["token_range"] = tok.range;
  j["token_den"] = tok.den;
  return j;
}

const char* kBinaryFormat =
    "ball and mpfr values are exact dyadic rationals p/q (q a power of two): the binary numbers the run held; "
    "a ball is {mid, rad}";

ojson header_json(long L, long digits, Arith arith, long bits) {
  ojson h{{"format", "mhaq-golden"}, {"version", golden_version}, {"arith", arith_name(arith)}};
  if (!arith_facts(arith).exact) h["bits"] = bits;
  h["tau"] = "e^(1/L)";
  h["L"] = L;
  h["digits"] = digits;
  h["decimal_format"] = kDecimalFormat;
  if (!arith_facts(arith).exact) h["binary_format"] = kBinaryFormat;
  return h;
}

LearnOptions learn_options(int H, bool bound, std::uint64_t seed, const TokenSpec& tok, int threads, bool bias) {
  LearnOptions lo;
  lo.H = H;
  lo.heads_is_bound = bound;
  lo.bias = bias;
  lo.schedule = Schedule::paper;
  lo.seed = learner_seed(seed);
  lo.tokens = tok;
  lo.threads = threads;
  lo.repair = false;  // a golden file records every pair's own type-(H,H) fit
  return lo;
}

// The ball or mpfr run of the same learner on the same model and draws: its
// answers go to answers[i][key], its pair fits to pairs[p][key] and its heads
// to the returned object (doc[key]). Same queries as the exact run, since the
// draws do not depend on the arithmetic.
template <class T>
ojson binary_run(ojson& doc, const Model& model, const LearnOptions& lo, long bits, const char* key) {
  PrecisionScope scope(bits);
  OracleStack<T> stack = OracleStack<T>::model(model, lo.tokens.den).recorded();
  const RecordingOracle<T>& rec = stack.record();
  Oracle<T>& black_box = stack.top();
  const LearnResult<T> res = learn(black_box, lo);
  ojson& as = doc["answers"];
  for (size_t i = 0; i < rec.answers.size() && i < as.size(); ++i) as[i][key] = binary_json(rec.answers[i]);
  ojson& ps = doc["pairs"];
  for (size_t p = 0; p < res.fits.size() && p < ps.size(); ++p) {
    ojson poles = ojson::array();
    for (size_t h = 0; h < res.fits[p].r.size(); ++h)
      poles.push_back(ojson{{"r", binary_json(res.fits[p].r[h])}, {"c", binary_json(res.fits[p].c[h])}});
    ps[p][key] = ojson{{"P", binary_json(res.fits[p].P)}, {"poles", poles}};
  }
  ojson run{{"queries", black_box.queries()}, {"max_length", black_box.max_length()}, {"heads_recovered", res.heads.size()},
            {"heads", heads_binary_json(res.heads)}};
  if (res.beta) run["beta"] = binary_json(*res.beta);
  const T* beta = res.beta ? &*res.beta : nullptr;
  ArithPolicy<T>::balls([&](const auto& heads) { run["contains_truth"] = ball_heads_contain(heads, model.canonical(), beta); }, res.heads);
  return run;
}

ojson binary_run(ojson& doc, const Model& model, const LearnOptions& lo, Arith arith, long bits) {
  std::optional<ojson> run;
  with_arith(arith, [&]<class T>() {
    ArithPolicy<T>::chosen_bits([&](auto t) { run = binary_run<typename decltype(t)::type>(doc, model, lo, bits, arith_name(arith)); }, std::type_identity<T>{});
  });
  if (!run) throw Error(ErrorKind::usage, "golden files record exact, ball or mpfr runs");
  return *run;
}

// The file's summary: counts (with biases also the count with biases) and the exact match.
ojson summary_json(const LearnResult<QTau>& res, const LearnOptions& lo, int d, long queries, long max_length, const Model& canon) {
  ojson s{{"queries", queries}, {"paper_bound", paper_query_bound(d, lo.H)}};
  if (lo.bias) s["bias_count"] = schedule_query_count(lo.schedule, d, lo.H, 0, true);  // 4Hd^2 + 4Hd - 2H + 1
  s["max_length"] = max_length;
  s["heads_recovered"] = res.heads.size();
  s["self_checked"] = res.self_check == Truth::yes;
  s["exact_match"] = exact_heads_match(res.heads, canon, res.beta ? &*res.beta : nullptr);
  return s;
}

}  // namespace golden_internal

// ------------------------------------------------------------ export
std::string golden_export_transformer(const GoldenInputs& in);

std::string golden_export(const GoldenInputs& in) {
  if (in.is_transformer) return golden_export_transformer(in);
  check_digits(in.digits);
  in.model.validate();
  if (arith_facts(in.arith).fixed_bits > 0) throw Error(ErrorKind::usage, "golden files record exact, ball or mpfr runs");
  if (in.threads < 1) throw Error(ErrorKind::usage, "golden: threads must be positive");
  const Model canon = in.model.canonical();
  const int H = in.max_heads > 0 ? in.max_heads : in.heads > 0 ? in.heads : canon.num_heads();
  if (H < 1) throw_degenerate("the model's canonical form has no heads (f is identically zero)");
  LearnOptions lo = learn_options(H, in.max_heads > 0, in.seed, in.design == Design::paper ? default_tokens(Arith::exact) : golden_design_grid(), in.threads,
                                  in.model.has_bias());
  long pilot_queries = 0;
  lo.draws = golden_design(in, lo, pilot_queries);
  const TokenSpec file_tok{file_token_range(lo), lo.tokens.den};
  {
    LearnOptions wl = lo;  // the witnesses' grid, if the run asks them, around the file's own
    wl.tokens = file_tok;
    check_exact_tau_degree(in.model, golden_query_grid(in.model.d, wl), ErrorKind::usage, "golden export --design", "use smaller W entries, or no --design");
  }
  OracleStack<QTau> stack = OracleStack<QTau>::model(in.model, lo.tokens.den).recorded();
  const RecordingOracle<QTau>& rec = stack.record();
  Oracle<QTau>& black_box = stack.top();
  const LearnResult<QTau> res = learn(black_box, lo);
  const long L = QTauAccess::L(black_box.field());

  ojson doc = header_json(L, in.digits, in.arith, in.bits);
  doc["inputs"] = inputs_json(in, lo.H, lo.heads_is_bound, file_tok, pilot_queries);
  doc["model"] = model_json(in.model);
  doc["model_canonical"] = model_json(canon);
  doc["plan"] = plan_json(res.plan, res.redraws);
  ojson qs = ojson::array(), as = ojson::array();
  for (size_t i = 0; i < rec.queries.size(); ++i) {
    qs.push_back(query_json(i, rec.queries[i]));
    as.push_back(answer_json(i, rec.answers[i], L, in.digits));
  }
  doc["queries"] = qs;
  doc["answers"] = as;
  ojson pairs = ojson::array();
  for (size_t p = 0; p < res.plan.pairs.size(); ++p) {
    const PairSpec& s = res.plan.pairs[p];
    ojson pj = pair_spec_json(res.plan, p);
    // f(0) = v^T b for the pair's final token, straight from the model (the
    // check re-derives it by chaining the file's answers instead).
    pj["f0"] = rat_of(evaluate_exact(in.model, Query{Run{s.final_token, 1}}, L), "f(0)");
    const PairFit<QTau>& f = res.fits[p];
    pj["P"] = rat_of(f.P, "pair limit P");
    std::vector<long> n;
    std::vector<std::string> c;
    for (size_t h = 0; h < f.r.size(); ++h) {
      long e = 0;
      if (!QTauAccess::is_tau_power(f.r[h], e)) throw_internal("golden: a pole is not a power of tau");
      n.push_back(e);
      c.push_back(rat_of(f.c[h], "residue"));
    }
    pj["poles"] = poles_json(n, c, L);
    pairs.push_back(pj);
  }
  doc["pairs"] = pairs;
  doc["heads"] = heads_json(res.heads);
  if (res.beta) doc["beta"] = rat_of(*res.beta, "recovered beta");
  if (!arith_facts(in.arith).exact) doc[arith_name(in.arith)] = binary_run(doc, in.model, lo, in.arith, in.bits);
  doc["summary"] = summary_json(res, lo, in.model.d, black_box.queries(), black_box.max_length(), canon);
  return dump_layout(doc);
}

}  // namespace mhaq
