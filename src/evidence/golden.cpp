// Golden test vectors: export (from a real exact learner run) and an
// independent re-derivation of every field. Schema: tests/golden/SCHEMA.md.
#include "mhaq/evidence/golden.hpp"

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
#include "mhaq/run/json_out.hpp"
#include "mhaq/run/recover_limits.hpp"
#include "mhaq/stages/learner.hpp"
#include "mhaq/model/model_oracle.hpp"
#include "mhaq/stages/1-oracle/recording_oracle.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "mhaq/analysis/design_search.hpp"
#include "mhaq/check/golden_transformer.hpp"
#include "mhaq/model/transformer_oracle.hpp"
#include "mhaq/stages/transformer_learner.hpp"
#include "mhaq/evidence/golden_certified.hpp"
#include "mhaq/model/certified_eval.hpp"

namespace mhaq {

namespace {

// ------------------------------------------------------------ small RAII
struct Z {
  fmpz_t v;
  Z() { fmpz_init(v); }
  ~Z() { fmpz_clear(v); }
  Z(const Z&) = delete;
  Z& operator=(const Z&) = delete;
};
struct A {
  arb_t v;
  A() { arb_init(v); }
  ~A() { arb_clear(v); }
  A(const A&) = delete;
  A& operator=(const A&) = delete;
};

void check_digits(long D) {
  if (D < 1 || D > 100000) throw_input("golden: digits must be in [1, 100000], got " + std::to_string(D));
}

}  // namespace

// ------------------------------------------------------------ decimals
std::string golden_decimal(const Rational& x, long D) {
  check_digits(D);
  return decimal_of_rational(x, D);
}

namespace {
// Encloses num(tau)/den(tau), tau = e^{1/L}, at `prec` bits.
void qtau_arb(arb_t out, const QTau& x, long L, long prec) {
  A tau, n, dn;
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
}  // namespace

std::string golden_decimal(const QTau& x, long L, long D) {
  check_digits(D);
  if (L < 1) throw_input("golden: L must be positive");
  Rational q;
  if (QTauAccess::is_rational(x, q)) return golden_decimal(q, D);
  // A non-constant element of Q(tau) is transcendental (tau is), so it is never
  // a decimal tie nor a power of ten, and the loop below terminates.
  const long deg = QTauAccess::degree(x);
  const long cap = 1L << 22;
  A v;
  std::string result;
  for (long prec = static_cast<long>(3.33 * D) + 64 + 2 * static_cast<long>(std::log2(static_cast<double>(deg) + 2)); prec <= cap; prec *= 2) {
    qtau_arb(v.v, x, L, prec);
    if (decimal_of_ball(v.v, D, prec, result)) break;
  }
  if (result.empty()) throw_internal("golden decimal: rounding not certified within " + std::to_string(cap) + " bits");
  return result;
}

namespace {

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
  const long bits = in.arith == Arith::exact ? 256 : in.bits;
  PrecisionScope scope(bits);
  ModelOracle<Mpfr> oracle(in.model, grid.den);  // the black box, asked again by the pilot
  TunedOptions t;
  t.H = lo.H;
  t.heads_is_bound = lo.heads_is_bound;
  t.seed = lo.seed;
  t.tokens = grid;
  t.pilot_bits = bits;
  const TunedDesign td = choose_tuned_design<Mpfr>(oracle, t);
  pilot_queries = td.pilot_queries;
  return td.draws;
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

ojson inputs_json(const GoldenInputs& in, int H, bool bound, const TokenSpec& tok, long pilot_queries = 0) {
  ojson j{{"model_source", in.model_source}};
  if (in.model_source == "generated") {
    const GenerateOptions& g = in.generate;
    j["generate"] = ojson{{"d", g.d},           {"heads", g.heads},     {"seed", g.seed},        {"w_range", g.w_range},
                          {"w_den", g.w_den},   {"v_range", g.v_range}, {"v_den", g.v_den},      {"share_w", g.share_w},
                          {"cancel_v", g.cancel_v}};
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
  if (arith != Arith::exact) h["bits"] = bits;
  h["tau"] = "e^(1/L)";
  h["L"] = L;
  h["digits"] = digits;
  h["decimal_format"] = kDecimalFormat;
  if (arith != Arith::exact) h["binary_format"] = kBinaryFormat;
  return h;
}

LearnOptions learn_options(int H, bool bound, std::uint64_t seed, const TokenSpec& tok, int threads) {
  LearnOptions lo;
  lo.H = H;
  lo.heads_is_bound = bound;
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
  ModelOracle<T> oracle(model, lo.tokens.den);
  RecordingOracle<T> rec(oracle);
  Oracle<T>& black_box = rec;
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
  ojson heads = ojson::array();
  for (const auto& h : res.heads) {
    ojson W = ojson::array();
    for (int i = 0; i < h.W.rows(); ++i) {
      ojson row = ojson::array();
      for (int j = 0; j < h.W.cols(); ++j) row.push_back(binary_json(h.W(i, j)));
      W.push_back(row);
    }
    ojson v = ojson::array();
    for (const auto& x : h.v) v.push_back(binary_json(x));
    heads.push_back(ojson{{"W", W}, {"v", v}});
  }
  ojson run{{"queries", black_box.queries()}, {"max_length", black_box.max_length()}, {"heads_recovered", res.heads.size()}, {"heads", heads}};
  if constexpr (std::is_same_v<T, Ball>) run["contains_truth"] = ball_heads_contain(res.heads, model.canonical());
  return run;
}

ojson binary_run(ojson& doc, const Model& model, const LearnOptions& lo, Arith arith, long bits) {
  if (arith == Arith::ball) return binary_run<Ball>(doc, model, lo, bits, "ball");
  if (arith == Arith::mpfr) return binary_run<Mpfr>(doc, model, lo, bits, "mpfr");
  throw Error(ErrorKind::usage, "golden files record exact, ball or mpfr runs");
}

}  // namespace

// ------------------------------------------------------------ export
std::string golden_export_transformer(const GoldenInputs& in);

std::string golden_export(const GoldenInputs& in) {
  if (in.is_transformer) return golden_export_transformer(in);
  check_digits(in.digits);
  in.model.validate();
  if (in.arith == Arith::ieee) throw Error(ErrorKind::usage, "golden files record exact, ball or mpfr runs");
  if (in.threads < 1) throw Error(ErrorKind::usage, "golden: threads must be positive");
  const Model canon = in.model.canonical();
  const int H = in.max_heads > 0 ? in.max_heads : in.heads > 0 ? in.heads : canon.num_heads();
  if (H < 1) throw_degenerate("the model's canonical form has no heads (f is identically zero)");
  LearnOptions lo = learn_options(H, in.max_heads > 0, in.seed, in.design == Design::paper ? default_tokens(Arith::exact) : golden_design_grid(), in.threads);
  long pilot_queries = 0;
  lo.draws = golden_design(in, lo, pilot_queries);
  const TokenSpec file_tok{file_token_range(lo), lo.tokens.den};
  check_exact_tau_degree(in.model, file_tok, ErrorKind::usage, "golden export --design");
  ModelOracle<QTau> model_oracle(in.model, lo.tokens.den);
  RecordingOracle<QTau> rec(model_oracle);
  Oracle<QTau>& black_box = rec;
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
  if (in.arith != Arith::exact) doc[arith_name(in.arith)] = binary_run(doc, in.model, lo, in.arith, in.bits);
  doc["summary"] = ojson{{"queries", black_box.queries()},
                         {"paper_bound", paper_query_bound(in.model.d, lo.H)},
                         {"max_length", black_box.max_length()},
                         {"heads_recovered", res.heads.size()},
                         {"self_checked", (res.self_check == Truth::yes)},
                         {"exact_match", exact_heads_match(res.heads, canon)}};
  return dump_layout(doc);
}

// ------------------------------------------------------------ check
namespace {

using json = nlohmann::json;

// Readers: every malformed field is Error(input) naming its JSON path
// (the command adds the file name); limits from base/limits.hpp.
const json& need(const json& j, const std::string& key, const std::string& path) { return json_member(j, key, path); }
const json& need_array(const json& j, const std::string& key, const std::string& path, size_t max = static_cast<size_t>(limits::max_plan_queries)) {
  const json& a = need(j, key, path);
  if (!a.is_array()) throw_input(json_key_path(path, key) + ": expected an array, got " + json_shown(a));
  if (a.size() > max) throw_input(json_key_path(path, key) + ": " + std::to_string(a.size()) + " entries, more than the limit of " + std::to_string(max));
  return a;
}
long need_int(const json& j, const std::string& key, const std::string& path, long lo, long hi) {
  return json_long(need(j, key, path), lo, hi, json_key_path(path, key));
}
std::uint64_t need_u64(const json& j, const std::string& key, const std::string& path) { return json_u64(need(j, key, path), json_key_path(path, key)); }
std::string need_str(const json& j, const std::string& key, const std::string& path) {
  const json& a = need(j, key, path);
  if (!a.is_string()) throw_input(json_key_path(path, key) + ": expected a string, got " + json_shown(a));
  return a.get<std::string>();
}
bool need_bool(const json& j, const std::string& key, const std::string& path) {
  const json& a = need(j, key, path);
  if (!a.is_boolean()) throw_input(json_key_path(path, key) + ": expected true or false, got " + json_shown(a));
  return a.get<bool>();
}

Rational parse_rat(const json& e, const std::string& path, size_t max_chars = static_cast<size_t>(limits::max_entry_chars)) {
  if (!e.is_string()) throw_input(path + ": expected a rational string, got " + json_shown(e));
  try {
    return Rational::parse(e.get_ref<const std::string&>(), max_chars);
  } catch (const Error& err) {
    throw_input(path + ": " + err.what());
  }
}

// A query of the file; its tokens must lie on the learner's grid (integers in
// [-3R, 3R] / den: a = b + offset holds at most three drawn entries), so that
// the model's exact value is defined and its tau-degree stays within the bound.
Query parse_query(const json& q, const std::string& path, int d, const TokenSpec& tok) {
  const json& runs = need_array(q, "runs", path, static_cast<size_t>(check::limits::max_runs));
  if (runs.empty()) throw_input(path + ".runs: empty");
  Query out;
  fmpz_t t, R3;
  fmpz_init(t);
  fmpz_init_set_si(R3, 3 * tok.range);
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::string rp = json_index_path(path + ".runs", r);
    const json& tj = need_array(runs[r], "token", rp, static_cast<size_t>(limits::max_d));
    if (static_cast<int>(tj.size()) != d) {
      fmpz_clear(t);
      fmpz_clear(R3);
      throw_input(rp + ".token: " + std::to_string(tj.size()) + " entries, the model has d = " + std::to_string(d));
    }
    Run run;
    for (size_t k = 0; k < tj.size(); ++k) {
      const std::string kp = json_index_path(rp + ".token", k);
      Rational x;
      try {
        x = parse_rat(tj[k], kp);
      } catch (...) {
        fmpz_clear(t);
        fmpz_clear(R3);
        throw;
      }
      fmpz_mul_si(t, fmpq_numref(x.raw()), tok.den);
      const bool on_grid = fmpz_divisible(t, fmpq_denref(x.raw())) && (fmpz_divexact(t, t, fmpq_denref(x.raw())), fmpz_cmpabs(t, R3) <= 0);
      if (!on_grid) {
        fmpz_clear(t);
        fmpz_clear(R3);
        throw_input(kp + ": " + quote_text(x.str()) + " is not on the learner's token grid (integers in [-" + std::to_string(3 * tok.range) + ", " +
                    std::to_string(3 * tok.range) + "] divided by token_den = " + std::to_string(tok.den) + ")");
      }
      run.token.push_back(std::move(x));
    }
    try {
      run.count = need_int(runs[r], "count", rp, 1, 1L << 30);
    } catch (...) {
      fmpz_clear(t);
      fmpz_clear(R3);
      throw;
    }
    out.push_back(std::move(run));
  }
  fmpz_clear(t);
  fmpz_clear(R3);
  // and the shape of a plan query: |x_N| <= 2R/den and |x_r - x_N| <= 2R/den
  // entrywise, which is what bounds the exponents of tau (recover_limits.hpp)
  const Rational lim(2 * tok.range, static_cast<unsigned long>(tok.den));
  auto abs = [](const Rational& x) { return x.sign() < 0 ? -x : x; };
  const QVec& xN = out.back().token;
  for (size_t k = 0; k < xN.size(); ++k) {
    bool ok = !(lim < abs(xN[k]));
    for (const auto& run : out) ok = ok && !(lim < abs(run.token[k] - xN[k]));
    if (!ok)
      throw_input(path + ": token entries " + std::to_string(k) + " are not those of a plan query (|x_N| and |x_r - x_N| at most 2 token_range / token_den = " +
                  lim.str() + ")");
  }
  return out;
}

void parse_poly(fmpz_poly_struct* p, const json& a, const std::string& path) {
  if (!a.is_array()) throw_input(path + ": expected an array of integer strings, got " + json_shown(a));
  if (a.size() > static_cast<size_t>(limits::max_tau_exponent) + 1)
    throw_input(path + ": " + std::to_string(a.size()) + " coefficients, more than the tau-degree limit of " + std::to_string(limits::max_tau_exponent) + " allows");
  fmpz_poly_zero(p);
  Z c;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string ip = json_index_path(path, i);
    if (!a[i].is_string()) throw_input(ip + ": expected an integer string, got " + json_shown(a[i]));
    const std::string& s = a[i].get_ref<const std::string&>();
    const size_t start = !s.empty() && s[0] == '-' ? 1 : 0;
    if (s.size() > static_cast<size_t>(limits::max_number_chars))
      throw_input(ip + ": " + quote_text(s) + " is longer than the limit of " + std::to_string(limits::max_number_chars) + " characters");
    if (s.size() == start || s.find_first_not_of("0123456789", start) != std::string::npos) throw_input(ip + ": not an integer: " + quote_text(s));
    fmpz_set_str(c.v, s.c_str(), 10);
    fmpz_poly_set_coeff_fmpz(p, static_cast<long>(i), c.v);
  }
}

QTau parse_qtau(const json& ans, const std::string& path) {
  const json& ex = need(ans, "exact", path);
  QTau x;
  parse_poly(QTauAccess::raw(x)->num, need(ex, "num", path + ".exact"), path + ".exact.num");
  parse_poly(QTauAccess::raw(x)->den, need(ex, "den", path + ".exact"), path + ".exact.den");
  if (fmpz_poly_is_zero(QTauAccess::raw(x)->den)) throw_input(path + ".exact.den: zero");
  fmpz_poly_q_canonicalise(QTauAccess::raw(x));
  return x;
}

// A ball written by binary_json: {"mid", "rad"}, both exact dyadic rationals.
Ball parse_ball(const json& j, const std::string& path) {
  Ball b;
  auto dyadic = [&](arf_t out, const char* key) {
    const Rational q = parse_rat(need(j, key, path), path + "." + key, static_cast<size_t>(limits::max_number_chars));
    const fmpz* den = fmpq_denref(q.raw());
    const long k = static_cast<long>(fmpz_bits(den)) - 1;
    if (static_cast<long>(fmpz_val2(den)) != k) throw_input(path + "." + key + ": " + quote_text(q.str()) + " is not a dyadic rational");
    arf_set_fmpz(out, fmpq_numref(q.raw()));
    arf_mul_2exp_si(out, out, -k);
    return q.sign();
  };
  dyadic(arb_midref(b.raw()), "mid");
  arf_t r;
  arf_init(r);
  const int sign = dyadic(r, "rad");
  arf_get_mag(arb_radref(b.raw()), r);
  arf_clear(r);
  if (sign < 0) throw_input(path + ".rad: negative");
  return b;
}

// Whether ball b contains the real number that exact(out, prec) encloses,
// refining the enclosure until containment or disjointness is certain.
bool contains_exact(const Ball& b, long bits, const std::function<void(arb_t, long)>& exact) {
  for (long prec = bits + 64; prec <= 16 * (bits + 64); prec *= 2) {
    A x;
    exact(x.v, prec);
    if (arb_contains(b.raw(), x.v)) return true;
    if (!arb_overlaps(b.raw(), x.v)) return false;
  }
  return false;
}

std::string short_dump(const json& j) {
  if (j.is_structured() && j.size() > 16) return json_shown(j);  // not dumped whole
  std::string s = j.dump();  // JSON escapes control characters below 0x20, not DEL: cleaned either way
  return s.size() > 72 ? clean_text(s.substr(0, 69)) + "..." : clean_text(s);
}

// Compares the file against the re-derived document; every differing leaf is
// reported with its path.
void diff(const json& got, const json& exp, const std::string& path, GoldenCheckResult& out) {
  if (exp.is_object() && got.is_object()) {
    for (auto it = exp.begin(); it != exp.end(); ++it) {
      const std::string p = path.empty() ? it.key() : path + "." + it.key();
      auto g = got.find(it.key());
      if (g == got.end()) { out.mismatches.push_back(p + ": missing (re-derived " + short_dump(it.value()) + ")"); continue; }
      diff(*g, it.value(), p, out);
    }
    for (auto it = got.begin(); it != got.end(); ++it)
      if (!exp.contains(it.key())) {
        const std::string k = it.key().size() > quote_chars ? clean_text(it.key().substr(0, quote_chars)) + "..." : clean_text(it.key());
        out.mismatches.push_back((path.empty() ? k : path + "." + k) + ": unexpected field");
      }
    return;
  }
  if (exp.is_array() && got.is_array()) {
    if (got.size() != exp.size())
      out.mismatches.push_back(path + ": file has " + std::to_string(got.size()) + " entries, re-derived " + std::to_string(exp.size()));
    for (size_t i = 0; i < std::min(got.size(), exp.size()); ++i) diff(got[i], exp[i], path + "[" + std::to_string(i) + "]", out);
    return;
  }
  ++out.fields_checked;
  if (got != exp) out.mismatches.push_back(path + ": file has " + short_dump(got) + ", re-derived " + short_dump(exp));
}

}  // namespace

GoldenCheckResult golden_check_transformer(const nlohmann::json& doc, int threads);

GoldenCheckResult golden_check(const std::string& text, int threads) {
  using namespace limits;
  json doc = parse_json_text(text);
  if (!doc.is_object()) throw_input("top level: expected an object, got " + json_shown(doc));
  if (need_str(doc, "format", "") != "mhaq-golden") throw_input("format: must be \"mhaq-golden\"");
  const long version = need_int(doc, "version", "", 0, 1L << 30);
  if (version != golden_version) throw_input("version: unsupported version " + std::to_string(version) + " (this mhaq reads version " + std::to_string(golden_version) + ")");
  if (doc.contains("arith") && doc["arith"] == "certified") return golden_check_certified(doc, threads);  // real weights, no Q(tau)
  if (doc.contains("model_kind")) {  // absent: an attention file
    const std::string kind = need_str(doc, "model_kind", "");
    if (kind != "transformer") throw_input("model_kind: must be \"transformer\" (absent for attention files), got " + quote_text(kind));
    return golden_check_transformer(doc, threads);
  }
  const long digits = need_int(doc, "digits", "", 1, max_digits);
  const std::string arith_s = need_str(doc, "arith", "");
  if (arith_s != "exact" && arith_s != "ball" && arith_s != "mpfr") throw_input("arith: must be exact, ball or mpfr, got " + quote_text(arith_s));
  const Arith arith = parse_arith(arith_s);
  const long bits = arith == Arith::exact ? 256 : need_int(doc, "bits", "", min_bits, max_bits);
  for (const char* k : {"L", "plan", "model_canonical", "summary"}) (void)need(doc, k, "");

  // ---- inputs (the only fields taken from the file, besides the queries and answers)
  const json& inj = need(doc, "inputs", "");
  GoldenInputs in;
  in.digits = digits;
  in.model_source = need_str(inj, "model_source", "inputs");
  if (in.model_source != "generated" && in.model_source != "file") throw_input("inputs.model_source: must be \"generated\" or \"file\"");
  in.seed = need_u64(inj, "seed", "inputs");
  in.heads = static_cast<int>(need_int(inj, "heads_learner", "inputs", 1, max_heads));
  const bool bound = inj.contains("heads_is_bound") && need_bool(inj, "heads_is_bound", "inputs");
  if (need_str(inj, "schedule", "inputs") != "paper") throw_input("inputs.schedule: must be \"paper\"");
  if (inj.contains("design")) {
    const std::string ds = need_str(inj, "design", "inputs");
    if (ds != "scaled" && ds != "tuned") throw_input("inputs.design: must be \"scaled\" or \"tuned\" (absent for the paper design), got " + quote_text(ds));
    in.design = parse_design(ds);
  }
  TokenSpec tok{need_int(inj, "token_range", "inputs", 1, max_token_range), need_int(inj, "token_den", "inputs", 1, max_token_den)};
  const Model model = model_from_json(need(doc, "model", ""), "model");
  {  // what an export can have written: H = the canonical head count, or a bound H0 >= it
    const long canon_heads = model.canonical().num_heads();
    if (in.heads > max_golden_heads)
      throw_input("inputs.heads_learner: " + std::to_string(in.heads) + ", more than the limit of " + std::to_string(max_golden_heads) + " for golden files");
    if (bound ? in.heads < canon_heads : in.heads != canon_heads)
      throw_input("inputs.heads_learner: " + std::to_string(in.heads) + (bound ? " is below" : " differs from") + " the model's canonical head count " +
                  std::to_string(canon_heads) + (bound ? " (heads_is_bound)" : " (heads_is_bound is false)") + "; no export writes that");
  }
  // Work the file can demand, bounded before it is done: the plan's size and the answers' tau-degrees.
  check_plan_size(model.d, in.heads, true, 0, ErrorKind::input, "inputs.heads_learner");
  check_exact_tau_degree(model, tok, ErrorKind::input, "model and inputs.token_range");
  if (in.model_source == "generated") {
    const json& g = need(inj, "generate", "inputs");
    GenerateOptions& o = in.generate;
    const std::string gp = "inputs.generate";
    o.d = static_cast<int>(need_int(g, "d", gp, 1, max_d));
    o.heads = static_cast<int>(need_int(g, "heads", gp, 1, max_heads));
    o.seed = need_u64(g, "seed", gp);
    o.w_range = need_int(g, "w_range", gp, 1, max_entry_range);
    o.w_den = need_int(g, "w_den", gp, 1, max_entry_range);
    o.v_range = need_int(g, "v_range", gp, 1, max_entry_range);
    o.v_den = need_int(g, "v_den", gp, 1, max_entry_range);
    o.share_w = need_bool(g, "share_w", gp);
    o.cancel_v = need_bool(g, "cancel_v", gp);
  }
  const int d = model.d;
  const json& fq = need_array(doc, "queries", "");
  const json& fa = need_array(doc, "answers", "");
  std::vector<Query> file_queries;
  std::vector<QTau> file_answers;
  for (size_t i = 0; i < fq.size(); ++i) file_queries.push_back(parse_query(fq[i], json_index_path("queries", i), d, tok));
  for (size_t i = 0; i < fa.size(); ++i) file_answers.push_back(parse_qtau(fa[i], json_index_path("answers", i)));
  (void)need_array(doc, "pairs", "");
  (void)need_array(doc, "heads", "");

  GoldenCheckResult out;
  // ---- re-derive
  const Model canon = model.canonical();
  ojson exp = header_json(0, digits, arith, bits);
  Model source_model = model;
  if (in.model_source == "generated") {
    try {
      source_model = generate_model(in.generate);
    } catch (const Error& e) {
      throw_input(std::string("inputs.generate: ") + e.what());
    }
  }
  // A fresh exact learner run on the model: plan, query list, heads.
  if (threads < 1) throw Error(ErrorKind::usage, "golden check: threads must be positive");
  LearnOptions lo = learn_options(in.heads, bound, in.seed, tok, threads);
  long pilot_queries = 0;
  if (in.design != Design::paper) {
    if (tok.den != golden_design_grid().den) throw_input("inputs.token_den: a file with a design uses the grid 1/" + std::to_string(golden_design_grid().den));
    in.model = model;
    in.arith = arith;
    in.bits = bits;
    LearnOptions dl = learn_options(in.heads, bound, in.seed, golden_design_grid(), threads);
    lo.draws = golden_design(in, dl, pilot_queries);
  }
  ModelOracle<QTau> oracle(model, tok.den);
  Oracle<QTau>& black_box = oracle;
  std::unique_ptr<LearnResult<QTau>> res;
  try {
    res = std::make_unique<LearnResult<QTau>>(learn(black_box, lo));
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input) throw;
    out.internal_error = out.internal_error || e.kind() == ErrorKind::internal;
    out.mismatches.push_back(std::string("heads: re-running the exact learner failed (") + kind_name(e.kind()) + "): " + clean_text(std::string(e.what()).substr(0, 2 * quote_chars)));
  }
  const long L = QTauAccess::L(black_box.field());
  exp["L"] = L;
  exp["inputs"] = inputs_json(in, lo.H, bound, tok, pilot_queries);
  exp["model"] = model_json(source_model);
  exp["model_canonical"] = model_json(canon);
  ojson qs = ojson::array(), as = ojson::array();
  if (res) {
    exp["plan"] = plan_json(res->plan, res->redraws);
    const std::vector<Query> plan_q = res->plan.queries();
    for (size_t i = 0; i < plan_q.size(); ++i) qs.push_back(query_json(i, plan_q[i]));
  }
  exp["queries"] = qs;
  // Answers: the model evaluated exactly on the file's own queries.
  std::vector<QTau> exact_values;
  for (size_t i = 0; i < file_queries.size(); ++i) {
    exact_values.push_back(evaluate_exact(model, file_queries[i], L));
    as.push_back(answer_json(i, exact_values.back(), L, digits));
  }
  exp["answers"] = as;

