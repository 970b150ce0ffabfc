// The baselines on a hidden model, `mhaq compare` and the contrast study.
#include "mhaq/evidence/baseline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

#include "mhaq/base/random.hpp"
#include "mhaq/model/factored.hpp"
#include "mhaq/oracle/oracle_stack.hpp"
#include "mhaq/oracle/jet_oracle.hpp"
#include "mhaq/run/arith_policy.hpp"
#include "mhaq/run/record_json.hpp"
#include "mhaq/run/recover_limits.hpp"
#include "mhaq/run/report.hpp"
#include "mhaq/run/run_result.hpp"
#include "mhaq/analysis/ball_replay.hpp"
#include "mhaq/analysis/sensitivity.hpp"
#include "mhaq/oracle/recorded_balls.hpp"

namespace mhaq {

using nlohmann::json;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

Model generate_orthogonal_model(const GenerateOptions& g, std::vector<QMat>& bases) {
  if (g.heads < 1 || g.heads > g.d) throw Error(ErrorKind::usage, "--orthogonal needs 1 <= heads <= d (one subspace of dimension >= 1 per head)");
  if (g.share_w || g.cancel_v) throw Error(ErrorKind::usage, "--orthogonal heads have distinct subspaces: no --share-w or --cancel-v");
  const int d = g.d;
  Rng rng(g.seed ^ 0x6f7274686f676f6eULL);
  // an orthogonal basis with entries in {0, 1, -1}
  std::vector<int> perm(d);
  for (int i = 0; i < d; ++i) perm[i] = i;
  for (int i = d - 1; i > 0; --i) std::swap(perm[i], perm[rng.uniform_int(0, i)]);
  std::vector<QVec> cols;
  for (int i = 0; i < d;) {
    QVec a(d), b(d);
    const Rational s(rng.uniform_int(0, 1) ? 1 : -1);
    if (i + 1 < d && rng.uniform_int(0, 1)) {
      a[perm[i]] = s, a[perm[i + 1]] = s;
      b[perm[i]] = s, b[perm[i + 1]] = -s;
      cols.push_back(a), cols.push_back(b);
      i += 2;
    } else {
      a[perm[i]] = s;
      cols.push_back(a);
      ++i;
    }
  }
  for (int i = d - 1; i > 0; --i) std::swap(cols[i], cols[rng.uniform_int(0, i)]);
  bases.clear();
  Model m;
  m.d = d;
  int next = 0;
  for (int h = 0; h < g.heads; ++h) {
    const int k = d / g.heads + (h < d % g.heads ? 1 : 0);
    QMat P(d, k);
    for (int c = 0; c < k; ++c)
      for (int r = 0; r < d; ++r) P(r, c) = cols[next + c][r];
    next += k;
    // A_h (k x k, not zero) and b_h (not zero), drawn like W and v
    QMat A(k, k);
    QVec b(k);
    for (;;) {
      bool az = true, bz = true;
      for (int r = 0; r < k; ++r) {
        for (int c = 0; c < k; ++c) {
          A(r, c) = Rational(rng.uniform_int(-g.w_range, g.w_range), static_cast<unsigned long>(g.w_den));
          az = az && A(r, c).is_zero();
        }
        b[r] = Rational(rng.uniform_int(-g.v_range, g.v_range), static_cast<unsigned long>(g.v_den));
        bz = bz && b[r].is_zero();
      }
      if (!az && !bz) break;
    }
    HeadQ head{QMat(d, d), matvec(P, b)};
    for (int r = 0; r < d; ++r)
      for (int c = 0; c < d; ++c)
        for (int s = 0; s < k; ++s)
          for (int t = 0; t < k; ++t) head.W(r, c) = head.W(r, c) + P(r, s) * A(s, t) * P(c, t);
    m.heads.push_back(std::move(head));
    bases.push_back(std::move(P));
  }
  m.validate();
  return m;
}

std::string model_with_bases_to_json_text(const Model& m, const std::vector<QMat>& bases) {
  std::string t = model_to_json_text(m);
  const size_t end = t.rfind('}');
  return t.substr(0, end) + ",\n \"bases\": " + bases_json(bases) + "}\n";
}

namespace {

BaselineOptions baseline_options(const BaselineRun& b, const RecoverOptions& o) {
  BaselineOptions bo;
  bo.method = b.method;
  bo.bases = b.bases;
  bo.seed = learner_seed(o.seed);
  bo.tokens = o.tokens.range > 0 ? o.tokens : default_tokens(o.arith);
  // exact answers carry no noise: the prior work's scaling only for the
  // approximate arithmetics (powers of two keep the tokens exact)
  bo.max_scale_log2 = arith_facts(o.arith).exact ? 0 : 16;
  bo.w_bound = b.w_bound;
  return bo;
}

// The baseline's own kappa: its algorithm replayed on jets over the answers
// (approximate arithmetics); floats also get the first-order error estimate.
template <class T>
void baseline_kappa(RecoverResult& r, RunFacts& facts, const Field<T>& F, int d, const BaselineOptions& bo, const RecordingOracle<T>& rec, const RecoverOptions& o) {
  ReplayOracle<T> replay(d, F, rec.queries.all(), rec.answers);
  JetOracle<T> jo(replay);
  const BaselineResult<Jet<T>> jr = learn_baseline<Field<Jet<T>>>(jo, bo);
  const Sensitivity S = sensitivity_of_jet_heads(F, d, jr.heads, rec.answers);
  r.study.kappa = S.kappa;
  r.study.kappa_rel = S.kappa_rel;
  ArithPolicy<T>::floats(
      [&](const auto& G) {
        long p = G.precision();
        if (o.oracle_bits > 0) p = std::min(p, o.oracle_bits);
        record_estimate(r, facts, first_order_estimate_log2(d, S.kappa, S.kappa_rel, p, o.noise_eps));
      },
      F);
}

// The judge's bound (proofs/40): the baseline itself in balls over its
// recorded queries (it is not adaptive: the same ones), each answer the ball
// of its stated error; the certified distance from the float run's heads to
// the replay's bounds max_rel_error.
template <class T>
void baseline_judge(RecoverResult& r, RunFacts& facts, const Field<T>& F, int d, const BaselineOptions& bo, const RecordingOracle<T>& rec,
                    const AnswerErrors& errors, const std::vector<LearnedHead<T>>& heads) {
  r.judge.answer_assumption = errors.error_assumption();
  r.judge.judge_route = "replay";
  r.judge.judge_bits = working_precision();
  try {
    RecordedBalls replay(d, rec.queries.all(), answer_balls(F, rec.answers, errors), nullptr);
    const BaselineResult<Ball> b = learn_baseline<Field<Ball>>(replay, bo);
    if (record_certified_bound(r, facts, certified_distance_log2(F, heads, b.heads))) return;
    record_judge_note(r, facts, "the balls of the baseline's replay do not bound every head's scale away from zero");
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input || e.kind() == ErrorKind::internal) throw;
    record_judge_note(r, facts, std::string("the baseline replayed in balls stopped: ") + e.what());
  }
}

template <class T>
void run_baseline(RecoverResult& r, const Model& truth, const Model& canon, const BaselineOptions& bo, const RecoverOptions& o, const OracleNoise& noise) {
  using P = ArithPolicy<T>;
  const auto scope = P::precision(o.bits);
  OracleStack<T> stack = OracleStack<T>::model(truth, bo.tokens.den << bo.max_scale_log2, noise).recorded();
  const RecordingOracle<T>& rec = stack.record();
  Oracle<T>& black_box = stack.top();  // the baseline gets this reference and nothing else
  const Field<T>& F = black_box.field();
  RunFacts facts = known_truth_facts(o.arith, canon);
  P::tolerance(r, facts, F, o.tolerance, true);
  bool returned = false;
  Verdict v;
  try {
    const BaselineResult<T> res = learn_baseline<Field<T>>(black_box, bo);
    returned = true;
    facts.heads_recovered = static_cast<int>(res.heads.size());
    r.evidence.heads_recovered = res.heads.size();
    r.evidence.redraws = res.redraws;
    r.evidence.heads = head_records(F, res.heads);
    P::approximate([&](const auto& G, const auto& R) { baseline_kappa(r, facts, G, truth.d, bo, R, o); }, F, rec);
    P::floats([&](const auto& G, const auto& R) { baseline_judge(r, facts, G, truth.d, bo, R, *stack.errors(), res.heads); }, F, rec);
    P::compare(r, facts, canon, res.heads);
    P::approximate(
        [&](const auto& heads) {
          if (noise.active()) r.truth.observed_error = pow2_value(param_error_log2(heads, canon));
        },
        res.heads);
    v = judge(facts);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::usage || e.kind() == ErrorKind::input || e.kind() == ErrorKind::internal) throw;
    v = {status_of(e.kind()), e.what()};
    r.evidence.heads_recovered = 0;
  }
  r.evidence.self_check = SelfCheck::none;  // the prior work does not check its assumptions
  r.truth.wrong = returned && !facts.agrees;
  report_verdict(r, v, o);
  r.evidence.queries = black_box.queries();
  r.evidence.max_length = black_box.max_length();
}

}  // namespace

