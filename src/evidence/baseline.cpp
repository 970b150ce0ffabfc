// The baselines on a hidden model, `mhaq compare` and the contrast study.
#include "mhaq/evidence/baseline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

#include "mhaq/base/random.hpp"
#include "mhaq/model/factored.hpp"
#include "mhaq/model/model_oracle.hpp"
#include "mhaq/stages/1-oracle/recording_oracle.hpp"
#include "mhaq/analysis/jet_oracle.hpp"
#include "mhaq/run/arith_policy.hpp"
#include "mhaq/run/record_json.hpp"
#include "mhaq/run/recover_limits.hpp"
#include "mhaq/run/report.hpp"
#include "mhaq/run/run_result.hpp"
#include "mhaq/analysis/sensitivity.hpp"

namespace mhaq {

using nlohmann::json;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

bool bases_from_json_text(const std::string& text, int d, std::vector<QMat>& bases) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw_input(std::string("bases: not valid JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("bases")) return false;
  if (j.contains("format") && j["format"] != "mhaq-bases" && j["format"] != "mhaq-model") throw_input("bases: \"format\" must be \"mhaq-bases\"");
  if (j.contains("d") && j["d"] != d) throw_input("bases: \"d\" is " + j["d"].dump() + ", the model has d = " + std::to_string(d));
  const json& b = j["bases"];
  if (!b.is_array()) throw_input("bases: expected an array with one list of basis vectors per head");
  bases.clear();
  for (size_t h = 0; h < b.size(); ++h) {
    const std::string where = "bases[" + std::to_string(h) + "]";
    if (!b[h].is_array() || b[h].empty()) throw_input(where + ": expected a non-empty list of vectors");
    QMat P(d, static_cast<int>(b[h].size()));
    for (size_t c = 0; c < b[h].size(); ++c) {
      const json& v = b[h][c];
      if (!v.is_array() || v.size() != static_cast<size_t>(d)) throw_input(where + "[" + std::to_string(c) + "]: expected " + std::to_string(d) + " entries");
      for (int r = 0; r < d; ++r) P(r, static_cast<int>(c)) = rational_from_json(v[r], where + "[" + std::to_string(c) + "][" + std::to_string(r) + "]");
    }
    bases.push_back(std::move(P));
  }
  validate_bases(bases, d);
  return true;
}

std::string bases_json(const std::vector<QMat>& bases) {
  json out = json::array();
  for (const auto& P : bases) {
    json hb = json::array();
    for (int c = 0; c < P.cols(); ++c) {
      json v = json::array();
      for (int r = 0; r < P.rows(); ++r) v.push_back(P(r, c).str());
      hb.push_back(v);
    }
    out.push_back(hb);
  }
  return out.dump();
}

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
  ReplayOracle<T> replay(d, F, rec.queries, rec.answers);
  JetOracle<T> jo(replay);
  const BaselineResult<Jet<T>> jr = learn_baseline<Field<Jet<T>>>(jo, bo);
  const Sensitivity S = sensitivity_of_jet_heads(F, d, jr.heads, rec.answers);
  r.study.kappa = S.kappa;
  r.study.kappa_rel = S.kappa_rel;
  ArithPolicy<T>::floats(
      [&](const auto& G) {
        long p = G.precision();
        if (o.oracle_bits > 0) p = std::min(p, o.oracle_bits);
        facts.estimate_log2 = first_order_estimate_log2(d, S.kappa, S.kappa_rel, p, o.noise_eps);
        r.judge.error_estimate = pow2_value(facts.estimate_log2);
        r.judge.error_estimate_decimal = decimal_of_log2(facts.estimate_log2);
      },
      F);
}

template <class T>
void run_baseline(RecoverResult& r, const Model& truth, const Model& canon, const BaselineOptions& bo, const RecoverOptions& o, const OracleNoise& noise) {
  using P = ArithPolicy<T>;
  const auto scope = P::precision(o.bits);
  ModelOracle<T> oracle(truth, bo.tokens.den << bo.max_scale_log2, noise);
  RecordingOracle<T> rec(oracle);
  Oracle<T>& black_box = rec;  // the baseline gets this reference and nothing else
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
// A number of the compare row: null when it is not finite.
json row_number(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }
json row_of(const std::string& method, const RecoverResult& t) {
  json row{{"method", method},
           {"arith", arith_name(t.run.arith)},
           {"status", status_name(t.judge.status)},
           {"queries", t.evidence.queries.value_or(0)},
           {"max_length", t.evidence.max_length.value_or(0)},
           {"heads_true", t.truth.heads_true.value_or(0)},
           {"heads_recovered", t.evidence.heads_recovered.value_or(0)},
           {"error", error_text(t)}};
  const double e = rel_error_of(t);
  row["max_rel_error"] = std::isnan(e) ? json(nullptr) : std::isinf(e) ? json("inf") : json(e);
  // wrong: parameters returned that disagree with the known truth
  row["wrong"] = t.truth.wrong.value_or(t.judge.status == Status::mismatch && t.evidence.heads_recovered.value_or(0) > 0);
  if (t.judge.status != Status::ok) row["message"] = t.judge.message;
  if (t.truth.exact_match) row["exact_match"] = *t.truth.exact_match;
  if (t.truth.contains_truth) row["contains_truth"] = *t.truth.contains_truth;
  if (t.study.kappa) row["kappa"] = row_number(*t.study.kappa);
  if (t.truth.observed_error) row["observed_error"] = row_number(*t.truth.observed_error);
  if (t.plan.query_bound) row["query_bound"] = *t.plan.query_bound;
  if (t.plan.paper_bound) row["paper_bound"] = *t.plan.paper_bound;
  if (t.run.bases_source) row["bases_source"] = *t.run.bases_source;
  return row;
}
}  // namespace

namespace {
// One row per method: mhaq's schedules at mo, the baselines that apply at bo.
json method_rows(const Model& truth, const std::vector<QMat>* bases, const RecoverOptions& mo, const RecoverOptions& bo) {
  const int H = truth.canonical().num_heads();
  json rows = json::array();
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

json compare_methods(const Model& truth, const std::vector<QMat>* bases, const RecoverOptions& o) {
  const Model canon = truth.canonical();
  const int H = canon.num_heads();
  json c{{"format", "mhaq-compare"}, {"version", 1}, {"d", truth.d}, {"heads_true", H}, {"arith", arith_name(o.arith)}, {"seed", o.seed}};
  if (!o.noise_eps.is_zero()) c["noise_eps"] = o.noise_eps.str();
  c["rows"] = method_rows(truth, bases, o, o);
  return c;
}

std::string compare_report(const json& c) {
  std::ostringstream o;
  o << "mhaq compare: " << c["arith"].get<std::string>() << ", d=" << c["d"] << ", " << c["heads_true"] << " canonical heads, seed " << c["seed"];
  if (c.contains("noise_eps")) o << ", noise " << c["noise_eps"].get<std::string>();
  o << "\n";
  char b[256];
  std::snprintf(b, sizeof b, "  %-17s %7s %7s  %-12s %-6s %s\n", "method", "queries", "longest", "status", "wrong", "error vs truth");
  o << b;
  for (const auto& r : c["rows"]) {
    std::string extra;
    if (r.contains("observed_error")) extra += "  observed " + r["observed_error"].dump();
    if (r.contains("kappa")) extra += "  kappa " + r["kappa"].dump();
    std::snprintf(b, sizeof b, "  %-17s %7ld %7ld  %-12s %-6s %s%s\n", r["method"].get<std::string>().c_str(), r["queries"].get<long>(), r["max_length"].get<long>(),
                  r["status"].get<std::string>().c_str(), r["wrong"].get<bool>() ? "WRONG" : "-", r["error"].get<std::string>().c_str(), extra.c_str());
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
json compare_study(const StudyOptions& s) {
  if (s.trials < 1) throw Error(ErrorKind::usage, "--trials must be positive");
  json fams = json::array();
  for (const auto& fam : s.families) {
    if (fam != "single" && fam != "orthogonal" && fam != "general") throw Error(ErrorKind::usage, "study family must be single, orthogonal or general");
    struct Acc {
      int runs = 0, ok = 0, wrong = 0, off = 0, failed = 0, degenerate = 0;
      std::vector<double> queries, errors;
    };
    std::vector<std::string> names;
    std::vector<Acc> acc;
    auto tally = [&](const json& row) {
      const std::string m = row["method"];
      auto it = std::find(names.begin(), names.end(), m);
      if (it == names.end()) names.push_back(m), acc.emplace_back(), it = names.end() - 1;
      Acc& a = acc[it - names.begin()];
      ++a.runs;
      a.queries.push_back(row["queries"].get<double>());
      const bool ok = row["status"] == "ok";
      a.ok += ok;
      a.wrong += row["wrong"].get<bool>();
      a.degenerate += row["status"] == "degenerate";
      const bool has = !row["max_rel_error"].is_null();
      const double e = !has ? std::nan("") : row["max_rel_error"].is_string() ? kInf : row["max_rel_error"].get<double>();
      if (has) a.errors.push_back(e);
      if (has && e > 0.1) ++a.off;
      if (!ok && !row["wrong"].get<bool>()) ++a.failed;
    };
    json trials = json::array();
    for (int i = 0; i < s.trials; ++i) {
      GenerateOptions g;
      g.seed = s.seed * 1000003ULL + static_cast<std::uint64_t>(i) * 7919ULL + (fam == "single" ? 1 : fam == "orthogonal" ? 2 : 3);
      std::vector<QMat> bases;
      Model m;
      std::string kind = "plain";
      if (fam == "single") {
        static const int ds[] = {2, 3, 4, 6};
        g.d = ds[i % 4];
        g.heads = 1;
        m = generate_model(g);
      } else if (fam == "orthogonal") {
        g.heads = 2 + i % 2;
        g.d = g.heads + 1 + (i / 2) % 2;
        m = generate_orthogonal_model(g, bases);
      } else {
        const int H = 2 + i % 2;
        g.d = 3 + (i / 2) % 2;
        g.heads = H;
        if (i % 5 == 3) g.share_w = true, g.heads = H + 1, kind = "share_w";
        if (i % 5 == 4) g.cancel_v = true, g.heads = H + 2, kind = "cancel_v";
        m = generate_model(g);
      }
      RecoverOptions mo;
      mo.arith = s.arith;
      mo.bits = s.bits;
      mo.seed = static_cast<std::uint64_t>(i) + 1;
      RecoverOptions bo = mo;
      bo.arith = s.baseline_arith;
      const int H = m.canonical().num_heads();
      const json rows = method_rows(m, bases.empty() ? nullptr : &bases, mo, bo);
      for (const auto& row : rows) tally(row);
      trials.push_back({{"trial", i}, {"d", m.d}, {"heads", H}, {"kind", kind}, {"model_seed", g.seed}, {"rows", rows}});
    }
    json methods = json::array();
    auto median = [](std::vector<double> v) -> json {
      if (v.empty()) return nullptr;
      std::sort(v.begin(), v.end());
      const double x = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
      return std::isinf(x) ? json("inf") : json(x);
    };
    for (size_t k = 0; k < names.size(); ++k) {
      const Acc& a = acc[k];
      methods.push_back({{"method", names[k]}, {"arith", arith_name(names[k].rfind("mhaq", 0) == 0 ? s.arith : s.baseline_arith)}, {"runs", a.runs}, {"ok", a.ok},
                         {"wrong", a.wrong}, {"off_0_1", a.off}, {"failed", a.failed}, {"degenerate", a.degenerate},
                         {"success_rate", static_cast<double>(a.ok) / a.runs}, {"wrong_rate", static_cast<double>(a.wrong) / a.runs},
                         {"off_0_1_rate", static_cast<double>(a.off) / a.runs}, {"median_queries", median(a.queries)}, {"median_error", median(a.errors)}});
    }
    fams.push_back({{"family", fam}, {"trials", s.trials}, {"methods", methods}, {"runs", trials}});
  }
  return {{"format", "mhaq-compare-study"}, {"version", 1}, {"seed", s.seed}, {"arith", arith_name(s.arith)}, {"baseline_arith", arith_name(s.baseline_arith)},
          {"bits", s.bits}, {"families", fams}};
}

std::string study_report(const json& j) {
  std::ostringstream o;
  o << "mhaq compare --study: mhaq at " << j["arith"].get<std::string>() << ", baselines at " << j["baseline_arith"].get<std::string>() << " (" << j["bits"]
    << " bits for ball/mpfr), seed " << j["seed"] << "\n";
  char b[256];
  for (const auto& f : j["families"]) {
    o << "\nfamily " << f["family"].get<std::string>() << " (" << f["trials"] << " models)\n";
    std::snprintf(b, sizeof b, "  %-17s %-6s %5s %5s %6s %6s %7s %6s %9s  %s\n", "method", "arith", "runs", "ok", "wrong", "off>.1", "failed", "degen", "med.queries",
                  "median error");
    o << b;
    for (const auto& m : f["methods"]) {
      const std::string mq = m["median_queries"].is_null() ? "-" : m["median_queries"].dump();
      const std::string me = m["median_error"].is_null() ? "-" : m["median_error"].is_string() ? "inf" : decimal_of_log2(m["median_error"].get<double>() > 0 ? std::log2(m["median_error"].get<double>()) : -kInf);
      std::snprintf(b, sizeof b, "  %-17s %-6s %5d %5d %6d %6d %7d %6d %9s  %s\n", m["method"].get<std::string>().c_str(), m["arith"].get<std::string>().c_str(),
                    m["runs"].get<int>(), m["ok"].get<int>(), m["wrong"].get<int>(), m["off_0_1"].get<int>(), m["failed"].get<int>(), m["degenerate"].get<int>(),
                    mq.c_str(), me.c_str());
      o << b;
    }
  }
  return o.str();
}

}  // namespace mhaq
