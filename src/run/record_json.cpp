// The run record's JSON (run/record_json.hpp).
#include "mhaq/run/record_json.hpp"

namespace mhaq {

using nlohmann::json;

namespace {

json num(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

template <class V>
void put(json& j, const char* key, const std::optional<V>& x) {
  if (x) j[key] = *x;
}
void put(json& j, const char* key, const std::optional<double>& x) {
  if (x) j[key] = num(*x);
}

json heads_of(const std::vector<HeadRecord>& hs) {
  json out = json::array();
  for (const HeadRecord& h : hs) {
    out.push_back({{"W", h.W}, {"v", h.v}});
    if (!h.c.empty()) out.back()["c"] = h.c;
  }
  return out;
}

json transformer_of(const TransformerRecord& m) {
  json heads = json::array(), neurons = json::array();
  for (const auto& W : m.W) heads.push_back({{"W", W}});
  for (const auto& n : m.neurons) neurons.push_back({{"u", n.u}, {"U", n.U}});
  return {{"heads", heads}, {"neurons", neurons}};
}

// What was run: the options, the bounds and the design.
void put_setup(json& j, const RecoverResult& r) {
  put(j, "model_kind", r.model_kind);
  put(j, "method", r.method);
  j["arith"] = r.arith;
  put(j, "bits", r.bits);
  j["d"] = r.d;
  put(j, "H", r.H);
  put(j, "heads_known", r.heads_known);
  put(j, "neurons_told", r.neurons_told);
  j["seed"] = r.seed;
  put(j, "schedule", r.schedule);
  put(j, "bias", r.bias);
  put(j, "heads_true", r.heads_true);
  put(j, "neurons_true", r.neurons_true);
  put(j, "paper_bound", r.paper_bound);
  put(j, "attention_paper_bound", r.attention_paper_bound);
  put(j, "schedule_count", r.schedule_count);
  put(j, "query_bound", r.query_bound);
  put(j, "max_length_bound", r.max_length_bound);
  put(j, "bases_source", r.bases_source);
  put(j, "subspace_dims", r.subspace_dims);
  put(j, "scale_log2_max", r.scale_log2_max);
  put(j, "oracle_bits", r.oracle_bits);
  put(j, "noise_eps", r.noise_eps);
  put(j, "noise_seed", r.noise_seed);
  put(j, "token_range", r.token_range);
  put(j, "token_den", r.token_den);
  put(j, "samples_per_pair", r.samples_per_pair);
  put(j, "note", r.note);
  put(j, "exact_solver", r.exact_solver);
  put(j, "design", r.design);
  put(j, "pilot_queries", r.pilot_queries);
  put(j, "design_queries", r.design_queries);
  put(j, "pilot_status", r.pilot_status);
  put(j, "pilot_schedule", r.pilot_schedule);
  put(j, "pilot_heads", r.pilot_heads);
  put(j, "design_evaluations", r.design_evaluations);
  put(j, "design_searched", r.design_searched);
  put(j, "kappa_predicted", r.kappa_predicted);
  put(j, "kappa_rms_predicted", r.kappa_rms_predicted);
  put(j, "kappa_rms_predicted_start", r.kappa_rms_predicted_start);
  put(j, "pilot_kind", r.pilot_kind);
  put(j, "misplaced", r.misplaced);
  put(j, "query_budget", r.query_budget);
  put(j, "placed_rounds", r.placed_rounds);
  put(j, "placed_reestimates", r.placed_reestimates);
  put(j, "max_pole_shift", r.max_pole_shift);
  put(j, "pair_log2_cond_max", r.pair_log2_cond_max);
  put(j, "offsets_log2_cond_max", r.offsets_log2_cond_max);
  put(j, "max_rel_radius_log2", r.max_rel_radius_log2);
  if (r.exact_cost)
    j["exact_cost"] = {{"L", r.exact_cost->L},
                       {"max_answer_degree", r.exact_cost->max_answer_degree},
                       {"total_answer_degree", r.exact_cost->total_answer_degree},
                       {"max_degree_budget", r.exact_cost->max_degree_budget}};
}

// The noise study, the precision search and the external oracle.
void put_studies(json& j, const RecoverResult& r) {
  put(j, "noise_pattern", r.noise_pattern);
  put(j, "kappa", r.kappa);
  put(j, "kappa_times_eps", r.kappa_times_eps);
  put(j, "kappa_rel", r.kappa_rel);
  put(j, "kappa_rms", r.kappa_rms);
  put(j, "kappa_pair", r.kappa_pair);
  put(j, "kappa_note", r.kappa_note);
  put(j, "certified_bits", r.certified_bits);
  put(j, "certified_bound", r.certified_bound);
  put(j, "ball_bound", r.ball_bound);
  put(j, "certified_note", r.certified_note);
  put(j, "ball_note", r.ball_note);
  put(j, "target_error", r.target_error);
  put(j, "kappa_estimate", r.kappa_estimate);
  put(j, "estimate_bits", r.estimate_bits);
  put(j, "bits_start", r.bits_start);
  put(j, "bits_used", r.bits_used);
  put(j, "oracle_calls", r.oracle_calls);
  if (r.attempts) {
    json a = json::array();
    for (const PrecisionAttempt& t : *r.attempts)
      a.push_back({{"bits", t.bits}, {"status", status_name(t.status)}, {"certified_relative_error", num(t.certified_relative_error)}});
    j["attempts"] = a;
  }
  put(j, "oracle", r.oracle);
  put(j, "oracle_error", r.oracle_error);
}

// The outcome: the verdict, the counts, the parameters and the comparison with the truth.
void put_outcome(json& j, const RecoverResult& r) {
  j["status"] = status_name(r.status);
  if (r.status != Status::ok) j["message"] = r.message;
  put(j, "remedy", r.remedy);
  put(j, "blind_status", r.blind_status);
  put(j, "queries", r.queries);
  put(j, "max_length", r.max_length);
  put(j, "L", r.L);
  put(j, "heads_recovered", r.heads_recovered);
  put(j, "heads_found", r.heads_found);
  put(j, "neurons_recovered", r.neurons_recovered);
  put(j, "redraws", r.redraws);
  put(j, "self_check", r.self_check);
  put(j, "self_check_note", r.self_check_note);
  put(j, "verification", r.verification);
  put(j, "fallback_pairs", r.fallback_pairs);
  put(j, "fallback_queries", r.fallback_queries);
  put(j, "repairs", r.repairs);
  put(j, "repair_queries", r.repair_queries);
  put(j, "grid_witness_queries", r.grid_witness_queries);
  if (r.repaired_pairs) {
    json list = json::array();
    for (const RepairRecord& p : *r.repaired_pairs) list.push_back({{"pair", p.pair}, {"reason", p.reason}, {"route", p.route}, {"queries", p.queries}});
    j["repaired_pairs"] = list;
  }
  if (r.heads) j["heads"] = heads_of(*r.heads);
  put(j, "beta", r.beta);
  if (r.model) j["model"] = transformer_of(*r.model);
  if (r.queries_by_phase)
    j["queries_by_phase"] = {
        {"attention", r.queries_by_phase->attention}, {"regions", r.queries_by_phase->regions}, {"verification", r.queries_by_phase->verification}};
  if (r.path)
    j["path"] = {
        {"probes", r.path->probes}, {"crossings", r.path->crossings}, {"undecided_flats", r.path->undecided_flats}, {"test_probes", r.path->test_probes}};
  put(j, "angular_resolution_deg", r.angular_resolution_deg);
  put(j, "queries_targeted", r.queries_targeted);
  put(j, "tolerance", r.tolerance);
  put(j, "tolerance_decimal", r.tolerance_decimal);
  put(j, "decision_tolerance", r.decision_tolerance);
  put(j, "error_estimate", r.error_estimate);
  put(j, "error_estimate_decimal", r.error_estimate_decimal);
  put(j, "estimate_note", r.estimate_note);
  put(j, "exact_match", r.exact_match);
  put(j, "contains_truth", r.contains_truth);
  if (r.functional_check)
    j["functional_check"] = {{"sequences", r.functional_check->sequences},
                             {"lengths", "1-8"},
                             {"zero_differences", r.functional_check->zero_differences},
                             {"all_zero", r.functional_check->all_zero}};
  put(j, "max_radius", r.max_radius);
  put(j, "max_radius_decimal", r.max_radius_decimal);
  put(j, "max_rel_error", r.max_rel_error);
  put(j, "max_rel_error_decimal", r.max_rel_error_decimal);
  put(j, "wrong", r.wrong);
  put(j, "observed_error", r.observed_error);
  put(j, "certified_relative_error", r.certified_relative_error);
  put(j, "certificate_note", r.certificate_note);
  put(j, "model_conversion", r.model_conversion);
  put(j, "certificate", r.certificate);
}

template <class V>
void get(const json& doc, const char* key, std::optional<V>& out) {
  if (doc.contains(key) && !doc[key].is_null()) out = doc[key].get<V>();
}
void get(const json& doc, const char* key, std::optional<double>& out) {
  if (doc.contains(key) && doc[key].is_number()) out = doc[key].get<double>();
}

}  // namespace

json record_json(const RecoverResult& r) {
  json j = json::object();
  put_setup(j, r);
  put_studies(j, r);
  put_outcome(j, r);
  return j;
}

RecoverResult record_from_json(const json& doc) {
  RecoverResult r;
  r.status = parse_status(doc.value("status", ""));
  r.message = doc.value("message", "");
  get(doc, "remedy", r.remedy);
  get(doc, "queries", r.queries);
  get(doc, "max_length", r.max_length);
  get(doc, "pilot_queries", r.pilot_queries);
  get(doc, "design_queries", r.design_queries);
  get(doc, "heads_true", r.heads_true);
  get(doc, "heads_recovered", r.heads_recovered);
  get(doc, "heads_found", r.heads_found);
  get(doc, "neurons_true", r.neurons_true);
  get(doc, "neurons_recovered", r.neurons_recovered);
  get(doc, "repairs", r.repairs);
  get(doc, "fallback_queries", r.fallback_queries);
  get(doc, "grid_witness_queries", r.grid_witness_queries);
  get(doc, "exact_match", r.exact_match);
  get(doc, "contains_truth", r.contains_truth);
  if (doc.contains("functional_check")) {
    FunctionalCheck f;
    f.all_zero = doc["functional_check"].value("all_zero", false);
    r.functional_check = f;
  }
  get(doc, "max_radius", r.max_radius);
  get(doc, "max_rel_error", r.max_rel_error);
  get(doc, "max_radius_decimal", r.max_radius_decimal);
  get(doc, "max_rel_error_decimal", r.max_rel_error_decimal);
  get(doc, "wrong", r.wrong);
  get(doc, "certificate_note", r.certificate_note);
  get(doc, "certified_relative_error", r.certified_relative_error);
  get(doc, "kappa", r.kappa);
  get(doc, "kappa_times_eps", r.kappa_times_eps);
  get(doc, "certified_bound", r.certified_bound);
  get(doc, "ball_bound", r.ball_bound);
  get(doc, "observed_error", r.observed_error);
  get(doc, "certified_note", r.certified_note);
  return r;
}

std::string json_text(double x) { return num(x).dump(); }
std::string json_text(const std::vector<std::string>& xs) { return json(xs).dump(); }
std::string json_text(const std::vector<std::vector<std::string>>& xs) { return json(xs).dump(); }
std::string json_text(const std::vector<long>& xs) { return json(xs).dump(); }

}  // namespace mhaq
