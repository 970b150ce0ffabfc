// The checker's half of `mhaq golden check` on a transformer golden file
// (tests/golden/SCHEMA.md, "Transformer files"): every answer re-derived by
// the checker's own exact evaluator of the one-layer transformer
//
//     T(X) = sum_j u_j ReLU( sum_h U_{h,j}^T z_h(X) ),  z_h(X) = sum_i alpha_{h,i}(X) x_i,
//
// in Q(tau), tau = e^{1/L}, with the ReLU decided by an exact sign test (zero
// iff the numerator polynomial is zero, otherwise Arb at increasing precision
// until the sign is certain), and every decimal re-derived with Arb. Like the
// certificate checker it lives in mhaq_check and shares no code with mhaq_lib:
// it never calls the oracle or the learner.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mhaq/check/certificate_check.hpp"

namespace mhaq::check {

struct TransformerGoldenAnswers {
  long L = 0;  // (lcm of the W denominators) * token_den^2, from the file's model and inputs.token_den
  // [{index, exact: {num, den}, decimal}], one per entry of the file's queries,
  // on the file's own queries; the same layout as the file's answers.
  nlohmann::ordered_json answers = nlohmann::ordered_json::array();
  // Answers that could not be re-derived (a score that is not a multiple of
  // 1/L, a tau-degree above the limit, a sign or decimal not certified within
  // 2^22 bits); their entry in `answers` is then null.
  std::vector<Failure> failures;
};

// Reads `model` (format "mhaq-transformer", version 1), `inputs.token_den`,
// `digits` and `queries` of a parsed golden document with the checker's own
// strict readers and sizes checked against mhaq/check/limits.hpp before any
// work; throws InputError naming the JSON path on malformed input.
TransformerGoldenAnswers transformer_golden_answers(const nlohmann::json& doc);

}  // namespace mhaq::check
