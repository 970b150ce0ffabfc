// The certificate checker's reports (include/mhaq/check/certificate_check.hpp):
// the text and JSON forms of a CertificateReport, attention or transformer.
#include "mhaq/check/certificate_check.hpp"

namespace mhaq::check {

std::string report_text(const CertificateReport& r, const std::string& file) {
  std::string out = "mhaq check-certificate " + file + ": ";
  if (r.ok() && r.kind == "transformer") {
    return out + "ok\n  transformer, " + r.arith + ", d=" + std::to_string(r.d) + ", H=" + std::to_string(r.H) + ": " + std::to_string(r.queries) +
           " queries, " + std::to_string(r.heads) + " heads, " + std::to_string(r.neurons) + " neurons, " + std::to_string(r.crossings) + " crossings\n  " +
           std::to_string(r.checks) +
           " facts re-derived with the checker's own evaluator: answers, the recovered transformer on every query and on the verification "
           "queries, each crossing on one recovered hyperplane with its neuron's jump and the model's, claims and query records\n";
  }
  if (r.ok()) {
    out += "ok\n  " + r.arith + ", d=" + std::to_string(r.d) + ", H=" + std::to_string(r.H) + ": " + std::to_string(r.queries) + " queries, " +
           std::to_string(r.pairs) + " pairs, " + std::to_string(r.heads) + " heads\n  " + std::to_string(r.checks) +
           " facts re-derived from the recorded model: answers, pair interpolants, heads, query structure, count and length\n";
    return out;
  }
  out += std::to_string(r.failures.size()) + " failure(s)\n";
  for (const auto& f : r.failures) out += "  FAIL " + f.path + ": " + f.message + "\n";
  return out;
}

nlohmann::json report_json(const CertificateReport& r, const std::string& file) {
  nlohmann::json fs = nlohmann::json::array();
  for (const auto& f : r.failures) fs.push_back({{"path", f.path}, {"message", f.message}});
  if (r.kind == "transformer")
    return {{"status", r.ok() ? "ok" : "checker_rejected"}, {"kind", r.kind}, {"file", file}, {"arith", r.arith}, {"d", r.d}, {"H", r.H},
            {"queries", r.queries}, {"heads", r.heads}, {"neurons", r.neurons}, {"crossings", r.crossings}, {"checks", r.checks}, {"failures", fs}};
  return {{"status", r.ok() ? "ok" : "checker_rejected"}, {"file", file},       {"arith", r.arith}, {"d", r.d},           {"H", r.H},
          {"queries", r.queries},            {"pairs", r.pairs},    {"heads", r.heads}, {"checks", r.checks}, {"failures", fs}};
}

}  // namespace mhaq::check