RecoverResult baseline_run(const Model& truth, const BaselineRun& b, const RecoverOptions& o) {
  truth.validate();
  // recover's stated limits, before any work: the model's size, and in exact
  // mode the a-priori tau-degree bound at the baseline's tokens (its u are
  // drawn from the same grid, its queries [u + e_j, e_j] stay within it)
  check_recover_limits(truth, o, "the model", true);
  const Model canon = truth.canonical();
  const BaselineOptions bo = baseline_options(b, o);
  RecoverResult r;
  r.run.method = b.method;
  r.run.arith = o.arith;
  if (const long b = reported_bits_of(o.arith, o.bits); b >= 0) r.run.bits = b;
  r.run.d = truth.d;
  r.run.seed = o.seed;
  r.truth.heads_true = canon.num_heads();
  if (b.method == BaselineMethod::orthogonal) {
    r.run.bases_source = b.bases_source;
    std::vector<long> dims;
    for (const auto& P : b.bases) dims.push_back(P.cols());
    r.run.subspace_dims = dims;
  }
  r.plan.query_bound = baseline_query_count(truth.d, bo);
  r.plan.max_length_bound = 2;
  r.run.token_range = bo.tokens.range;
  r.run.token_den = bo.tokens.den;
  r.run.scale_log2_max = bo.max_scale_log2;
  const OracleNoise noise{o.oracle_bits, o.noise_eps, o.noise_seed, NoisePattern::uniform, {}};
  if (o.oracle_bits > 0) r.oracle.bits = o.oracle_bits;
  if (!o.noise_eps.is_zero()) {
    r.oracle.noise_eps = o.noise_eps.str();
    r.oracle.noise_seed = o.noise_seed;
  }
  // exact: the plan's own answers against the cost budget, as recover's
  // (known bases from a file can make tokens larger than the grid's)
  if (arith_facts(o.arith).exact && !exact_queries_within_budget(r, truth, baseline_plan(truth.d, bo), bo.tokens.den << bo.max_scale_log2, o))
    return r;
  with_arith(o.arith, [&]<class T>() { run_baseline<T>(r, truth, canon, bo, o, noise); });
  return r;
}


