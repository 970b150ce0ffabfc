// Safetensors files read exactly: the format model hubs share weights in.
//
// Layout: an 8-byte little-endian unsigned header length N, then N bytes of
// JSON (an object: tensor name -> {"dtype", "shape", "data_offsets": [begin,
// end]}, and optionally "__metadata__": {string: string}), then the data
// buffer; offsets are relative to the buffer's start (file byte 8 + N). The
// header begins with '{' (no byte order mark) and may be padded after its
// closing '}' with spaces (0x20) only.
// Values are little-endian IEEE-754 binary64 (F64), binary32 (F32),
// binary16 (F16) or bfloat16 (BF16); each is read as its exact dyadic
// rational, decoded from the bits (no floating-point arithmetic). NaN and
// infinities are input errors naming the tensor, the element and its byte.
// Tensors of the format's other dtypes (I64, BOOL, U8, F8_E4M3, ...) are
// checked like the others but hold no weights mhaq reads: a checkpoint may
// carry them, and only naming one in the map is an error.
//
// The reader is strict: a header length past the end of the file, a header
// that is not a JSON object, unknown keys, unknown dtypes, negative or
// non-integer dimensions, byte ranges out of the buffer, ranges that overlap
// or leave holes, a byte count that does not match the shape, duplicate
// names, and sizes beyond the stated limits (limits.hpp, checked before
// anything is allocated) are Error(input) naming the byte offset or the
// tensor. Byte counts in messages are exact (no wrapping at 2^64).
//
// A map file (safetensors_map_from_json) says which tensors form one
// attention layer; safetensors_to_factored builds mhaq's factored model from
// them (factored.hpp), exactly.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mhaq/arith/rational.hpp"
#include "mhaq/arith/surd.hpp"
#include "mhaq/model/factored.hpp"

namespace mhaq {

enum class StDtype { f64, f32, f16, bf16 };
const char* dtype_name(StDtype t);
int dtype_bytes(StDtype t);

struct SafetensorsTensor {
  std::string name;
  std::string dtype_text;        // as the header gives it: "F32", "I64", "BOOL", ...
  bool readable = false;         // F64, F32, F16 or BF16: values() reads it
  StDtype dtype = StDtype::f32;  // when readable
  std::vector<long> shape;
  std::uint64_t begin = 0, end = 0;  // byte range in the file (absolute: 8 + N + data_offsets)
  long elements() const;
};

class SafetensorsFile {
 public:
  // Parses the header of an in-memory file (the whole file's bytes).
  static SafetensorsFile from_bytes(std::string bytes, const std::string& name = "safetensors file");
  // Opens a file: reads its header, and later only the byte ranges of the
  // tensors asked for (a file may be larger than max_file_bytes).
  static SafetensorsFile open(const std::string& path);

  const std::string& name() const { return name_; }
  std::uint64_t file_size() const { return size_; }
  std::uint64_t header_length() const { return header_len_; }
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  const nlohmann::json& metadata() const { return metadata_; }
  // nullptr when absent.
  const SafetensorsTensor* find(const std::string& tensor) const;
  // The tensor, or Error(input) "<file>: no tensor "<name>" (named in <what>)".
  const SafetensorsTensor& get(const std::string& tensor, const std::string& what) const;
  // The tensor's values in row-major order, exact. Error(input) for a dtype
  // mhaq does not read, NaN or infinity (naming element and file byte) and
  // for more than limits::max_file_entries elements (before reading).
  std::vector<Rational> values(const SafetensorsTensor& t) const;

