// Certified golden files: golden vectors for models whose weights are too
// fine for Q(tau) (real weights: float32 or float64 values as exact dyadic
// rationals). Every answer is a correctly rounded decimal certified in Arb at
// rising precision (model/certified_eval.hpp), with the ball that decided it
// and the precision it needed; the queries are the learner's (from a ball run
// of the same learner, whose recovered enclosures are checked to contain the
// canonical heads of the weights) and the user's own sequences (--inputs).
// golden check re-derives the file with this exporter and, independently,
// every decimal and ball with the separate checker's own evaluator
// (mhaq/check/golden_certified.hpp). Schema: tests/golden/SCHEMA.md,
// "Certified files".
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mhaq/model/model.hpp"
#include "mhaq/stages/1-oracle/oracle.hpp"
#include "mhaq/evidence/golden.hpp"

namespace mhaq {

struct CertifiedGoldenInputs {
  Model model;
  std::uint64_t seed = 1;
  int heads = 0;              // the learner's H; 0: the canonical head count
  bool learner = true;        // record the learner's queries and its ball run
  long bits = 256;            // the ball run's precision
  long digits = 30;           // significant digits of every decimal
  long max_bits = 1L << 14;   // Ziv cap of every answer
  std::vector<Query> user;    // the user's sequences, in order
  int threads = 1;
};

// Reads an inputs file: {"format": "mhaq-inputs", "version": 1, "d": D,
// "sequences": [[token, ...], ...]}, tokens arrays of d exact entries
// ("p/q", integers, exact decimals); the last token of a sequence is the one
// f is read at. Error(input) naming the JSON path; sizes checked first
// (check::limits::max_golden_queries sequences, max_runs tokens each).
std::vector<Query> read_inputs_text(const std::string& text, int d);

std::string golden_export_certified(const CertifiedGoldenInputs& in);
// The check of a parsed certified file (golden_check dispatches here on "arith": "certified").
GoldenCheckResult golden_check_certified(const nlohmann::json& doc, int threads);
// The same for the file at `path`, read as a stream: the members but the
// queries (the answers are small) are held, and the queries one at a time, so
// its memory does not grow with the queries' size. Error(input) for a
// malformed file; check::InputError of the separate checker becomes one.
GoldenCheckResult golden_check_certified_file(const std::string& path, int threads);

}  // namespace mhaq