  // Per-pair values: interpolate the file's answers; f(0) by chaining from [b_1].
  ojson pairs = ojson::array();
  std::vector<std::optional<PairFit<QTau>>> exact_fits;
  if (res) {
    const Plan& plan = res->plan;
    const int H = lo.H;
    const Field<QTau> F(L);
    const size_t need_answers = 1 + plan.pairs.size() * 2 * static_cast<size_t>(H);
    Rational vb1;
    const bool have = file_answers.size() >= need_answers && QTauAccess::is_rational(file_answers[0], vb1);
    if (!have) out.mismatches.push_back("pairs: the file's answers do not cover the plan (or answers[0] = v^T b_1 is not rational)");
    std::vector<ojson> pj(plan.pairs.size());
    std::vector<Rational> P(plan.pairs.size());
    std::vector<bool> fitted(plan.pairs.size(), false);
    exact_fits.resize(plan.pairs.size());
    const QVec& b1 = plan.first.at(0).token;
    auto fit = [&](size_t p, const Rational& f0) {
      const PairSpec& s = plan.pairs[p];
      pj[p] = pair_spec_json(plan, p);
      pj[p]["f0"] = f0.str();
      std::vector<QTau> f{QTau(f0)};
      for (int k = 1; k <= 2 * H; ++k) f.push_back(file_answers[plan.query_index(static_cast<long>(p), k)]);
      try {
        const PairFit<QTau> pf = bound ? interpolate_pair_minimal(F, f, H) : interpolate_pair(F, f, H);
        Rational q;
        if (!QTauAccess::is_rational(pf.P, q)) throw_inconsistent("the limit P is not rational");
        P[p] = q;
        pj[p]["P"] = q.str();
        std::vector<long> n;
        std::vector<std::string> c;
        for (size_t h = 0; h < pf.r.size(); ++h) {
          long e = 0;
          if (!QTauAccess::is_tau_power(pf.r[h], e) || !QTauAccess::is_rational(pf.c[h], q)) throw_inconsistent("a pole is not a power of tau or a residue is not rational");
          n.push_back(e);
          c.push_back(q.str());
        }
        pj[p]["poles"] = poles_json(n, c, L);
        fitted[p] = true;
        exact_fits[p] = pf;
      } catch (const Error& e) {
        out.internal_error = out.internal_error || e.kind() == ErrorKind::internal;
        out.mismatches.push_back("pairs[" + std::to_string(p) + "]: the file's answers do not interpolate (" + kind_name(e.kind()) + "): " + clean_text(std::string(e.what()).substr(0, 2 * quote_chars)));
      }
      // Independent of the chaining: f(0) straight from the model.
      Rational f0m;
      if (QTauAccess::is_rational(evaluate_exact(model, Query{Run{s.final_token, 1}}, L), f0m) && !(f0m == f0))
        out.mismatches.push_back("pairs[" + std::to_string(p) + "].f0: chained from the file's answers gives " + quote_text(f0.str()) + ", the model gives " +
                                  quote_text(f0m.str()));
    };
    if (have) {
      for (size_t p = 0; p < plan.pairs.size(); ++p)
        if (plan.pairs[p].final_token == b1) fit(p, vb1);
      // v^T delta_i from the limits of the base pairs (i, 1): P = v^T (b_1 + delta_i).
      QVec vdelta(static_cast<size_t>(d));
      std::vector<bool> got(static_cast<size_t>(d), false);
      for (size_t p = 0; p < plan.pairs.size(); ++p) {
        const PairSpec& s = plan.pairs[p];
        if (s.kind == PairKind::base && s.final_token == b1 && fitted[p] && s.i >= 0 && s.i < d) {
          vdelta[static_cast<size_t>(s.i)] = P[p] - vb1;
          got[static_cast<size_t>(s.i)] = true;
        }
      }
      const bool chain = std::all_of(got.begin(), got.end(), [](bool b) { return b; });
      for (size_t p = 0; p < plan.pairs.size(); ++p) {
        const PairSpec& s = plan.pairs[p];
        if (s.final_token == b1) continue;
        if (!chain) {
          out.mismatches.push_back("pairs[" + std::to_string(p) + "].f0: cannot chain (a base pair at b_1 did not interpolate)");
          continue;
        }
        QVec lambda;
        if (!solve(plan.Delta, s.final_token - b1, lambda)) throw_internal("golden check: Delta singular");
        fit(p, vb1 + dot(lambda, vdelta));
      }
    }
    // A pair that could not be re-derived is already reported above; its
    // remaining values are not compared a second time.
    const json& fp = doc["pairs"];
    for (size_t p = 0; p < plan.pairs.size(); ++p) {
      if (pj[p].is_null()) pj[p] = pair_spec_json(plan, p);
      if (!fitted[p] && p < fp.size() && fp[p].is_object())
        for (const char* k : {"f0", "P", "poles"})
          if (!pj[p].contains(k) && fp[p].contains(k)) pj[p][k] = ojson::parse(fp[p][k].dump());
      pairs.push_back(pj[p]);
    }
  }
  exp["pairs"] = pairs;