 private:
  std::string name_;
  std::uint64_t size_ = 0, header_len_ = 0;
  std::vector<SafetensorsTensor> tensors_;
  nlohmann::json metadata_;
  std::function<std::string(std::uint64_t, std::uint64_t)> read_;  // (begin, length) -> bytes
  void parse_header(const std::string& header);
};

// The exact value of one little-endian element; `where` names it in errors
// (NaN, infinity).
Rational decode_element(StDtype t, const unsigned char* p, const std::string& where);

// Which tensors form the attention layer (docs/formats.md, "Safetensors"):
// {"format": "mhaq-safetensors-map", "version": 1, "heads": H,
//  "layout": "out_in" | "in_out",
//  "q": NAME, "k": NAME, "v": NAME   |   "in_proj": NAME [, "in_proj_split": ["q","k","v"]],
//  "out": NAME, "scale": "1/sqrt(d_k)" | "1/sqrt(n)" | "p/q" | "sqrt(2)/4"
//  [, "readout": NAME | [exact entries]] [, "ffn": NAME]
//  [, "q_bias": NAME, "k_bias": NAME, "v_bias": NAME | "in_proj_bias": NAME] [, "out_bias": NAME]
//  [, "kv_heads": G] [, "rope": {"theta": "10000", "pairing": "half" | "interleaved"}]}
// With "ffn" (the FFN's first layer, m x d_out in out_in) the layer is a
// one-layer transformer (transformer.hpp) and the readout has m entries, one
// per neuron. The readout (u, for f(X) = u . attention(X)) is needed by
// convert, not by kernel golden files, which give the whole output.
// "out_in": matrices stored as torch.nn.Linear stores them (out_features x
// in_features; the layer computes W x); "in_out": stored as x^T W, the
// output projection included. A bias is used only when the map names it.
// "kv_heads" (grouped-query attention, separate q, k, v only): k and v have
// G heads, and query head h uses key-value head h / (H / G). "rope": rotary
// position embeddings on q and k (kernel golden files; kernel_layer.hpp).
struct SafetensorsMap {
  std::string source;  // the map file, as messages name it
  int heads = 0;
  int kv_heads = 0;  // 0: as many as heads
  bool out_in = true;
  std::string q, k, v, in_proj, out, readout_tensor, ffn;
  std::string q_bias, k_bias, v_bias, in_proj_bias, out_bias;  // tensor names; empty: no bias
  std::vector<char> split{'q', 'k', 'v'};  // order of the fused in-projection's blocks
  std::vector<Rational> readout;           // inline readout, when readout_tensor is empty
  bool has_readout = false;
  std::string scale_text;                  // as written
  bool rope = false;
  Rational rope_theta;                     // > 0
  bool rope_interleaved = false;           // pairs (2i, 2i+1) instead of (i, i + d_k/2)
};
SafetensorsMap safetensors_map_from_json(const nlohmann::json& j, const std::string& where);
// Reads and parses a map file; every error names the file (invalid JSON, a
// duplicate key, a wrong field).
SafetensorsMap read_safetensors_map(const std::string& path);
// Bias tensors next to a mapped tensor ("P.bias" next to "P.weight",
// "P.in_proj_bias" next to "P.in_proj_weight") that the map does not name.
// A layer without them would be another layer, so one with a nonzero entry
// (or of a dtype mhaq cannot read) is Error(input) naming the map entry to
// add, and so are torch's "P.bias_k" and "P.bias_v" (add_bias_kv); returns
// the all-zero ones, which change nothing.
std::vector<std::string> unnamed_biases(const SafetensorsFile& f, const SafetensorsMap& m);
// Exact scale q sqrt(m) for d_k: "1/sqrt(d_k)" for any d_k (8: sqrt(2)/4),
// or any scale parse_surd reads ("1/sqrt(n)", "p/q", "sqrt(2)/4");
// Error(input) otherwise. The one parser of every layer's scale.
Surd map_scale(const std::string& text, long d_k, const std::string& where);

// The factored model of the mapped tensors, exactly: Q_h, K_h (d x d_k),
// V_h (d x d_v) from the head's block of rows (out_in) or columns (in_out),
// O = the output projection as (H*d_v) x d_out, u = the readout, and the
// biases the map names (q_bias, k_bias per head: d_k entries; v_bias: d_v;
// out_bias: d_out; all-zero ones are none). A nonzero bias next to a
// mapped tensor that the map does not name (unnamed_biases), missing
// tensors, wrong ranks and shapes that do not agree are Error(input) naming
// the tensor.
// With a map's "ffn", `ffn` receives the FFN's first layer as d_out x m and
// the returned readout has m entries (Error(internal) when ffn is null).
FactoredModel safetensors_to_factored(const SafetensorsFile& f, const SafetensorsMap& m, QMat* ffn = nullptr);
// The factored model as a model file (factored.hpp), every entry exact.
std::string factored_to_json_text(const FactoredModel& f);
// A factored transformer file (transformer.hpp): the attention of `f`, the
// FFN's first layer `ffn` (d_out x m) and f.readout (m entries).
std::string factored_transformer_to_json_text(const FactoredModel& f, const QMat& ffn);

}  // namespace mhaq