namespace {
// What a row's comparison with the truth says, in one string.
std::string error_text(const RecoverResult& t) {
  if (t.truth.exact_match) return *t.truth.exact_match ? "0 (equal in Q)" : "differs (exact)";
  if (t.truth.contains_truth) return std::string(*t.truth.contains_truth ? "contains" : "MISSES") + ", radius " + t.truth.max_radius_decimal.value_or("-");
  if (t.truth.max_rel_error_decimal) return *t.truth.max_rel_error_decimal;
  return "-";
}
// max_rel_error as a double (+inf for a wrong head count, 0 for exact equality), NaN when no parameters were compared
double rel_error_of(const RecoverResult& t) {
  if (t.truth.exact_match) return *t.truth.exact_match ? 0.0 : kInf;
  if (t.truth.max_rel_error_decimal) {
    if (*t.truth.max_rel_error_decimal == "inf") return kInf;
    if (const auto e = finite_number(t.truth.max_rel_error)) return *e;
    return 0.0;  // below double's range
  }
  return std::nan("");
}
CompareRow row_of(const std::string& method, const RecoverResult& t) {
  CompareRow row;
  row.method = method;
  row.arith = t.run.arith;
  row.status = t.judge.status;
  row.queries = t.evidence.queries.value_or(0);
  row.max_length = t.evidence.max_length.value_or(0);
  row.heads_true = t.truth.heads_true.value_or(0);
  row.heads_recovered = t.evidence.heads_recovered.value_or(0);
  row.error = error_text(t);
  row.max_rel_error = rel_error_of(t);
  // wrong: parameters returned that disagree with the known truth
  row.wrong = t.truth.wrong.value_or(t.judge.status == Status::mismatch && t.evidence.heads_recovered.value_or(0) > 0);
  if (t.judge.status != Status::ok) row.message = t.judge.message;
  row.exact_match = t.truth.exact_match;
  row.contains_truth = t.truth.contains_truth;
  row.kappa = t.study.kappa;
  row.observed_error = t.truth.observed_error;
  row.query_bound = t.plan.query_bound;
  row.paper_bound = t.plan.paper_bound;
  row.bases_source = t.run.bases_source;
  return row;
}
}  // namespace