  if (res) {
    exp["heads"] = heads_json(res->heads);
    const bool match = exact_heads_match(res->heads, canon);
    if (!match) out.mismatches.push_back("heads: the re-derived learner heads are not the canonical model's heads");
    exp["summary"] = ojson{{"queries", black_box.queries()},
                           {"paper_bound", paper_query_bound(d, lo.H)},
                           {"max_length", black_box.max_length()},
                           {"heads_recovered", res->heads.size()},
                           {"self_checked", (res->self_check == Truth::yes)},
                           {"exact_match", match}};
  }
  if (arith != Arith::exact && res) {
    // The same learner in the file's arithmetic and precision, re-run (deterministic).
    try {
      exp[arith_s] = binary_run(exp, model, lo, arith, bits);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input) throw;
      out.internal_error = out.internal_error || e.kind() == ErrorKind::internal;
      out.mismatches.push_back(arith_s + ": re-running the " + arith_s + " learner failed (" + kind_name(e.kind()) + "): " + clean_text(std::string(e.what()).substr(0, 2 * quote_chars)));
      // reported once: the run's fields are then not compared one by one
      const json& fa2 = doc["answers"];
      const json& fp2 = doc["pairs"];
      for (size_t i = 0; i < fa2.size() && i < exp["answers"].size(); ++i)
        if (fa2[i].is_object() && fa2[i].contains(arith_s)) exp["answers"][i][arith_s] = ojson::parse(fa2[i][arith_s].dump());
      for (size_t p = 0; p < fp2.size() && p < exp["pairs"].size(); ++p)
        if (fp2[p].is_object() && fp2[p].contains(arith_s)) exp["pairs"][p][arith_s] = ojson::parse(fp2[p][arith_s].dump());
      if (doc.contains(arith_s)) exp[arith_s] = ojson::parse(doc[arith_s].dump());
    }
  }
  if (arith == Arith::ball) {
    // Independently of the re-run: the file's balls contain the exact truth.
    for (size_t i = 0; i < fa.size() && i < exact_values.size(); ++i) {
      if (!fa[i].is_object() || !fa[i].contains("ball")) continue;
      const std::string p = "answers[" + std::to_string(i) + "].ball";
      if (!contains_exact(parse_ball(fa[i]["ball"], p), bits, [&](arb_t x, long prec) { qtau_arb(x, exact_values[i], L, prec); }))
        out.mismatches.push_back(p + ": does not contain the exact answer");
    }
    const json& fp = doc["pairs"];
    for (size_t p = 0; p < exact_fits.size() && p < fp.size(); ++p) {
      if (!exact_fits[p] || !fp[p].is_object() || !fp[p].contains("ball")) continue;
      const std::string pp = "pairs[" + std::to_string(p) + "].ball";
      const json& bj = fp[p]["ball"];
      const PairFit<QTau>& ex = *exact_fits[p];
      Rational P;
      bool ok = QTauAccess::is_rational(ex.P, P) && parse_ball(need(bj, "P", pp), pp + ".P").contains(P);
      const json& poles = need_array(bj, "poles", pp);
      std::vector<bool> used(poles.size(), false);
      ok = ok && poles.size() == ex.r.size();
      for (size_t h = 0; h < ex.r.size() && ok; ++h) {  // each exact pole in a distinct ball pole
        long n = 0;
        Rational c;
        bool found = false;
        if (QTauAccess::is_tau_power(ex.r[h], n) && QTauAccess::is_rational(ex.c[h], c))
          for (size_t g = 0; g < poles.size() && !found; ++g) {
            const std::string gp = pp + ".poles[" + std::to_string(g) + "]";
            if (used[g] || !parse_ball(need(poles[g], "c", gp), gp + ".c").contains(c)) continue;
            found = used[g] = contains_exact(parse_ball(need(poles[g], "r", gp), gp + ".r"), bits, [&](arb_t x, long prec) {
              arb_set_si(x, n);
              arb_div_si(x, x, L, prec);
              arb_exp(x, x, prec);
            });
          }
        ok = found;
      }
      if (!ok) out.mismatches.push_back(pp + ": does not contain the exact pair values (P, poles r = tau^n, residues c)");
    }
    if (doc.contains("ball") && doc["ball"].is_object() && doc["ball"].contains("heads")) {
      std::vector<LearnedHead<Ball>> hs;
      const json& fh = need_array(doc["ball"], "heads", "ball");
      for (size_t h = 0; h < fh.size(); ++h) {
        const std::string hp = "ball.heads[" + std::to_string(h) + "]";
        const json& W = need_array(fh[h], "W", hp);
        const json& v = need_array(fh[h], "v", hp);
        if (static_cast<int>(W.size()) != d || static_cast<int>(v.size()) != d) throw_input(hp + ": W and v must be d x d and d");
        LearnedHead<Ball> lh{Mat<Ball>(d, d), {}};
        for (int i = 0; i < d; ++i) {
          if (!W[i].is_array() || static_cast<int>(W[i].size()) != d) throw_input(hp + ".W: not d x d");
          lh.v.push_back(parse_ball(v[i], hp + ".v[" + std::to_string(i) + "]"));
          for (int j = 0; j < d; ++j) lh.W(i, j) = parse_ball(W[i][j], hp + ".W[" + std::to_string(i) + "][" + std::to_string(j) + "]");
        }
        hs.push_back(std::move(lh));
      }
      if (!ball_heads_contain(hs, canon)) out.mismatches.push_back("ball.heads: do not contain the canonical model's heads");
    }
  }
  // Compare (the header's decimal_format text is part of the schema).
  diff(doc, json::parse(exp.dump()), "", out);
  return out;
}

}  // namespace mhaq

