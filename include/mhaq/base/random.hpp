// Seeded, platform-independent randomness. std::mt19937_64 is fully specified
// by the standard; the distributions on top are written here because the
// standard library's are implementation-defined.
#pragma once
#include <cstdint>
#include <random>

namespace mhaq {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : g_(seed) {}
  std::uint64_t next() { return g_(); }
  // Uniform integer in [lo, hi], by rejection (exactly uniform).
  long uniform_int(long lo, long hi);
  // Independent child stream (for reproducible sub-draws).
  Rng split(std::uint64_t tag) { return Rng(next() ^ (tag * 0x9E3779B97F4A7C15ULL)); }

 private:
  std::mt19937_64 g_;
};

}  // namespace mhaq
