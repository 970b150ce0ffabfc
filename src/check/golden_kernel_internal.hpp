// The kernel golden checker's parts (mhaq/check/golden_kernel.hpp): the
// layer and a sequence as its own readers give them, and the check of one
// sequence by its own evaluator. Nothing here comes from mhaq_lib.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "check_internal.hpp"

namespace mhaq::check::kernel {

struct Layer {
  int d = 0, heads = 0, kv_heads = 0, d_k = 0, d_v = 0, d_out = 0;
  std::vector<Qn> q, k, v, out;    // row-major, out x in (as torch.nn.Linear)
  std::vector<Qn> bq, bk, bv, bo;  // empty: no bias
  Qn scale_q, scale_m;             // scale = scale_q sqrt(scale_m)
  bool rope = false, interleaved = false;
  Qn theta;
  int group() const { return heads / kv_heads; }
};

struct Options {
  long digits = 0, max_bits = 0;
  bool causal = false, head_outputs = false, attention_weights = false;
  std::string positions;  // "all", "last" or a comma list
};

// The file's "layer" member, every shape checked (InputError naming the path).
Layer read_layer(const nlohmann::json& j);
// "options", "digits", "max_bits" of the top level.
Options read_options(const nlohmann::json& top, const nlohmann::json& options);

struct Tally {
  long entries = 0, checks = 0, rows = 0, undefined_rows = 0, rational = 0, max_bits = 0;
  long failures_total = 0;
  std::vector<std::string> failures;
  void fail(const std::string& path, const std::string& what);
};

// Checks sequence `index` (its JSON object) entry by entry.
void check_sequence(const Layer& L, const Options& o, const nlohmann::json& seq, size_t index, Tally& t);

}  // namespace mhaq::check::kernel