// ------------------------------------------------------------ transformers
// A transformer golden file (SCHEMA.md, "Transformer files"): the exact
// transformer learner on a TransformerOracle<QTau>, its queries and answers,
// and what it learned. The check re-derives the answers with the separate
// checker's own evaluator (mhaq_check) and the rest with a fresh learner run.
namespace mhaq {

namespace {

using json = nlohmann::json;

// The transformer learner's grid (recover_transformer: exact tokens on 1/16).
constexpr long kTransformerDen = 16;

Rational rat_value(const QTau& x, const std::string& what) {
  Rational q;
  if (!QTauAccess::is_rational(x, q)) throw_internal("golden: " + what + " is not rational");
  return q;
}

ojson transformer_model_json(const TransformerModel& m) { return ojson::parse(transformer_to_json_text(m)); }

TransformerLearnOptions transformer_learn_options(int H, std::uint64_t seed, int threads) {
  TransformerLearnOptions lo;
  lo.H = H;
  lo.neurons = 0;  // found by the path search, as exact recover does
  lo.schedule = Schedule::paper;
  lo.seed = learner_seed(seed);
  lo.tokens = TokenSpec{kTransformerDen, kTransformerDen};
  lo.threads = threads;
  return lo;
}

ojson transformer_inputs_json(const GoldenInputs& in, int H) {
  ojson j{{"model_source", in.model_source}};
  if (in.model_source == "generated") {
    const TransformerGenerateOptions& g = in.transformer_generate;
    j["generate"] = ojson{{"d", g.d},         {"heads", g.heads},   {"neurons", g.neurons}, {"seed", g.seed},
                          {"w_range", g.w_range}, {"w_den", g.w_den}, {"U_range", g.U_range}, {"U_den", g.U_den},
                          {"share_w", g.share_w}, {"zero_neuron", g.zero_neuron}, {"parallel_neurons", g.parallel_neurons}};
  }
  j["seed"] = in.seed;
  j["learner_seed"] = learner_seed(in.seed);
  j["heads_learner"] = H;
  j["schedule"] = "paper";
  j["token_den"] = kTransformerDen;
  return j;
}

ojson transformer_header_json(long L, long digits) {
  return ojson{{"format", "mhaq-golden"}, {"version", golden_version}, {"model_kind", "transformer"}, {"arith", "exact"}, {"tau", "e^(1/L)"},
               {"L", L},                  {"digits", digits},         {"decimal_format", kDecimalFormat}};
}

// The learner's transformer as exact rationals, and whether it equals the
// canonical truth up to permutation.
TransformerModel learned_model(const TransformerLearnResult<QTau>& res, int d) {
  TransformerModel got;
  got.d = d;
  for (const auto& W : res.W) {
    QMat M(d, d);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) M(i, j) = rat_value(W(i, j), "learned W entry");
    got.W.push_back(M);
  }
  got.U.assign(got.W.size(), {});
  for (const auto& n : res.neurons) {
    got.u.push_back(rat_value(n.u, "learned u"));
    for (size_t h = 0; h < got.W.size(); ++h) {
      QVec v(d);
      for (int a = 0; a < d; ++a) v[a] = rat_value(n.U[h][a], "learned U entry");
      got.U[h].push_back(v);
    }
  }
  return got;
}

ojson learned_json(const TransformerModel& got) {
  ojson heads = ojson::array(), neurons = ojson::array();
  for (const auto& W : got.W) heads.push_back(ojson{{"W", qmat_json(W)}});
  for (int j = 0; j < got.neurons(); ++j) {
    ojson U = ojson::array();
    for (int h = 0; h < got.heads(); ++h) U.push_back(qvec_json(got.U[h][j]));
    neurons.push_back(ojson{{"u", got.u[j].str()}, {"U", U}});
  }
  return ojson{{"heads", heads}, {"neurons", neurons}};
}

ojson transformer_summary_json(const Oracle<QTau>& box, const TransformerLearnResult<QTau>& res, const TransformerModel& got, const TransformerModel& canon) {
  return ojson{{"queries", box.queries()},
               {"queries_attention", res.queries_attention},
               {"queries_regions", res.queries_regions},
               {"queries_verification", res.queries_verify},
               {"max_length", box.max_length()},
               {"heads_recovered", res.W.size()},
               {"neurons_recovered", res.neurons.size()},
               {"self_checked", res.self_check == Truth::yes},
               {"verified", res.verification == Truth::yes},
               {"exact_match", !got.u.empty() && transformer_equal_canonical(got.canonical(), canon)}};
}

// Every token entry on the learner's grid (multiples of 1/den), and the work
// the answers demand bounded before it is done: the tau-degree of each
// answer (the sum over heads of the spread of L x_r^T W_h x_N over its runs)
// at most limits::max_tau_exponent, and their sum over the file at most
// limits::max_golden_tau_total. The learner's region probes leave [-1, 1], so
// the bound is computed from the file's own tokens.
// The rational arithmetic is bounded too, from the shapes alone before any
// token is parsed: the checker spends about (runs + d) d H m multiply-adds on
// a query (every neuron re-scores every run), summed over the file at most
// limits::max_golden_eval_work.
void check_transformer_query_work(const json& fq, const TransformerModel& m, long den, long L) {
  long total = 0;
  {
    const long per = static_cast<long>(m.d) * m.heads() * m.neurons();  // <= 64 * 64 * 256
    long work = 0;
    for (size_t i = 0; i < fq.size(); ++i) {
      const std::string qp = json_index_path("queries", i);
      const json& runs = need_array(fq[i], "runs", qp, static_cast<size_t>(check::limits::max_runs));
      work += (static_cast<long>(runs.size()) + m.d) * per;  // at most 2^33 per query, and the sum stops past 2^30: no overflow
      if (work > limits::max_golden_eval_work)
        throw_input("queries: re-deriving the answers would take more than " + std::to_string(limits::max_golden_eval_work) +
                    " rational multiply-adds ((runs + d) d H m summed over the queries, at " + qp + ")");
    }
  }
  const Rational cap(limits::max_tau_exponent);
  for (size_t i = 0; i < fq.size(); ++i) {
    const std::string qp = json_index_path("queries", i);
    const json& runs = need_array(fq[i], "runs", qp, static_cast<size_t>(check::limits::max_runs));
    if (runs.empty()) throw_input(qp + ".runs: empty");
    std::vector<QVec> toks;
    for (size_t r = 0; r < runs.size(); ++r) {
      const std::string rp = json_index_path(qp + ".runs", r);
      const json& tj = need_array(runs[r], "token", rp, static_cast<size_t>(limits::max_d));
      if (static_cast<int>(tj.size()) != m.d) throw_input(rp + ".token: " + std::to_string(tj.size()) + " entries, the model has d = " + std::to_string(m.d));
      QVec x;
      for (size_t k = 0; k < tj.size(); ++k) {
        const std::string kp = json_index_path(rp + ".token", k);
        x.push_back(parse_rat(tj[k], kp));
        if (!(x.back() * Rational(den)).is_integer())
          throw_input(kp + ": " + quote_text(x.back().str()) + " is not on the transformer learner's token grid (multiples of 1/" + std::to_string(den) + ")");
      }
      toks.push_back(std::move(x));
    }
    Rational deg(0L);
    for (const auto& W : m.W) {
      const QVec Wx = matvec(W, toks.back());
      Rational lo, hi;
      for (size_t r = 0; r < toks.size(); ++r) {
        const Rational s = dot(toks[r], Wx) * Rational(L);
        if (r == 0 || s < lo) lo = s;
        if (r == 0 || hi < s) hi = s;
      }
      deg = deg + (hi - lo);
    }
    if (cap < deg)
      throw_input(qp + ": its answer has tau-degree " + deg.str() + " (sum over heads of L times the spread of the scores), more than the limit of " +
                  std::to_string(limits::max_tau_exponent));
    total += deg.floor().to_long();
    if (total > limits::max_golden_tau_total)
      throw_input("queries: the answers' tau-degrees sum to more than the limit of " + std::to_string(limits::max_golden_tau_total) + " (at " + qp + ")");
  }
}

}  // namespace

