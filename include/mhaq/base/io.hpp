// Small file helpers: atomic writes (nothing is ever written half-way) and
// bounded reads (a directory, a device or a huge file is an input error, not
// an empty document).
#pragma once
#include <string>

namespace mhaq {

// Writes the file through a temporary in the same folder and renames it into
// place; throws Error(input) on failure, leaving no partial file behind.
// Refuses content over limits::max_file_bytes (mhaq would not read it back).
void write_file_atomic(const std::string& path, const std::string& content);

// The bytes of a regular file of at most limits::max_file_bytes. Error(input)
// "cannot open <what> ..." naming the path (quoted, so any bytes are safe to echo).
std::string read_file_text(const std::string& path, const std::string& what);

}  // namespace mhaq