namespace {
// One row per method: mhaq's schedules at mo, the baselines that apply at bo.
std::vector<CompareRow> method_rows(const Model& truth, const std::vector<QMat>* bases, const RecoverOptions& mo, const RecoverOptions& bo) {
  const int H = truth.canonical().num_heads();
  std::vector<CompareRow> rows;
  for (Schedule s : {Schedule::paper, Schedule::lean, Schedule::compact}) {
    if (s == Schedule::compact && H > compact_max_heads) continue;  // its links try all H! assignments
    RecoverOptions ro = mo;
    ro.schedule = s;
    rows.push_back(row_of(std::string("mhaq-") + schedule_name(s), recover_run(truth, ro)));
  }
  rows.push_back(row_of("single-head", baseline_run(truth, BaselineRun{BaselineMethod::single_head, {}, "", Rational(1)}, bo)));
  if (bases) rows.push_back(row_of("orthogonal-known", baseline_run(truth, BaselineRun{BaselineMethod::orthogonal, *bases, "known", Rational(1)}, bo)));
  if (H >= 2 && H <= truth.d)
    rows.push_back(row_of("orthogonal-axis", baseline_run(truth, BaselineRun{BaselineMethod::orthogonal, axis_bases(truth.d, H), "axis-aligned guess", Rational(1)}, bo)));
  return rows;
}
}  // namespace

CompareResult compare_methods(const Model& truth, const std::vector<QMat>* bases, const RecoverOptions& o) {
  CompareResult c;
  c.d = truth.d;
  c.heads_true = truth.canonical().num_heads();
  c.arith = o.arith;
  c.seed = o.seed;
  if (!o.noise_eps.is_zero()) c.noise_eps = o.noise_eps.str();
  c.rows = method_rows(truth, bases, o, o);
  return c;
}

std::string compare_report(const CompareResult& c) {
  std::ostringstream o;
  o << "mhaq compare: " << arith_name(c.arith) << ", d=" << c.d << ", " << c.heads_true << " canonical heads, seed " << c.seed;
  if (c.noise_eps) o << ", noise " << *c.noise_eps;
  o << "\n";
  char b[256];
  std::snprintf(b, sizeof b, "  %-17s %7s %7s  %-12s %-6s %s\n", "method", "queries", "longest", "status", "wrong", "error vs truth");
  o << b;
  for (const CompareRow& r : c.rows) {
    std::string extra;
    if (r.observed_error) extra += "  observed " + json_text(*r.observed_error);
    if (r.kappa) extra += "  kappa " + json_text(*r.kappa);
    std::snprintf(b, sizeof b, "  %-17s %7ld %7ld  %-12s %-6s %s%s\n", r.method.c_str(), r.queries, r.max_length, status_name(r.status), r.wrong ? "WRONG" : "-",
                  r.error.c_str(), extra.c_str());
    o << b;
  }
  return o.str();
}

