// Small output helpers: atomic file writes (nothing is ever written half-way).
#pragma once
#include <string>

namespace mhaq {

// Writes the file through a temporary in the same folder and renames it into
// place; throws Error(input) on failure, leaving no partial file behind.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace mhaq
