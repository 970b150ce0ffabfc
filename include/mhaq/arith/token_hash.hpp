// A hash of rational vectors (tokens), for unordered maps keyed by them.
#pragma once
#include <cstddef>

#include "mhaq/arith/rational.hpp"

namespace mhaq {

// Over the entries' numerators and denominators: equal vectors hash equal.
struct TokenHash {
  std::size_t operator()(const QVec& x) const noexcept;
};

}  // namespace mhaq
