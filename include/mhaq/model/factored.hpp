// Factored model files: per-head query, key and value matrices, an output
// projection and a readout vector, converted exactly to the canonical
// (W_h, v_h) of the mhaq model (docs/math/model.md, docs/formats.md).
//
// Row-vector convention: x^T Q_h is the head's query (Q_h, K_h are d x d_k,
// V_h is d x d_v). For tokens x_1..x_N,
//   score   s_{h,i} = scale * (x_N^T Q_h)(x_i^T K_h)^T
//                   = scale * sum_c (Q_h^T x_N)_c (K_h^T x_i)_c
//                   = x_i^T (scale * K_h Q_h^T) x_N
//   output  f(X)    = [y_1, ..., y_H] O u,   y_h = sum_i alpha_{h,i} x_i^T V_h  (1 x d_v)
//                   = sum_h y_h O_h u       (O_h: rows h*d_v..(h+1)*d_v-1 of O, or the head's own O)
//                   = sum_h sum_i alpha_{h,i} x_i^T (V_h O_h u)
// so  W_h = scale * K_h Q_h^T  (d x d)  and  v_h = V_h O_h u  (d).
//
// Biases (optional): the query x^T Q_h + b_{q,h}, the key x^T K_h + b_{k,h},
// the value x^T V_h + b_{v,h}, the output [y_1..y_H] O + b_out. The score
// gains scale * b_{q,h}^T K_h^T x_i (the canonical c_h = scale K_h b_{q,h})
// and terms that do not depend on i, which cancel in the softmax (b_{k,h}
// only ever appears in those); the weights sum to one, so the value and
// output biases add beta = sum_h b_{v,h}^T O_h u + b_out^T u to every answer.
//
// File: {"format":"mhaq-model-factored","version":1,"d":D,"d_k":DK,"d_v":DV,
//   ["d_out":DO,] ["scale":"1/2" | "1/sqrt(8)" | "sqrt(2)/4",] "heads":[{"Q":[[..]],"K":[[..]],"V":[[..]]},...],
//   "O":[[..]] ((H*d_v) x d_out; or "O" (d_v x d_out) inside every head), "readout":[..] (d_out),
//   ["out_bias":[..] (d_out)]}, a head optionally with "q_bias", "k_bias" (d_k) and "v_bias" (d_v).
// Entries are exact, as in the plain model file. Other bias keys and unknown
// fields are rejected.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mhaq/model/model.hpp"
#include "mhaq/arith/rational.hpp"

namespace mhaq {

// An exact entry of a model file: a string ("p/q", integer, exact decimal) or a
// JSON integer; binary floating-point numbers are refused. Error(input) names `where`.
Rational rational_from_json(const nlohmann::json& e, const std::string& where);

// True for keys that name an additive (bias) term: "bias", "b", "b_q", "bq", "q_bias", "o_b", ...
bool looks_like_bias(std::string key);

inline constexpr const char* factored_format = "mhaq-model-factored";
inline constexpr const char* factored_conversion = "W_h = scale * K_h Q_h^T, v_h = V_h O_h u";
inline constexpr const char* factored_bias_conversion = "; c_h = scale * K_h b_q,h, beta = sum_h b_v,h^T O_h u + b_out^T u (b_k,h cancels in the softmax)";

struct FactoredHead {
  QMat Q, K;  // d x d_k
  QMat V;     // d x d_v
  QMat O;     // d_v x d_out: this head's block of the output projection
  QVec q_bias = {}, k_bias = {};  // d_k each, or empty (zero)
  QVec v_bias = {};               // d_v, or empty (zero)
};

struct FactoredModel {
  int d = 0, d_k = 0, d_v = 0, d_out = 0;
  Surd scale;  // q sqrt(m): q goes into W and c, sqrt(m) stays Model::root
  bool per_head_O = false;  // O given inside each head, or one concatenated (H*d_v) x d_out matrix
  std::vector<FactoredHead> heads;
  QVec readout;   // u, length d_out
  QVec out_bias = {};  // d_out, or empty (zero)

  bool has_bias() const;  // some bias given (zero or not)
  int num_heads() const { return static_cast<int>(heads.size()); }
};

// Parses a factored model file's JSON object; every error names its field.
// Paths in messages start with `base` (empty: the top level).
FactoredModel factored_from_json(const nlohmann::json& j, const std::string& base = "");  // throws Error(input)
// Exact conversion: one (W_h, v_h) per factored head, in file order (not canonical).
Model to_model(const FactoredModel& f);
// Shapes and formulas, for reports.
ModelFileInfo describe(const FactoredModel& f);
// The conversion as a JSON object (format, formulas, shapes, scale).
nlohmann::json conversion_json(const ModelFileInfo& info);

// What Model::canonical() does to a model: heads merged into an earlier head
// with equal W, then merged heads dropped because their v sums to zero.
struct CanonicalSummary {
  int heads = 0, merged = 0, dropped = 0, canonical = 0;
  bool biases = false;  // heads merge on equal (W, c)
  std::string str() const;  // "3 heads -> 2 canonical (1 merged ..., 0 dropped ...)"
};
CanonicalSummary canonical_summary(const Model& m);

}  // namespace mhaq
