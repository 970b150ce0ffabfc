// The hidden multi-head attention model, with exact rational parameters.
// Only oracles, generators and the truth comparison see this header; the
// learner is compiled against oracle.hpp alone.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "mhaq/arith/rational.hpp"

namespace mhaq {

struct HeadQ {
  QMat W;  // d x d
  QVec v;  // d
};

struct Model {
  int d = 0;
  std::vector<HeadQ> heads;

  int num_heads() const { return static_cast<int>(heads.size()); }
  // Merge heads with equal W (summing v), drop merged heads with v = 0.
  // Head order: first occurrence of each W.
  Model canonical() const;
  // Least common multiple of the denominators of all W entries.
  long w_denominator() const;
  void validate() const;  // throws Error(input)
};

// What a model file held and how it became a Model (filled by the readers).
struct ModelFileInfo {
  std::string format = "mhaq-model";  // or "mhaq-model-factored" (include/mhaq/factored.hpp)
  int d = 0;
  int heads = 0;                      // heads as written in the file
  // Factored files only: shapes and the exact conversion that was applied.
  int d_k = 0, d_v = 0, d_out = 0;
  std::string projection;  // "concatenated" or "per-head"
  std::string scale;       // exact rational, e.g. "1/2"
  std::string conversion;  // the formulas; empty for plain files
  bool factored() const { return format == "mhaq-model-factored"; }
  std::string summary() const;  // one line for reports (src/factored.cpp)
};

// JSON model file: {"format":"mhaq-model","version":1,"d":D,
//   "heads":[{"W":[["1/2","-3/4"],...],"v":["1","-1/2"]},...]}
// Entries are strings ("p/q", integers, exact decimals) or JSON integers.
// Files with "format":"mhaq-model-factored" (per-head Q, K, V, an output
// projection O and a readout u) are converted exactly (factored.hpp); `info`,
// when given, says which format was read and how it was converted.
// Every malformed input is Error(input) naming the JSON path (limits.hpp:
// d, heads, entries and their sizes); read_model_file adds the file name.
Model model_from_json_text(const std::string& text, ModelFileInfo* info = nullptr);
// The same for a parsed JSON object; paths in messages start with `base`
// ("model" in golden files), or are relative to the top level when it is empty.
Model model_from_json(const nlohmann::json& j, const std::string& base, ModelFileInfo* info = nullptr);
// For each head, the index of the first head with an equal W (itself if none):
// the grouping the canonical form merges, in O(H log H) comparisons.
std::vector<int> equal_w_groups(const Model& m);
std::string model_to_json_text(const Model& m);
// Error(input) "<what>: heads[0].W[1][2] has 5002 characters, ..." when an entry
// of m is longer than a model file may hold (limits::max_entry_chars), so
// that writers never produce a model file the reader refuses.
void check_entry_sizes(const Model& m, const std::string& what);
Model read_model_file(const std::string& path, ModelFileInfo* info = nullptr);  // throws Error(input)

struct GenerateOptions {
  int d = 3;
  int heads = 2;
  std::uint64_t seed = 1;
  long w_range = 4;   // W entries: uniform integers in [-w_range, w_range] / w_den
  long w_den = 4;
  long v_range = 64;  // v entries: uniform integers in [-v_range, v_range] / v_den
  long v_den = 16;
  bool share_w = false;   // head 1 gets head 0's W (canonical form merges them)
  bool cancel_v = false;  // head 1 gets head 0's W and -v_0 (canonical form drops both)
  // > 0: every fresh W is A B^T with A, B d x rank, B's entries uniform in
  // {-1, 0, 1} and A's uniform integers in [-a, a] / w_den with
  // a = floor(w_range sqrt(3 / (2 rank))) (at least 1): W keeps W's
  // denominator and about a full-rank draw's spread. Redrawn until W has rank
  // exactly `rank` (1 <= rank <= d).
  int rank = 0;
};
Model generate_model(const GenerateOptions& o);  // throws Error(usage) on bad options

}  // namespace mhaq
