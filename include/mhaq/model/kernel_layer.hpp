// An attention layer as kernels compute it, for kernel golden files
// (evidence/golden_kernel.hpp): the whole N x d_out output at every position,
// with biases, any scale, grouped key-value heads, rotary position
// embeddings and masks. Every weight is an exact rational (a checkpoint's
// values decoded from their bits); the scale is kept exactly as q sqrt(m).
//
// For tokens x_0..x_{N-1} (column vectors of d entries), query head h
// (0 <= h < H) and its key-value head g = floor(h / (H / G)):
//   q_n   = Wq_h x_n + bq_h            (d_k)    rows h d_k .. of Wq, bq
//   k_i   = Wk_g x_i + bk_g            (d_k)    rows g d_k .. of Wk, bk
//   v_i   = Wv_g x_i + bv_g            (d_v)
//   with rope, q_n and k_i rotated by their positions p_n, p_i: pair (a, b)
//   of entries, angle p theta^(-2j/d_k) for the pair's index j < d_k/2,
//   (x_a, x_b) -> (x_a cos - x_b sin, x_b cos + x_a sin); pairs (j, j + d_k/2)
//   ("half", Llama in Hugging Face transformers) or (2j, 2j+1) ("interleaved")
//   s_ni  = scale q_n . k_i + M_ni     over the keys i allowed at row n
//   alpha = softmax_i(s_ni),  y_{h,n} = sum_i alpha_ni v_i   (d_v)
//   out_n = Wo [y_{0,n}; ..; y_{H-1,n}] + bo                  (d_out)
// A key i is allowed at row n unless the causal mask hides it (i > n), the
// key padding mask marks it, or the additive mask M_ni is -infinity. A row
// with no allowed key has no output (torch gives NaN there).
#pragma once
#include <string>
#include <vector>

#include "mhaq/arith/rational.hpp"
#include "mhaq/arith/surd.hpp"
#include "mhaq/model/safetensors.hpp"

namespace mhaq {

struct KernelLayer {
  int d = 0, heads = 0, kv_heads = 0, d_k = 0, d_v = 0, d_out = 0;
  QMat Wq, Wk, Wv, Wo;  // out x in: (H d_k) x d, (G d_k) x d, (G d_v) x d, d_out x (H d_v)
  QVec bq, bk, bv, bo;  // empty: no bias
  Surd scale;              // q sqrt(m), from map_scale
  std::string scale_text;  // as the map gives it
  bool rope = false;
  Rational rope_theta;
  bool rope_interleaved = false;
  std::string weights_dtype;  // the mapped tensors' dtype ("F32"), or "mixed"

  int kv_head(int h) const { return h / (heads / kv_heads); }
  long weight_entries() const;
};

// The layer the map names, read exactly. Shapes, ranks, the divisions by H
// and G, the biases' lengths, rope's even d_k and the limits
// (limits::max_inner_dim on every dimension, limits::max_file_entries
// weights) are checked from the header before any value is read; Error(input)
// names the tensor and the map file.
KernelLayer safetensors_to_kernel(const SafetensorsFile& f, const SafetensorsMap& m);

// An additive mask entry: an exact rational, or -infinity (the key is hidden).
struct MaskEntry {
  bool neg_inf = false;
  Rational value;
};

// One sequence of a kernel golden file's inputs.
struct KernelSequence {
  std::vector<QVec> tokens;                   // N tokens of d entries
  std::vector<bool> key_padding;              // empty, or N flags: true hides key i
  std::vector<std::vector<MaskEntry>> mask;   // empty, or N x N: added to row n's score of key i
  std::vector<long> position_ids;             // empty: 0..N-1 (rope only)
  long position(size_t i) const { return position_ids.empty() ? static_cast<long>(i) : position_ids[i]; }
};

// x rounded to the nearest value of dtype t (ties to even, subnormals
// included); `ok` false when it is beyond t's largest finite value.
Rational round_to_dtype(const Rational& x, StDtype t, bool& ok);

// Whether key i may be attended from row n (the masks above; causal when asked).
bool kernel_key_allowed(const KernelSequence& s, bool causal, size_t n, size_t i);

}  // namespace mhaq
