// The hidden multi-head attention model, with exact rational parameters.
// Only oracles, generators and the truth comparison see this header; the
// learner is compiled against oracle.hpp alone.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "mhaq/rational.hpp"

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

// JSON model file: {"format":"mhaq-model","version":1,"d":D,
//   "heads":[{"W":[["1/2","-3/4"],...],"v":["1","-1/2"]},...]}
// Entries are strings ("p/q", integers, exact decimals) or JSON integers.
Model model_from_json_text(const std::string& text);
std::string model_to_json_text(const Model& m);
Model read_model_file(const std::string& path);  // throws Error(input)

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
};
Model generate_model(const GenerateOptions& o);  // throws Error(usage) on bad options

}  // namespace mhaq
