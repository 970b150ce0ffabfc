// Error kinds and process exit codes. "degenerate" (the draw or model is not
// identifiable from these queries) and "unable" (precision too low to decide)
// are deliberately different kinds with different remedies.
#pragma once
#include <stdexcept>
#include <string>

namespace mhaq {

enum class ErrorKind {
  usage = 2,       // bad command line
  input = 3,       // malformed or unsupported input file / value
  degenerate = 4,  // not identifiable / degenerate draw: retry with another seed
  unable = 5,      // precision too low to decide: raise --bits
  mismatch = 6,    // recovered model disagrees with the truth (a bug if it ever happens)
  internal = 7,    // violated internal invariant
  inconsistent = 8,  // answers fit no model with the stated head count (H too small?)
};

inline int exit_code(ErrorKind k) { return static_cast<int>(k); }
const char* kind_name(ErrorKind k);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

[[noreturn]] inline void throw_input(const std::string& m) { throw Error(ErrorKind::input, m); }
[[noreturn]] inline void throw_degenerate(const std::string& m) { throw Error(ErrorKind::degenerate, m); }
[[noreturn]] inline void throw_unable(const std::string& m) { throw Error(ErrorKind::unable, m); }
[[noreturn]] inline void throw_inconsistent(const std::string& m) { throw Error(ErrorKind::inconsistent, m); }
[[noreturn]] inline void throw_internal(const std::string& m) { throw Error(ErrorKind::internal, m); }

}  // namespace mhaq
