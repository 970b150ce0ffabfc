// The separate checker of kernel golden files (docs/formats.md, "Kernel
// golden files"): it reads the file as a stream, one sequence at a time, so
// its memory is bounded by the layer and one sequence whatever the file's
// size, and re-derives every entry with its own evaluator of the layer in Arb
// and its own exact rules for rational entries. It shares no code with
// mhaq_lib (tests/check_separation.sh).
//
// For every entry it checks that the decimal is the value correctly rounded
// (from its own ball, or exactly), that its own enclosure of the value lies
// in the recorded ball [mid - rad, mid + rad], that every point of the
// recorded ball rounds to the decimal and to one double (rad 0: that the
// value is rational and equals mid), and that a row is null exactly when no
// key may be attended. It also checks the structure: the layer's shapes, the
// options, each sequence's rows against query_positions, and the summary's
// counts. Malformed files throw InputError naming the JSON path.
#pragma once
#include <istream>
#include <string>
#include <vector>

#include "mhaq/check/certificate_check.hpp"

namespace mhaq::check {

// Whether the first bytes of a file open a kernel golden file ({"format": "mhaq-golden-kernel").
bool starts_as_kernel_golden(const std::string& head);

struct KernelGoldenReport {
  long sequences = 0, entries = 0, checks = 0;
  std::vector<std::string> failures;  // "sequences[3].output[2][5]: ...", at most 100 kept
  long failures_total = 0;
  bool ok() const { return failures_total == 0; }
};

// Checks the file at `path` (at most max_file_bytes). `threads` evaluates
// that many sequences at once (memory: that many sequences).
KernelGoldenReport check_kernel_golden_file(const std::string& path, int threads = 1);
KernelGoldenReport check_kernel_golden_stream(std::istream& in, int threads = 1);

}  // namespace mhaq::check