std::string golden_export_transformer(const GoldenInputs& in) {
  check_digits(in.digits);
  in.transformer.validate();
  if (in.threads < 1) throw Error(ErrorKind::usage, "golden: threads must be positive");
  const TransformerModel canon = in.transformer.canonical();
  if (canon.heads() == 0 || canon.neurons() == 0) throw Error(ErrorKind::usage, "the transformer's canonical form is empty (T = 0): nothing to record");
  const TransformerLearnOptions lo = transformer_learn_options(canon.heads(), in.seed, in.threads);
  TransformerOracle<QTau> oracle(in.transformer, kTransformerDen);
  RecordingOracle<QTau> rec(oracle);
  Oracle<QTau>& black_box = rec;  // the learner gets this reference and nothing else
  const TransformerLearnResult<QTau> res = learn_transformer(black_box, lo);
  const long L = QTauAccess::L(black_box.field());
  const TransformerModel got = learned_model(res, in.transformer.d);
  // golden check requires the learned transformer to be the canonical model,
  // so a run that does not recover it (recover's status mismatch) writes nothing
  if (got.u.empty() || !transformer_equal_canonical(got.canonical(), canon))
    throw Error(ErrorKind::mismatch, "golden export: the transformer learner's result (" + std::to_string(got.heads()) + " heads, " +
                                         std::to_string(got.neurons()) + " neurons) differs from the canonical truth (" + std::to_string(canon.heads()) +
                                         " heads, " + std::to_string(canon.neurons()) + " neurons); no golden file is written for a run that does not recover its model");

  ojson doc = transformer_header_json(L, in.digits);
  doc["inputs"] = transformer_inputs_json(in, lo.H);
  doc["model"] = transformer_model_json(in.transformer);
  doc["model_canonical"] = transformer_model_json(canon);
  ojson qs = ojson::array(), as = ojson::array();
  for (size_t i = 0; i < rec.queries.size(); ++i) {
    qs.push_back(query_json(i, rec.queries[i]));
    as.push_back(answer_json(i, rec.answers[i], L, in.digits));
  }
  try {  // mhaq never writes what golden check would refuse to read
    check_transformer_query_work(json::parse(qs.dump()), in.transformer, kTransformerDen, L);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::input) throw;
    throw Error(ErrorKind::unable, std::string("golden export: the run's ") + e.what() + "; golden check would refuse the file");
  }
  doc["queries"] = qs;
  doc["answers"] = as;
  doc["learned"] = learned_json(got);
  doc["summary"] = transformer_summary_json(black_box, res, got, canon);
  return dump_layout(doc);
}

