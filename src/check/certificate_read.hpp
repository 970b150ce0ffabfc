// The certificate checker's strict reader of the certificate file
// (tests/golden/CERTIFICATE.md): the recorded run as plain values. Internal
// to the checker library.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check_internal.hpp"
#include "strict_read.hpp"
#include "mhaq/check/certificate_check.hpp"

namespace mhaq::check {

enum class Mode { exact, ball, binary };

// A recorded number: its exact value (exact mode) or midpoint as a rational,
// and the ball it stands for (radius 0 for binary floats).
struct Num {
  Qn q;
  Ab b;
};

struct PairRec {
  std::string kind;
  long i = 0, j = 0, first = 0, last = 0;
  std::vector<Qn> offset, final_token;
  Num P;
  std::vector<long> n;  // exact: poles tau^n
  std::vector<Num> r, c;
};
struct HeadRec {
  std::vector<Num> W, v, c;  // c: runs with biases only
};
struct QueryRec {
  long index = 0, length = 0;
  Query q;
};

struct Cert {
  Mode mode = Mode::exact;
  std::string arith;
  long bits = 0, L = 0;
  std::string schedule;
  int H = 0;
  bool bound = false;
  long token_range = 0, token_den = 1, oracle_bits = 0;
  // a run with biases (inputs.bias): d + 1 final tokens, the across link
  // 2 b_1 - b_j, every head's c and beta recorded (docs/math/biases.md)
  bool bias = false;
  long claim_queries = 0, claim_formula_value = 0, claim_max_length = 0, claim_length_bound = 0, claim_heads = 0;
  // the small-grid guard's witness queries after the plan's (0 and 0: none)
  long witness_queries = 0, witness_range = 0;
  std::string claim_formula;
  Qn tol_answers, tol_pairs, tol_heads;
  int d = 0;
  std::vector<RatHead> model;
  Qn model_beta;
  std::string plan_schedule;
  long plan_d = 0, plan_H = 0;
  std::vector<Qn> B, Delta;  // row-major; columns are b_j (d + 1 with biases) and delta_i
  std::vector<QueryRec> queries;
  std::vector<Pq> exact_answers;
  std::vector<Num> answers;
  std::vector<PairRec> pairs;
  std::vector<HeadRec> heads;
  Num beta;  // runs with biases
};

// The parsed document, its size and "format" checked; InputError
// ("malformed certificate: " and the JSON path) on anything malformed or
// beyond the checker's limits, here and in the readers below.
nlohmann::json parse_certificate_document(const std::string& text);
// Whether the document is a transformer certificate ("kind": "transformer";
// attention certificates have no kind). Any other kind is malformed.
bool is_transformer_certificate(const nlohmann::json& doc);
// Reads and validates an attention certificate.
Cert read_certificate(const nlohmann::json& doc);

// A transformer run's certificate (docs/formats.md), as plain values.
struct TfmNeuron {
  Num u;
  std::vector<std::vector<Num>> U;  // [h][a]
};
struct TfmCrossing {
  std::vector<Qn> before, after;
  std::vector<std::vector<Num>> jump;  // [h][a]
};
struct TfmCert {
  Mode mode = Mode::exact;
  std::string arith, schedule;
  long L = 0, bits = 0, token_den = 1, heads_learner = 0, neurons_told = 0;
  long claim_queries = 0, claim_max_length = 0, claim_heads = 0, claim_neurons = 0, claim_crossings = 0;
  long verify_first = 0, verify_count = 0;
  int d = 0;
  std::vector<std::vector<Qn>> model_W;               // [h], row-major
  std::vector<Qn> model_u;                            // [k]
  std::vector<std::vector<std::vector<Qn>>> model_U;  // [k][h]
  std::vector<QueryRec> queries;
  std::vector<Pq> exact_answers;  // exact mode
  std::vector<Num> answers;       // ball mode
  std::vector<std::vector<Num>> W;  // recovered heads, row-major
  std::vector<TfmNeuron> neurons;
  std::vector<TfmCrossing> crossings;
};
TfmCert read_transformer_certificate(const nlohmann::json& doc);
// Re-checks a transformer certificate (certificate_check_transformer.cpp).
CertificateReport check_transformer_certificate(const nlohmann::json& doc);

// The attention reader's strict field readers, shared with the transformer
// reader (certificate_read_transformer.cpp).
namespace cert_io {
Qn read_rational(const nlohmann::json& j, const std::string& path, size_t max);
std::vector<Qn> read_qvec(const nlohmann::json& j, const std::string& path, int d, size_t max);
Num read_num(const nlohmann::json& j, const std::string& path, Mode mode);
Pq read_qtau(const nlohmann::json& j, const std::string& path);
}  // namespace cert_io

}  // namespace mhaq::check
