#include "mhaq/base/limits.hpp"

#include <climits>

namespace mhaq {

namespace {
std::string range_text(long lo, long hi) { return std::string("[") + std::to_string(lo) + ", " + std::to_string(hi) + "]"; }
}  // namespace

void check_option(const std::string& option, long value, long lo, long hi) {
  if (value < lo || value > hi) throw Error(ErrorKind::usage, option + " must be in " + range_text(lo, hi) + ", got " + std::to_string(value));
}

void check_field(const std::string& where, long value, long lo, long hi) {
  if (value < lo || value > hi) throw_input(where + ": must be in " + range_text(lo, hi) + ", got " + std::to_string(value));
}

long plan_query_count(long d, long H, bool paper, long samples) {
  if (d < 1 || H < 1 || samples < 0) return 0;
  const __int128 K = samples == 0 ? 2 * static_cast<__int128>(H) + 1 : samples;
  const __int128 dd = static_cast<__int128>(d) * d;
  const __int128 pairs = paper ? 2 * dd - 1 : dd + d - 1;
  const __int128 n = 1 + (K - 1) * pairs;
  return n > LONG_MAX ? LONG_MAX : static_cast<long>(n);
}

void check_plan_size(long d, long H, bool paper, long samples, ErrorKind kind, const std::string& what, long limit) {
  const long n = plan_query_count(d, H, paper, samples);
  if (n > limit)
    throw Error(kind, what + ": the plan for d=" + std::to_string(d) + ", H=" + std::to_string(H) +
                          (samples ? ", " + std::to_string(samples) + " values per pair" : std::string()) + " has " + std::to_string(n) +
                          " queries, more than the limit of " + std::to_string(limit));
}

}  // namespace mhaq
