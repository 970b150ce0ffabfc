// Kernel golden files: certified outputs of a whole attention layer
// (model/kernel_layer.hpp) for a batch of sequences, the reference an
// engineer checks an attention kernel against. For every sequence, every
// asked position gets the layer's full output row (d_out entries after the
// output projection and its bias), and optionally the per-head outputs before
// it and the attention weights; every entry is a correctly rounded decimal
// with the ball that decided it (model/kernel_eval.hpp). The layer's exact
// weights are in the file, so it is self-contained. `golden check` re-derives
// every entry with the separate checker's own evaluator
// (mhaq/check/golden_kernel.hpp), one sequence at a time.
// Format: docs/formats.md, "Kernel golden files".
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "mhaq/model/kernel_eval.hpp"
#include "mhaq/model/kernel_layer.hpp"

namespace mhaq {

inline constexpr const char* kernel_golden_format = "mhaq-golden-kernel";

// Which rows of each sequence get outputs: every one, the last, or a list of
// indices (negative ones count from the end, -1 the last).
struct QueryPositions {
  enum class Kind { all, last, list } kind = Kind::all;
  std::vector<long> list;
  std::string text() const;
  // The rows of a sequence of n tokens; Error(input) naming `where` for an
  // index outside [-n, n) or a row asked twice.
  std::vector<long> rows(long n, const std::string& where) const;
};
// "all", "last", or "0,5,-1"; Error(usage) naming --query-positions otherwise.
QueryPositions parse_query_positions(const std::string& text);

struct KernelGoldenInputs {
  KernelLayer layer;
  std::vector<KernelSequence> sequences;
  KernelEvalOptions eval;
  QueryPositions positions;
  std::string tokens_rounded_to;  // "" or the dtype every token entry was rounded to
  long tokens_changed = 0;        // entries that rounding changed
  int threads = 1;
};

// An inputs file for a kernel layer of token dimension d:
// {"format": "mhaq-inputs", "version": 1, "d": D, "sequences": [S, ...]}
// with S a list of tokens (d exact entries each) or an object
// {"tokens": [...], "key_padding_mask": [true|false, ...],
//  "attn_mask": [[entry, ...], ...] (N x N; exact entries or "-inf"),
//  "position_ids": [p, ...]} (masks and ids optional). Error(input) naming
// the JSON path; every size is checked against the limits first.
std::vector<KernelSequence> read_kernel_inputs_text(const std::string& text, int d);

// Rounds every token entry to the nearest value of dtype t (ties to even);
// returns how many entries changed. Error(input) for an entry beyond t's range.
long round_tokens(std::vector<KernelSequence>& sequences, StDtype t);

// The stated limits, before any work: entries of one sequence, the
// evaluation work and the file's least size. Error(input) naming the sequence.
void check_kernel_golden_limits(const KernelGoldenInputs& in);

struct KernelGoldenSummary {
  long sequences = 0, rows = 0, undefined_rows = 0, entries = 0, max_bits = 0;
  long rational_entries = 0;  // recorded exact (rad 0)
};

// Writes the file's text to `sink` in order, one piece at a time; the bytes
// depend only on the inputs (not on threads). Error(unable) when an entry is
// not decided within max_bits.
KernelGoldenSummary golden_kernel_export(const KernelGoldenInputs& in, const std::function<void(const std::string&)>& sink);

}  // namespace mhaq
