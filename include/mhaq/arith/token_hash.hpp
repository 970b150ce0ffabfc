// A hash of rational vectors (tokens), for unordered maps keyed by them.
#pragma once
#include <cstddef>

#include "mhaq/arith/rational.hpp"

namespace mhaq {

// Over the entries' numerators and denominators: equal vectors hash equal.
std::size_t hash_value(const QVec& x);

}  // namespace mhaq
