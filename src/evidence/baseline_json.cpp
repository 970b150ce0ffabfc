// The baselines' documents as JSON (evidence/baseline.hpp): head bases (a
// bases file, or a model file's "bases"), compare's rows and the contrast
// study.
#include <cmath>

#include "mhaq/base/error.hpp"
#include "mhaq/base/json_in.hpp"
#include "mhaq/evidence/baseline.hpp"
#include "mhaq/model/factored.hpp"

namespace mhaq {

using nlohmann::json;

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

namespace {

// A number of a row: null when it is not finite.
json finite_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }
// An error figure or median: null when absent (or not a number), "inf" when infinite.
json error_figure(const std::optional<double>& x) {
  if (!x || std::isnan(*x)) return nullptr;
  return std::isinf(*x) ? json("inf") : json(*x);
}

json row_json(const CompareRow& r) {
  json row{{"method", r.method}, {"arith", arith_name(r.arith)}, {"status", status_name(r.status)}, {"queries", r.queries},
           {"max_length", r.max_length}, {"heads_true", r.heads_true}, {"heads_recovered", r.heads_recovered}, {"error", r.error},
           {"max_rel_error", error_figure(r.max_rel_error)}, {"wrong", r.wrong}};
  if (r.message) row["message"] = *r.message;
  if (r.exact_match) row["exact_match"] = *r.exact_match;
  if (r.contains_truth) row["contains_truth"] = *r.contains_truth;
  if (r.kappa) row["kappa"] = finite_or_null(*r.kappa);
  if (r.observed_error) row["observed_error"] = finite_or_null(*r.observed_error);
  if (r.query_bound) row["query_bound"] = *r.query_bound;
  if (r.paper_bound) row["paper_bound"] = *r.paper_bound;
  if (r.bases_source) row["bases_source"] = *r.bases_source;
  return row;
}

json rows_json(const std::vector<CompareRow>& rows) {
  json out = json::array();
  for (const CompareRow& r : rows) out.push_back(row_json(r));
  return out;
}

}  // namespace

json compare_json(const CompareResult& c) {
  json j{{"format", "mhaq-compare"}, {"version", 1}, {"d", c.d}, {"heads_true", c.heads_true}, {"arith", arith_name(c.arith)}, {"seed", c.seed}};
  if (c.noise_eps) j["noise_eps"] = *c.noise_eps;
  j["rows"] = rows_json(c.rows);
  return j;
}

json study_json(const StudyResult& r) {
  json fams = json::array();
  for (const StudyFamily& f : r.families) {
    json methods = json::array(), runs = json::array();
    for (const StudyMethod& m : f.methods)
      methods.push_back({{"method", m.method}, {"arith", arith_name(m.arith)}, {"runs", m.runs}, {"ok", m.ok}, {"wrong", m.wrong}, {"off_0_1", m.off_0_1},
                         {"failed", m.failed}, {"degenerate", m.degenerate}, {"success_rate", static_cast<double>(m.ok) / m.runs},
                         {"wrong_rate", static_cast<double>(m.wrong) / m.runs}, {"off_0_1_rate", static_cast<double>(m.off_0_1) / m.runs},
                         {"median_queries", error_figure(m.median_queries)}, {"median_error", error_figure(m.median_error)}});
    for (const StudyTrial& t : f.runs)
      runs.push_back({{"trial", t.trial}, {"d", t.d}, {"heads", t.heads}, {"kind", t.kind}, {"model_seed", t.model_seed}, {"rows", rows_json(t.rows)}});
    fams.push_back({{"family", f.family}, {"trials", f.trials}, {"methods", methods}, {"runs", runs}});
  }
  return {{"format", "mhaq-compare-study"}, {"version", 1}, {"seed", r.seed}, {"arith", arith_name(r.arith)}, {"baseline_arith", arith_name(r.baseline_arith)},
          {"bits", r.bits}, {"families", fams}};
}

}  // namespace mhaq
