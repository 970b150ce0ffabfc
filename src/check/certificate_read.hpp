// The certificate checker's strict reader of the certificate file
// (tests/golden/CERTIFICATE.md): the recorded run as plain values. Internal
// to the checker library.
#pragma once
#include <string>
#include <vector>

#include "check_internal.hpp"

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
  std::vector<Num> W, v;
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
  long claim_queries = 0, claim_formula_value = 0, claim_max_length = 0, claim_length_bound = 0, claim_heads = 0;
  std::string claim_formula;
  Qn tol_answers, tol_pairs, tol_heads;
  int d = 0;
  std::vector<RatHead> model;
  std::string plan_schedule;
  long plan_d = 0, plan_H = 0;
  std::vector<Qn> B, Delta;  // row-major; columns are b_j and delta_i
  std::vector<QueryRec> queries;
  std::vector<Pq> exact_answers;
  std::vector<Num> answers;
  std::vector<PairRec> pairs;
  std::vector<HeadRec> heads;
};

// Parses and validates a certificate; InputError ("malformed certificate: "
// and the JSON path) on anything malformed or beyond the checker's limits.
Cert read_certificate(const std::string& text);

}  // namespace mhaq::check
