// The checker's half of `mhaq golden check` on a certified golden file
// ("arith": "certified", tests/golden/SCHEMA.md "Certified files"): every
// answer re-derived by the checker's own evaluator of f in Arb at rising
// precision, its correctly rounded decimal decided from the checker's own
// ball (or exactly, when f is rational), and the file's recorded ball shown
// to contain f. Like the certificate checker it lives in mhaq_check and
// shares no code with mhaq_lib.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mhaq/check/certificate_check.hpp"

namespace mhaq::check {

struct CertifiedGoldenAnswers {
  // One decimal per entry of the file's queries (empty when not decided).
  std::vector<std::string> decimals;
  long checks = 0;                // facts verified
  std::vector<Failure> failures;  // an answer not decided within max_bits, a recorded ball that does not contain f
};

// Reads `model` (format "mhaq-model"), `digits`, `max_bits`, `queries` and
// each answer's `ball` with the checker's own strict readers, sizes checked
// against mhaq/check/limits.hpp before any work; InputError naming the JSON
// path on malformed input.
CertifiedGoldenAnswers certified_golden_answers(const nlohmann::json& doc);
// The same for the file at `path`, read as a stream in two passes (the model
// and the answers, then the queries one at a time): its memory is the answers
// and one query, whatever the file's size.
CertifiedGoldenAnswers certified_golden_answers_file(const std::string& path);

}  // namespace mhaq::check