GoldenCheckResult golden_check_transformer(const json& doc, int threads) {
  using namespace limits;
  const long digits = need_int(doc, "digits", "", 1, max_digits);
  if (need_str(doc, "arith", "") != "exact") throw_input("arith: transformer golden files are exact");
  for (const char* k : {"L", "model_canonical", "learned", "summary"}) (void)need(doc, k, "");
  const json& inj = need(doc, "inputs", "");
  GoldenInputs in;
  in.is_transformer = true;
  in.digits = digits;
  in.model_source = need_str(inj, "model_source", "inputs");
  if (in.model_source != "generated" && in.model_source != "file") throw_input("inputs.model_source: must be \"generated\" or \"file\"");
  in.seed = need_u64(inj, "seed", "inputs");
  const int H = static_cast<int>(need_int(inj, "heads_learner", "inputs", 1, max_golden_heads));
  if (need_str(inj, "schedule", "inputs") != "paper") throw_input("inputs.schedule: must be \"paper\"");
  if (need_int(inj, "token_den", "inputs", 1, max_token_den) != kTransformerDen)
    throw_input("inputs.token_den: transformer golden files use the grid 1/" + std::to_string(kTransformerDen));
  TransformerFileInfo info;
  TransformerModel model;
  try {
    model = transformer_from_json(need(doc, "model", ""), &info);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::input) throw;
    throw_input(std::string("model: ") + e.what());
  }
  if (info.format != transformer_format) throw_input("model.format: golden files hold the plain \"" + std::string(transformer_format) + "\" form");
  const TransformerModel canon = model.canonical();
  if (canon.heads() == 0 || canon.neurons() == 0) throw_input("model: the canonical form is empty (T = 0); no export writes that");
  if (H != canon.heads())
    throw_input("inputs.heads_learner: " + std::to_string(H) + " differs from the model's canonical head count " + std::to_string(canon.heads()) +
                "; no export writes that");
  {  // the work the file can demand, bounded before it is done
    RecoverOptions o;
    o.arith = Arith::exact;
    o.heads = H;
    check_transformer_limits(model, o, "model");
  }
  if (in.model_source == "generated") {
    const json& g = need(inj, "generate", "inputs");
    TransformerGenerateOptions& o = in.transformer_generate;
    const std::string gp = "inputs.generate";
    o.d = static_cast<int>(need_int(g, "d", gp, 1, max_d));
    o.heads = static_cast<int>(need_int(g, "heads", gp, 1, max_heads));  // drawn heads; the canonical count is held to max_golden_heads
    o.neurons = static_cast<int>(need_int(g, "neurons", gp, 1, max_neurons));
    o.seed = need_u64(g, "seed", gp);
    o.w_range = need_int(g, "w_range", gp, 1, max_entry_range);
    o.w_den = need_int(g, "w_den", gp, 1, max_entry_range);
    o.U_range = need_int(g, "U_range", gp, 1, max_entry_range);
    o.U_den = need_int(g, "U_den", gp, 1, max_entry_range);
    o.share_w = need_bool(g, "share_w", gp);
    o.zero_neuron = need_bool(g, "zero_neuron", gp);
    o.parallel_neurons = need_bool(g, "parallel_neurons", gp);
  }
  const json& fq = need_array(doc, "queries", "", static_cast<size_t>(check::limits::max_golden_queries));
  (void)need_array(doc, "answers", "", static_cast<size_t>(check::limits::max_golden_queries));
  {
    long Lm = model.w_denominator();  // L = m den^2 <= max_L: check_transformer_limits
    check_transformer_query_work(fq, model, kTransformerDen, Lm * kTransformerDen * kTransformerDen);
  }
  if (threads < 1) throw Error(ErrorKind::usage, "golden check: threads must be positive");

  GoldenCheckResult out;
  // ---- the answers: the separate checker's own evaluator on the file's queries
  check::TransformerGoldenAnswers ans;
  try {
    ans = check::transformer_golden_answers(doc);
  } catch (const check::InputError& e) {
    throw_input(e.what());
  }
  for (const auto& f : ans.failures) out.mismatches.push_back(f.path + ": " + f.message);

  // ---- the rest: the model re-drawn, a fresh exact learner run
  ojson exp = transformer_header_json(0, digits);
  TransformerModel source_model = model;
  if (in.model_source == "generated") {
    try {
      source_model = generate_transformer(in.transformer_generate);
    } catch (const Error& e) {
      throw_input(std::string("inputs.generate: ") + e.what());
    }
  }
  in.transformer = model;
  const TransformerLearnOptions lo = transformer_learn_options(H, in.seed, threads);
  TransformerOracle<QTau> oracle(model, kTransformerDen);
  RecordingOracle<QTau> rec(oracle);
  Oracle<QTau>& black_box = rec;
  std::unique_ptr<TransformerLearnResult<QTau>> res;
  try {
    res = std::make_unique<TransformerLearnResult<QTau>>(learn_transformer(black_box, lo));
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input) throw;
    out.internal_error = out.internal_error || e.kind() == ErrorKind::internal;
    out.mismatches.push_back(std::string("learned: re-running the exact transformer learner failed (") + kind_name(e.kind()) +
                             "): " + clean_text(std::string(e.what()).substr(0, 2 * quote_chars)));
  }
  const long L = QTauAccess::L(black_box.field());
  if (L != ans.L) throw_internal("golden check: the checker's L differs from the oracle's");
  exp["L"] = L;
  exp["inputs"] = transformer_inputs_json(in, H);
  exp["model"] = transformer_model_json(source_model);
  exp["model_canonical"] = transformer_model_json(canon);
  ojson qs = ojson::array();
  if (res)
    for (size_t i = 0; i < rec.queries.size(); ++i) qs.push_back(query_json(i, rec.queries[i]));
  exp["queries"] = qs;
  // an answer the checker could not re-derive is reported once, above
  const json& fa = doc["answers"];
  for (size_t i = 0; i < ans.answers.size(); ++i)
    if (ans.answers[i].is_null() && i < fa.size()) ans.answers[i] = ojson::parse(fa[i].dump());
  exp["answers"] = ans.answers;
  if (res) {
    const TransformerModel got = learned_model(*res, model.d);
    exp["learned"] = learned_json(got);
    exp["summary"] = transformer_summary_json(black_box, *res, got, canon);
    if (!exp["summary"]["exact_match"].get<bool>()) out.mismatches.push_back("learned: the re-derived learned transformer is not the canonical model");
  }
  diff(doc, json::parse(exp.dump()), "", out);
  return out;
}

}  // namespace mhaq
