// Strict option values. CLI11 converts integers with strtoll/strtoull in base
// 0, so "010" is 8, "0x10" is 16, "-1" becomes 2^64-1 for an unsigned option
// and out-of-range values saturate. These validators run on the text before
// any conversion and accept only plain decimal integers in range (a
// ValidationError names the option: exit 2).
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace mhaq::cli {

// A decimal integer in [lo, hi]: optional '-', digits, no leading zeros.
CLI::Validator int_in(long lo, long hi);
// A seed: a decimal integer in [0, 2^64-1].
CLI::Validator seed_value();
// A finite, positive decimal number (for double options).
CLI::Validator positive_number();

// Parses a decimal integer as int_in does; false if it is not one or out of range.
bool parse_decimal(const std::string& s, long lo, long hi, long& out);

}  // namespace mhaq::cli
