// The hidden multi-head attention model, with exact rational parameters.
// Only oracles, generators and the truth comparison see this header; the
// learner is compiled against oracle.hpp alone.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "mhaq/arith/rational.hpp"
#include "mhaq/arith/surd.hpp"

namespace mhaq {

// Head h scores position i as s_{h,i} = x_i^T (W_h x_N + c_h): c_h is what a
// query bias leaves of the score once the terms that do not depend on i
// cancel in the softmax (docs/math/biases.md).
struct HeadQ {
  QMat W;       // d x d
  QVec v;       // d
  QVec c = {};  // d, or empty when zero (a bias-free head)
};

struct Model {
  int d = 0;
  std::vector<HeadQ> heads;
  Rational beta = {};  // added to every answer (value and output biases)
  // Every score is multiplied by sqrt(root) (root squarefree): the canonical
  // W_h and c_h are sqrt(root) times the entries held. An irrational scale
  // such as 1/sqrt(d_k) = sqrt(2)/4 stays exact this way; only exact mode
  // (rational scores in Q(e^{1/L})) refuses root > 1.
  long root = 1;

  int num_heads() const { return static_cast<int>(heads.size()); }
  // Some head has a nonzero c, or beta is nonzero.
  bool has_bias() const;
  // Merge heads with equal (W, c) (summing v), drop merged heads with v = 0;
  // beta is kept. Head order: first occurrence of each (W, c).
  Model canonical() const;
  // Least common multiple of the denominators of all W and c entries: every
  // score of tokens in (1/q)Z lies in (1/(m q^2))Z.
  long w_denominator() const;
  void validate() const;  // throws Error(input)
};

// Every c that is all zeros made empty, so that equal scores compare equal.
void drop_zero_bias(Model& m);

// What a model file held and how it became a Model (filled by the readers).
struct ModelFileInfo {
  std::string format = "mhaq-model";  // or "mhaq-model-factored" (include/mhaq/factored.hpp)
  int d = 0;
  int heads = 0;                      // heads as written in the file
  // Factored files only: shapes and the exact conversion that was applied.
  int d_k = 0, d_v = 0, d_out = 0;
  std::string projection;  // "concatenated" or "per-head"
  std::string scale;       // exact, e.g. "1/2" or "sqrt(2)/4"
  std::string conversion;  // the formulas; empty for plain files
  bool biases = false;     // the file gives biases (c or beta, or the factored ones)
  bool factored() const { return format == "mhaq-model-factored"; }
  std::string summary() const;  // one line for reports (src/factored.cpp)
};

// JSON model file: {"format":"mhaq-model","version":1,"d":D,
//   "heads":[{"W":[["1/2","-3/4"],...],"v":["1","-1/2"]},...]}, and optionally
//   "c":[...] in a head and "beta":"1/3" at the top level (biases), and
//   "scale":"sqrt(2)/4" (every score multiplied by it: its rational part is
//   taken into W and c, its square root kept as Model::root).
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
// For each head, the index of the first head with equal W and c (itself if
// none): the grouping the canonical form merges, in O(H log H) comparisons.
std::vector<int> equal_score_groups(const Model& m);
std::string model_to_json_text(const Model& m);
// A scale entry of a model file: a JSON integer or a string parse_surd reads;
// Error(input) naming `where` otherwise.
Surd scale_from_json(const nlohmann::json& e, const std::string& where);
// Multiplies every score of m by s: q into W and c, sqrt(m) into Model::root
// (squarefree again when it was not 1 before).
void apply_scale(Model& m, const Surd& s);
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
  // c_h drawn like a row of W and beta like an entry of v, after every W and v
  // (so W and v are those of the same seed without biases); shared and
  // cancelling heads share c as well.
  bool bias = false;
  // > 0: every fresh W is A B^T with A, B d x rank, B's entries uniform in
  // {-1, 0, 1} and A's uniform integers in [-a, a] / w_den with
  // a = floor(w_range sqrt(3 / (2 rank))) (at least 1): W keeps W's
  // denominator and about a full-rank draw's spread. Redrawn until W has rank
  // exactly `rank` (1 <= rank <= d).
  int rank = 0;
};
// Throws Error(usage) on bad options; d up to d_limit (0: max_d, what a model
// file holds; recover draws up to max_recover_d).
Model generate_model(const GenerateOptions& o, long d_limit = 0);

// Error(usage): exact mode works in Q(e^{1/L}) with rational scores, and a
// model whose scores carry the irrational factor sqrt(root) (Model::root, an
// irrational scale such as 1/sqrt(d_k)) has none; the message says to use
// balls. Exact oracles, evaluate_exact and the exact comparison call it.
[[noreturn]] void refuse_irrational_scale(long root);

}  // namespace mhaq
