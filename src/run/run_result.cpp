// The one reader of a run's record (run/run_result.hpp).
#include "mhaq/run/run_result.hpp"

namespace mhaq {

namespace {
template <class V>
std::optional<V> field(const nlohmann::json& doc, const char* key) {
  if (!doc.contains(key) || doc[key].is_null()) return std::nullopt;
  return doc[key].get<V>();
}
std::optional<double> number(const nlohmann::json& doc, const char* key) {
  if (!doc.contains(key) || !doc[key].is_number()) return std::nullopt;
  return doc[key].get<double>();
}
}  // namespace

RecoverResult typed_result(nlohmann::json doc) {
  RecoverResult r;
  r.status = parse_status(doc.value("status", ""));
  r.message = doc.value("message", "");
  r.queries = doc.value("queries", 0L);
  r.max_length = doc.value("max_length", 0L);
  r.design_queries = field<long>(doc, "design_queries");
  r.heads_true = doc.value("heads_true", 0);
  r.heads_recovered = doc.value("heads_recovered", 0);
  r.heads_found = field<int>(doc, "heads_found");
  r.neurons_true = field<int>(doc, "neurons_true");
  r.neurons_recovered = field<int>(doc, "neurons_recovered");
  r.repairs = doc.value("repairs", 0L);
  r.fallback_queries = doc.value("fallback_queries", 0L);
  r.exact_match = field<bool>(doc, "exact_match");
  r.contains_truth = field<bool>(doc, "contains_truth");
  if (doc.contains("functional_check")) r.functional_all_zero = doc["functional_check"].value("all_zero", false);
  r.max_radius = number(doc, "max_radius");
  r.max_rel_error = number(doc, "max_rel_error");
  r.max_radius_decimal = field<std::string>(doc, "max_radius_decimal");
  r.max_rel_error_decimal = field<std::string>(doc, "max_rel_error_decimal");
  r.wrong = field<bool>(doc, "wrong");
  r.certificate_note = field<std::string>(doc, "certificate_note");
  r.certified_relative_error = number(doc, "certified_relative_error");
  r.kappa = number(doc, "kappa");
  r.kappa_times_eps = number(doc, "kappa_times_eps");
  r.certified_bound = number(doc, "certified_bound");
  r.observed_error = number(doc, "observed_error");
  r.certified_note = field<std::string>(doc, "certified_note");
  r.doc = std::move(doc);
  return r;
}

}  // namespace mhaq
