// Certified values of a kernel layer (kernel_layer.hpp) on one sequence:
// every output entry, and optionally every head output and attention weight,
// as a correctly rounded decimal with the Arb ball that decided it.
//
// The sequence is evaluated in Arb at rising precision (Ziv's strategy): the
// first attempt at certified_start_bits(digits), then doubling up to
// max_bits, re-evaluating until every entry's ball fixes its decimal and its
// rounding to the nearest double. An entry that a ball cannot fix (zero, a
// decimal tie) is decided exactly when it is rational: a head whose allowed
// keys are one, whose scores are equal (without rope), or whose values are
// equal contributes a rational, and an entry all of whose heads do is
// rational; masked keys have weight exactly 0. Anything else undecided at
// max_bits is Error(unable), naming the entry.
#pragma once
#include <arb.h>

#include <string>
#include <vector>

#include "mhaq/model/kernel_layer.hpp"

namespace mhaq {

struct KernelEvalOptions {
  bool causal = false;
  bool head_outputs = false;       // y_{h,n}, H d_v entries a row
  bool attention_weights = false;  // alpha_{h,n,i}, H N entries a row
  long digits = 20;
  long max_bits = 1L << 14;
};

// One certified entry: the decimal, and the ball [mid - rad, mid + rad] that
// contains the value and rounds to it, and to one double, at every point.
// rad "0": the value is rational and mid is it exactly.
struct KernelEntry {
  std::string decimal, mid, rad;
};

struct KernelRow {
  long position = 0;     // the row n
  bool defined = true;   // false: no key may be attended (no entries)
  std::vector<KernelEntry> out;      // d_out
  std::vector<KernelEntry> heads;    // H d_v, head-major (with head_outputs)
  std::vector<KernelEntry> weights;  // H N, head-major (with attention_weights)
};

struct KernelSequenceResult {
  std::vector<KernelRow> rows;
  long bits = 0;              // the largest precision an entry needed
  long rational_entries = 0;  // decided exactly
};

// The rows `rows` (each in [0, N)) of the sequence. Error(unable) past max_bits.
KernelSequenceResult certify_kernel_sequence(const KernelLayer& L, const KernelSequence& s, const std::vector<long>& rows, const KernelEvalOptions& o);

}  // namespace mhaq
