// Golden files for one-layer transformers: export and check.
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

// ------------------------------------------------------------ transformers
// A transformer golden file (SCHEMA.md, "Transformer files"): the exact
// transformer learner on a TransformerOracle<QTau>, its queries and answers,
// and what it learned. The check re-derives the answers with the separate
// checker's own evaluator (mhaq_check) and the rest with a fresh learner run.
namespace mhaq {

using namespace golden_internal;

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
      const json& runs = need_array(fq[i], qp, "runs", static_cast<size_t>(check::limits::max_runs));
      work += (static_cast<long>(runs.size()) + m.d) * per;  // at most 2^33 per query, and the sum stops past 2^30: no overflow
      if (work > limits::max_golden_eval_work)
        throw_input("queries: re-deriving the answers would take more than " + std::to_string(limits::max_golden_eval_work) +
                    " rational multiply-adds ((runs + d) d H m summed over the queries, at " + qp + ")");
    }
  }
  const Rational cap(limits::max_tau_exponent);
  for (size_t i = 0; i < fq.size(); ++i) {
    const std::string qp = json_index_path("queries", i);
    const json& runs = need_array(fq[i], qp, "runs", static_cast<size_t>(check::limits::max_runs));
    if (runs.empty()) throw_input(qp + ".runs: empty");
    std::vector<QVec> toks;
    for (size_t r = 0; r < runs.size(); ++r) {
      const std::string rp = json_index_path(qp + ".runs", r);
      const json& tj = need_array(runs[r], rp, "token", static_cast<size_t>(limits::max_d));
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
  if (canon.heads() == 0 || canon.neurons() == 0) throw_input("the transformer's canonical form is empty (T = 0): nothing to record; give a model with a head and a neuron whose readout is not zero");
  const TransformerLearnOptions lo = transformer_learn_options(canon.heads(), in.seed, in.threads);
  OracleStack<QTau> stack = OracleStack<QTau>::transformer(in.transformer, kTransformerDen).recorded();
  const RecordingOracle<QTau>& rec = stack.record();
  Oracle<QTau>& black_box = stack.top();  // the learner gets this reference and nothing else
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
  const long digits = need_int(doc, "", "digits", 1, max_digits);
  if (need_str(doc, "", "arith") != "exact") throw_input("arith: transformer golden files are exact");
  for (const char* k : {"model_canonical", "learned", "summary"}) (void)need(doc, "", k);
  (void)need_int(doc, "", "L", 1, max_L);  // out of range is malformed (exit 3), not a mismatch
  const json& inj = need(doc, "", "inputs");
  GoldenInputs in;
  in.is_transformer = true;
  in.digits = digits;
  in.model_source = need_str(inj, "inputs", "model_source");
  if (in.model_source != "generated" && in.model_source != "file") throw_input("inputs.model_source: must be \"generated\" or \"file\"");
  in.seed = need_u64(inj, "inputs", "seed");
  const int H = static_cast<int>(need_int(inj, "inputs", "heads_learner", 1, max_golden_heads));
  if (need_str(inj, "inputs", "schedule") != "paper") throw_input("inputs.schedule: must be \"paper\"");
  if (need_int(inj, "inputs", "token_den", 1, max_token_den) != kTransformerDen)
    throw_input("inputs.token_den: transformer golden files use the grid 1/" + std::to_string(kTransformerDen));
  TransformerFileInfo info;
  TransformerModel model;
  try {
    model = transformer_from_json(need(doc, "", "model"), &info);
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
    const json& g = need(inj, "inputs", "generate");
    TransformerGenerateOptions& o = in.transformer_generate;
    const std::string gp = "inputs.generate";
    o.d = static_cast<int>(need_int(g, gp, "d", 1, max_d));
    o.heads = static_cast<int>(need_int(g, gp, "heads", 1, max_heads));  // drawn heads; the canonical count is held to max_golden_heads
    o.neurons = static_cast<int>(need_int(g, gp, "neurons", 1, max_neurons));
    o.seed = need_u64(g, gp, "seed");
    o.w_range = need_int(g, gp, "w_range", 1, max_entry_range);
    o.w_den = need_int(g, gp, "w_den", 1, max_entry_range);
    o.U_range = need_int(g, gp, "U_range", 1, max_entry_range);
    o.U_den = need_int(g, gp, "U_den", 1, max_entry_range);
    o.share_w = need_bool(g, gp, "share_w");
    o.zero_neuron = need_bool(g, gp, "zero_neuron");
    o.parallel_neurons = need_bool(g, gp, "parallel_neurons");
  }
  const json& fq = need_array(doc, "", "queries", static_cast<size_t>(check::limits::max_golden_queries));
  (void)need_array(doc, "", "answers", static_cast<size_t>(check::limits::max_golden_queries));
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
  OracleStack<QTau> stack = OracleStack<QTau>::transformer(model, kTransformerDen).recorded();
  const RecordingOracle<QTau>& rec = stack.record();
  Oracle<QTau>& black_box = stack.top();
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
    if (got.u.empty() || !transformer_equal_canonical(got.canonical(), canon)) out.mismatches.push_back("learned: the re-derived learned transformer is not the canonical model");
  }
  diff(doc, json::parse(exp.dump()), "", out);
  return out;
}

}  // namespace mhaq