std::string baseline_report(const RecoverResult& r) {
  auto shown = [](const auto& x) { return x ? std::to_string(*x) : std::string("null"); };
  std::ostringstream o;
  o << "mhaq baseline: " << (r.run.method ? baseline_method_name(*r.run.method) : "") << " (prior work), " << arith_name(r.run.arith);
  if (r.run.bits) o << " (" << *r.run.bits << " bits)";
  o << ", d=" << r.run.d << ", seed " << r.run.seed << "\n";
  o << "  status           " << status_name(r.judge.status) << "\n";
  if (r.judge.status != Status::ok) o << "  reason           " << r.judge.message << "\n";
  if (r.run.bases_source) o << "  bases            " << *r.run.bases_source << ", subspace dimensions " << json_text(r.run.subspace_dims.value_or(std::vector<long>{})) << "\n";
  o << "  queries          " << shown(r.evidence.queries) << " (sum of k^2 + k over the head subspaces = " << shown(r.plan.query_bound) << ")\n";
  o << "  longest query    " << shown(r.evidence.max_length) << " (bound 2)\n";
  o << "  heads            " << shown(r.evidence.heads_recovered) << " recovered, " << shown(r.truth.heads_true) << " in the canonical truth\n";
  o << "  error vs truth   " << error_text(r) << (r.truth.wrong.value_or(false) ? "  -- WRONG parameters, and the baseline does not notice" : "") << "\n";
  if (r.study.kappa) o << "  kappa            " << json_text(*r.study.kappa) << " (the baseline's own noise amplification)\n";
  if (r.truth.observed_error) o << "  observed error   " << json_text(*r.truth.observed_error) << "\n";
  if (r.evidence.heads && r.run.d <= 4) {
    int h = 0;
    for (const HeadRecord& hd : *r.evidence.heads) o << "  head " << ++h << ": v = " << json_text(hd.v) << "\n          W = " << json_text(hd.W) << "\n";
  }
  return o.str();
}

// ------------------------------------------------------------------ the study
namespace {
// The model of a study family's trial i, with its bases (orthogonal) and kind.
Model study_model(const std::string& fam, int i, GenerateOptions& g, std::vector<QMat>& bases, std::string& kind) {
  kind = "plain";
  if (fam == "single") {
    static const int ds[] = {2, 3, 4, 6};
    g.d = ds[i % 4];
    g.heads = 1;
    return generate_model(g);
  }
  if (fam == "orthogonal") {
    g.heads = 2 + i % 2;
    g.d = g.heads + 1 + (i / 2) % 2;
    return generate_orthogonal_model(g, bases);
  }
  const int H = 2 + i % 2;
  g.d = 3 + (i / 2) % 2;
  g.heads = H;
  if (i % 5 == 3) g.share_w = true, g.heads = H + 1, kind = "share_w";
  if (i % 5 == 4) g.cancel_v = true, g.heads = H + 2, kind = "cancel_v";
  return generate_model(g);
}

std::optional<double> study_median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Per method, in the order the methods first appear: the tally of its rows.
std::vector<StudyMethod> study_methods(const StudyOptions& s, const std::vector<StudyTrial>& trials) {
  std::vector<StudyMethod> methods;
  std::vector<std::vector<double>> queries, errors;
  for (const StudyTrial& t : trials)
    for (const CompareRow& row : t.rows) {
      auto it = std::find_if(methods.begin(), methods.end(), [&](const StudyMethod& m) { return m.method == row.method; });
      if (it == methods.end()) {
        StudyMethod m;
        m.method = row.method;
        m.arith = row.method.rfind("mhaq", 0) == 0 ? s.arith : s.baseline_arith;
        methods.push_back(m), queries.emplace_back(), errors.emplace_back();
        it = methods.end() - 1;
      }
      StudyMethod& a = *it;
      const size_t k = static_cast<size_t>(it - methods.begin());
      ++a.runs;
      queries[k].push_back(static_cast<double>(row.queries));
      const bool ok = row.status == Status::ok;
      a.ok += ok;
      a.wrong += row.wrong;
      a.degenerate += row.status == Status::degenerate;
      const bool has = !std::isnan(row.max_rel_error);
      if (has) errors[k].push_back(row.max_rel_error);
      if (has && row.max_rel_error > 0.1) ++a.off_0_1;
      if (!ok && !row.wrong) ++a.failed;
    }
  for (size_t k = 0; k < methods.size(); ++k) {
    methods[k].median_queries = study_median(queries[k]);
    methods[k].median_error = study_median(errors[k]);
  }
  return methods;
}
}  // namespace

