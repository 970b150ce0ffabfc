// mhaq check-certificate: a small checker for replayable certificates
// (tests/golden/CERTIFICATE.md), separate from the learner by design.
//
// It is compiled into its own library (mhaq_check) that links only GMP,
// FLINT, Arb and nlohmann-json, never mhaq_lib: it has its own JSON reader,
// rationals, canonical form, plan layout and evaluator of f. That duplicates
// a little of mhaq on purpose -- a certificate is only worth something if it
// is checked by code that did not produce it. A ctest (check_separation)
// proves it from the symbol table.
#pragma once
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace mhaq::check {

// A file that is not a well-formed certificate (exit code 3).
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Failure {
  std::string path;     // JSON path of the field that broke, e.g. "pairs[3].poles[1].c"
  std::string message;  // what does not hold
};

struct CertificateReport {
  std::string kind = "attention";  // or "transformer"
  std::string arith;
  int d = 0, H = 0;
  long queries = 0, pairs = 0, heads = 0;
  long neurons = 0, crossings = 0;  // transformer certificates
  long checks = 0;  // individual facts verified
  std::vector<Failure> failures;
  bool ok() const { return failures.empty(); }
};

// Re-checks every claim of a certificate against the model it records:
// answers (exact equality in Q(tau) / ball containment / the claimed
// tolerance), pair interpolants, recovered heads, query structure, count and
// length. Throws InputError for malformed files.
CertificateReport check_certificate(const std::string& text);

std::string report_text(const CertificateReport& r, const std::string& file);
nlohmann::json report_json(const CertificateReport& r, const std::string& file);

}  // namespace mhaq::check
