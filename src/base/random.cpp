#include "mhaq/base/random.hpp"

#include <cstdint>

namespace mhaq {

long Rng::uniform_int(long lo, long hi) {
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
  if (span == 0) return static_cast<long>(next());  // full 64-bit range
  const std::uint64_t limit = UINT64_MAX - (UINT64_MAX % span);
  std::uint64_t x;
  do x = next(); while (x >= limit);
  return lo + static_cast<long>(x % span);
}

}  // namespace mhaq