StudyResult compare_study(const StudyOptions& s) {
  if (s.trials < 1) throw Error(ErrorKind::usage, "--trials must be positive");
  StudyResult out;
  out.seed = s.seed;
  out.arith = s.arith;
  out.baseline_arith = s.baseline_arith;
  out.bits = s.bits;
  for (const auto& fam : s.families) {
    if (fam != "single" && fam != "orthogonal" && fam != "general") throw Error(ErrorKind::usage, "study family must be single, orthogonal or general");
    StudyFamily f;
    f.family = fam;
    f.trials = s.trials;
    for (int i = 0; i < s.trials; ++i) {
      GenerateOptions g;
      g.seed = s.seed * 1000003ULL + static_cast<std::uint64_t>(i) * 7919ULL + (fam == "single" ? 1 : fam == "orthogonal" ? 2 : 3);
      std::vector<QMat> bases;
      StudyTrial t;
      const Model m = study_model(fam, i, g, bases, t.kind);
      RecoverOptions mo;
      mo.arith = s.arith;
      mo.bits = s.bits;
      mo.seed = static_cast<std::uint64_t>(i) + 1;
      RecoverOptions bo = mo;
      bo.arith = s.baseline_arith;
      t.trial = i;
      t.d = m.d;
      t.heads = m.canonical().num_heads();
      t.model_seed = g.seed;
      t.rows = method_rows(m, bases.empty() ? nullptr : &bases, mo, bo);
      f.runs.push_back(std::move(t));
    }
    f.methods = study_methods(s, f.runs);
    out.families.push_back(std::move(f));
  }
  return out;
}

std::string study_report(const StudyResult& j) {
  std::ostringstream o;
  o << "mhaq compare --study: mhaq at " << arith_name(j.arith) << ", baselines at " << arith_name(j.baseline_arith) << " (" << j.bits
    << " bits for ball/mpfr), seed " << j.seed << "\n";
  char b[256];
  for (const StudyFamily& f : j.families) {
    o << "\nfamily " << f.family << " (" << f.trials << " models)\n";
    std::snprintf(b, sizeof b, "  %-17s %-6s %5s %5s %6s %6s %7s %6s %9s  %s\n", "method", "arith", "runs", "ok", "wrong", "off>.1", "failed", "degen", "med.queries",
                  "median error");
    o << b;
    for (const StudyMethod& m : f.methods) {
      const std::string mq = m.median_queries ? json_text(*m.median_queries) : "-";
      const std::string me = !m.median_error ? "-" : std::isinf(*m.median_error) ? "inf" : decimal_of_log2(*m.median_error > 0 ? std::log2(*m.median_error) : -kInf);
      std::snprintf(b, sizeof b, "  %-17s %-6s %5d %5d %6d %6d %7d %6d %9s  %s\n", m.method.c_str(), arith_name(m.arith), m.runs, m.ok, m.wrong, m.off_0_1, m.failed,
                    m.degenerate, mq.c_str(), me.c_str());
      o << b;
    }
  }
  return o.str();
}

}  // namespace mhaq
