// What the golden-file sources share (golden.cpp: decimals, export and the
// JSON they write; golden_check.cpp: the readers and the comparison;
// golden_transformer.cpp: transformer files). Not a public header.
#pragma once
#include <arb.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mhaq/arith/flint_wrappers.hpp"
#include "mhaq/base/limits.hpp"
#include "mhaq/evidence/golden.hpp"
#include "mhaq/run/json_out.hpp"
#include "mhaq/stages/learner.hpp"

namespace mhaq {

std::string golden_export_transformer(const GoldenInputs& in);
GoldenCheckResult golden_check_transformer(const nlohmann::json& doc, int threads);

namespace golden_internal {

// ---- inputs files (golden_certified.cpp)
// An inputs file's top level (format "mhaq-inputs", version 1, d, sequences):
// d must be the `holder`'s ("model" or "layer"), at most max_d; returns the
// sequences, a non-empty array within the golden files' query limit. `where`
// starts the messages about the top level's shape.
const nlohmann::json& inputs_sequences(const nlohmann::json& j, const std::string& where, long max_d, int d, const char* holder);

// ---- export (golden.cpp)
// How the files write decimals (the header's decimal_format).
extern const char* kDecimalFormat;
void check_digits(long D);
TokenSpec golden_design_grid();  // the token grid of files with a design
void qtau_arb(arb_t out, const QTau& x, long L, long prec);
ojson answer_json(size_t index, const QTau& x, long L, long digits);
ojson poles_json(const std::vector<long>& n, const std::vector<std::string>& c, long L);
ojson heads_json(const std::vector<LearnedHead<QTau>>& hs);
// A rational element of Q(tau) as a string; Error(internal) naming `what` otherwise.
std::string rat_of(const QTau& x, const std::string& what);
std::optional<Draws> golden_design(const GoldenInputs& in, const LearnOptions& lo, long& pilot_queries);
ojson inputs_json(const GoldenInputs& in, int H, bool bound, const TokenSpec& tok, long pilot_queries = 0);
ojson header_json(long L, long digits, Arith arith, long bits);
// bias: the learner allows biases (a model with biases: docs/math/biases.md)
LearnOptions learn_options(int H, bool bound, std::uint64_t seed, const TokenSpec& tok, int threads, bool bias = false);
// The grid every query of the run lies on: the plan's, widened to the small
// token grid's witnesses (stages/grid_guard.hpp) when the run surely asks them.
TokenSpec golden_query_grid(int d, const LearnOptions& lo);
ojson binary_run(ojson& doc, const Model& model, const LearnOptions& lo, Arith arith, long bits);
// The summary of an exact run: queries, paper_bound (and bias_count with biases), max_length, heads, exact_match.
ojson summary_json(const LearnResult<QTau>& res, const LearnOptions& lo, int d, long queries, long max_length, const Model& canon);
// Heads of a ball or mpfr run, every entry as its exact dyadic value (binary_json).
template <class T>
ojson heads_binary_json(const std::vector<LearnedHead<T>>& hs) {
  ojson heads = ojson::array();
  for (const auto& h : hs) {
    ojson W = ojson::array();
    for (int i = 0; i < h.W.rows(); ++i) {
      ojson row = ojson::array();
      for (int j = 0; j < h.W.cols(); ++j) row.push_back(binary_json(h.W(i, j)));
      W.push_back(row);
    }
    ojson v = ojson::array();
    for (const auto& x : h.v) v.push_back(binary_json(x));
    heads.push_back(ojson{{"W", W}, {"v", v}});
    if (!h.c.empty()) {
      ojson c = ojson::array();
      for (const auto& x : h.c) c.push_back(binary_json(x));
      heads.back()["c"] = c;
    }
  }
  return heads;
}

// ---- readers (the strict ones of base/json_in.hpp, and these) and
// comparison (golden_check.cpp): every malformed field is Error(input)
// naming its JSON path
Rational parse_rat(const nlohmann::json& e, const std::string& path, size_t max_chars = static_cast<size_t>(limits::max_entry_chars));
// Compares a file's field with the re-derived one, counting it in out.
void diff(const nlohmann::json& got, const nlohmann::json& exp, const std::string& path, GoldenCheckResult& out);

}  // namespace golden_internal
}  // namespace mhaq
