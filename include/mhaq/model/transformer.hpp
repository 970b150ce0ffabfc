// The one-layer transformer of claim 5 (docs/math/transformer.md): multi-head
// attention followed by a bias-free ReLU feed-forward network, output a scalar
// at the final token,
//
//     T(X) = sum_j u_j ReLU( sum_h U_{h,j}^T z_h(X) ),   z_h(X) = sum_i alpha_{h,i}(X) x_i,
//
// with alpha_h the softmax of the scores x_i^T W_h x_N (section 1). U_{h,j} is
// head h's value direction as neuron j sees it (the value and output
// projections composed with the FFN's first layer). Exact rational entries.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "mhaq/arith/rational.hpp"
#include "mhaq/model/model.hpp"

namespace mhaq {

struct TransformerModel {
  int d = 0;
  std::vector<QMat> W;               // per head, d x d
  std::vector<std::vector<QVec>> U;  // U[h][j], d each
  std::vector<Rational> u;           // readout, one per neuron

  int heads() const { return static_cast<int>(W.size()); }
  int neurons() const { return static_cast<int>(u.size()); }
  // The canonical form (section 10's symmetries): heads with equal W merged
  // (their U add); neurons with u_j = 0 or U_{.,j} = 0 dropped, the rest
  // normalised to u_j in {+1, -1} (U scaled by |u_j|), positively parallel
  // neurons merged (weights add); heads that no neuron sees dropped. Order:
  // first occurrence.
  TransformerModel canonical() const;
  long w_denominator() const;  // lcm of the W denominators
  void validate() const;       // throws Error(input)
  // The Hd-vector of neuron j: (U_{1,j}, ..., U_{H,j}).
  QVec neuron_vector(int j) const;
  // ubar_j = sum_h U_{h,j}: the normal of neuron j's hyperplane among final tokens.
  QVec ubar(int j) const;
};

// Equal up to a permutation of heads and of neurons (both canonical).
bool transformer_equal_canonical(const TransformerModel& a, const TransformerModel& b);

inline constexpr const char* transformer_format = "mhaq-transformer";
inline constexpr const char* transformer_factored_format = "mhaq-transformer-factored";

// What a transformer file held and how it became a TransformerModel.
struct TransformerFileInfo {
  std::string format = transformer_format;
  int heads = 0, neurons = 0;
  int d_k = 0, d_v = 0, d_out = 0;  // factored files
  std::string conversion;            // the formulas; empty for plain files
};

// {"format":"mhaq-transformer","version":1,"d":D,
//  "heads":[{"W":[[..]]},...], "neurons":[{"u":"1","U":[[..d..], ... one per head]}, ...]}
// Factored: {"format":"mhaq-transformer-factored","version":1,"d":D,"d_k":DK,"d_v":DV,
//  ["scale":"1/2",] "heads":[{"Q":..,"K":..,"V":..},...], "O":[[..]] ((H d_v) x d_out),
//  "ffn":[[..]] (d_out x m, the FFN's first layer), "readout":[..] (m)}
// converted exactly: W_h = scale K_h Q_h^T, U_{h,j} = V_h O_h ffn[:, j], u = readout.
// Every malformed input is Error(input) naming the JSON path, as for model
// files (json_in.hpp, limits.hpp: d, heads, neurons, d_k, d_v, d_out, entries,
// entry sizes and the conversion's products are checked before anything is built).
TransformerModel transformer_from_json_text(const std::string& text, TransformerFileInfo* info = nullptr);
TransformerModel transformer_from_json(const nlohmann::json& j, TransformerFileInfo* info = nullptr);
std::string transformer_to_json_text(const TransformerModel& m);
// True when the text is a transformer file (plain or factored), by its "format".
bool is_transformer_text(const std::string& text);
bool is_transformer_json(const nlohmann::json& j);
// Error(input) "<what>: neurons[0].U[1][2] has 5002 characters, ..." when an
// entry is longer than a model file may hold (writers check before writing).
void check_entry_sizes(const TransformerModel& m, const std::string& what);

struct TransformerGenerateOptions {
  int d = 3, heads = 2, neurons = 3;
  std::uint64_t seed = 1;
  long w_range = 4, w_den = 4;    // W entries: integers in [-w_range, w_range] / w_den
  long U_range = 8, U_den = 4;    // U entries likewise
  bool share_w = false;           // heads 1 and 2 share W (merged by the canonical form)
  bool zero_neuron = false;       // one more neuron with U = 0 (dropped)
  bool parallel_neurons = false;  // one more neuron positively parallel to neuron 1 (merged)
};
TransformerModel generate_transformer(const TransformerGenerateOptions& o);  // throws Error(usage)

}  // namespace mhaq
