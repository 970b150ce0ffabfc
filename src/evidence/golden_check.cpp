// Golden files, the check of an attention file: every field re-derived
// independently and compared (schema: tests/golden/SCHEMA.md).
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
#include "mhaq/stages/learner.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/run/recover.hpp"
#include "mhaq/stages/2-schedule/schedule.hpp"
#include "mhaq/analysis/design_search.hpp"
#include "mhaq/check/golden_transformer.hpp"
#include "mhaq/stages/transformer_learner.hpp"
#include "mhaq/evidence/golden_certified.hpp"

namespace mhaq {

using namespace golden_internal;

// ------------------------------------------------------------ check
namespace golden_internal {

using json = nlohmann::json;

Rational parse_rat(const json& e, const std::string& path, size_t max_chars) {
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
  const json& runs = need_array(q, path, "runs", static_cast<size_t>(check::limits::max_runs));
  if (runs.empty()) throw_input(path + ".runs: empty");
  Query out;
  fmpz_t t, R3;
  fmpz_init(t);
  fmpz_init_set_si(R3, 3 * tok.range);
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::string rp = json_index_path(path + ".runs", r);
    const json& tj = need_array(runs[r], rp, "token", static_cast<size_t>(limits::max_d));
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
      run.count = need_int(runs[r], rp, "count", 1, 1L << 30);
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
  flint::Fmpz c;
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
  const json& ex = need(ans, path, "exact");
  QTau x;
  parse_poly(QTauAccess::raw(x)->num, need(ex, path + ".exact", "num"), path + ".exact.num");
  parse_poly(QTauAccess::raw(x)->den, need(ex, path + ".exact", "den"), path + ".exact.den");
  if (fmpz_poly_is_zero(QTauAccess::raw(x)->den)) throw_input(path + ".exact.den: zero");
  fmpz_poly_q_canonicalise(QTauAccess::raw(x));
  return x;
}

// A ball written by binary_json: {"mid", "rad"}, both exact dyadic rationals.
Ball parse_ball(const json& j, const std::string& path) {
  Ball b;
  auto dyadic = [&](arf_t out, const char* key) {
    const Rational q = parse_rat(need(j, path, key), path + "." + key, static_cast<size_t>(limits::max_number_chars));
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
    flint::Arb x;
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

}  // namespace golden_internal

GoldenCheckResult golden_check_transformer(const nlohmann::json& doc, int threads);

namespace {

// The fields of an attention file the check takes as given: the header, the
// inputs, the model, and the queries and answers (everything else is
// re-derived and compared).
struct AttentionFile {
  long digits = 0, bits = 0;
  Arith arith = Arith::exact;
  std::string arith_s;
  GoldenInputs in;
  bool bound = false;  // heads_is_bound: inputs.heads_learner is a bound H0
  TokenSpec tok;
  Model model;
  std::vector<Query> queries;
  std::vector<QTau> answers;
};

// Reads and bounds those fields; a malformed one is Error(input) naming its path.
AttentionFile read_attention_file(const json& doc) {
  using namespace limits;
  AttentionFile file;
  file.digits = need_int(doc, "", "digits", 1, max_digits);
  file.arith_s = need_str(doc, "", "arith");
  if (file.arith_s != "exact" && file.arith_s != "ball" && file.arith_s != "mpfr") throw_input("arith: must be exact, ball or mpfr, got " + quote_text(file.arith_s));
  file.arith = parse_arith(file.arith_s);
  file.bits = arith_facts(file.arith).exact ? 256 : need_int(doc, "", "bits", min_bits, max_bits);
  for (const char* k : {"plan", "model_canonical", "summary"}) (void)need(doc, "", k);
  (void)need_int(doc, "", "L", 1, max_L);  // out of range is malformed (exit 3), not a mismatch

  // ---- inputs (the only fields taken from the file, besides the queries and answers)
  const json& inj = need(doc, "", "inputs");
  file.in.digits = file.digits;
  file.in.model_source = need_str(inj, "inputs", "model_source");
  if (file.in.model_source != "generated" && file.in.model_source != "file") throw_input("inputs.model_source: must be \"generated\" or \"file\"");
  file.in.seed = need_u64(inj, "inputs", "seed");
  file.in.heads = static_cast<int>(need_int(inj, "inputs", "heads_learner", 1, max_heads));
  file.bound = json_find(inj, "heads_is_bound") && need_bool(inj, "inputs", "heads_is_bound");
  if (need_str(inj, "inputs", "schedule") != "paper") throw_input("inputs.schedule: must be \"paper\"");
  if (json_find(inj, "design")) {
    const std::string ds = need_str(inj, "inputs", "design");
    if (ds != "scaled" && ds != "tuned") throw_input("inputs.design: must be \"scaled\" or \"tuned\" (absent for the paper design), got " + quote_text(ds));
    file.in.design = parse_design(ds);
  }
  file.tok = TokenSpec{need_int(inj, "inputs", "token_range", 1, max_token_range), need_int(inj, "inputs", "token_den", 1, max_token_den)};
  file.model = model_from_json(need(doc, "", "model"), "model");
  {  // what an export can have written: H = the canonical head count, or a bound H0 >= it
    const long canon_heads = file.model.canonical().num_heads();
    if (file.in.heads > max_golden_heads)
      throw_input("inputs.heads_learner: " + std::to_string(file.in.heads) + ", more than the limit of " + std::to_string(max_golden_heads) + " for golden files");
    if (file.bound ? file.in.heads < canon_heads : file.in.heads != canon_heads)
      throw_input("inputs.heads_learner: " + std::to_string(file.in.heads) + (file.bound ? " is below" : " differs from") + " the model's canonical head count " +
                  std::to_string(canon_heads) + (file.bound ? " (heads_is_bound)" : " (heads_is_bound is false)") + "; no export writes that");
  }
  // Work the file can demand, bounded before it is done: the plan's size and the answers' tau-degrees.
  check_plan_size(file.model.d, file.in.heads, true, 0, ErrorKind::input, "inputs.heads_learner");
  // the queries' grid: the plan's, or the small token grid's witnesses (stages/grid_guard.hpp) when the run surely asks them
  LearnOptions grid_lo;
  grid_lo.H = file.in.heads;
  grid_lo.heads_is_bound = file.bound;
  grid_lo.tokens = file.tok;
  grid_lo.bias = file.model.has_bias();
  if (json_find(inj, "design")) grid_lo.draws = Draws{};  // a design: the guard fires whatever the grid
  const TokenSpec query_tok = golden_query_grid(file.model.d, grid_lo);
  check_exact_tau_degree(file.model, query_tok, ErrorKind::input, "model and inputs.token_range", "the file cannot be checked exactly");
  if (file.in.model_source == "generated") {
    const json& g = need(inj, "inputs", "generate");
    GenerateOptions& o = file.in.generate;
    const std::string gp = "inputs.generate";
    o.d = static_cast<int>(need_int(g, gp, "d", 1, max_d));
    o.heads = static_cast<int>(need_int(g, gp, "heads", 1, max_heads));
    o.seed = need_u64(g, gp, "seed");
    o.w_range = need_int(g, gp, "w_range", 1, max_entry_range);
    o.w_den = need_int(g, gp, "w_den", 1, max_entry_range);
    o.v_range = need_int(g, gp, "v_range", 1, max_entry_range);
    o.v_den = need_int(g, gp, "v_den", 1, max_entry_range);
    o.share_w = need_bool(g, gp, "share_w");
    o.cancel_v = need_bool(g, gp, "cancel_v");
    o.bias = json_find(g, "bias") && need_bool(g, gp, "bias");
  }
  const int d = file.model.d;
  const json& fq = need_array(doc, "", "queries");
  const json& fa = need_array(doc, "", "answers");
  for (size_t i = 0; i < fq.size(); ++i) file.queries.push_back(parse_query(fq[i], json_index_path("queries", i), d, query_tok));
  for (size_t i = 0; i < fa.size(); ++i) file.answers.push_back(parse_qtau(fa[i], json_index_path("answers", i)));
  (void)need_array(doc, "", "pairs");
  (void)need_array(doc, "", "heads");
  return file;
}

// Per-pair values: interpolate the file's answers; f(0) by chaining from
// [b_1]. Returns the re-derived "pairs"; exact_fits receives each pair's
// exact fit where the file's answers interpolate.
ojson rederive_pairs(const json& doc, const AttentionFile& file, const Plan& plan, int H, long L, GoldenCheckResult& out,
                     std::vector<std::optional<PairFit<QTau>>>& exact_fits) {
  ojson pairs = ojson::array();
  const Field<QTau> F(L);
  const size_t need_answers = 1 + plan.pairs.size() * 2 * static_cast<size_t>(H);
  Rational vb1;
  const bool have = file.answers.size() >= need_answers && QTauAccess::is_rational(file.answers[0], vb1);
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
    for (int k = 1; k <= 2 * H; ++k) f.push_back(file.answers[plan.query_index(static_cast<long>(p), k)]);
    try {
      const PairFit<QTau> pf = file.bound ? interpolate_pair_minimal(F, f, H) : interpolate_pair(F, f, H);
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
    if (QTauAccess::is_rational(evaluate_exact(file.model, Query{Run{s.final_token, 1}}, L), f0m) && !(f0m == f0))
      out.mismatches.push_back("pairs[" + std::to_string(p) + "].f0: chained from the file's answers gives " + quote_text(f0.str()) + ", the model gives " +
                                quote_text(f0m.str()));
  };
  if (have) {
    for (size_t p = 0; p < plan.pairs.size(); ++p)
      if (plan.pairs[p].final_token == b1) fit(p, vb1);
    // v^T delta_i from the limits of the base pairs (i, 1): P = v^T (b_1 + delta_i).
    const int d = file.model.d;
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
  return pairs;
}

// The same learner in the file's arithmetic and precision, re-run
// (deterministic) into exp; a failed re-run is one mismatch, and the file's
// fields of that run are then not compared one by one.
void rerun_binary(const json& doc, const AttentionFile& file, const LearnOptions& lo, ojson& exp, GoldenCheckResult& out) {
  try {
    exp[file.arith_s] = binary_run(exp, file.model, lo, file.arith, file.bits);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input) throw;
    out.internal_error = out.internal_error || e.kind() == ErrorKind::internal;
    out.mismatches.push_back(file.arith_s + ": re-running the " + file.arith_s + " learner failed (" + kind_name(e.kind()) + "): " + clean_text(std::string(e.what()).substr(0, 2 * quote_chars)));
    // reported once: the run's fields are then not compared one by one
    for (const char* list : {"answers", "pairs"}) {
      const json& from = need(doc, "", list);
      ojson& to = exp[list];
      for (size_t i = 0; i < from.size() && i < to.size(); ++i)
        if (const json* x = json_find(from[i], file.arith_s)) to[i][file.arith_s] = ojson::parse(x->dump());
    }
    if (const json* x = json_find(doc, file.arith_s)) exp[file.arith_s] = ojson::parse(x->dump());
  }
}

// Independently of the re-run: the file's balls contain the exact truth
// (answers, pair values, heads).
void check_ball_containment(const json& doc, const AttentionFile& file, const std::vector<QTau>& exact_values,
                            const std::vector<std::optional<PairFit<QTau>>>& exact_fits, const Model& canon, long L, GoldenCheckResult& out) {
  const json& file_answers = doc["answers"];
  const int d = file.model.d;
  for (size_t i = 0; i < file_answers.size() && i < exact_values.size(); ++i) {
    const json* ball = json_find(file_answers[i], "ball");
    if (!ball) continue;
    const std::string p = "answers[" + std::to_string(i) + "].ball";
    if (!contains_exact(parse_ball(*ball, p), file.bits, [&](arb_t x, long prec) { qtau_arb(x, exact_values[i], L, prec); }))
      out.mismatches.push_back(p + ": does not contain the exact answer");
  }
  const json& fp = doc["pairs"];
  for (size_t p = 0; p < exact_fits.size() && p < fp.size(); ++p) {
    const json* ball = json_find(fp[p], "ball");
    if (!exact_fits[p] || !ball) continue;
    const std::string pp = "pairs[" + std::to_string(p) + "].ball";
    const json& bj = *ball;
    const PairFit<QTau>& ex = *exact_fits[p];
    Rational P;
    bool ok = QTauAccess::is_rational(ex.P, P) && parse_ball(need(bj, pp, "P"), pp + ".P").contains(P);
    const json& poles = need_array(bj, pp, "poles");
    std::vector<bool> used(poles.size(), false);
    ok = ok && poles.size() == ex.r.size();
    for (size_t h = 0; h < ex.r.size() && ok; ++h) {  // each exact pole in a distinct ball pole
      long n = 0;
      Rational c;
      bool found = false;
      if (QTauAccess::is_tau_power(ex.r[h], n) && QTauAccess::is_rational(ex.c[h], c))
        for (size_t g = 0; g < poles.size() && !found; ++g) {
          const std::string gp = pp + ".poles[" + std::to_string(g) + "]";
          if (used[g] || !parse_ball(need(poles[g], gp, "c"), gp + ".c").contains(c)) continue;
          found = used[g] = contains_exact(parse_ball(need(poles[g], gp, "r"), gp + ".r"), file.bits, [&](arb_t x, long prec) {
            arb_set_si(x, n);
            arb_div_si(x, x, L, prec);
            arb_exp(x, x, prec);
          });
        }
      ok = found;
    }
    if (!ok) out.mismatches.push_back(pp + ": does not contain the exact pair values (P, poles r = tau^n, residues c)");
  }
  const json* ball = json_find(doc, "ball");
  if (ball && json_find(*ball, "heads")) {
    std::vector<LearnedHead<Ball>> hs;
    const json& fh = need_array(*ball, "ball", "heads");
    for (size_t h = 0; h < fh.size(); ++h) {
      const std::string hp = "ball.heads[" + std::to_string(h) + "]";
      const json& W = need_array(fh[h], hp, "W");
      const json& v = need_array(fh[h], hp, "v");
      if (static_cast<int>(W.size()) != d || static_cast<int>(v.size()) != d) throw_input(hp + ": W and v must be d x d and d");
      LearnedHead<Ball> lh{Mat<Ball>(d, d), {}, {}};
      for (int i = 0; i < d; ++i) {
        if (!W[i].is_array() || static_cast<int>(W[i].size()) != d) throw_input(hp + ".W: not d x d");
        lh.v.push_back(parse_ball(v[i], hp + ".v[" + std::to_string(i) + "]"));
        for (int j = 0; j < d; ++j) lh.W(i, j) = parse_ball(W[i][j], hp + ".W[" + std::to_string(i) + "][" + std::to_string(j) + "]");
      }
      if (json_find(fh[h], "c")) {
        const json& c = need_array(fh[h], hp, "c");
        if (static_cast<int>(c.size()) != d) throw_input(hp + ".c: must have d entries");
        for (int i = 0; i < d; ++i) lh.c.push_back(parse_ball(c[i], hp + ".c[" + std::to_string(i) + "]"));
      }
      hs.push_back(std::move(lh));
    }
    std::optional<Ball> beta;
    if (const json* b = json_find(*ball, "beta")) beta = parse_ball(*b, "ball.beta");
    if (!ball_heads_contain(hs, canon, beta ? &*beta : nullptr)) out.mismatches.push_back("ball.heads: do not contain the canonical model's heads (and beta)");
  }
}

}  // namespace

GoldenCheckResult golden_check(const std::string& text, int threads) {
  json doc = parse_json_text(text);
  if (!doc.is_object()) throw_input("top level: expected an object, got " + json_shown(doc));
  if (need_str(doc, "", "format") != "mhaq-golden") throw_input("format: must be \"mhaq-golden\"");
  const long version = need_int(doc, "", "version", 0, 1L << 30);
  if (version != golden_version) throw_input("version: unsupported version " + std::to_string(version) + " (this mhaq reads version " + std::to_string(golden_version) + ")");
  if (const json* a = json_find(doc, "arith"); a && *a == "certified") return golden_check_certified(doc, threads);  // real weights, no Q(tau)
  if (json_find(doc, "model_kind")) {  // absent: an attention file
    const std::string kind = need_str(doc, "", "model_kind");
    if (kind != "transformer") throw_input("model_kind: must be \"transformer\" (absent for attention files), got " + quote_text(kind));
    return golden_check_transformer(doc, threads);
  }
  AttentionFile file = read_attention_file(doc);
  const Model& model = file.model;
  GoldenInputs& in = file.in;
  const int d = model.d;

  GoldenCheckResult out;
  // ---- re-derive
  const Model canon = model.canonical();
  ojson exp = header_json(0, file.digits, file.arith, file.bits);
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
  LearnOptions lo = learn_options(in.heads, file.bound, in.seed, file.tok, threads, model.has_bias());
  long pilot_queries = 0;
  if (in.design != Design::paper) {
    if (file.tok.den != golden_design_grid().den) throw_input("inputs.token_den: a file with a design uses the grid 1/" + std::to_string(golden_design_grid().den));
    in.model = model;
    in.arith = file.arith;
    in.bits = file.bits;
    LearnOptions dl = learn_options(in.heads, file.bound, in.seed, golden_design_grid(), threads, model.has_bias());
    lo.draws = golden_design(in, dl, pilot_queries);
    lo.tokens = golden_design_grid();  // as the export ran it: the small grid's witnesses are drawn on it
  }
  OracleStack<QTau> stack = OracleStack<QTau>::model(model, file.tok.den).recorded();
  const RecordingOracle<QTau>& asked = stack.record();  // every query, the small grid's witnesses included
  Oracle<QTau>& black_box = stack.top();
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
  exp["inputs"] = inputs_json(in, lo.H, file.bound, file.tok, pilot_queries);
  exp["model"] = model_json(source_model);
  exp["model_canonical"] = model_json(canon);
  ojson qs = ojson::array(), as = ojson::array();
  if (res) {
    exp["plan"] = plan_json(res->plan, res->redraws);
    for (size_t i = 0; i < asked.queries.size(); ++i) qs.push_back(query_json(i, asked.queries[i]));
  }
  exp["queries"] = qs;
  // Answers: the model evaluated exactly on the file's own queries.
  std::vector<QTau> exact_values;
  for (size_t i = 0; i < file.queries.size(); ++i) {
    exact_values.push_back(evaluate_exact(model, file.queries[i], L));
    as.push_back(answer_json(i, exact_values.back(), L, file.digits));
  }
  exp["answers"] = as;
  std::vector<std::optional<PairFit<QTau>>> exact_fits;
  exp["pairs"] = res ? rederive_pairs(doc, file, res->plan, lo.H, L, out, exact_fits) : ojson::array();

  if (res) {
    exp["heads"] = heads_json(res->heads);
    if (res->beta) exp["beta"] = rat_of(*res->beta, "recovered beta");
    exp["summary"] = summary_json(*res, lo, d, black_box.queries(), black_box.max_length(), canon);
    if (!exact_heads_match(res->heads, canon, res->beta ? &*res->beta : nullptr)) out.mismatches.push_back("heads: the re-derived learner heads are not the canonical model's heads");
  }
  if (!arith_facts(file.arith).exact && res) rerun_binary(doc, file, lo, exp, out);
  if (arith_facts(file.arith).rigorous) check_ball_containment(doc, file, exact_values, exact_fits, canon, L, out);
  // Compare (the header's decimal_format text is part of the schema).
  diff(doc, json::parse(exp.dump()), "", out);
  return out;
}

}  // namespace mhaq
