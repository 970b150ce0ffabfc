// Error kinds and process exit codes. Each kind of failure has its own code
// and its own remedy; run/judge.hpp maps run outcomes onto the same codes
// (docs/commands.md, "Statuses and exit codes").
#pragma once
#include <stdexcept>
#include <string>

namespace mhaq {

enum class ErrorKind {
  usage = 2,             // bad command line
  input = 3,             // malformed or unsupported input file / value
  degenerate = 4,        // this draw of the learner's queries is degenerate: another seed helps
  unable = 5,            // precision too low to decide: more bits help
  mismatch = 6,          // a result disagrees with a known truth (or a claim failed)
  internal = 7,          // violated internal invariant (a bug)
  inconsistent = 8,      // the answers fit no model with the stated head count
  not_identifiable = 9,  // the model, or the stated H, is not identifiable: no seed helps
  rejected = 10,         // a checker rejected a certificate, golden file or lemma check
  budget = 11,           // the work would exceed the stated budget
  oracle_failed = 12,    // an external oracle failed (exited, hung, answered garbage, ...)
};

inline int exit_code(ErrorKind k) { return static_cast<int>(k); }
// recover --dry-run: the plan was costed and nothing else done (not an error, not ok)
constexpr int exit_dry_run = 13;
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
[[noreturn]] inline void throw_not_identifiable(const std::string& m) { throw Error(ErrorKind::not_identifiable, m); }
[[noreturn]] inline void throw_internal(const std::string& m) { throw Error(ErrorKind::internal, m); }

}  // namespace mhaq
